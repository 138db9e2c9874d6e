// Content digests used by the coordinator: hex SHA-256 of artifacts and of
// library sets.
#ifndef FLAMEFLEET_COORDINATOR_INTERNAL_DIGEST_H_
#define FLAMEFLEET_COORDINATOR_INTERNAL_DIGEST_H_

#include <string>

#include "absl/strings/string_view.h"
#include "flamefleet/v1/coordinator.pb.h"

namespace flamefleet::coordinator::internal {

// Returns the lowercase hex SHA-256 (64 characters) of `data`.
std::string Sha256Hex(absl::string_view data);

// Returns true if `s` looks like a Sha256Hex result (64 lowercase hex digits).
bool IsSha256Hex(absl::string_view s);

// Returns the digest of a library set: the hex SHA-256 of its canonical
// serialisation (libraries sorted by namespace, files by path; every string
// length-prefixed), so the same libraries give the same digest whatever order
// they were sent in. The `digest` field of `set` is ignored.
std::string LibrarySetDigest(const v1::LibrarySet& set);

// Returns the identity of a job's program: hex SHA-256 over its source, inputs (format and
// text), snapshot bytes and, unless it replays a snapshot (which carries its own modules), the
// digest of the batch's library set, and its kernel (path and text) if it has one. Not the job's
// name: the same program under another name is the same program. Keys the cycle history that orders
// the queue longest first.
std::string JobProgramDigest(const v1::JobSpec& spec, absl::string_view library_digest);

// Returns the result-cache key of a job: its program digest plus everything else a profile
// depends on (the cycle cap, the memory budget and program-ops limit, flat or nested stacks, the
// summary's phases and markers) and
// the engine version of the job's dialect (vm::DialectSpec::engine_version), so a result is
// reused only where a fresh run would give the same one.
std::string ResultCacheKey(absl::string_view program_digest, absl::string_view engine_version,
                           const v1::BatchOptions& options);

// Returns the hex SHA-256 of a SubmitBatchRequest's content without its request_id
// (labels in key order, so their order does not matter): a request_id reused with a
// different request is told apart from a retry of the same one.
std::string SubmitRequestDigest(const v1::SubmitBatchRequest& request);

}  // namespace flamefleet::coordinator::internal

#endif  // FLAMEFLEET_COORDINATOR_INTERNAL_DIGEST_H_
