// libFuzzer target for the wire-profile decoder (profile/profile_proto.h, the decoder the
// coordinator and the renderer run on every profile a peer sends): parses arbitrary bytes as a
// flamefleet.v1.Profile and, whenever they decode, checks the Profile invariants the rest of
// the code relies on (parents before children, frame ids in range, exact totals) and runs the
// code that walks a profile: folded output, merging, pruning, reversing, a round trip.
// Errors are expected; crashes, sanitizer reports and broken invariants are bugs.
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DFLAMEFLEET_FUZZ=ON
//   cmake --build build-fuzz --target profile_proto_fuzz
//   ./build-fuzz/tests/fuzz/profile_proto_fuzz -max_total_time=60 NEW_CORPUS_DIR \
//       tests/testdata/profile
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "absl/strings/string_view.h"
#include "google/protobuf/stubs/logging.h"
#include "profile/folded.h"
#include "profile/profile.h"
#include "profile/profile_proto.h"
#include "tests/fuzz/profile_invariants.h"

namespace {

using flamefleet::profile::Profile;

}  // namespace

// Drops protobuf's log lines (one per invalid UTF-8 name, a parse error we expect).
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256 * 1024) return 0;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Profile> profile = flamefleet::profile::ParseProfile(bytes);
  if (!profile.ok()) return 0;
  flamefleet::fuzzing::CheckProfileInvariants(*profile);
  std::ostringstream folded;
  if (!flamefleet::profile::WriteFolded(*profile, folded).ok()) std::abort();
  Profile merged;
  if (!merged.MergeFromChecked(*profile).ok()) std::abort();  // 0 + total fits
  if (merged.MergeFromChecked(*profile).ok() && merged.total() != 2 * profile->total()) {
    std::abort();
  }
  flamefleet::fuzzing::CheckProfileInvariants(profile->Pruned(profile->total() / 3));
  flamefleet::fuzzing::CheckProfileInvariants(profile->Reversed(profile->total() / 5));
  absl::StatusOr<Profile> again =
      flamefleet::profile::ParseProfile(flamefleet::profile::SerializeProfile(*profile));
  if (!again.ok() || again->total() != profile->total()) std::abort();
  return 0;
}
