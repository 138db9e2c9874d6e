// Miden projects and workspaces as suites: reads a directory's miden-project.toml (the v0.25
// project format of 0xMiden/miden-vm crates/project) into the jobs and libraries of a batch.
//
// A package manifest has [package] (name, version), an optional [lib] (path, namespace, kind),
// [[bin]] targets (name, path) and [dependencies]; a workspace manifest has [workspace] members
// and [workspace.dependencies], inherited by members with `dep.workspace = true`. Every [[bin]]
// of the package (or of every workspace member) becomes a job named `bin` (`member/bin` in a
// workspace). Its libraries are the [lib] of its own package and of every transitive path
// dependency, under the namespace the format gives them (lib.namespace, else the package name);
// a [lib] of kind "kernel" is the kernel of the bins of its package and of the packages that
// depend on it. A dependency named `miden-core` without a path is the core library (namespace
// miden::core), located by the caller. [profile.*], [lints] and [package.metadata] are accepted
// and ignored (they change neither the program nor its cycles).
//
// Nothing outside the directory given is read: every manifest, member, dependency, lib and bin
// path must stay inside it, symlinks included. Errors are InvalidArgument naming the manifest,
// its toml line:col where known, and the key.
//
//   if (IsProjectDirectory(dir)) {
//     FLAMEFLEET_ASSIGN_OR_RETURN(Project project, LoadProject(dir));
//     for (const ProjectBin& bin : project.bins) AddJob(bin.job_name, bin.file, bin.inputs);
//   }
#ifndef FLAMEFLEET_CLI_PROJECT_H_
#define FLAMEFLEET_CLI_PROJECT_H_

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flamefleet::cli {

// The manifest file that makes a directory a Miden project.
inline constexpr char kProjectManifest[] = "miden-project.toml";
// The package name of the core library (crates/lib/core/asm/miden-project.toml), whose
// dependency needs no path, and its namespace.
inline constexpr char kCorePackage[] = "miden-core";
inline constexpr char kCoreNamespace[] = "miden::core";

// Documented bounds of one project (README, docs/suites.md): members of a workspace, [[bin]]
// targets of one package, dependencies of one manifest (package or workspace), packages loaded
// in all (members and path dependencies), and the bytes of one manifest.
inline constexpr size_t kMaxProjectMembers = 64;
inline constexpr size_t kMaxProjectBins = 64;
inline constexpr size_t kMaxProjectDependencies = 64;
inline constexpr size_t kMaxProjectPackages = 256;
inline constexpr size_t kMaxProjectManifestBytes = size_t{1} << 20;

// One package's [lib] (not a kernel): its namespace and MASM files.
struct ProjectLibrary {
  std::string ns;                  // "miden::utils"
  std::string package;             // the package name
  std::filesystem::path manifest;  // the package's miden-project.toml
  // (path relative to the library root, file): every .masm under the directory of lib.path,
  // the root module itself as "mod.masm" (flamefleet's namespace root), without the bin roots
  // of the package and without nested packages. Sorted by path.
  std::vector<std::pair<std::string, std::filesystem::path>> files;
  // The namespaces this library links statically (its package's `linkage = "static"`
  // dependencies; vm::AssemblerOptions::static_links). Sorted.
  std::vector<std::string> static_links;
};

// One [[bin]] target: a job.
struct ProjectBin {
  std::string job_name;        // "bin", or "member/bin" in a workspace
  std::filesystem::path file;  // the bin's root module
  // Its inputs file: NAME.inputs / NAME.toml beside the bin, else inputs.toml beside it, at its
  // package root, or at the workspace root; empty when none.
  std::filesystem::path inputs;
  // The kernel module (the root module of a kind = "kernel" [lib] of its package or of a
  // dependency); empty when none.
  std::filesystem::path kernel;
  std::string kernel_package;  // that kernel's package name
  // Namespaces of the libraries it may use: its package's lib and every transitive dependency's
  // (kCoreNamespace when one depends on miden-core). Sorted.
  std::vector<std::string> libraries;
  // The namespaces the program links statically: its package's `linkage = "static"`
  // dependencies' libs. Sorted.
  std::vector<std::string> static_libraries;
};

// A loaded project or workspace.
struct Project {
  std::filesystem::path root;  // the directory given, absolute and normal
  bool workspace = false;
  std::vector<ProjectLibrary> libraries;  // each package's lib once, sorted by namespace
  std::vector<ProjectBin> bins;           // sorted by job name
  bool uses_core_library = false;         // some package depends on miden-core
};

// Returns whether `dir` is a directory holding a miden-project.toml.
bool IsProjectDirectory(const std::filesystem::path& dir);

// Loads the project or workspace at `dir` (which must hold a miden-project.toml). InvalidArgument
// "MANIFEST:LINE:COL: KEY: what" for a toml syntax error, an unknown key, a value of the wrong
// type, a missing required field ([package].name/version, lib.path, bin.path, a member's
// manifest), a path that is absolute or leaves `dir` (lexically or through a symlink), a file
// that does not exist, a git or registry dependency (other than miden-core), a dependency cycle
// (naming the chain), two bins or two packages with the same job name or namespace, two kernels
// for one bin, a bound above exceeded, or no [[bin]] at all. Reads only files inside `dir`.
// Thread-compatible.
absl::StatusOr<Project> LoadProject(const std::filesystem::path& dir);

// Refuses the file kinds flamefleet cannot run: an assembled package (.masp) or a miden-debug
// snapshot (.mdsnap), whose binary formats change with every VM release. InvalidArgument saying
// what flamefleet accepts instead (MASM sources, a project directory, `flamefleet record`
// snapshots); OK for any other path. Touches nothing. Thread-safe.
absl::Status CheckAcceptedInput(absl::string_view path);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_PROJECT_H_
