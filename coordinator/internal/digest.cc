#include "coordinator/internal/digest.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace flamefleet::coordinator::internal {
namespace {

void AppendLengthPrefixed(absl::string_view s, std::string* out) {
  uint64_t n = s.size();
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out->append(s.data(), s.size());
}

}  // namespace

std::string Sha256Hex(absl::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // EVP_Digest only fails on allocation failure inside OpenSSL; treat that as
  // fatal.
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    std::abort();
  }
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), length));
}

bool IsSha256Hex(absl::string_view s) {
  if (s.size() != 64) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string LibrarySetDigest(const v1::LibrarySet& set) {
  std::vector<const v1::Library*> libraries;
  for (const v1::Library& library : set.libraries()) libraries.push_back(&library);
  std::sort(libraries.begin(), libraries.end(), [](const v1::Library* a, const v1::Library* b) {
    return a->namespace_() < b->namespace_();
  });
  std::string canonical = "flamefleet.LibrarySet.v1";
  for (const v1::Library* library : libraries) {
    AppendLengthPrefixed(library->namespace_(), &canonical);
    // Only when set, so that the digests of dynamically linked sets stay what they were.
    for (const std::string& ns : library->static_links()) {
      AppendLengthPrefixed("static", &canonical);
      AppendLengthPrefixed(ns, &canonical);
    }
    std::vector<const v1::LibraryFile*> files;
    for (const v1::LibraryFile& file : library->files()) files.push_back(&file);
    std::sort(files.begin(), files.end(), [](const v1::LibraryFile* a, const v1::LibraryFile* b) {
      return a->path() < b->path();
    });
    AppendLengthPrefixed(absl::StrCat(files.size()), &canonical);
    for (const v1::LibraryFile* file : files) {
      AppendLengthPrefixed(file->path(), &canonical);
      AppendLengthPrefixed(file->source(), &canonical);
    }
  }
  return Sha256Hex(canonical);
}

std::string JobProgramDigest(const v1::JobSpec& spec, absl::string_view library_digest) {
  std::string canonical = "flamefleet.Program.v1";
  AppendLengthPrefixed(spec.source(), &canonical);
  AppendLengthPrefixed(absl::StrCat(static_cast<int>(spec.inputs_format())), &canonical);
  AppendLengthPrefixed(spec.inputs(), &canonical);
  AppendLengthPrefixed(spec.snapshot(), &canonical);
  AppendLengthPrefixed(spec.snapshot().empty() ? library_digest : "", &canonical);
  // Only when present, so that the digests of kernel-less jobs stay what they were.
  if (spec.has_kernel()) {
    AppendLengthPrefixed("kernel", &canonical);
    AppendLengthPrefixed(spec.kernel().path(), &canonical);
    AppendLengthPrefixed(spec.kernel().source(), &canonical);
    for (const v1::LibraryFile& file : spec.kernel_modules()) {
      AppendLengthPrefixed(file.path(), &canonical);
      AppendLengthPrefixed(file.source(), &canonical);
    }
  }
  for (const std::string& ns : spec.static_libraries()) {
    AppendLengthPrefixed("static", &canonical);
    AppendLengthPrefixed(ns, &canonical);
  }
  return Sha256Hex(canonical);
}

std::string ResultCacheKey(absl::string_view program_digest, absl::string_view engine_version,
                           const v1::BatchOptions& options) {
  // v2: a result includes the job's summary (results stored before have none, so they are not
  // reused), which the phases and markers change. v3: a v0.25 job's summary carries its trace
  // shape (#18); v2 results have none, so they are not reused either.
  std::string canonical = "flamefleet.Result.v3";
  AppendLengthPrefixed(program_digest, &canonical);
  AppendLengthPrefixed(engine_version, &canonical);
  AppendLengthPrefixed(absl::StrCat(options.max_cycles()), &canonical);
  AppendLengthPrefixed(options.flat() ? "flat" : "nested", &canonical);
  // The resource limits decide whether a run succeeds (0: the worker's default).
  AppendLengthPrefixed(absl::StrCat(options.max_memory_bytes()), &canonical);
  AppendLengthPrefixed(absl::StrCat(options.max_program_ops()), &canonical);
  AppendLengthPrefixed(absl::StrCat(options.phases_size()), &canonical);
  for (const std::string& phase : options.phases()) AppendLengthPrefixed(phase, &canonical);
  AppendLengthPrefixed(absl::StrCat(options.markers_size()), &canonical);
  for (const std::string& marker : options.markers()) AppendLengthPrefixed(marker, &canonical);
  return Sha256Hex(canonical);
}

std::string SubmitRequestDigest(const v1::SubmitBatchRequest& request) {
  // Field by field (no copy of a request that may be tens of MiB); labels sorted by key. The
  // messages serialised here hold no maps, so their encoding is stable.
  std::string canonical = "flamefleet.SubmitBatchRequest.v1";
  AppendLengthPrefixed(absl::StrCat(request.jobs_size()), &canonical);
  for (const v1::JobSpec& job : request.jobs()) {
    AppendLengthPrefixed(job.SerializeAsString(), &canonical);
  }
  AppendLengthPrefixed(request.libraries().SerializeAsString(), &canonical);
  AppendLengthPrefixed(request.options().SerializeAsString(), &canonical);
  const std::map<std::string, std::string> labels(request.labels().begin(), request.labels().end());
  for (const auto& [key, value] : labels) {
    AppendLengthPrefixed(key, &canonical);
    AppendLengthPrefixed(value, &canonical);
  }
  return Sha256Hex(canonical);
}

}  // namespace flamefleet::coordinator::internal
