#include "cli/top.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/batch_client.h"
#include "cli/client_commands.h"
#include "cli/command.h"
#include "cli/suite_diff.h"
#include "common/status_macros.h"
#include "profile/folded.h"

namespace flamefleet::cli {
namespace {

namespace fs = std::filesystem;
using profile::Profile;

constexpr char kUnknownFrame[] = "[unknown]";
constexpr char kHiddenFrame[] = "[hidden]";

double Percent(uint64_t part, uint64_t total) {
  return total == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(total);
}

struct TopFlags {
  std::string input;
  std::string by = "self";
  size_t limit = 20;
  bool json = false;
  std::string job;
  CoordinatorFlags coordinator;
};

// Loads the profile `top` shows: a job's or the aggregate of a batch or fetched directory, or a
// folded file ("-" = stdin).
absl::StatusOr<Profile> LoadTopProfile(const TopFlags& flags) {
  const std::string& input = flags.input;
  if (absl::StartsWith(input, "batch:")) {
    const std::string id = input.substr(6);
    FLAMEFLEET_ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                                ConnectToCoordinator(flags.coordinator));
    BatchClient client(channel);
    absl::StatusOr<Profile> p = client.FetchProfile(id, flags.job);
    if (!p.ok()) {
      return absl::Status(p.status().code(), absl::StrCat(input, " on ", flags.coordinator.address,
                                                          ": ", p.status().message()));
    }
    return p;
  }
  std::error_code ec;
  if (input != "-" && fs::is_directory(input, ec)) {
    if (!flags.job.empty()) {
      const fs::path file = fs::path(input) / "jobs" / (flags.job + ".folded");
      if (!fs::is_regular_file(file, ec)) {
        return absl::NotFoundError(
            absl::StrCat(input, ": no job \"", flags.job, "\" (no ", file.string(), ")"));
      }
      Profile p;
      profile::FoldedReader reader(&p);
      FLAMEFLEET_RETURN_IF_ERROR(reader.ReadFile(file.string()));
      return p;
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(DiffInput dir, LoadOutputDirectory(input, {}));
    return std::move(dir.aggregate);
  }
  if (!flags.job.empty()) {
    return UsageError(absl::StrCat("--job needs a fetched directory or batch:ID; ", input,
                                   " is a single profile"));
  }
  Profile p;
  profile::FoldedReader reader(&p);
  if (input == "-") {
    FLAMEFLEET_RETURN_IF_ERROR(reader.ReadStream(std::cin, "<stdin>"));
  } else {
    FLAMEFLEET_RETURN_IF_ERROR(reader.ReadFile(input));
  }
  return p;
}

CommandResult RunTop(const TopFlags& flags) {
  absl::StatusOr<TopOrder> order = ParseTopOrder(flags.by, flags.input);
  if (!order.ok()) return UsageError(order.status());
  FLAMEFLEET_ASSIGN_OR_RETURN(Profile p, LoadTopProfile(flags));
  ProcedureTable table = ComputeProcedureTable(p);
  SortProcedures(*order, &table.rows);
  if (flags.json) {
    nlohmann::json j = TopJson(table, flags.limit);
    j["input"] = flags.input;
    if (!flags.job.empty()) j["job"] = flags.job;
    j["by"] = flags.by;
    std::cout << j.dump(2) << "\n";
  } else {
    PrintTop(table, flags.limit, std::cout);
  }
  return absl::OkStatus();
}

}  // namespace

ProcedureTable ComputeProcedureTable(const Profile& p) {
  ProcedureTable table;
  table.total = p.total();
  const size_t n = p.num_nodes();
  if (n == 0) return table;
  std::vector<uint64_t> self(p.num_frames(), 0);
  std::vector<uint64_t> inclusive(p.num_frames(), 0);
  const std::vector<uint64_t> node_inclusive = p.InclusiveCycles();
  uint64_t hidden = p.hidden(Profile::kRoot).cycles;
  // Children in CSR form, so the walk below can keep the frames of the current path.
  std::vector<uint32_t> first(n + 1, 0);
  for (Profile::NodeId node = 1; node < n; ++node) ++first[p.parent(node) + 1];
  for (size_t i = 1; i <= n; ++i) first[i] += first[i - 1];
  std::vector<Profile::NodeId> children(n > 0 ? n - 1 : 0);
  {
    std::vector<uint32_t> next(first.begin(), first.end() - 1);
    for (Profile::NodeId node = 1; node < n; ++node) children[next[p.parent(node)]++] = node;
  }
  // Depth-first, iteratively: a node's inclusive cycles count for its frame only where no
  // ancestor has the same frame (the outermost call of a recursion covers the inner ones).
  std::vector<uint32_t> on_path(p.num_frames(), 0);
  struct Visit {
    Profile::NodeId node;
    uint32_t next_child;
  };
  std::vector<Visit> stack;
  stack.push_back({Profile::kRoot, first[Profile::kRoot]});
  while (!stack.empty()) {
    Visit& top = stack.back();
    if (top.next_child == first[top.node + 1]) {
      if (top.node != Profile::kRoot) --on_path[p.frame(top.node)];
      stack.pop_back();
      continue;
    }
    const Profile::NodeId child = children[top.next_child++];
    const Profile::FrameId frame = p.frame(child);
    self[frame] += p.self(child);
    hidden += p.hidden(child).cycles;
    if (on_path[frame]++ == 0) inclusive[frame] += node_inclusive[child];
    stack.push_back({child, first[child]});
  }
  for (Profile::FrameId f = 0; f < p.num_frames(); ++f) {
    if (self[f] != 0 || inclusive[f] != 0) {
      table.rows.push_back({std::string(p.frame_name(f)), self[f], inclusive[f]});
    }
  }
  if (p.self(Profile::kRoot) != 0) {
    table.rows.push_back({kUnknownFrame, p.self(Profile::kRoot), p.self(Profile::kRoot)});
  }
  if (hidden != 0) table.rows.push_back({kHiddenFrame, hidden, hidden});
  // Frame names are interned once, so rows are unique by name, except that the two synthetic
  // rows merge with a frame that happens to carry the same name.
  std::sort(table.rows.begin(), table.rows.end(),
            [](const ProcedureCycles& a, const ProcedureCycles& b) { return a.name < b.name; });
  std::vector<ProcedureCycles> merged;
  for (ProcedureCycles& row : table.rows) {
    if (!merged.empty() && merged.back().name == row.name) {
      merged.back().self += row.self;
      merged.back().inclusive += row.inclusive;
    } else {
      merged.push_back(std::move(row));
    }
  }
  table.rows = std::move(merged);
  return table;
}

std::map<std::string, ProcedureCycles> ProceduresByName(const Profile& p) {
  std::map<std::string, ProcedureCycles> out;
  for (ProcedureCycles& row : ComputeProcedureTable(p).rows) out[row.name] = std::move(row);
  return out;
}

absl::StatusOr<TopOrder> ParseTopOrder(absl::string_view by, absl::string_view input) {
  if (by == "self") return TopOrder::kSelf;
  if (by == "inclusive") return TopOrder::kInclusive;
  if (by == "calls") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--by calls: ", input,
        " has no call counts (folded stacks and cycle profiles carry cycles only); call counts "
        "come with a job's summary.json, which `top` cannot read yet (#16)"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--by: expected self, inclusive or calls, got \"", by, "\""));
}

