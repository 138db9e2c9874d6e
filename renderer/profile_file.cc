#include "renderer/profile_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "profile/folded.h"

namespace flamefleet::renderer {
namespace {

using profile::OutputFormat;
using profile::ProfileFormat;

absl::Status OpenError(const std::string& path, int err) {
  const std::string msg = absl::StrCat(path, ": cannot create: ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(msg);
  if (err == EACCES) return absl::PermissionDeniedError(msg);
  return absl::InvalidArgumentError(msg);
}

// Returns the uncompressed bytes; `st` receives RenderSvg's FailedPrecondition for an empty SVG
// (the bytes are still the error SVG).
absl::StatusOr<std::string> EncodePlain(const profile::Profile& profile, ProfileFormat format,
                                        const RenderOptions& options, absl::Status* st) {
  switch (format) {
    case ProfileFormat::kSvg: {
      std::ostringstream svg;
      absl::Status rendered = RenderSvg(profile, options, svg);
      if (!rendered.ok() && !absl::IsFailedPrecondition(rendered)) return rendered;
      *st = rendered;
      return std::move(svg).str();
    }
    case ProfileFormat::kFolded: {
      std::ostringstream folded;
      absl::Status written = profile::WriteFolded(profile, folded);
      if (!written.ok()) return written;
      return std::move(folded).str();
    }
    case ProfileFormat::kPprof:
      return profile::SerializePprof(profile, {.name = options.title});
    case ProfileFormat::kSpeedscope:
      return profile::EncodeSpeedscope(profile, {.name = options.title});
  }
  return absl::InternalError("unknown profile format");
}

// As EncodeProfile, keeping the error SVG: returns the bytes and sets *st.
absl::StatusOr<std::string> Encode(const profile::Profile& profile, OutputFormat format,
                                   const RenderOptions& options, absl::Status* st) {
  absl::StatusOr<std::string> bytes = EncodePlain(profile, format.format, options, st);
  if (!bytes.ok()) return bytes;
  if (format.gzip || format.format == ProfileFormat::kPprof) {
    return profile::GzipCompress(*bytes);
  }
  return bytes;
}

}  // namespace

absl::StatusOr<std::string> EncodeProfile(const profile::Profile& profile, OutputFormat format,
                                          const RenderOptions& options) {
  absl::Status st;
  absl::StatusOr<std::string> bytes = Encode(profile, format, options, &st);
  if (!st.ok()) return st;
  return bytes;
}

absl::Status WriteProfile(const profile::Profile& profile, OutputFormat format,
                          const RenderOptions& options, std::ostream& out) {
  absl::Status st;
  absl::StatusOr<std::string> bytes = Encode(profile, format, options, &st);
  if (!bytes.ok()) return bytes.status();
  out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  out.flush();
  if (!out) return absl::DataLossError("writing the profile failed");
  return st;
}

absl::Status WriteProfileFile(const profile::Profile& profile, const std::string& path,
                              const RenderOptions& options, ProfileFormat fallback) {
  absl::Status st;
  absl::StatusOr<std::string> bytes =
      Encode(profile, profile::OutputFormatForPath(path, fallback), options, &st);
  if (!bytes.ok()) return bytes.status();
  absl::Status written = WriteBytesToFile(path, *bytes);
  return written.ok() ? st : written;
}

absl::Status WriteBytesToFile(const std::string& path, absl::string_view bytes) {
  // Devices, pipes and the like (`-o /dev/stdout`) are written in place: a rename would replace
  // them.
  struct stat st;
  const bool special = ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  const std::string tmp = special ? path : absl::StrCat(path, ".tmp.", getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return OpenError(path, errno);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string msg = absl::StrCat(path, ": write failed: ", std::strerror(errno));
      close(fd);
      if (!special) unlink(tmp.c_str());
      return absl::DataLossError(msg);
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || (!special && std::rename(tmp.c_str(), path.c_str()) != 0)) {
    const std::string msg = absl::StrCat(path, ": write failed: ", std::strerror(errno));
    if (!special) unlink(tmp.c_str());
    return absl::DataLossError(msg);
  }
  return absl::OkStatus();
}

}  // namespace flamefleet::renderer
