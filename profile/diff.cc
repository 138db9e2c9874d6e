#include "profile/diff.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "profile/folded.h"

namespace flamefleet::profile {

absl::Status WriteFoldedDiff(const ProfileDiff& diff, std::ostream& out) {
  const Profile& tree = diff.tree();
  const size_t n = tree.num_nodes();
  // Hidden cycles per node and side: inclusive minus self minus the children's inclusive.
  std::vector<uint64_t> before_hidden(n, 0), after_hidden(n, 0);
  for (size_t i = 0; i < n; ++i) {
    before_hidden[i] = diff.before_inclusive(static_cast<Profile::NodeId>(i)) -
                       diff.before_self(static_cast<Profile::NodeId>(i));
    after_hidden[i] = diff.after_inclusive(static_cast<Profile::NodeId>(i)) -
                      diff.after_self(static_cast<Profile::NodeId>(i));
  }
  for (size_t i = 1; i < n; ++i) {
    const Profile::NodeId parent = tree.parent(static_cast<Profile::NodeId>(i));
    before_hidden[parent] -= diff.before_inclusive(static_cast<Profile::NodeId>(i));
    after_hidden[parent] -= diff.after_inclusive(static_cast<Profile::NodeId>(i));
  }
  std::vector<std::string> path(n);  // parents come before children
  std::vector<std::tuple<std::string, uint64_t, uint64_t>> lines;
  auto add = [&](std::string stack, uint64_t before, uint64_t after) {
    if (before != 0 || after != 0) lines.emplace_back(std::move(stack), before, after);
  };
  add("[unknown]", diff.before_self(Profile::kRoot), diff.after_self(Profile::kRoot));
  add("[hidden]", before_hidden[Profile::kRoot], after_hidden[Profile::kRoot]);
  for (size_t i = 1; i < n; ++i) {
    const auto node = static_cast<Profile::NodeId>(i);
    const Profile::NodeId parent = tree.parent(node);
    const std::string name = SanitizeFrameName(tree.frame_name(tree.frame(node)));
    path[i] = parent == Profile::kRoot ? name : absl::StrCat(path[parent], ";", name);
    add(path[i], diff.before_self(node), diff.after_self(node));
    add(absl::StrCat(path[i], ";[hidden]"), before_hidden[i], after_hidden[i]);
  }
  std::sort(lines.begin(), lines.end());
  std::string buf;
  for (const auto& [stack, before, after] : lines) {
    absl::StrAppend(&buf, stack, " ", before, " ", after, "\n");
    if (buf.size() > (1 << 16)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  out.flush();
  if (!out) return absl::DataLossError("writing folded diff failed");
  return absl::OkStatus();
}

}  // namespace flamefleet::profile
