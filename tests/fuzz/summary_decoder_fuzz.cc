// libFuzzer target for the job-summary decoder (runner/summary.h): decodes arbitrary bytes as a
// serialized JobSummary and writes the JSON of whatever decodes, alone and in a batch document.
// Errors are expected; crashes, sanitizer reports and unbounded allocation are bugs. The seed
// corpus, tests/testdata/summary/, holds a v0.25 summary with a trace shape (written by
// JobSummaryToProto from a run; runner_test checks that it decodes), so mutations reach the
// trace-shape checks (runner::CheckTraceShape).
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DFLAMEFLEET_FUZZ=ON
//   cmake --build build-fuzz --target summary_decoder_fuzz
//   ./build-fuzz/tests/fuzz/summary_decoder_fuzz -max_total_time=60 NEW_CORPUS_DIR \
//       tests/testdata/summary
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "runner/runner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<flamefleet::runner::JobSummary> summary =
      flamefleet::runner::DecodeJobSummary(bytes);
  if (!summary.ok()) return 0;
  // What decodes must write and merge without trouble (twice: names collide with themselves).
  flamefleet::runner::SummaryJson(*summary);
  flamefleet::runner::BatchSummaryInput batch;
  batch.batch_id = "1";
  batch.state = "succeeded";
  batch.jobs = {*summary, *summary};
  flamefleet::runner::BatchSummaryJson(batch);
  return 0;
}
