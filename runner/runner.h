// Running one MASM program locally, outside the fleet: profile it (every VM cycle charged to
// the procedure call stack live in that cycle), record a replay snapshot of it, and replay or
// profile a snapshot. The CLI (`exec`, `profile`, `record`, `--replay`), the worker's lease
// loop, the fuzzers and the benchmarks are built on it. Depends on the VM and the profile
// only (no gRPC), so that it also builds in the libFuzzer configuration.
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(runner::ProfiledRun run,
//       runner::ProfileProgram(program, inputs, vm::ExecutionOptions{},
//                              runner::StackMode::kNested));
//   FLAMEFLEET_ASSIGN_OR_RETURN(v1::ReplaySnapshot snap, runner::LoadSnapshotFile("run.snap"));
//   FLAMEFLEET_ASSIGN_OR_RETURN(vm::RunResult replayed, runner::ReplayRun(snap));
//
// This is the library's public header; runner/profile_run.h (profiling), runner/run_stats.h
// (calls, instructions, phases), runner/summary.h (summary.json, its wire form and decoder, the
// batch's summary.json) and runner/snapshot.h (the snapshot format, recording and replay)
// document each part.
#ifndef FLAMEFLEET_RUNNER_RUNNER_H_
#define FLAMEFLEET_RUNNER_RUNNER_H_

#include "runner/profile_run.h"  // IWYU pragma: export
#include "runner/run_stats.h"    // IWYU pragma: export
#include "runner/snapshot.h"     // IWYU pragma: export
#include "runner/summary.h"      // IWYU pragma: export

#endif  // FLAMEFLEET_RUNNER_RUNNER_H_
