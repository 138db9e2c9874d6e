// The CLI's rules for paths it did not choose itself. Two directions:
//  * writes: a file named by a server (a job name from the coordinator, written by `fetch -o DIR`
//    and `run -o DIR`) must stay inside DIR: ServerNamedPath refuses absolute names, "..", empty
//    or "." components, NUL and backslashes, and names that resolve outside DIR through a symlink
//    already present in DIR;
//  * reads: a file collected from a suite or library directory (`submit`, `run`) must not be a
//    symlink that leaves that directory (CheckInsideDirectory), so a suite cannot smuggle
//    /etc/passwd into a batch (and into a job error).
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::filesystem::path out,
//                               ServerNamedPath(dir, absl::StrCat(job.name(), ".svg"), "jobs/"));
//   FLAMEFLEET_RETURN_IF_ERROR(CheckInsideDirectory(file, suite_root, "suite directory"));
#ifndef FLAMEFLEET_CLI_SAFE_PATHS_H_
#define FLAMEFLEET_CLI_SAFE_PATHS_H_

#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flamefleet::cli {

// Returns dir/`prefix``name` for a relative name chosen by a server ('/'-separated, like
// "suite/a.masm.svg"); `prefix` is the caller's own (trusted) part, e.g. "jobs/". InvalidArgument,
// with the reason, when `name` is empty, absolute, contains a NUL or a backslash, has an empty,
// "." or ".." component, or when the whole path resolves (following the symlinks that already
// exist under `dir`, `dir` itself included) to a place outside the resolved `dir`. Touches
// nothing; `dir` need not exist yet. Thread-safe.
absl::StatusOr<std::filesystem::path> ServerNamedPath(const std::filesystem::path& dir,
                                                      absl::string_view name,
                                                      absl::string_view prefix = "");

// Checks that `file`, found by walking `root`, resolves (all symlinks followed) to a path inside
// the resolved `root`. InvalidArgument naming the link, its target and `root_kind` ("suite
// directory", "library directory") when it does not; NotFound for a dangling link. Symlinks
// that stay inside `root` are fine. Thread-safe.
absl::Status CheckInsideDirectory(const std::filesystem::path& file,
                                  const std::filesystem::path& root, absl::string_view root_kind);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_SAFE_PATHS_H_
