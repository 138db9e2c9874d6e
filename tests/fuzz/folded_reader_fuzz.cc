// libFuzzer target for the folded-stack reader (profile/folded.h, what `flamefleet render`,
// `diff` and `fetch` run on files from anywhere): reads arbitrary bytes as folded text into a
// merged profile, a flame chart and a two-column diff, in tiny and large chunks, and checks
// that the result keeps the Profile invariants (no empty frame names, parents before
// children, totals that add up, identical results whatever the chunk size) and that its
// folded output reads back with the same total. Errors (overflowing counts) are expected; crashes,
// sanitizer reports and broken invariants are bugs.
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DFLAMEFLEET_FUZZ=ON
//   cmake --build build-fuzz --target folded_reader_fuzz
//   ./build-fuzz/tests/fuzz/folded_reader_fuzz -max_total_time=60 NEW_CORPUS_DIR \
//       tests/testdata/profile
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "profile/folded.h"
#include "profile/profile.h"
#include "tests/fuzz/profile_invariants.h"

namespace {

using flamefleet::profile::FoldedReader;
using flamefleet::profile::FoldedReadOptions;
using flamefleet::profile::Profile;

std::string Folded(const Profile& p) {
  std::ostringstream out;
  if (!flamefleet::profile::WriteFolded(p, out).ok()) std::abort();
  return out.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256 * 1024) return 0;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);

  Profile merged;
  FoldedReader reader(&merged);
  const absl::Status status = reader.ReadString(text, "fuzz");
  if (!status.ok() && !absl::IsInvalidArgument(status)) std::abort();
  flamefleet::fuzzing::CheckProfileInvariants(merged);

  // The same text streamed in 3-byte chunks gives the same profile.
  Profile chunked;
  FoldedReadOptions tiny;
  tiny.chunk_size = 3;
  FoldedReader chunked_reader(&chunked, nullptr, tiny);
  std::istringstream in{std::string(text)};
  if (chunked_reader.ReadStream(in, "fuzz").code() != status.code()) std::abort();
  const std::string written = Folded(merged);
  if (Folded(chunked) != written) std::abort();

  // Written text reads back with the same total. (Not always the same tree:
  // root cycles are written as a "[unknown]" frame, and a name such as "x 3"
  // reads back as a two-column line.)
  if (status.ok()) {
    Profile back;
    FoldedReader back_reader(&back);
    if (!back_reader.ReadString(written).ok()) std::abort();
    if (back.total() != merged.total()) std::abort();
    flamefleet::fuzzing::CheckProfileInvariants(back);
  }

  // Flame chart with pruning, and a two-column diff.
  Profile chart(Profile::ChildMatching::kAdjacent);
  FoldedReadOptions prune;
  prune.prune_fraction = 0.01;
  FoldedReader chart_reader(&chart, nullptr, prune);
  chart_reader.ReadString(text).IgnoreError();  // overflow is checked above
  flamefleet::fuzzing::CheckProfileInvariants(chart);
  Profile before, after;
  FoldedReader diff_reader(&after, &before);
  diff_reader.ReadString(text).IgnoreError();  // as above
  flamefleet::fuzzing::CheckProfileInvariants(before);
  flamefleet::fuzzing::CheckProfileInvariants(after);
  return 0;
}
