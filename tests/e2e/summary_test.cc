// Issue #16: every fleet job ships its summary. `submit --phase` of a suite whose manifest names
// markers, then `fetch`, writes summary.json whose job rows are `profile --summary` of each
// program, whose totals add up and which matches docs/batch-summary.schema.json; a cache hit
// gives the same rows, and a job that fails to assemble is listed without a summary.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/cli_fleet_fixture.h"
#include "tests/testing/json_schema.h"
#include "tests/testing/test_files.h"

namespace flamefleet {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testutil::ReadFile;
using testutil::WriteFile;

class SummaryFleetTest : public testutil::CliFleetTest {
 protected:
  SummaryFleetTest() : CliFleetTest("summary_fleet", /*workers=*/2) {}

  // Submits `args`, waits for the batch (it may fail) and fetches it into `out`; returns its id.
  std::string RunBatch(const std::string& args, const std::string& out) {
    EXPECT_EQ(Cli(absl::StrCat("submit ", args)), 0) << err_;
    const std::string id(absl::StripAsciiWhitespace(out_));
    Cli(absl::StrCat("watch ", id));
    EXPECT_EQ(Cli(absl::StrCat("fetch ", id, " -o ", out)), 0) << err_;
    return id;
  }

  // `flamefleet profile --summary` of `program` (local, no fleet): the parsed summary.json.
  json LocalSummary(const fs::path& program, const std::string& flags) {
    const fs::path out = root_ / absl::StrCat(program.stem().string(), ".local.json");
    const std::string cmd =
        absl::StrCat(FLAMEFLEET_CLI, " profile ", program.string(), " --dialect v0.25 -o ",
                     (root_ / "local.svg").string(), " --summary ", out.string(), " ", flags,
                     " > /dev/null 2>&1");
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return json::parse(ReadFile(out));
  }
};

constexpr const char* kA = R"(proc work
  push.0 repeat.20 add.3 end drop
end
begin
  emit.event("p::start")
  exec.work
  repeat.3 emit.event("p::loop") exec.work end
  emit.event("p::end")
end
)";

constexpr const char* kB = R"(proc sq dup mul end
begin
  push.7 exec.sq exec.sq drop
  emit.event("p::start") emit.event("p::end")
end
)";

