#include "coordinator/internal/validation.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "runner/runner.h"
#include "vm/assembler/assembler.h"
#include "vm/dialect.h"

namespace flamefleet::coordinator::internal {
namespace {

// Job names become file names on the client (`jobs/<name>.svg`): relative, no
// `..`.
bool IsSafeRelativeName(absl::string_view name) {
  if (name.front() == '/' || name.find('\0') != absl::string_view::npos) return false;
  for (absl::string_view part : absl::StrSplit(name, '/')) {
    if (part == "..") return false;
  }
  return true;
}

// One component of a library namespace: a MASM identifier as the lexer reads it
// ([A-Za-z_][A-Za-z0-9_]*, not "_", not all upper case, which would be a constant name).
bool IsIdentifier(absl::string_view ns) {
  auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (ns.empty() || digit(ns.front()) || ns == "_") return false;
  bool has_lower = false;
  for (char c : ns) {
    if (!lower(c) && !upper(c) && !digit(c) && c != '_') return false;
    has_lower |= lower(c);
  }
  return has_lower || !upper(ns.front());
}

// A library namespace: identifiers joined by "::" (v0.25 namespaces such as miden::core and the
// lib.namespace of a Miden project have several components).
bool IsNamespaceIdentifier(absl::string_view ns) {
  for (absl::string_view part : absl::StrSplit(ns, "::")) {
    if (!IsIdentifier(part)) return false;
  }
  return true;
}

// Why a library file path is unusable ("" if it is fine): it must be relative, with no empty,
// "." or ".." component, as the worker requires.
std::string LibraryPathProblem(absl::string_view path) {
  if (path.front() == '/') return "must be relative, not absolute";
  if (path.find('\0') != absl::string_view::npos) return "holds a NUL byte";
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty()) return "has an empty component (\"//\" or a trailing '/')";
    if (part == "." || part == "..") {
      return absl::StrCat("has a \"", part, "\" component");
    }
  }
  return "";
}

// At most 40 bytes of `s`, for naming an oversized key in a message.
std::string Preview(absl::string_view s) {
  return s.size() <= 40 ? std::string(s) : absl::StrCat(s.substr(0, 40), "...");
}

absl::Status CheckName(absl::string_view field, absl::string_view what, size_t size, size_t limit) {
  if (size <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat(field, ": ", what, size, " bytes, the limit is ", limit, " (--max-name-bytes)"));
}

absl::Status CheckSize(absl::string_view field, size_t size, size_t limit) {
  if (size <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat(field, ": ", size, " bytes exceeds the limit of ", limit, " bytes"));
}

// Checks an optional dialect name ("" = the default): bounded like a name, then known.
absl::Status CheckDialect(const std::string& field, const std::string& dialect,
                          size_t max_name_bytes) {
  if (dialect.empty()) return absl::OkStatus();
  FLAMEFLEET_RETURN_IF_ERROR(CheckName(field, "", dialect.size(), max_name_bytes));
  absl::StatusOr<vm::Dialect> parsed = vm::ParseDialect(dialect);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", parsed.status().message()));
  }
  return absl::OkStatus();
}

// Checks a LibraryFile's path (`field` names the file, e.g. "jobs[0].kernel"): not empty, within
// the name limit, relative without "." or ".." components.
absl::Status CheckFilePath(absl::string_view field, const v1::LibraryFile& file,
                           const SubmitLimits& limits) {
  if (file.path().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".path: empty"));
  }
  FLAMEFLEET_RETURN_IF_ERROR(
      CheckName(absl::StrCat(field, ".path"), "", file.path().size(), limits.max_name_bytes));
  if (std::string problem = LibraryPathProblem(file.path()); !problem.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".path: \"", file.path(), "\" ", problem));
  }
  return absl::OkStatus();
}

