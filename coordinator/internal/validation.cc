#include "coordinator/internal/validation.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace flamefleet::coordinator::internal {
namespace {

// Job names become file names on the client (`jobs/<name>.svg`): relative, no
// `..`.
bool IsSafeRelativeName(absl::string_view name) {
  if (name.front() == '/' || name.find('\0') != absl::string_view::npos)
    return false;
  for (absl::string_view part : absl::StrSplit(name, '/')) {
    if (part == "..") return false;
  }
  return true;
}

absl::Status CheckSize(absl::string_view field, size_t size, size_t limit) {
  if (size <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      field, ": ", size, " bytes exceeds the limit of ", limit, " bytes"));
}

}  // namespace

absl::Status ValidateSubmitBatchRequest(const v1::SubmitBatchRequest& request,
                                        const SubmitLimits& limits) {
  size_t request_bytes = request.ByteSizeLong();
  if (request_bytes > limits.max_request_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("request: ", request_bytes, " bytes exceeds the limit of ",
                     limits.max_request_bytes, " bytes"));
  }
  if (limits.max_cycle_cap != 0 &&
      request.options().max_cycles() > limits.max_cycle_cap) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "options.max_cycles: ", request.options().max_cycles(),
        " exceeds the limit of ", limits.max_cycle_cap, " cycles"));
  }
  if (limits.max_memory_cap != 0 &&
      request.options().max_memory_bytes() > limits.max_memory_cap) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "options.max_memory_bytes: ", request.options().max_memory_bytes(),
        " exceeds the limit of ", limits.max_memory_cap,
        " bytes (the coordinator's --max-memory-cap)"));
  }
  if (request.jobs().empty()) {
    return absl::InvalidArgumentError("jobs: a batch needs at least one job");
  }
  if (static_cast<size_t>(request.jobs_size()) > limits.max_jobs) {
    return absl::ResourceExhaustedError(
        absl::StrCat("jobs: ", request.jobs_size(),
                     " jobs exceeds the limit of ", limits.max_jobs));
  }
  absl::flat_hash_set<absl::string_view> names;
  for (int i = 0; i < request.jobs_size(); ++i) {
    const v1::JobSpec& job = request.jobs(i);
    std::string field = absl::StrCat("jobs[", i, "]");
    if (job.name().empty())
      return absl::InvalidArgumentError(absl::StrCat(field, ".name: empty"));
    if (!IsSafeRelativeName(job.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".name: \"", job.name(),
                       "\" must be a relative path without '..'"));
    }
    if (!names.insert(job.name()).second) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".name: duplicate job name \"", job.name(), "\""));
    }
    // A job is a program (source) or a replay snapshot (its bytes; the worker validates them).
    if (!job.snapshot().empty()) {
      if (!job.source().empty() || !job.inputs().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ": a snapshot job takes no source or inputs (the snapshot has its own)"));
      }
    } else if (job.source().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".source: empty"));
    }
    absl::Status size = CheckSize(absl::StrCat(field, ".source"),
                                  job.source().size(), limits.max_source_bytes);
    if (!size.ok()) return size;
    size = CheckSize(absl::StrCat(field, ".snapshot"), job.snapshot().size(),
                     limits.max_snapshot_bytes);
    if (!size.ok()) return size;
    size = CheckSize(absl::StrCat(field, ".inputs"), job.inputs().size(),
                     limits.max_source_bytes);
    if (!size.ok()) return size;
  }
  for (const auto& [key, value] : request.labels()) {
    if (key.empty())
      return absl::InvalidArgumentError("labels: empty label key");
  }
  absl::flat_hash_set<absl::string_view> namespaces;
  for (int i = 0; i < request.libraries().libraries_size(); ++i) {
    const v1::Library& library = request.libraries().libraries(i);
    std::string field = absl::StrCat("libraries.libraries[", i, "]");
    if (library.namespace_().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".namespace: empty"));
    }
    if (!namespaces.insert(library.namespace_()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".namespace: duplicate namespace \"",
                       library.namespace_(), "\""));
    }
    absl::flat_hash_set<absl::string_view> paths;
    for (int j = 0; j < library.files_size(); ++j) {
      const v1::LibraryFile& file = library.files(j);
      std::string file_field = absl::StrCat(field, ".files[", j, "]");
      if (file.path().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(file_field, ".path: empty"));
      }
      if (!paths.insert(file.path()).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            file_field, ".path: duplicate path \"", file.path(), "\""));
      }
      absl::Status size =
          CheckSize(absl::StrCat(file_field, ".source"), file.source().size(),
                    limits.max_source_bytes);
      if (!size.ok()) return size;
    }
  }
  return absl::OkStatus();
}

}  // namespace flamefleet::coordinator::internal
