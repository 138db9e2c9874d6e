// Exports and batch diffs through a real fleet: flamefleet-renderer,
// flamefleet-coordinator and one flamefleet-worker as child processes on
// loopback (OS-chosen ports), driven by the `flamefleet` binary: `fetch
// --format pprof|speedscope`, `diff BATCH BATCH --fail-above`, `aggregate`
// across batches and the result cache.
#include "profile/export.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pprof/profile.pb.h"
#include "tests/e2e/cli_fleet_fixture.h"
#include "tests/testing/test_files.h"

namespace flamefleet {
namespace {

namespace fs = std::filesystem;
using testutil::NestedLoopProgram;
using testutil::ReadFile;
using testutil::WriteFile;

class ExportFleetTest : public testutil::CliFleetTest {
 protected:
  ExportFleetTest() : CliFleetTest("export_fleet", /*workers=*/1) {}
};

TEST_F(ExportFleetTest, FetchFormatsAndBatchDiffGate) {
  WriteFile(root_ / "v1/a.masm", NestedLoopProgram(50));
  WriteFile(root_ / "v1/b.masm", NestedLoopProgram(200));
  WriteFile(root_ / "v2/a.masm", NestedLoopProgram(50));
  WriteFile(root_ / "v2/b.masm", NestedLoopProgram(300));  // ~50% slower
  WriteFile(root_ / "v2/c.masm", NestedLoopProgram(10));   // new job: never a regression
  const std::string before = SubmitAndWait(root_ / "v1");
  const std::string after = SubmitAndWait(root_ / "v2");
  ASSERT_FALSE(HasFailure());

  // status names the batch's most expensive procedures (self cycles over all jobs).
  ASSERT_EQ(Cli(absl::StrCat("status ", after)), 0) << err_;
  EXPECT_TRUE(absl::StrContains(out_, "most expensive procedures (self cycles over all jobs):"))
      << out_;
  EXPECT_TRUE(absl::StrContains(out_, "$exec::mix")) << out_;
  ASSERT_EQ(Cli(absl::StrCat("status ", after, " --json")), 0) << err_;
  const nlohmann::json with_top = nlohmann::json::parse(out_);
  ASSERT_FALSE(with_top["top_procedures"].empty()) << out_;
  uint64_t top_cycles = 0, previous = UINT64_MAX;
  for (const auto& row : with_top["top_procedures"]) {
    const uint64_t cycles = row["self_cycles"].get<uint64_t>();
    EXPECT_LE(cycles, previous) << out_;  // most expensive first
    previous = cycles;
    top_cycles += cycles;
  }
  EXPECT_LE(with_top["top_procedures"].size(), 5u);
  EXPECT_LE(top_cycles, with_top["aggregate_cycles"].get<uint64_t>()) << out_;

  // fetch --format pprof: aggregate + jobs, totals as the folded artifacts say.
  ASSERT_EQ(Cli(absl::StrCat("fetch ", after, " -o folded")), 0) << err_;
  ASSERT_EQ(Cli(absl::StrCat("fetch ", after, " -o pprof --format pprof")), 0) << err_;
  ASSERT_EQ(Cli(absl::StrCat("fetch ", after, " -o ss --format speedscope")), 0) << err_;
  for (const std::string name : {"aggregate", "jobs/a.masm", "jobs/b.masm", "jobs/c.masm"}) {
    uint64_t folded_total = 0;
    for (absl::string_view line :
         absl::StrSplit(ReadFile(root_ / "folded" / (name + ".folded")), '\n', absl::SkipEmpty())) {
      uint64_t n = 0;
      ASSERT_TRUE(absl::SimpleAtoi(line.substr(line.rfind(' ') + 1), &n));
      folded_total += n;
    }
    EXPECT_GT(folded_total, 0u) << name;
    absl::StatusOr<std::string> raw =
        profile::GzipDecompress(ReadFile(root_ / "pprof" / (name + ".pb.gz")));
    ASSERT_TRUE(raw.ok()) << name << ": " << raw.status();
    perftools::profiles::Profile pb;
    ASSERT_TRUE(pb.ParseFromString(*raw)) << name;
    int64_t sum = 0;
    for (const auto& s : pb.sample()) sum += s.value(0);
    EXPECT_EQ(static_cast<uint64_t>(sum), folded_total) << name;
    const nlohmann::json j =
        nlohmann::json::parse(ReadFile(root_ / "ss" / (name + ".speedscope.json")));
    EXPECT_EQ(j["profiles"][0]["endValue"].get<uint64_t>(), folded_total) << name;
    EXPECT_FALSE(fs::exists(root_ / "pprof" / (name + ".svg"))) << name;
  }

  // diff of two batches: b grew ~50%, c is new.
  EXPECT_EQ(Cli(absl::StrCat("diff ", before, " ", after, " -o d.svg --fail-above 5")), 3) << err_;
  const size_t heading = out_.find("jobs that grew most");
  ASSERT_NE(heading, std::string::npos) << out_;
  std::vector<std::string> lines = absl::StrSplit(out_.substr(heading), '\n');
  ASSERT_GE(lines.size(), 3u);
  EXPECT_TRUE(absl::StrContains(lines[2], "b.masm")) << out_;
  EXPECT_TRUE(absl::StrContains(out_, "c.masm")) << out_;  // listed as added
  EXPECT_TRUE(absl::StrContains(ReadFile(root_ / "d.svg"), "<svg"));
  EXPECT_EQ(Cli(absl::StrCat("diff ", before, " ", after, " -o d.svg --fail-above 80")), 0) << err_;
  // Identical: the batch against itself, and against its fetched directory.
  EXPECT_EQ(Cli(absl::StrCat("diff ", after, " batch:", after, " -o d.svg --fail-above 0")), 0)
      << err_;
  EXPECT_EQ(Cli(absl::StrCat("diff folded ", after, " -o d.svg --fail-above 0")), 0) << err_;
}

TEST_F(ExportFleetTest, HealthCommandAsksTheHealthService) {
  auto health = [&](const std::string& args) {
    const std::string cmd = absl::StrCat(FLAMEFLEET_CLI, " health ", args, " > '",
                                         (root_ / "h.txt").string(), "' 2>&1");
    const int status = std::system(cmd.c_str());
    out_ = ReadFile(root_ / "h.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(health(address_), 0) << out_;
  EXPECT_TRUE(absl::StrContains(out_, "SERVING")) << out_;
  EXPECT_NE(health(absl::StrCat(address_, " --service no.such.Service")), 0) << out_;
  coordinator_->Stop(absl::Seconds(10));
  EXPECT_NE(health(absl::StrCat(address_, " --timeout 2")), 0) << out_;
}

TEST_F(ExportFleetTest, NightlyAggregateAcrossBatchesAndTheResultCache) {
  WriteFile(root_ / "n1/a.masm", NestedLoopProgram(40));
  WriteFile(root_ / "n1/b.masm", NestedLoopProgram(90));
  WriteFile(root_ / "n2/a.masm", NestedLoopProgram(40));
  WriteFile(root_ / "n2/b.masm", NestedLoopProgram(120));
  WriteFile(root_ / "other/x.masm", NestedLoopProgram(7));
  std::vector<std::string> nights;
  for (const std::string dir : {"n1", "n2", "n2"}) {  // the third night changed nothing
    ASSERT_EQ(Cli(absl::StrCat("submit ", (root_ / dir).string(), " --label suite=nightly")), 0)
        << err_;
    nights.push_back(std::string(absl::StripAsciiWhitespace(out_)));
    ASSERT_EQ(Cli(absl::StrCat("watch ", nights.back())), 0) << err_;
  }
  ASSERT_EQ(Cli(absl::StrCat("submit ", (root_ / "other").string(), " --label suite=other")), 0);
  ASSERT_EQ(Cli(absl::StrCat("watch ", std::string(absl::StripAsciiWhitespace(out_)))), 0);

  // The third night ran nothing: both results came from the second.
  ASSERT_EQ(Cli(absl::StrCat("status ", nights[2], " --json")), 0) << err_;
  nlohmann::json status = nlohmann::json::parse(out_);
  ASSERT_EQ(status["job_status"].size(), 2u) << out_;
  for (const auto& job : status["job_status"]) {
    EXPECT_EQ(job["cached_from"].get<std::string>(),
              absl::StrCat(nights[1], "/", job["name"].get<std::string>()))
        << out_;
  }
  // --no-cache runs them.
  ASSERT_EQ(Cli(absl::StrCat("submit ", (root_ / "n2").string(), " --no-cache")), 0) << err_;
  const std::string forced(absl::StripAsciiWhitespace(out_));
  ASSERT_EQ(Cli(absl::StrCat("watch ", forced)), 0) << err_;
  ASSERT_EQ(Cli(absl::StrCat("status ", forced, " --json")), 0) << err_;
  const nlohmann::json forced_status = nlohmann::json::parse(out_);
  ASSERT_EQ(forced_status["job_status"].size(), 2u) << out_;
  for (const auto& job : forced_status["job_status"]) {
    EXPECT_FALSE(job.contains("cached_from")) << out_;
  }

  // The aggregate of the three nights is the sum of their job profiles.
  std::map<std::string, uint64_t> expected;
  for (const std::string& id : nights) {
    ASSERT_EQ(Cli(absl::StrCat("fetch ", id, " -o night", id)), 0) << err_;
    for (const std::string job : {"a.masm", "b.masm"}) {
      for (const auto& [stack, n] : testutil::ParseFoldedCounts(
               ReadFile(root_ / ("night" + id) / "jobs" / (job + ".folded")))) {
        expected[stack] += n;
      }
    }
  }
  ASSERT_EQ(Cli("aggregate --label suite=nightly --since 1h -o agg.folded"), 0) << err_;
  EXPECT_EQ(testutil::ParseFoldedCounts(ReadFile(root_ / "agg.folded")), expected);
  EXPECT_TRUE(absl::StrContains(err_, "merged 3 batches")) << err_;
  ASSERT_EQ(Cli("aggregate --label suite=nightly -o agg.svg --title nightly"), 0) << err_;
  EXPECT_TRUE(absl::StrContains(ReadFile(root_ / "agg.svg"), "<svg"));
  ASSERT_EQ(Cli("aggregate --label suite=nightly -o agg.pb.gz"), 0) << err_;
  absl::StatusOr<std::string> raw = profile::GzipDecompress(ReadFile(root_ / "agg.pb.gz"));
  ASSERT_TRUE(raw.ok()) << raw.status();
  perftools::profiles::Profile pb;
  ASSERT_TRUE(pb.ParseFromString(*raw));
  uint64_t expected_total = 0, sum = 0;
  for (const auto& [stack, n] : expected) expected_total += n;
  for (const auto& sample : pb.sample()) sum += static_cast<uint64_t>(sample.value(0));
  EXPECT_EQ(sum, expected_total);

  EXPECT_NE(Cli("aggregate --label suite=nobody -o none.svg"), 0);
  EXPECT_TRUE(absl::StrContains(err_, "no ended batch")) << err_;
  EXPECT_NE(Cli("aggregate --label nokey -o none.svg"), 0);
  EXPECT_TRUE(absl::StrContains(err_, "KEY=VALUE")) << err_;
}

}  // namespace
}  // namespace flamefleet