// A job's kernel module: a program job only, a usable relative path, a non-empty source within
// the source limit.
absl::Status CheckKernel(absl::string_view field, const v1::JobSpec& job,
                         const SubmitLimits& limits) {
  const v1::LibraryFile& kernel = job.kernel();
  if (!job.snapshot().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".kernel: a snapshot job takes no kernel (the snapshot has its own)"));
  }
  FLAMEFLEET_RETURN_IF_ERROR(CheckFilePath(absl::StrCat(field, ".kernel"), kernel, limits));
  if (kernel.source().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".kernel.source: empty"));
  }
  FLAMEFLEET_RETURN_IF_ERROR(CheckSize(absl::StrCat(field, ".kernel.source"),
                                       kernel.source().size(), limits.max_source_bytes));
  if (static_cast<size_t>(job.kernel_modules_size()) > vm::kMaxKernelSubmodules) {
    return absl::ResourceExhaustedError(
        absl::StrCat(field, ".kernel_modules: ", job.kernel_modules_size(), " files, the limit is ",
                     vm::kMaxKernelSubmodules));
  }
  // Submodules live beside the kernel module: under its directory, one file per path.
  const size_t slash = kernel.path().rfind('/');
  const std::string dir = slash == std::string::npos ? "" : kernel.path().substr(0, slash + 1);
  // Views of the request's own strings (a braced list here would deduce std::string and keep
  // views of its temporaries).
  absl::flat_hash_set<absl::string_view> paths;
  paths.insert(kernel.path());
  for (int i = 0; i < job.kernel_modules_size(); ++i) {
    const std::string at = absl::StrCat(field, ".kernel_modules[", i, "]");
    const v1::LibraryFile& file = job.kernel_modules(i);
    FLAMEFLEET_RETURN_IF_ERROR(CheckFilePath(at, file, limits));
    if (!absl::StartsWith(file.path(), dir) || !absl::EndsWith(file.path(), ".masm")) {
      return absl::InvalidArgumentError(absl::StrCat(at, ".path: \"", file.path(),
                                                     "\" is not a .masm file beside the kernel \"",
                                                     kernel.path(), "\""));
    }
    if (!paths.insert(file.path()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ".path: \"", file.path(), "\" is given twice"));
    }
    FLAMEFLEET_RETURN_IF_ERROR(
        CheckSize(absl::StrCat(at, ".source"), file.source().size(), limits.max_source_bytes));
  }
  return absl::OkStatus();
}

// Static links (Library.static_links, JobSpec.static_libraries): at most kMaxStaticLinks
// namespaces, each a MASM namespace within the name limit.
absl::Status CheckStaticLinks(absl::string_view field,
                              const google::protobuf::RepeatedPtrField<std::string>& links,
                              const SubmitLimits& limits) {
  if (static_cast<size_t>(links.size()) > kMaxStaticLinks) {
    return absl::ResourceExhaustedError(
        absl::StrCat(field, ": ", links.size(), " namespaces, the limit is ", kMaxStaticLinks));
  }
  for (int i = 0; i < links.size(); ++i) {
    const std::string at = absl::StrCat(field, "[", i, "]");
    FLAMEFLEET_RETURN_IF_ERROR(CheckName(at, "", links[i].size(), limits.max_name_bytes));
    if (!IsNamespaceIdentifier(links[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, ": \"", links[i], "\" is not a library namespace"));
    }
  }
  return absl::OkStatus();
}

