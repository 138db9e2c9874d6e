// libFuzzer target for the replay-snapshot decoder (runner/snapshot.h): decodes arbitrary bytes
// as a snapshot file and as a bare payload (the fuzzer cannot forge the file's checksum), and
// replays whatever decodes under a small cycle cap. Errors are expected; crashes, hangs,
// sanitizer reports and unbounded allocation are bugs.
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DFLAMEFLEET_FUZZ=ON
//   cmake --build build-fuzz --target snapshot_decoder_fuzz
//   ./build-fuzz/tests/fuzz/snapshot_decoder_fuzz -max_total_time=60 NEW_CORPUS_DIR
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "runner/runner.h"

namespace {

constexpr uint64_t kFuzzMaxCycles = 20000;

void Replay(const absl::StatusOr<flamefleet::v1::ReplaySnapshot>& snapshot) {
  if (!snapshot.ok()) return;
  // The result does not matter, only that replaying hostile input fails cleanly.
  flamefleet::runner::ReplayRun(*snapshot, kFuzzMaxCycles).status().IgnoreError();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256 * 1024) return 0;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  Replay(flamefleet::runner::DecodeSnapshot(bytes));
  Replay(flamefleet::runner::DecodeSnapshotPayload(bytes));
  // The same bytes behind a valid header, so the checks after the checksum are reached too.
  flamefleet::v1::ReplaySnapshot parsed;
  if (parsed.ParseFromArray(data, static_cast<int>(size))) {
    Replay(flamefleet::runner::DecodeSnapshot(flamefleet::runner::EncodeSnapshot(parsed)));
  }
  return 0;
}
