// Issue #16: every fleet job ships its summary. `submit --phase` of a suite whose manifest names
// markers, then `fetch`, writes summary.json whose job rows are `profile --summary` of each
// program (issue #18: trace shape included), whose totals add up (the batch's trace totals too)
// and which matches docs/batch-summary.schema.json; a cache hit gives the same rows, and a job
// that fails to assemble is listed without a summary. `top batch:ID --by hasher` and
// `diff A B --fail-above padded:0` work on fleet batches.
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
    // Trace shape included (issue #18): the worker's summary is profile --summary's.
    EXPECT_TRUE(row.contains("trace_shape")) << name;
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
  // The batch's trace totals sum the jobs' trace shapes, and the procedures' trace rows (summed
  // by name) plus the overhead add up to them.
  ASSERT_TRUE(doc.contains("trace_totals")) << doc.dump(1);
  const json& totals = doc["trace_totals"];
  EXPECT_EQ(totals["jobs"], 2);
  uint64_t padded = 0;
  for (const json& row : doc["jobs"]) padded += row["trace_shape"]["padded_len"].get<uint64_t>();
  EXPECT_EQ(totals["padded_len"], padded);
  for (const char* kind : {"hasher", "bitwise", "memory", "ace", "range", "chiplets"}) {
    uint64_t rows = 0, overhead = 0;
    for (const json& row : doc["jobs"]) {
      const json& shape = row["trace_shape"];
      rows += std::string(kind) == "hasher" ? shape["hasher"]["rows"].get<uint64_t>()
                                            : shape[std::string(kind) + "_rows"].get<uint64_t>();
      overhead += shape["overhead"][kind].get<uint64_t>();
    }
    EXPECT_EQ(totals["rows"][kind], rows) << kind;
    EXPECT_EQ(totals["overhead"][kind], overhead) << kind;
    uint64_t attributed = overhead;
    for (const json& p : doc["procedures"]) {
      attributed += p["trace"]["self"][kind].get<uint64_t>();
    }
    EXPECT_EQ(attributed, rows) << kind;
  }

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
  // ... and the batch's trace totals: rows by procedure of one kind.
  EXPECT_EQ(Cli(absl::StrCat("top batch:", id, " --by hasher --json")), 0) << err_;
  const json by_hasher = json::parse(out_);
  EXPECT_EQ(by_hasher["unit"], "hasher rows");
  EXPECT_EQ(by_hasher["total"], totals["rows"]["hasher"]) << out_;

  // The same suite again: the programs come from the result cache, with the same summaries.
  const std::string again = RunBatch("suite --phase p::start=p::end", "again");
  Cli(absl::StrCat("status ", again));
  EXPECT_NE(out_.find(absl::StrCat("(cached from ", id, "/a.masm)")), std::string::npos) << out_;
  EXPECT_NE(out_.find(absl::StrCat("(cached from ", id, "/b.masm)")), std::string::npos) << out_;
  const json cached = json::parse(ReadFile(root_ / "again/summary.json"));
  EXPECT_EQ(cached["jobs"], doc["jobs"]);
  EXPECT_EQ(cached["procedures"], doc["procedures"]);
  EXPECT_EQ(cached["trace_totals"], doc["trace_totals"]);

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
  // The padded gate on two batch ids: the same programs pass it ...
  EXPECT_EQ(Cli(absl::StrCat("diff ", id, " ", again, " -o d.svg --fail-above padded:0")), 0)
      << err_;
  // ... a.masm hashing in a loop does not (its padded trace length grows).
  WriteFile(root_ / "grown/flamefleet.toml", ReadFile(root_ / "suite/flamefleet.toml"));
  WriteFile(root_ / "grown/a.masm", R"(proc hash
  padw padw padw hperm dropw dropw dropw
end
begin
  repeat.200 exec.hash push.1 drop end
end
)");
  WriteFile(root_ / "grown/b.masm", kB);
  const std::string grown = RunBatch("grown --phase p::start=p::end", "grown_out");
  EXPECT_EQ(Cli(absl::StrCat("diff ", id, " ", grown, " -o g.svg --fail-above padded:0")), 3)
      << out_ << err_;
  EXPECT_NE(err_.find("padded trace length grew"), std::string::npos) << err_;
  EXPECT_NE(err_.find("a.masm"), std::string::npos) << err_;

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
