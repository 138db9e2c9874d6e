#include "cli/safe_paths.h"

#include <algorithm>
#include <iterator>
#include <system_error>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace flamefleet::cli {
namespace {

namespace fs = std::filesystem;

// Whether `p` (absolute, normalised, symlinks resolved) is `root` or below it.
bool IsWithin(const fs::path& p, const fs::path& root) {
  auto [root_end, p_it] = std::mismatch(root.begin(), root.end(), p.begin(), p.end());
  // A trailing empty element (root "a/b/") matches anything.
  return root_end == root.end() || (std::next(root_end) == root.end() && root_end->empty());
}

}  // namespace

absl::StatusOr<fs::path> ServerNamedPath(const fs::path& dir, absl::string_view name,
                                         absl::string_view prefix) {
  auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("refusing to write \"", absl::CHexEscape(name),
                                                   "\" under ", dir.string(), ": ", why));
  };
  if (name.empty()) return refuse("empty name");
  if (absl::StrContains(name, absl::string_view("\0", 1))) return refuse("it contains a NUL");
  if (absl::StrContains(name, "\\")) return refuse("it contains a backslash");
  if (name.front() == '/') return refuse("it is an absolute path");
  for (absl::string_view part : absl::StrSplit(name, '/')) {
    if (part == "..") return refuse("it contains a \"..\" component");
    if (part.empty() || part == ".") return refuse("it has an empty or \".\" component");
  }
  std::error_code ec;
  const fs::path root = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) return refuse(absl::StrCat("cannot resolve the directory: ", ec.message()));
  const fs::path target = root / absl::StrCat(prefix, name);
  const fs::path resolved = fs::weakly_canonical(target, ec);
  if (ec) return refuse(absl::StrCat("cannot resolve it: ", ec.message()));
  if (!IsWithin(resolved, root)) {
    return refuse(absl::StrCat("a symlink inside the directory leads to ", resolved.string(),
                               ", outside it"));
  }
  return target;
}

absl::Status CheckInsideDirectory(const fs::path& file, const fs::path& root,
                                  absl::string_view root_kind) {
  std::error_code ec;
  const fs::path real_root = fs::canonical(root, ec);
  if (ec) return absl::NotFoundError(absl::StrCat(root.string(), ": ", ec.message()));
  const fs::path real = fs::canonical(file, ec);
  if (ec) {
    std::error_code link_ec;
    const fs::path target = fs::read_symlink(file, link_ec);
    return absl::NotFoundError(absl::StrCat(
        file.string(), link_ec ? "" : absl::StrCat(" (a symlink to ", target.string(), ")"), ": ",
        ec.message()));
  }
  if (IsWithin(real, real_root)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(file.string(), " is a symlink to ", real.string(),
                                                 ", outside the ", root_kind, " ",
                                                 real_root.string(), "; refusing to read it"));
}

}  // namespace flamefleet::cli
