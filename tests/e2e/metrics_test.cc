// Issue #16 through a real fleet: flamefleet-renderer, flamefleet-coordinator and two
// flamefleet-worker processes on loopback (OS-chosen ports), driven by the `flamefleet` binary:
// `top batch:ID` and `top DIR` of the fetched batch, aggregate-by-job.svg/.folded (each job's name
// a root frame whose cycles are the job's), and `diff --json` with per-metric gates.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/cli_fleet_fixture.h"
#include "tests/testing/test_files.h"

namespace flamefleet {
namespace {

namespace fs = std::filesystem;
using testutil::NestedLoopProgram;
using testutil::ReadFile;
using testutil::WriteFile;

class MetricsFleetTest : public testutil::CliFleetTest {
 protected:
  MetricsFleetTest() : CliFleetTest("metrics_fleet", /*workers=*/2) {}

  // The cycles of every job of batch `id`, from `status --json`.
  std::map<std::string, uint64_t> JobCycles(const std::string& id) {
    std::map<std::string, uint64_t> out;
    EXPECT_EQ(Cli(absl::StrCat("status ", id, " --json")), 0) << err_;
    const nlohmann::json status = nlohmann::json::parse(out_);
    for (const auto& job : status["job_status"]) {
      out[job["name"].get<std::string>()] = job["cycles"].get<uint64_t>();
    }
    return out;
  }
};

TEST_F(MetricsFleetTest, TopAggregateByJobAndPerMetricGates) {
  WriteFile(root_ / "v1/a.masm", NestedLoopProgram(50));
  WriteFile(root_ / "v1/b.masm", NestedLoopProgram(200));
  WriteFile(root_ / "v2/a.masm", NestedLoopProgram(50));
  WriteFile(root_ / "v2/b.masm", NestedLoopProgram(300));
  const std::string before = SubmitAndWait(root_ / "v1");
  const std::string after = SubmitAndWait(root_ / "v2");
  ASSERT_FALSE(HasFailure());
  const std::map<std::string, uint64_t> jobs = JobCycles(after);
  ASSERT_EQ(jobs.size(), 2u) << out_ << err_;
  const uint64_t total = jobs.at("a.masm") + jobs.at("b.masm");

  // top batch:ID: the aggregate; self cycles of all rows add up to the total, mix is inside step
  // (inclusive(step) >= inclusive(mix)), the main procedure covers everything.
  ASSERT_EQ(Cli(absl::StrCat("top batch:", after, " --json --limit 1000")), 0) << err_;
  const nlohmann::json top = nlohmann::json::parse(out_);
  EXPECT_EQ(top["total"].get<uint64_t>(), total);
  std::map<std::string, nlohmann::json> rows;
  uint64_t self_sum = 0;
  for (const auto& row : top["rows"]) {
    rows[row["name"].get<std::string>()] = row;
    self_sum += row["self"].get<uint64_t>();
  }
  EXPECT_EQ(self_sum, total);
  ASSERT_TRUE(rows.contains("$exec::mix") && rows.contains("$exec::step")) << out_;
  EXPECT_GT(rows["$exec::step"]["inclusive"].get<uint64_t>(),
            rows["$exec::mix"]["inclusive"].get<uint64_t>());
  EXPECT_EQ(rows["$exec::mix"]["self"], rows["$exec::mix"]["inclusive"]);  // a leaf
  // One job, and the table form.
  ASSERT_EQ(Cli(absl::StrCat("top batch:", after, " --job b.masm --json")), 0) << err_;
  EXPECT_EQ(nlohmann::json::parse(out_)["total"].get<uint64_t>(), jobs.at("b.masm"));
  ASSERT_EQ(Cli(absl::StrCat("top batch:", after, " --limit 2")), 0) << err_;
  EXPECT_TRUE(absl::StartsWith(
      out_, absl::StrCat("Showing 2 of ", rows.size(), " procedures, ", total, " cycles total\n")))
      << out_;
  EXPECT_EQ(Cli("top batch:999"), 1);
  EXPECT_TRUE(absl::StrContains(err_, "batch:999")) << err_;

  // fetch: aggregate-by-job beside aggregate; its root frames are the jobs, each with the job's
  // cycles.
  ASSERT_EQ(Cli(absl::StrCat("fetch ", after, " -o out")), 0) << err_;
  std::map<std::string, uint64_t> by_root;
  for (const auto& [stack, cycles] :
       testutil::ParseFoldedCounts(ReadFile(root_ / "out/aggregate-by-job.folded"))) {
    by_root[stack.substr(0, stack.find(';'))] += cycles;
  }
  EXPECT_EQ(by_root, jobs);
  const std::string svg = ReadFile(root_ / "out/aggregate-by-job.svg");
  EXPECT_TRUE(absl::StrContains(svg, "<svg")) << svg.substr(0, 200);
  EXPECT_TRUE(absl::StrContains(svg, "by job")) << svg.substr(0, 400);
  EXPECT_TRUE(absl::StrContains(svg, "a.masm"));
  EXPECT_TRUE(absl::StrContains(svg, "b.masm"));
  // The fetched directory gives the same table as the batch.
  ASSERT_EQ(Cli("top out --json --limit 1000"), 0) << err_;
  EXPECT_EQ(nlohmann::json::parse(out_)["rows"], top["rows"]);

  // diff --json with per-metric gates: b ran 300 loops instead of 200, a 50 both times, so step's
  // inclusive cycles grew by about 100/250 = 40%.
  ASSERT_EQ(Cli(absl::StrCat("diff ", before, " ", after,
                             " -o d.svg --json --fail-above 'proc:$exec::step=60'")),
            0)
      << err_;
  const nlohmann::json diff = nlohmann::json::parse(out_);
  bool saw_step = false;
  for (const auto& p : diff["procedures"]) {
    if (p["name"] != "$exec::step") continue;
    saw_step = true;
    const double pct = p["inclusive"]["percent"].get<double>();
    EXPECT_GT(pct, 35.0);
    EXPECT_LT(pct, 45.0);
  }
  EXPECT_TRUE(saw_step) << out_;
  EXPECT_EQ(diff["gates"][0]["failed"], false);
  EXPECT_EQ(Cli(absl::StrCat("diff ", before, " ", after,
                             " -o d.svg --fail-above 'proc:$exec::step=30' --fail-above "
                             "cycles=90")),
            3)
      << err_;
  EXPECT_TRUE(absl::StrContains(err_, "proc:$exec::step (inclusive cycles) grew")) << err_;
  EXPECT_FALSE(absl::StrContains(err_, "job(s) grew")) << err_;  // b grew 50%, not above 90%
  EXPECT_EQ(Cli(absl::StrCat("diff ", before, " ", after, " -o d.svg --fail-above cycles=40")), 3)
      << err_;
  EXPECT_TRUE(absl::StrContains(err_, "b.masm")) << err_;
}

}  // namespace
}  // namespace flamefleet
