// `flamefleet top`: the procedures of a cycle profile as a table, like `pprof -top`, and the
// per-procedure numbers it is made of (also used by `diff --json` and `--fail-above proc:NAME`).
//
// A procedure's numbers are summed over every stack of the profile by frame name:
//  - self cycles: the cycles charged while it was the innermost frame;
//  - inclusive cycles: the cycles of every stack it is on, a stack counted once even if the
//    name appears on it several times (recursion), so inclusive never exceeds the total.
// Cycles charged to the root (stacks with no frame) are the procedure "[unknown]"; cycles pruned
// away from a profile are "[hidden]" (self only). Self cycles of all rows add up to the total.
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(TopInput in, LoadTopInput("out/", {}, coordinator));
//   ProcedureTable table = ComputeProcedureTable(in.profile);
//   SortProcedures(TopOrder::kSelf, &table.rows);
//   PrintTop(table, /*limit=*/20, std::cout);
//
// Thread-safety: plain values and pure functions.
#ifndef FLAMEFLEET_CLI_TOP_H_
#define FLAMEFLEET_CLI_TOP_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "profile/profile.h"

namespace flamefleet::cli {

// One procedure (frame name) of a profile.
struct ProcedureCycles {
  std::string name;
  uint64_t self = 0;
  uint64_t inclusive = 0;  // recursion counted once per stack
};

// Every procedure of a profile with its total.
struct ProcedureTable {
  uint64_t total = 0;
  std::vector<ProcedureCycles> rows;  // by name
};

// Returns the procedures of `p` (see the file comment). O(nodes + frames); the tree is walked
// iteratively, so deep recursion in the profile needs no deep native stack.
ProcedureTable ComputeProcedureTable(const profile::Profile& p);

// Returns the same as a map from name to its numbers.
std::map<std::string, ProcedureCycles> ProceduresByName(const profile::Profile& p);

// The column `top --by` sorts on.
enum class TopOrder { kSelf, kInclusive };

// Parses `--by`: "self" or "inclusive". "calls" is InvalidArgument naming `input` and saying
// that call counts come with a summary.json, which no input `top` reads carries yet (#16);
// anything else InvalidArgument listing the choices.
absl::StatusOr<TopOrder> ParseTopOrder(absl::string_view by, absl::string_view input);

// Sorts `rows` by the `order` column, largest first; ties by the other column, then by name.
void SortProcedures(TopOrder order, std::vector<ProcedureCycles>* rows);

// Prints the first `limit` rows of `table` (already sorted) as pprof -top does:
//   "Showing N of M procedures, T cycles total" then columns self, self%, sum% (the running sum
// of self%), inclusive, inclusive%, name.
void PrintTop(const ProcedureTable& table, size_t limit, std::ostream& out);

// Returns the same as JSON: {"total", "procedures" (M), "shown" (N), "rows": [{"name", "self",
// "self_percent", "cumulative_percent", "inclusive", "inclusive_percent"}]}.
nlohmann::json TopJson(const ProcedureTable& table, size_t limit);

// Registers `top INPUT` on `app`; its exit code goes to `*exit_code` (kept): 0, 1 for an input
// that cannot be read or a coordinator error, 2 for bad flags.
void AddTopCommand(CLI::App& app, int* exit_code);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_TOP_H_
