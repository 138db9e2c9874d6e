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

}  // namespace flamefleet::coordinator::internal

#endif  // FLAMEFLEET_COORDINATOR_INTERNAL_DIGEST_H_