void SortProcedures(TopOrder order, std::vector<ProcedureCycles>* rows) {
  auto key = [order](const ProcedureCycles& r) {
    return order == TopOrder::kSelf ? std::make_pair(r.self, r.inclusive)
                                    : std::make_pair(r.inclusive, r.self);
  };
  std::sort(rows->begin(), rows->end(), [&](const ProcedureCycles& a, const ProcedureCycles& b) {
    if (key(a) != key(b)) return key(a) > key(b);
    return a.name < b.name;
  });
}

void PrintTop(const ProcedureTable& table, size_t limit, std::ostream& out) {
  const size_t shown = std::min(limit, table.rows.size());
  out << "Showing " << shown << " of " << table.rows.size() << " procedures, " << table.total
      << " cycles total\n";
  out << absl::StrFormat("%14s %7s %7s %14s %7s  %s\n", "self", "self%", "sum%", "inclusive",
                         "incl%", "procedure");
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const ProcedureCycles& r = table.rows[i];
    sum += Percent(r.self, table.total);
    out << absl::StrFormat("%14d %6.2f%% %6.2f%% %14d %6.2f%%  %s\n", r.self,
                           Percent(r.self, table.total), sum, r.inclusive,
                           Percent(r.inclusive, table.total), r.name);
  }
}

nlohmann::json TopJson(const ProcedureTable& table, size_t limit) {
  const size_t shown = std::min(limit, table.rows.size());
  nlohmann::json j = {{"total", table.total}, {"procedures", table.rows.size()}, {"shown", shown}};
  j["rows"] = nlohmann::json::array();
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const ProcedureCycles& r = table.rows[i];
    sum += Percent(r.self, table.total);
    j["rows"].push_back({{"name", r.name},
                         {"self", r.self},
                         {"self_percent", Percent(r.self, table.total)},
                         {"cumulative_percent", sum},
                         {"inclusive", r.inclusive},
                         {"inclusive_percent", Percent(r.inclusive, table.total)}});
  }
  return j;
}

void AddTopCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<TopFlags>();
  CLI::App* cmd = app.add_subcommand(
      "top",
      "Print a profile's most expensive procedures as a table like pprof -top (--json: JSON)");
  cmd->add_option("input", flags->input,
                  "a folded file (- = stdin), a directory written by `flamefleet fetch`, or "
                  "batch:ID on the coordinator")
      ->required();
  cmd->add_option("--by", flags->by,
                  "sort by self (default) or inclusive cycles (calls needs call counts, which "
                  "only a summary.json will carry)");
  cmd->add_option("--limit", flags->limit, "rows to show (default 20)");
  cmd->add_flag("--json", flags->json, "print the table as JSON");
  cmd->add_option("--job", flags->job,
                  "one job of a fetched directory or batch instead of the aggregate");
  AddCoordinatorFlags(cmd, &flags->coordinator);
  SetCommand(cmd, exit_code, [flags] { return RunTop(*flags); });
}

}  // namespace flamefleet::cli