TEST_F(SummaryFleetTest, FetchWritesTheBatchSummaryWithEveryJobsProfileSummary) {
  WriteFile(root_ / "suite/flamefleet.toml", R"(dialect = "v0.25"
[summary]
markers = ["p::"]
)");
  WriteFile(root_ / "suite/a.masm", kA);
  WriteFile(root_ / "suite/b.masm", kB);
  WriteFile(root_ / "suite/bad.masm", "begin exec.missing end\n");
  const std::string id = RunBatch("suite --phase p::start=p::end", "out");
  ASSERT_FALSE(HasFailure());
  const json doc = json::parse(ReadFile(root_ / "out/summary.json"));

  const std::string docs = FLAMEFLEET_DOCS_DIR;
  EXPECT_EQ(
      testutil::SchemaErrors(testutil::LoadJsonSchema(docs + "/batch-summary.schema.json"), doc),
      std::vector<std::string>{});
  const json job_schema = testutil::LoadJsonSchema(docs + "/summary.schema.json");
  EXPECT_EQ(doc["batch"], id);
  EXPECT_EQ(doc["state"], "failed");

  // The job rows are profile --summary's (named by the job, not the file's stem).
  ASSERT_EQ(doc["jobs"].size(), 2u) << doc.dump(1);
  uint64_t cycles = 0;
  for (const json& row : doc["jobs"]) {
    EXPECT_EQ(testutil::SchemaErrors(job_schema, row), std::vector<std::string>{});
    const std::string name = row["job"];
    json local = LocalSummary(root_ / "suite" / name, "--phase p::start=p::end --marker p::");
    local["job"] = name;
    // Fleet summaries do not carry the trace shape yet (docs/trace-shape.md, TODO(#18)): the
    // rest is the same.
    EXPECT_FALSE(row.contains("trace_shape"));
    EXPECT_TRUE(local.contains("trace_shape"));
    local.erase("trace_shape");
    for (json& p : local["procedures"]) p.erase("trace");
    EXPECT_EQ(row, local) << name;
    cycles += row["cycles"].get<uint64_t>();
  }
  EXPECT_EQ(doc["jobs"][0]["job"], "a.masm");
  EXPECT_EQ(doc["jobs"][0]["phases"][0]["name"], "p::start..p::end");
  EXPECT_EQ(doc["jobs"][0]["phases"][0]["count"], 1);

  // Totals add up: the batch's cycles, the procedures' self cycles, instructions, operations.
  EXPECT_EQ(doc["cycles"], cycles);
  uint64_t self = 0, instructions = 0, operations = 0;
  for (const json& p : doc["procedures"]) self += p["self"].get<uint64_t>();
  for (const json& r : doc["instructions"]) instructions += r["cycles"].get<uint64_t>();
  for (const json& r : doc["operations"]) operations += r["cycles"].get<uint64_t>();
  EXPECT_EQ(self, cycles);
  EXPECT_EQ(instructions, cycles);
  EXPECT_EQ(operations, cycles);
  // The pair phase ran in both jobs.
  ASSERT_FALSE(doc["phases"].empty());
  EXPECT_EQ(doc["phases"][0]["name"], "p::start..p::end");
  EXPECT_EQ(doc["phases"][0]["jobs"], 2);

  // The job that failed to assemble has no summary.
  ASSERT_EQ(doc["without_summary"].size(), 1u);
  EXPECT_EQ(doc["without_summary"][0]["job"], "bad.masm");
  EXPECT_EQ(doc["without_summary"][0]["state"], "failed");
  EXPECT_NE(doc["without_summary"][0]["error"].get<std::string>().find("missing"),
            std::string::npos);

  // `top batch:ID` reads the same summary from the coordinator: calls, phases.
  EXPECT_EQ(Cli(absl::StrCat("top batch:", id, " --by calls --json")), 0) << err_;
  const json top = json::parse(out_);
  ASSERT_FALSE(top["rows"].empty()) << out_;
  EXPECT_EQ(top["summary"]["kind"], "batch");
  uint64_t most_calls = 0;
  for (const json& p : doc["procedures"]) {
    most_calls = std::max(most_calls, p["calls"].get<uint64_t>());
  }
  EXPECT_EQ(top["rows"][0]["calls"], most_calls) << out_;
  EXPECT_EQ(Cli(absl::StrCat("top batch:", id, " --phases")), 0) << err_;
  EXPECT_NE(out_.find("p::start..p::end"), std::string::npos) << out_;

  // The same suite again: the programs come from the result cache, with the same summaries.
  const std::string again = RunBatch("suite --phase p::start=p::end", "again");
  Cli(absl::StrCat("status ", again));
  EXPECT_NE(out_.find(absl::StrCat("(cached from ", id, "/a.masm)")), std::string::npos) << out_;
  EXPECT_NE(out_.find(absl::StrCat("(cached from ", id, "/b.masm)")), std::string::npos) << out_;
  const json cached = json::parse(ReadFile(root_ / "again/summary.json"));
  EXPECT_EQ(cached["jobs"], doc["jobs"]);
  EXPECT_EQ(cached["procedures"], doc["procedures"]);

  // `diff` of two batch ids reads their summaries from the coordinator: phase deltas and gates.
  EXPECT_EQ(Cli(absl::StrCat("diff ", id, " ", again,
                             " -o d.svg --json --fail-above phase:p::start..p::end=0")),
            0)
      << err_;
  const json diff = json::parse(out_);
  ASSERT_EQ(diff["phases"].size(), doc["phases"].size()) << out_;
  const json* pair = nullptr;
  for (const json& p : diff["phases"]) {
    if (p["name"] == "p::start..p::end") pair = &p;
  }
  ASSERT_NE(pair, nullptr) << out_;
  EXPECT_EQ((*pair)["before"], (*pair)["after"]);
  EXPECT_EQ((*pair)["before"], doc["phases"][0]["total"]);

  // Other phases are another result: run again, and the summary says so.
  RunBatch("suite --phase p::loop=p::end", "other");
  const json other = json::parse(ReadFile(root_ / "other/summary.json"));
  ASSERT_EQ(other["jobs"].size(), 2u);
  EXPECT_EQ(other["jobs"][0]["phases"][0]["name"], "p::loop..p::end");
}

TEST_F(SummaryFleetTest, BadPhaseFlagsAndManifestKeysAreRefusedNamingThem) {
  WriteFile(root_ / "suite/a.masm", "begin push.1 drop end\n");
  EXPECT_EQ(Cli("submit suite --phase nope"), 2);
  EXPECT_NE(err_.find("--phase 'nope'"), std::string::npos) << err_;
  WriteFile(root_ / "suite/flamefleet.toml", "[summary]\nphases = [\"x\"]\n");
  EXPECT_EQ(Cli("submit suite"), 2);
  EXPECT_NE(err_.find("summary.phases[0]"), std::string::npos) << err_;
  WriteFile(root_ / "suite/flamefleet.toml", "[summary]\nmarker = [\"x\"]\n");
  EXPECT_EQ(Cli("submit suite"), 2);
  EXPECT_NE(err_.find("unknown key 'marker'"), std::string::npos) << err_;
}

}  // namespace
}  // namespace flamefleet
