// Conversion between the in-memory call-tree Profile and its wire form, the `flamefleet.v1.Profile`
// message (proto/flamefleet/v1/profile.proto): interned frame names plus packed node columns
// (parent, frame, self cycles). This is the only form a profile takes between processes; folded
// text is never sent.
//
//   std::string bytes = SerializeProfile(profile);      // worker side
//   ...send bytes in chunks...
//   FLAMEFLEET_ASSIGN_OR_RETURN(Profile p, ParseProfile(bytes));  // receiver
//
// Node ids survive a round trip (node i of the message is node i of the Profile) as long as the
// message has no duplicate (parent, frame) pairs; duplicates are merged on input. Hidden (pruned)
// cycles have no wire field: ToProto adds them to the self cycles of the node they were recorded
// on, so totals and inclusive cycles stay exact. Child matching mode is not sent (FromProto returns
// a kByName profile).
//
// Thread-safety: all functions are pure; they may be called concurrently on distinct outputs.
#ifndef FLAMEFLEET_PROFILE_PROFILE_PROTO_H_
#define FLAMEFLEET_PROFILE_PROFILE_PROTO_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flamefleet/v1/profile.pb.h"
#include "profile/profile.h"

namespace flamefleet::profile {

// Writes `profile` into `*out` (cleared first; must not be null). Every node, including the root,
// becomes one entry of each column; total_cycles is set to profile.total().
void ToProto(const Profile& profile, v1::Profile* out);

// Builds a Profile from `proto`, the one validating decoder of untrusted wire profiles (workers'
// results, Render requests). Returns InvalidArgument, naming the field, if the columns differ in
// length, a frame name is empty, a node's parent is not smaller than its index, a frame id is out
// of range, the self cycles overflow 64 bits, or total_cycles is not their sum; a result therefore
// satisfies every Profile invariant. An empty message (no nodes) gives an empty profile. Duplicate
// names or (parent, frame) pairs are merged.
absl::StatusOr<Profile> FromProto(const v1::Profile& proto);

// Returns the serialized flamefleet.v1.Profile bytes of `profile`.
std::string SerializeProfile(const Profile& profile);

// Parses serialized flamefleet.v1.Profile bytes. Returns InvalidArgument if the bytes are not a
// valid message or FromProto rejects it.
absl::StatusOr<Profile> ParseProfile(absl::string_view bytes);

}  // namespace flamefleet::profile

#endif  // FLAMEFLEET_PROFILE_PROFILE_PROTO_H_