// The summary's phases ("START=END") and marker prefixes (non-empty): bounded in number and
// length.
absl::Status CheckSummaryOptions(const v1::BatchOptions& options, const SubmitLimits& limits) {
  for (auto [field, size] : {std::pair{"options.phases", options.phases_size()},
                             std::pair{"options.markers", options.markers_size()}}) {
    if (static_cast<size_t>(size) > kMaxPhaseOptions) {
      return absl::ResourceExhaustedError(
          absl::StrCat(field, ": ", size, " entries, the limit is ", kMaxPhaseOptions));
    }
  }
  for (int i = 0; i < options.phases_size(); ++i) {
    const std::string field = absl::StrCat("options.phases[", i, "]");
    FLAMEFLEET_RETURN_IF_ERROR(
        CheckName(field, "", options.phases(i).size(), limits.max_name_bytes));
    absl::StatusOr<runner::PhasePair> pair = runner::ParsePhasePair(options.phases(i));
    if (!pair.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": ", pair.status().message()));
    }
  }
  for (int i = 0; i < options.markers_size(); ++i) {
    const std::string field = absl::StrCat("options.markers[", i, "]");
    FLAMEFLEET_RETURN_IF_ERROR(
        CheckName(field, "", options.markers(i).size(), limits.max_name_bytes));
    if (options.markers(i).empty()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ": empty (a marker prefix)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateSubmitBatchRequest(const v1::SubmitBatchRequest& request,
                                        const SubmitLimits& limits) {
  size_t request_bytes = request.ByteSizeLong();
  if (request_bytes > limits.max_request_bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("request: ", request_bytes,
                                                     " bytes exceeds the limit of ",
                                                     limits.max_request_bytes, " bytes"));
  }
  if (limits.max_cycle_cap != 0 && request.options().max_cycles() > limits.max_cycle_cap) {
    return absl::ResourceExhaustedError(
        absl::StrCat("options.max_cycles: ", request.options().max_cycles(),
                     " exceeds the limit of ", limits.max_cycle_cap, " cycles"));
  }
  if (limits.max_memory_cap != 0 && request.options().max_memory_bytes() > limits.max_memory_cap) {
    return absl::ResourceExhaustedError(
        absl::StrCat("options.max_memory_bytes: ", request.options().max_memory_bytes(),
                     " exceeds the limit of ", limits.max_memory_cap,
                     " bytes (the coordinator's --max-memory-cap)"));
  }
  // Name-like strings first, so that no later message quotes an oversized one.
  FLAMEFLEET_RETURN_IF_ERROR(
      CheckName("request_id", "", request.request_id().size(), limits.max_name_bytes));
  FLAMEFLEET_RETURN_IF_ERROR(
      CheckName("options.title", "", request.options().title().size(), limits.max_name_bytes));
  FLAMEFLEET_RETURN_IF_ERROR(
      CheckDialect("options.dialect", request.options().dialect(), limits.max_name_bytes));
  FLAMEFLEET_RETURN_IF_ERROR(CheckSummaryOptions(request.options(), limits));
  if (static_cast<size_t>(request.labels_size()) > limits.max_labels) {
    return absl::ResourceExhaustedError(absl::StrCat("labels: ", request.labels_size(),
                                                     " labels, the limit is ", limits.max_labels,
                                                     " (--max-labels)"));
  }
  for (const auto& [key, value] : request.labels()) {
    const std::string field = absl::StrCat("labels[\"", Preview(key), "\"]");
    FLAMEFLEET_RETURN_IF_ERROR(CheckName(field, "key is ", key.size(), limits.max_name_bytes));
    FLAMEFLEET_RETURN_IF_ERROR(CheckName(field, "value is ", value.size(), limits.max_name_bytes));
  }
  if (request.jobs().empty()) {
    return absl::InvalidArgumentError("jobs: a batch needs at least one job");
  }
  if (static_cast<size_t>(request.jobs_size()) > limits.max_jobs) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "jobs: ", request.jobs_size(), " jobs exceeds the limit of ", limits.max_jobs));
  }
  absl::flat_hash_set<absl::string_view> names;
  for (int i = 0; i < request.jobs_size(); ++i) {
    const v1::JobSpec& job = request.jobs(i);
    std::string field = absl::StrCat("jobs[", i, "]");
    if (job.name().empty()) return absl::InvalidArgumentError(absl::StrCat(field, ".name: empty"));
    FLAMEFLEET_RETURN_IF_ERROR(
        CheckName(absl::StrCat(field, ".name"), "", job.name().size(), limits.max_name_bytes));
    if (!IsSafeRelativeName(job.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".name: \"", job.name(), "\" must be a relative path without '..'"));
    }
    if (!names.insert(job.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".name: duplicate job name \"", job.name(), "\""));
    }
    FLAMEFLEET_RETURN_IF_ERROR(
        CheckDialect(absl::StrCat(field, ".dialect"), job.dialect(), limits.max_name_bytes));
    // A job is a program (source) or a replay snapshot (its bytes; the worker validates them).
    if (!job.snapshot().empty()) {
      if (!job.source().empty() || !job.inputs().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": a snapshot job takes no source or inputs (the snapshot has its own)"));
      }
    } else if (job.source().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".source: empty"));
    }
    absl::Status size =
        CheckSize(absl::StrCat(field, ".source"), job.source().size(), limits.max_source_bytes);
    if (!size.ok()) return size;
    size = CheckSize(absl::StrCat(field, ".snapshot"), job.snapshot().size(),
                     limits.max_snapshot_bytes);
    if (!size.ok()) return size;
    size = CheckSize(absl::StrCat(field, ".inputs"), job.inputs().size(), limits.max_source_bytes);
    if (!size.ok()) return size;
    if (job.has_kernel()) {
      FLAMEFLEET_RETURN_IF_ERROR(CheckKernel(field, job, limits));
    } else if (job.kernel_modules_size() > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".kernel_modules: given without a kernel"));
    }
    FLAMEFLEET_RETURN_IF_ERROR(
        CheckStaticLinks(absl::StrCat(field, ".static_libraries"), job.static_libraries(), limits));
  }
  for (const auto& [key, value] : request.labels()) {
    if (key.empty()) return absl::InvalidArgumentError("labels: empty label key");
  }
  absl::flat_hash_set<absl::string_view> namespaces;
  for (int i = 0; i < request.libraries().libraries_size(); ++i) {
    const v1::Library& library = request.libraries().libraries(i);
    std::string field = absl::StrCat("libraries.libraries[", i, "]");
    if (library.namespace_().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".namespace: empty"));
    }
    FLAMEFLEET_RETURN_IF_ERROR(CheckName(absl::StrCat(field, ".namespace"), "",
                                         library.namespace_().size(), limits.max_name_bytes));
    if (!IsNamespaceIdentifier(library.namespace_())) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".namespace: \"", library.namespace_(),
          "\" is not a MASM identifier (letters, digits and '_', not starting with a digit, "
          "not all upper case; components joined by ::, e.g. \"std\" or \"miden::core\")"));
    }
    if (!namespaces.insert(library.namespace_()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".namespace: duplicate namespace \"", library.namespace_(), "\""));
    }
    FLAMEFLEET_RETURN_IF_ERROR(
        CheckStaticLinks(absl::StrCat(field, ".static_links"), library.static_links(), limits));
    absl::flat_hash_set<absl::string_view> paths;
    for (int j = 0; j < library.files_size(); ++j) {
      const v1::LibraryFile& file = library.files(j);
      std::string file_field = absl::StrCat(field, ".files[", j, "]");
      FLAMEFLEET_RETURN_IF_ERROR(CheckFilePath(file_field, file, limits));
      if (!paths.insert(file.path()).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(file_field, ".path: duplicate path \"", file.path(), "\""));
      }
      absl::Status size = CheckSize(absl::StrCat(file_field, ".source"), file.source().size(),
                                    limits.max_source_bytes);
      if (!size.ok()) return size;
    }
  }
  return absl::OkStatus();
}

std::string TruncateMiddle(absl::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  // The marker's length depends on the count it shows; the count has at most 20 digits.
  const std::string probe = absl::StrCat("\n... [", text.size(), " bytes cut] ...\n");
  if (limit <= probe.size()) return std::string(text.substr(0, limit));
  const size_t keep = limit - probe.size();
  const size_t head = keep - keep / 2;
  const size_t tail = keep / 2;
  const size_t cut = text.size() - head - tail;
  return absl::StrCat(text.substr(0, head), "\n... [", cut, " bytes cut] ...\n",
                      text.substr(text.size() - tail));
}

absl::StatusOr<vm::Dialect> ResolveJobDialect(const v1::JobSpec& job, int index,
                                              const v1::BatchOptions& options) {
  const bool own = !job.dialect().empty();
  const std::string& named = own ? job.dialect() : options.dialect();
  if (named.empty()) return vm::kDefaultDialect;
  absl::StatusOr<vm::Dialect> dialect = vm::ParseDialect(named);
  if (!dialect.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(own ? absl::StrCat("jobs[", index, "].dialect") : "options.dialect", ": ",
                     dialect.status().message()));
  }
  return *dialect;
}

}  // namespace flamefleet::coordinator::internal
