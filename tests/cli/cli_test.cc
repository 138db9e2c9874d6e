// The CLI's export and diff paths: BatchClient::FetchAll in every format (with
// and without the coordinator's PROFILE artifacts), suite diffs of fetched
// directories and batches, and the `flamefleet` binary's `profile -o`, `render
// -o`, `fetch --format` and `diff` (exit codes, tables, --fail-above) against a
// fake coordinator on localhost:0. `go tool pprof` reads what `profile -o
// x.pb.gz` writes (when Go is installed at configure time).
#include <grpcpp/grpcpp.h>
#include <sys/wait.h>
#include <unistd.h>

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
#include "absl/synchronization/mutex.h"
#include "cli/batch_client.h"
#include "cli/safe_paths.h"
#include "cli/suite_diff.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pprof/profile.pb.h"
#include "profile/export.h"
#include "profile/folded.h"
#include "profile/profile_proto.h"
#include "tests/testing/profile_helpers.h"
#include "tests/testing/status_matchers.h"
#include "tests/testing/test_files.h"

namespace flamefleet::cli {
namespace {

namespace fs = std::filesystem;
using profile::Profile;
using ::testing::HasSubstr;
using testutil::ReadFile;
using testutil::WriteFile;
using Stacks = testutil::FoldedCounts;
using testutil::FromFolded;
using testutil::ParseFoldedCounts;

std::string Folded(const Profile& p) {
  std::ostringstream out;
  EXPECT_TRUE(profile::WriteFolded(p, out).ok());
  return out.str();
}

// Decodes a .pb.gz file into folded stacks (leaf-first samples reversed).
Stacks PprofStacks(const std::string& gz) {
  Stacks out;
  absl::StatusOr<std::string> raw = profile::GzipDecompress(gz);
  EXPECT_TRUE(raw.ok()) << raw.status();
  if (!raw.ok()) return out;
  perftools::profiles::Profile pb;
  EXPECT_TRUE(pb.ParseFromString(*raw));
  std::map<uint64_t, std::string> fn;
  for (const auto& f : pb.function()) fn[f.id()] = pb.string_table(static_cast<int>(f.name()));
  std::map<uint64_t, std::string> loc;
  for (const auto& l : pb.location()) loc[l.id()] = fn[l.line(0).function_id()];
  for (const auto& s : pb.sample()) {
    std::vector<std::string> frames;
    for (auto it = s.location_id().rbegin(); it != s.location_id().rend(); ++it) {
      frames.push_back(loc[*it]);
    }
    out[absl::StrJoin(frames, ";")] += static_cast<uint64_t>(s.value(0));
  }
  return out;
}

// A coordinator with fixed finished batches, serving GetBatch and FetchArtifact
// only.
class FakeCoordinator final : public v1::Coordinator::Service {
 public:
  struct Batch {
    v1::BatchState state = v1::BATCH_STATE_SUCCEEDED;
    std::map<std::string, std::string> jobs;  // name -> folded text
  };

  // Adds batch `id`; its aggregate is the sum of its jobs.
  void AddBatch(const std::string& id, Batch batch) {
    absl::MutexLock lock(&mu_);
    batches_[id] = std::move(batch);
  }
  // Makes FetchArtifact answer SUMMARY as a coordinator that predates it does.
  void DropSummaries() {
    absl::MutexLock lock(&mu_);
    serve_summaries_ = false;
  }
  // Makes FetchArtifact answer NOT_FOUND for PROFILE (an older coordinator).
  void DropProfileArtifacts() {
    absl::MutexLock lock(&mu_);
    serve_profiles_ = false;
  }
  int fetches(v1::ArtifactFormat format) {
    absl::MutexLock lock(&mu_);
    return fetches_[format];
  }

  grpc::Status GetBatch(grpc::ServerContext*, const v1::GetBatchRequest* req,
                        v1::Batch* out) override {
    absl::MutexLock lock(&mu_);
    auto it = batches_.find(req->batch_id());
    if (it == batches_.end()) return {grpc::StatusCode::NOT_FOUND, "no such batch"};
    out->set_batch_id(req->batch_id());
    out->set_state(it->second.state);
    uint64_t total = 0;
    for (const auto& [name, folded] : it->second.jobs) {
      v1::JobStatus* job = out->add_jobs();
      job->set_name(name);
      job->set_state(v1::JOB_STATE_SUCCEEDED);
      job->set_cycles(FromFolded(folded).total());
      total += job->cycles();
    }
    out->set_jobs_total(static_cast<uint32_t>(it->second.jobs.size()));
    out->set_jobs_succeeded(static_cast<uint32_t>(it->second.jobs.size()));
    out->set_aggregate_cycles(total);
    return grpc::Status::OK;
  }

  grpc::Status FetchArtifact(grpc::ServerContext*, const v1::FetchArtifactRequest* req,
                             grpc::ServerWriter<v1::ArtifactChunk>* writer) override {
    Profile p;
    {
      absl::MutexLock lock(&mu_);
      ++fetches_[req->format()];
      auto it = batches_.find(req->batch_id());
      if (it == batches_.end()) return {grpc::StatusCode::NOT_FOUND, "no such batch"};
      if (req->format() == v1::ARTIFACT_FORMAT_PROFILE && !serve_profiles_) {
        return {grpc::StatusCode::NOT_FOUND, "no profile artifact"};
      }
      if (req->format() == v1::ARTIFACT_FORMAT_SUMMARY) {
        if (!serve_summaries_)
          return {grpc::StatusCode::INVALID_ARGUMENT, "format: unknown value 3"};
        // Jobs as an older worker reports them: without summaries.
        v1::BatchSummary summary;
        summary.set_batch_id(req->batch_id());
        summary.set_state(it->second.state);
        for (const auto& [name, folded] : it->second.jobs) {
          v1::BatchSummaryJob* job = summary.add_jobs();
          job->set_name(name);
          job->set_state(v1::JOB_STATE_SUCCEEDED);
        }
        v1::ArtifactChunk chunk;
        chunk.set_data(summary.SerializeAsString());
        writer->Write(chunk);
        return grpc::Status::OK;
      }
      for (const auto& [name, folded] : it->second.jobs) {
        if (req->view() == v1::AGGREGATE_VIEW_BY_JOB) {
          // Each job under a root frame of its name, as the coordinator's by-job aggregate.
          std::string rooted;
          for (absl::string_view line : absl::StrSplit(folded, '\n', absl::SkipEmpty())) {
            absl::StrAppend(&rooted, name, ";", line, "\n");
          }
          p.MergeFrom(FromFolded(rooted));
        } else if (req->job_name().empty() || req->job_name() == name) {
          p.MergeFrom(FromFolded(folded));
        }
      }
      if (!req->job_name().empty() && !it->second.jobs.contains(req->job_name())) {
        return {grpc::StatusCode::NOT_FOUND, "no such job"};
      }
    }
    v1::ArtifactChunk chunk;
    switch (req->format()) {
      case v1::ARTIFACT_FORMAT_PROFILE:
        chunk.set_data(profile::SerializeProfile(p));
        break;
      case v1::ARTIFACT_FORMAT_FOLDED:
        chunk.set_data(Folded(p));
        break;
      default:
        chunk.set_data(absl::StrCat(
            "<svg>", req->view() == v1::AGGREGATE_VIEW_BY_JOB ? "by job" : req->job_name(),
            "</svg>"));
        break;
    }
    writer->Write(chunk);
    return grpc::Status::OK;
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, Batch> batches_ ABSL_GUARDED_BY(mu_);
  bool serve_profiles_ ABSL_GUARDED_BY(mu_) = true;
  bool serve_summaries_ ABSL_GUARDED_BY(mu_) = true;
  std::map<int, int> fetches_ ABSL_GUARDED_BY(mu_);
};

constexpr char kFast[] = "$exec::$main;ex::fast 100\n$exec::$main 10\n";
constexpr char kSlow[] = "$exec::$main;ex::slow;std::mem::copy 400\n$exec::$main 20\n";
constexpr char kSlower[] = "$exec::$main;ex::slow;std::mem::copy 480\n$exec::$main 20\n";

class CliTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::TempDir()) /
            absl::StrCat("cli_", testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                         getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
    fake_.AddBatch("1", {.jobs = {{"fast.masm", kFast}, {"suite/slow.masm", kSlow}}});
    fake_.AddBatch(
        "2", {.jobs = {{"fast.masm", kFast}, {"suite/slow.masm", kSlower}, {"new.masm", kFast}}});
    fake_.AddBatch("3", {.state = v1::BATCH_STATE_RUNNING, .jobs = {{"fast.masm", kFast}}});
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&fake_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    ASSERT_GT(port_, 0);
  }
  void TearDown() override {
    server_->Shutdown();
    fs::remove_all(root_);
  }

  BatchClient Client() { return BatchClient(server_->InProcessChannel(grpc::ChannelArguments())); }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

  // Runs the flamefleet binary with `args` (shell words); returns its exit code
  // and keeps stdout / stderr in out_ / err_.
  int Run(const std::string& args) {
    const fs::path out = root_ / "stdout.txt";
    const fs::path err = root_ / "stderr.txt";
    const std::string cmd = absl::StrCat("cd '", root_.string(), "' && ", FLAMEFLEET_CLI, " ", args,
                                         " >'", out.string(), "' 2>'", err.string(), "'");
    const int status = std::system(cmd.c_str());
    out_ = ReadFile(out);
    err_ = ReadFile(err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Writes a fetched-style directory: jobs/<name>.folded per job and
  // aggregate.folded.
  fs::path WriteOutputDir(const std::string& name, const std::map<std::string, std::string>& jobs) {
    const fs::path dir = root_ / name;
    Profile aggregate;
    for (const auto& [job, folded] : jobs) {
      WriteFile(dir / "jobs" / (job + ".folded"), folded);
      aggregate.MergeFrom(FromFolded(folded));
    }
    WriteFile(dir / "aggregate.folded", Folded(aggregate));
    return dir;
  }

  fs::path root_;
  FakeCoordinator fake_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::string out_, err_;
};

// --- BatchClient::FetchAll
// ------------------------------------------------------------------

TEST_F(CliTest, FetchAllDefaultWritesSvgAndFolded) {
  ASSERT_TRUE(Client().FetchAll("1", (root_ / "out").string()).ok());
  EXPECT_EQ(ReadFile(root_ / "out/aggregate.svg"), "<svg></svg>");
  EXPECT_EQ(ParseFoldedCounts(ReadFile(root_ / "out/aggregate.folded")),
            ParseFoldedCounts(Folded(FromFolded(absl::StrCat(kFast, kSlow)))));
  EXPECT_EQ(ReadFile(root_ / "out/jobs/suite/slow.masm.svg"), "<svg>suite/slow.masm</svg>");
  EXPECT_EQ(ParseFoldedCounts(ReadFile(root_ / "out/jobs/suite/slow.masm.folded")),
            ParseFoldedCounts(kSlow));
  EXPECT_FALSE(fs::exists(root_ / "out/aggregate.pb.gz"));
  // The by-job aggregate beside it: asked for with the BY_JOB view.
  EXPECT_EQ(ReadFile(root_ / "out/aggregate-by-job.svg"), "<svg>by job</svg>");
  EXPECT_EQ(ParseFoldedCounts(ReadFile(root_ / "out/aggregate-by-job.folded")),
            ParseFoldedCounts("fast.masm;$exec::$main;ex::fast 100\nfast.masm;$exec::$main 10\n"
                              "suite/slow.masm;$exec::$main;ex::slow;std::mem::copy 400\n"
                              "suite/slow.masm;$exec::$main 20\n"));
  // And the batch's summary.json, here of jobs that have no summary.
  const nlohmann::json summary = nlohmann::json::parse(ReadFile(root_ / "out/summary.json"));
  EXPECT_EQ(summary["schema"], "flamefleet.batch-summary/1");
  EXPECT_EQ(summary["batch"], "1");
  EXPECT_EQ(summary["state"], "succeeded");
  ASSERT_EQ(summary["without_summary"].size(), 2u);
  EXPECT_EQ(summary["without_summary"][0]["job"], "fast.masm");
  EXPECT_TRUE(summary["without_summary"][0]["error"].is_null());
  EXPECT_EQ(summary["cycles"], 0);
}

TEST_F(CliTest, FetchAllWritesNoSummaryFromACoordinatorThatPredatesThem) {
  fake_.DropSummaries();
  ASSERT_OK(Client().FetchAll("1", (root_ / "out").string()));
  EXPECT_TRUE(fs::exists(root_ / "out/aggregate.svg"));
  EXPECT_FALSE(fs::exists(root_ / "out/summary.json"));
}

TEST_F(CliTest, FetchAllPprofWritesOnlyPprofForAggregateAndJobs) {
  ASSERT_TRUE(
      Client().FetchAll("1", (root_ / "out").string(), {profile::ProfileFormat::kPprof}).ok());
  EXPECT_EQ(PprofStacks(ReadFile(root_ / "out/aggregate.pb.gz")),
            ParseFoldedCounts(absl::StrCat(kFast, kSlow)));
  EXPECT_EQ(PprofStacks(ReadFile(root_ / "out/jobs/fast.masm.pb.gz")), ParseFoldedCounts(kFast));
  EXPECT_EQ(PprofStacks(ReadFile(root_ / "out/jobs/suite/slow.masm.pb.gz")),
            ParseFoldedCounts(kSlow));
  EXPECT_FALSE(fs::exists(root_ / "out/aggregate.svg"));
  EXPECT_FALSE(fs::exists(root_ / "out/aggregate.folded"));
  EXPECT_TRUE(fs::exists(root_ / "out/aggregate-by-job.pb.gz"));
  EXPECT_EQ(fake_.fetches(v1::ARTIFACT_FORMAT_PROFILE), 4);  // aggregate, by job, 2 jobs
  EXPECT_EQ(fake_.fetches(v1::ARTIFACT_FORMAT_FOLDED), 0);
}

TEST_F(CliTest, FetchAllConvertsFoldedWhenTheCoordinatorHasNoProfiles) {
  fake_.DropProfileArtifacts();
  ASSERT_TRUE(Client()
                  .FetchAll("1", (root_ / "out").string(),
                            {profile::ProfileFormat::kSpeedscope, profile::ProfileFormat::kPprof})
                  .ok());
  EXPECT_EQ(fake_.fetches(v1::ARTIFACT_FORMAT_FOLDED),
            4);  // one fallback per artifact: aggregate, by job, 2 jobs
  EXPECT_EQ(PprofStacks(ReadFile(root_ / "out/jobs/suite/slow.masm.pb.gz")),
            ParseFoldedCounts(kSlow));
  const nlohmann::json j =
      nlohmann::json::parse(ReadFile(root_ / "out/jobs/fast.masm.speedscope.json"));
  EXPECT_EQ(j["profiles"][0]["endValue"], 110);
  EXPECT_EQ(j["name"], "fast.masm");
}

TEST_F(CliTest, FetchProfileReportsUnknownBatch) {
  EXPECT_TRUE(absl::IsNotFound(Client().FetchProfile("99", "").status()));
}

// --- Paths named by the coordinator (issue #12)
// ---------------------------------------------------------------

// `flamefleet fetch -o DIR` against a coordinator whose job names try to leave
// DIR: each is refused naming the job and the reason, the whole fetch is refused
// (nothing is written, in DIR or outside it), and a clean batch still fetches.
TEST_F(CliTest, Issue12FetchRefusesJobNamesThatLeaveTheOutputDirectory) {
  const std::string coord = absl::StrCat(" --coordinator ", address());
  fs::create_directories(root_ / "outside");
  fs::create_directories(root_ / "out/jobs");
  fs::create_directory_symlink(root_ / "outside", root_ / "out/jobs/link");
  const std::string abs_name = (root_ / "abs/p.masm").string();
  const struct {
    std::string id;
    std::string name;
    std::string why;
  } hostile[] = {
      {"10", "../../escape.masm", "\"..\" component"},
      {"11", abs_name, "absolute path"},
      {"12", "link/x.masm", "symlink"},
      {"13", "a\\b.masm", "backslash"},
      {"14", std::string("nul\0x.masm", 10), "NUL"},
      {"15", "a//b.masm", "empty"},
  };
  for (const auto& h : hostile) {
    fake_.AddBatch(h.id, {.jobs = {{"good.masm", kFast}, {h.name, kSlow}}});
    EXPECT_EQ(Run(absl::StrCat("fetch ", h.id, " -o out", coord)), 2) << h.name;
    EXPECT_TRUE(absl::StrContains(err_, h.why)) << h.name << ": " << err_;
    EXPECT_TRUE(absl::StrContains(err_, "job \"")) << err_;
    EXPECT_TRUE(absl::StrContains(err_, "nothing was written")) << err_;
    EXPECT_FALSE(fs::exists(root_ / "out/aggregate.svg")) << h.name;
    EXPECT_FALSE(fs::exists(root_ / "out/jobs/good.masm.svg")) << h.name;
  }
  EXPECT_FALSE(fs::exists(root_ / "escape.masm.svg"));
  EXPECT_FALSE(fs::exists(root_ / "abs"));
  EXPECT_TRUE(fs::is_empty(root_ / "outside"));
  // The library path too (`run` writes through the same FetchAll).
  const absl::Status library = Client().FetchAll("10", (root_ / "out").string());
  EXPECT_TRUE(absl::IsInvalidArgument(library)) << library;
  EXPECT_TRUE(absl::StrContains(library.message(), "escape.masm")) << library;
  // A symlink that stays inside DIR is fine.
  fs::create_directories(root_ / "out2/real");
  fs::create_directory_symlink(root_ / "out2/real", root_ / "out2/jobs");
  ASSERT_EQ(Run(absl::StrCat("fetch 1 -o out2", coord)), 0) << err_;
  EXPECT_EQ(ReadFile(root_ / "out2/real/suite/slow.masm.svg"), "<svg>suite/slow.masm</svg>");
}

// A CI log of a 100-job batch whose every job ends within one second gets the first line, one
// per tenth of the jobs done and the last: 11 lines for 100 updates, not 100.
TEST(ProgressThrottleTest, ALogGetsALinePerSecondOrTenthNotPerUpdate) {
  ProgressThrottle throttle;
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  v1::Batch b;
  b.set_state(v1::BATCH_STATE_RUNNING);
  b.set_jobs_total(100);
  int lines = 0;
  for (int done = 1; done <= 100; ++done) {
    b.set_jobs_succeeded(done);
    if (done == 100) b.set_state(v1::BATCH_STATE_SUCCEEDED);
    if (throttle.ShouldPrint(b, t0 + absl::Milliseconds(done))) ++lines;
  }
  EXPECT_EQ(lines, 11);  // done = 1 (first), 10, 20, ..., 90, 100 (a tenth and the end)

  // Nothing done for a while: one line a second, whatever the number of updates.
  ProgressThrottle slow;
  b.set_state(v1::BATCH_STATE_RUNNING);
  b.set_jobs_succeeded(0);
  lines = 0;
  for (int ms = 0; ms < 5000; ms += 100) {
    if (slow.ShouldPrint(b, t0 + absl::Milliseconds(ms))) ++lines;
  }
  EXPECT_EQ(lines, 5);  // at 0, 1, 2, 3 and 4 s
}

TEST(ServerNamedPathTest, AcceptsPlainRelativeNamesOnly) {
  const fs::path dir = fs::path(testing::TempDir()) / "snp_dir_that_does_not_exist";
  absl::StatusOr<fs::path> ok = ServerNamedPath(dir, "jobs/suite/a.masm.svg");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->filename(), "a.masm.svg");
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../../x", "a/./b", "a//b", "a\\b", "a/"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ServerNamedPath(dir, bad).status())) << bad;
  }
  EXPECT_TRUE(absl::IsInvalidArgument(ServerNamedPath(dir, absl::string_view("a\0b", 3)).status()));
}

// --- Files collected from a suite (issue #12)
// ---------------------------------------------------------------

// `flamefleet submit DIR` refuses a program, inputs file, manifest or library
// file that is a symlink out of its suite or library directory, naming the link
// and its target; a symlink that stays inside is collected.
TEST_F(CliTest, Issue12SubmitRefusesSymlinksThatLeaveTheSuite) {
  const std::string coord = absl::StrCat(" --coordinator ", address());
  WriteFile(root_ / "secret/passwd.masm", "root:x:0:0:secret-first-line\n");
  WriteFile(root_ / "suite/ok.masm", "begin push.1 drop end\n");
  fs::create_symlink(root_ / "secret/passwd.masm", root_ / "suite/leak.masm");
  EXPECT_EQ(Run(absl::StrCat("submit suite", coord)), 2) << err_;
  EXPECT_TRUE(absl::StrContains(err_, "leak.masm")) << err_;
  EXPECT_TRUE(absl::StrContains(err_, (root_ / "secret/passwd.masm").string())) << err_;
  EXPECT_TRUE(absl::StrContains(err_, "outside the suite directory")) << err_;
  EXPECT_FALSE(absl::StrContains(err_, "secret-first-line")) << err_;
  fs::remove(root_ / "suite/leak.masm");

  // An inputs file beside a program.
  fs::create_symlink(root_ / "secret/passwd.masm", root_ / "suite/ok.inputs");
  EXPECT_EQ(Run(absl::StrCat("submit suite", coord)), 2) << err_;
  EXPECT_TRUE(absl::StrContains(err_, "ok.inputs")) << err_;
  fs::remove(root_ / "suite/ok.inputs");

  // A library file (--lib and the suite manifest's [libraries]).
  WriteFile(root_ / "suite/lib/util.masm", "export.f\n  push.1 drop\nend\n");
  WriteFile(root_ / "suite/flamefleet.toml", "[libraries]\nex = \"lib\"\n");
  fs::create_symlink(root_ / "secret/passwd.masm", root_ / "suite/lib/evil.masm");
  EXPECT_EQ(Run(absl::StrCat("submit suite", coord)), 2) << err_;
  EXPECT_TRUE(absl::StrContains(err_, "evil.masm")) << err_;
  EXPECT_TRUE(absl::StrContains(err_, "outside the library directory")) << err_;
  fs::remove(root_ / "suite/lib/evil.masm");

  // A manifest that is itself a link out.
  fs::remove(root_ / "suite/flamefleet.toml");
  WriteFile(root_ / "secret/flamefleet.toml", "[libraries]\nex = \"lib\"\n");
  fs::create_symlink(root_ / "secret/flamefleet.toml", root_ / "suite/flamefleet.toml");
  EXPECT_EQ(Run(absl::StrCat("submit suite", coord)), 2) << err_;
  EXPECT_TRUE(absl::StrContains(err_, "flamefleet.toml")) << err_;
  fs::remove(root_ / "suite/flamefleet.toml");

  // Links that stay inside are collected like files.
  fs::create_symlink(root_ / "suite/ok.masm", root_ / "suite/alias.masm");
  fs::create_symlink(root_ / "suite/lib/util.masm", root_ / "suite/lib/again.masm");
  absl::StatusOr<v1::SubmitBatchRequest> req = BuildSubmitRequest(
      {(root_ / "suite").string()}, {absl::StrCat("ex=", (root_ / "suite/lib").string())}, {});
  ASSERT_TRUE(req.ok()) << req.status();
  std::vector<std::string> names;
  for (const v1::JobSpec& job : req->jobs()) names.push_back(job.name());
  EXPECT_EQ(names, (std::vector<std::string>{"alias.masm", "ok.masm"}));
  ASSERT_EQ(req->libraries().libraries_size(), 1);
  EXPECT_EQ(req->libraries().libraries(0).files_size(), 2);
}

TEST_F(CliTest, SuiteManifestNamesTheDialectOfItsPrograms) {
  WriteFile(root_ / "classic/a.masm", "begin push.1 drop end\n");
  WriteFile(root_ / "classic/flamefleet.toml", "dialect = \"0.16\"\n");
  WriteFile(root_ / "loose.masm", "begin push.2 drop end\n");
  ASSERT_OK_AND_ASSIGN(
      v1::SubmitBatchRequest req,
      BuildSubmitRequest({(root_ / "classic").string(), (root_ / "loose.masm").string()}, {}, {},
                         {}));
  ASSERT_EQ(req.jobs_size(), 2);
  EXPECT_EQ(req.jobs(0).name(), "a.masm");
  EXPECT_EQ(req.jobs(0).dialect(), "v0.16");  // the manifest's, in its canonical spelling
  EXPECT_EQ(req.jobs(1).dialect(), "");       // no manifest: the batch's dialect

  // An unknown dialect, a value of the wrong type and a misspelt key are errors at their
  // position, so a suite never runs under a dialect it did not ask for.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"dialect = \"v0.99\"\n", "flamefleet.toml:1:11: dialect: unknown dialect 'v0.99'"},
      {"dialect = 16\n", "flamefleet.toml:1:11: dialect: expected a string"},
      {"dialet = \"v0.16\"\n", "flamefleet.toml:1:10: unknown key 'dialet'"},
      {"libraries = \"lib\"\n", "flamefleet.toml:1:13: libraries: expected a table"},
  };
  for (const auto& [manifest, error] : bad) {
    WriteFile(root_ / "classic/flamefleet.toml", manifest);
    EXPECT_THAT(BuildSubmitRequest({(root_ / "classic").string()}, {}, {}, {}),
                testutil::StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(error)))
        << manifest;
  }
}

// --- suite diffs
// -----------------------------------------------------------------------------

TEST_F(CliTest, LoadBatchGivesJobTotalsAndAggregate) {
  BatchClient client = Client();
  absl::StatusOr<DiffInput> in = LoadBatch(client, "2");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->jobs, (std::map<std::string, uint64_t>{
                          {"fast.masm", 110}, {"new.masm", 110}, {"suite/slow.masm", 500}}));
  EXPECT_EQ(in->aggregate.total(), 720u);
  EXPECT_TRUE(absl::IsFailedPrecondition(LoadBatch(client, "3").status()));
  EXPECT_TRUE(absl::IsNotFound(LoadBatch(client, "99").status()));
}

TEST_F(CliTest, FetchedDirectoryAndBatchGiveTheSameDiffInput) {
  BatchClient client = Client();
  ASSERT_TRUE(client.FetchAll("2", (root_ / "two").string()).ok());
  absl::StatusOr<DiffInput> dir = LoadOutputDirectory((root_ / "two").string(), {});
  ASSERT_TRUE(dir.ok()) << dir.status();
  absl::StatusOr<DiffInput> batch = LoadBatch(client, "2");
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(dir->jobs, batch->jobs);
  EXPECT_EQ(Folded(dir->aggregate), Folded(batch->aggregate));
  const SuiteDiff d = CompareSuites(*dir, *batch);
  EXPECT_TRUE(JobsAbove(d, 0).empty());
  EXPECT_TRUE(d.added.empty());
  EXPECT_TRUE(d.removed.empty());
}

TEST_F(CliTest, SlowerJobComesFirstAndTripsTheGate) {
  const fs::path a =
      WriteOutputDir("a", {{"fast.masm", kFast}, {"suite/slow.masm", kSlow}, {"gone.masm", kFast}});
  const fs::path b = WriteOutputDir(
      "b", {{"fast.masm", kFast}, {"suite/slow.masm", kSlower}, {"new.masm", kSlower}});
  absl::StatusOr<DiffInput> before = LoadOutputDirectory(a.string(), {});
  absl::StatusOr<DiffInput> after = LoadOutputDirectory(b.string(), {});
  ASSERT_TRUE(before.ok() && after.ok());
  const SuiteDiff d = CompareSuites(*before, *after);
  ASSERT_EQ(d.jobs.size(), 2u);
  EXPECT_EQ(d.jobs[0].name, "suite/slow.masm");
  EXPECT_EQ(d.jobs[0].before, 420u);
  EXPECT_EQ(d.jobs[0].after, 500u);
  EXPECT_NEAR(d.jobs[0].percent(), 100.0 * 80 / 420, 1e-9);
  ASSERT_EQ(d.added.size(), 1u);
  EXPECT_EQ(d.added[0].name, "new.masm");
  ASSERT_EQ(d.removed.size(), 1u);
  EXPECT_EQ(d.removed[0].name, "gone.masm");
  ASSERT_FALSE(d.frames.empty());
  EXPECT_EQ(d.frames[0].name,
            "std::mem::copy");  // +80 self (+500 from new.masm, -0)
  EXPECT_EQ(JobsAbove(d, 5).size(), 1u);
  EXPECT_TRUE(JobsAbove(d, 20).empty());  // 19.05% growth; new.masm never counts
}

TEST_F(CliTest, TwoProfilesAreOneJob) {
  DiffInput a, b;
  a.aggregate = FromFolded(kSlow);
  b.aggregate = FromFolded(kSlower);
  const SuiteDiff d = CompareSuites(a, b);
  ASSERT_EQ(d.jobs.size(), 1u);
  EXPECT_EQ(d.jobs[0].name, kWholeProfileJob);
  EXPECT_EQ(d.jobs[0].delta(), 80);
  EXPECT_TRUE(d.added.empty());
}

TEST_F(CliTest, LoadOutputDirectoryRejectsOtherDirectories) {
  fs::create_directories(root_ / "empty");
  EXPECT_TRUE(
      absl::IsInvalidArgument(LoadOutputDirectory((root_ / "empty").string(), {}).status()));
}

// --- the flamefleet binary
// -------------------------------------------------------------------

TEST_F(CliTest, DiffOfDirectoriesPrintsTheSlowerJobFirstAndExitsThree) {
  WriteOutputDir("a", {{"fast.masm", kFast}, {"suite/slow.masm", kSlow}});
  WriteOutputDir("b", {{"fast.masm", kFast}, {"suite/slow.masm", kSlower}});
  EXPECT_EQ(Run("diff a b -o d.svg --fail-above 5"), 3) << err_;
  EXPECT_TRUE(absl::StrContains(ReadFile(root_ / "d.svg"), "<svg"));
  EXPECT_TRUE(absl::StrContains(err_, "suite/slow.masm")) << err_;
  // The first row under the jobs heading is the slower job.
  const size_t heading = out_.find("jobs that grew most");
  ASSERT_NE(heading, std::string::npos) << out_;
  std::vector<std::string> lines = absl::StrSplit(out_.substr(heading), '\n');
  ASSERT_GE(lines.size(), 3u);
  EXPECT_TRUE(absl::StrContains(lines[2], "suite/slow.masm")) << out_;
  EXPECT_TRUE(absl::StrContains(lines[2], "+80")) << out_;
  EXPECT_TRUE(absl::StrContains(lines[2], "+19.05%")) << out_;
  // Below the threshold: success.
  EXPECT_EQ(Run("diff a b -o d.svg --fail-above 25"), 0) << err_;
  // JSON.
  EXPECT_EQ(Run("diff a b -o d.svg --json --top 1"), 0) << err_;
  const nlohmann::json j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["jobs"][0]["name"], "suite/slow.masm");
  EXPECT_EQ(j["jobs"][0]["delta"], 80);
  EXPECT_EQ(j["delta"], 80);
  EXPECT_EQ(j["frames"].size(), 1u);
  EXPECT_EQ(j["frames"][0]["name"], "std::mem::copy");
}

TEST_F(CliTest, ParsesGatesPerMetric) {
  ASSERT_OK_AND_ASSIGN(Gate bare, ParseGate("5"));
  EXPECT_EQ(bare.metric, Gate::Metric::kJobCycles);
  EXPECT_EQ(bare.percent, 5);
  ASSERT_OK_AND_ASSIGN(Gate cycles, ParseGate("cycles=2.5"));
  EXPECT_EQ(cycles.MetricName(), "cycles");
  EXPECT_EQ(cycles.percent, 2.5);
  ASSERT_OK_AND_ASSIGN(Gate proc, ParseGate("proc:std::mem::copy=10"));
  EXPECT_EQ(proc.metric, Gate::Metric::kProcedure);
  EXPECT_EQ(proc.procedure, "std::mem::copy");
  EXPECT_EQ(proc.percent, 10);
  ASSERT_OK_AND_ASSIGN(Gate phase, ParseGate("phase:epilogue=5"));
  EXPECT_EQ(phase.metric, Gate::Metric::kPhase);
  EXPECT_EQ(phase.phase, "epilogue");
  EXPECT_EQ(phase.MetricName(), "phase:epilogue");
  EXPECT_THAT(ParseGate("mem:heap=5"),
              testutil::StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("unknown metric \"mem:heap\"")));
  ASSERT_OK_AND_ASSIGN(Gate padded, ParseGate("padded:0"));
  EXPECT_EQ(padded.metric, Gate::Metric::kPadded);
  EXPECT_EQ(padded.percent, 0);
  EXPECT_EQ(padded.MetricName(), "padded");
  ASSERT_OK_AND_ASSIGN(Gate padded_eq, ParseGate("padded=50"));
  EXPECT_EQ(padded_eq.metric, Gate::Metric::kPadded);
  EXPECT_FALSE(ParseGate("padded:").ok());
  EXPECT_FALSE(ParseGate("phase:=5").ok());
  EXPECT_FALSE(ParseGate("cycles=").ok());
  EXPECT_FALSE(ParseGate("proc:=5").ok());
  EXPECT_FALSE(ParseGate("five").ok());
}

TEST_F(CliTest, ProcedureDeltasAndTheProcedureGate) {
  // ex::slow's inclusive cycles: 400 -> 480 (+20%); its self: 0 -> 0; std::mem::copy self and
  // inclusive 400 -> 480; $exec::$main inclusive 420 -> 500 (+19.05%); rec is recursive and
  // counted once per stack: self 30 and inclusive 30 on both sides, although AFTER nests it three
  // deep (summing every rec node would give 30 + 25 + 25).
  DiffInput a, b;
  a.aggregate = FromFolded(absl::StrCat(kSlow, "rec;rec 10\nrec 20\n"));
  b.aggregate = FromFolded(absl::StrCat(kSlower, "rec;rec;rec 25\nrec 5\n"));
  const SuiteDiff d = CompareSuites(a, b);
  std::map<std::string, ProcedureDelta> by_name;
  for (const ProcedureDelta& p : d.procedures) by_name[p.name] = p;
  ASSERT_EQ(by_name.size(), 4u);
  EXPECT_EQ(by_name["ex::slow"].inclusive.before, 400u);
  EXPECT_EQ(by_name["ex::slow"].inclusive.after, 480u);
  EXPECT_EQ(by_name["ex::slow"].self.after, 0u);
  EXPECT_EQ(by_name["$exec::$main"].inclusive.delta(), 80);
  EXPECT_EQ(by_name["$exec::$main"].self.delta(), 0);
  EXPECT_EQ(by_name["rec"].inclusive.before, 30u);
  EXPECT_EQ(by_name["rec"].inclusive.after, 30u);
  EXPECT_EQ(by_name["rec"].self.before, 30u);
  EXPECT_EQ(by_name["rec"].self.after, 30u);
  auto gate = [&](const std::string& spec) {
    absl::StatusOr<Gate> g = ParseGate(spec);
    EXPECT_TRUE(g.ok()) << spec;
    return GateRegressions(d, *g);
  };
  ASSERT_OK_AND_ASSIGN(std::vector<CycleDelta> over, gate("proc:ex::slow=19.9"));
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0].name, "ex::slow");
  EXPECT_EQ(over[0].delta(), 80);
  ASSERT_OK_AND_ASSIGN(over, gate("proc:ex::slow=20"));  // exactly +20%: not above
  EXPECT_TRUE(over.empty());
  ASSERT_OK_AND_ASSIGN(over, gate("proc:rec=0"));
  EXPECT_TRUE(over.empty());
  EXPECT_THAT(gate("proc:ex::slwo=5"),
              testutil::StatusIs(absl::StatusCode::kNotFound, HasSubstr("no procedure")));
}

TEST_F(CliTest, DiffJsonReportsProceduresAndEachGate) {
  WriteOutputDir("a", {{"fast.masm", kFast}, {"suite/slow.masm", kSlow}});
  WriteOutputDir("b", {{"fast.masm", kFast}, {"suite/slow.masm", kSlower}});
  // suite/slow.masm grew 19.05%, std::mem::copy (inclusive) 20%, ex::fast 0%.
  EXPECT_EQ(Run("diff a b -o d.svg --json --fail-above cycles=25 --fail-above proc:ex::fast=0"), 0)
      << err_;
  nlohmann::json j = nlohmann::json::parse(out_);
  ASSERT_FALSE(j["procedures"].empty());
  const nlohmann::json& first = j["procedures"][0];  // by inclusive delta: main and ex::slow +80
  EXPECT_EQ(first["inclusive"]["delta"], 80);
  bool saw_copy = false;
  for (const auto& p : j["procedures"]) {
    if (p["name"] != "std::mem::copy") continue;
    saw_copy = true;
    EXPECT_EQ(p["self"]["before"], 400);
    EXPECT_EQ(p["self"]["after"], 480);
    EXPECT_EQ(p["inclusive"]["delta"], 80);
    EXPECT_DOUBLE_EQ(p["inclusive"]["percent"].get<double>(), 20.0);
  }
  EXPECT_TRUE(saw_copy) << out_;
  ASSERT_EQ(j["gates"].size(), 2u);
  EXPECT_EQ(j["gates"][0]["metric"], "cycles");
  EXPECT_EQ(j["gates"][0]["failed"], false);
  EXPECT_EQ(j["gates"][1]["metric"], "proc:ex::fast");
  EXPECT_EQ(j["gates"][1]["failed"], false);

  // One gate trips: exit 3, the others still judged; the message names the procedure.
  EXPECT_EQ(Run("diff a b -o d.svg --json --fail-above 25 --fail-above proc:std::mem::copy=10"), 3)
      << err_;
  j = nlohmann::json::parse(out_);
  EXPECT_EQ(j["gates"][0]["failed"], false);
  EXPECT_EQ(j["gates"][1]["failed"], true);
  EXPECT_EQ(j["gates"][1]["over"][0]["delta"], 80);
  EXPECT_TRUE(absl::StrContains(err_, "proc:std::mem::copy (inclusive cycles) grew by more than"))
      << err_;
  EXPECT_EQ(Run("diff a b -o d.svg --fail-above proc:std::mem::copy=20"), 0) << err_;
  EXPECT_EQ(Run("diff a b -o d.svg --fail-above cycles=5"), 3) << err_;  // the old meaning
  // A misspelt procedure or an unknown metric is an error, not a pass.
  EXPECT_EQ(Run("diff a b -o d.svg --fail-above proc:std::mem::cpy=10"), 1);
  EXPECT_TRUE(absl::StrContains(err_, "no procedure \"std::mem::cpy\"")) << err_;
  EXPECT_EQ(Run("diff a b -o d.svg --fail-above mem:heap=5"), 1);
  EXPECT_TRUE(absl::StrContains(err_, "unknown metric")) << err_;
  // Folded directories without summary.json have no phases: a phase gate is an error.
  EXPECT_EQ(Run("diff a b -o d.svg --fail-above phase:epilogue=5"), 1);
  EXPECT_TRUE(absl::StrContains(err_, "phase gates need a summary on both sides; a has no summary"))
      << err_;
}

TEST_F(CliTest, IdenticalDirectoriesPassAtZeroPercent) {
  WriteOutputDir("a", {{"fast.masm", kFast}, {"suite/slow.masm", kSlow}});
  WriteOutputDir("b", {{"fast.masm", kFast}, {"suite/slow.masm", kSlow}});
  EXPECT_EQ(Run("diff a b -o d.svg --fail-above 0"), 0) << err_;
  EXPECT_TRUE(absl::StrContains(out_, "0 grew")) << out_;
}

TEST_F(CliTest, FoldedFileDiffStillWritesTheSvg) {
  WriteFile(root_ / "a.folded", kSlow);
  WriteFile(root_ / "b.folded", kSlower);
  EXPECT_EQ(Run("diff a.folded b.folded -o d.svg --title T"), 0) << err_;
  const std::string svg = ReadFile(root_ / "d.svg");
  EXPECT_TRUE(absl::StrContains(svg, "<svg"));
  EXPECT_TRUE(absl::StrContains(svg, "std::mem::copy"));
  EXPECT_EQ(Run("diff a.folded b.folded -o d.svg --fail-above 10"), 3);
  EXPECT_TRUE(absl::StrContains(err_, kWholeProfileJob)) << err_;
  EXPECT_EQ(Run("diff a.folded a.folded -o d.svgz --fail-above 0"), 0) << err_;
  EXPECT_EQ(ReadFile(root_ / "d.svgz").substr(0, 2), "\x1f\x8b");
  // SVG on stdout: the table moves to stderr.
  EXPECT_EQ(Run("diff a.folded b.folded"), 0) << err_;
  EXPECT_TRUE(absl::StartsWith(out_, "<?xml") || absl::StartsWith(out_, "<svg"))
      << out_.substr(0, 80);
  EXPECT_TRUE(absl::StrContains(err_, "jobs that grew most")) << err_;
}

TEST_F(CliTest, DiffWritesTwoColumnFoldedAndRejectsExportFormats) {
  WriteFile(root_ / "a.folded", kSlow);
  WriteFile(root_ / "b.folded", kSlower);
  EXPECT_EQ(Run("diff a.folded b.folded -o d.folded"), 0) << err_;
  EXPECT_EQ(ReadFile(root_ / "d.folded"),
            "$exec::$main 20 20\n$exec::$main;ex::slow;std::mem::copy 400 480\n");
  EXPECT_EQ(Run("diff a.folded b.folded -o d.pb.gz"), 1);
  EXPECT_TRUE(absl::StrContains(err_, "no differential form")) << err_;
  EXPECT_FALSE(fs::exists(root_ / "d.pb.gz"));
  EXPECT_EQ(Run("diff a.folded b.folded -o d.speedscope.json"), 1);
}

TEST_F(CliTest, DiffOfBatchIdsThroughTheCoordinator) {
  const std::string coord = absl::StrCat(" --coordinator ", address());
  EXPECT_EQ(Run(absl::StrCat("diff 1 2 -o d.svg --fail-above 5", coord)), 3) << err_;
  EXPECT_TRUE(absl::StrContains(out_, "added jobs")) << out_;
  EXPECT_TRUE(absl::StrContains(out_, "new.masm")) << out_;
  EXPECT_EQ(Run(absl::StrCat("diff 1 batch:1 -o d.svg --fail-above 0", coord)), 0) << err_;
  // A fetched directory against its own batch.
  ASSERT_EQ(Run(absl::StrCat("fetch 2 -o two", coord)), 0) << err_;
  EXPECT_EQ(Run(absl::StrCat("diff two 2 -o d.svg --fail-above 0", coord)), 0) << err_;
  // Unknown id, running batch.
  EXPECT_EQ(Run(absl::StrCat("diff 1 99 -o d.svg", coord)), 1);
  EXPECT_TRUE(absl::StrContains(err_, "no such file or directory")) << err_;
  EXPECT_EQ(Run(absl::StrCat("diff 1 batch:3 -o d.svg", coord)), 1);
  EXPECT_TRUE(absl::StrContains(err_, "still running")) << err_;
}

TEST_F(CliTest, FetchFormatWritesThatFormatOnly) {
  const std::string coord = absl::StrCat(" --coordinator ", address());
  ASSERT_EQ(Run(absl::StrCat("fetch 1 -o p --format pprof", coord)), 0) << err_;
  EXPECT_EQ(PprofStacks(ReadFile(root_ / "p/aggregate.pb.gz")),
            ParseFoldedCounts(absl::StrCat(kFast, kSlow)));
  EXPECT_EQ(PprofStacks(ReadFile(root_ / "p/jobs/suite/slow.masm.pb.gz")),
            ParseFoldedCounts(kSlow));
  EXPECT_FALSE(fs::exists(root_ / "p/aggregate.svg"));
  ASSERT_EQ(Run(absl::StrCat("fetch 1 -o s --format speedscope", coord)), 0) << err_;
  EXPECT_EQ(nlohmann::json::parse(
                ReadFile(root_ / "s/aggregate.speedscope.json"))["profiles"][0]["endValue"],
            530);
  ASSERT_EQ(Run(absl::StrCat("fetch 1 -o f --format folded", coord)), 0) << err_;
  EXPECT_TRUE(fs::exists(root_ / "f/jobs/fast.masm.folded"));
  EXPECT_FALSE(fs::exists(root_ / "f/jobs/fast.masm.svg"));
  EXPECT_EQ(Run(absl::StrCat("fetch 1 -o x --format png", coord)), 2);
}

TEST_F(CliTest, ProfileWritesEveryFormatByName) {
  const std::string program = absl::StrCat(FLAMEFLEET_EXAMPLES, "/primes.masm");
  ASSERT_EQ(Run(absl::StrCat("profile ", program, " -o p.folded")), 0) << err_;
  const Stacks folded = ParseFoldedCounts(ReadFile(root_ / "p.folded"));
  uint64_t total = 0;
  for (const auto& [stack, n] : folded) total += n;
  ASSERT_GT(total, 0u);
  ASSERT_EQ(Run(absl::StrCat("profile ", program, " -o p.pb.gz")), 0) << err_;
  EXPECT_TRUE(absl::StrContains(err_, "pprof")) << err_;
  EXPECT_EQ(PprofStacks(ReadFile(root_ / "p.pb.gz")), folded);
  ASSERT_EQ(Run(absl::StrCat("profile ", program, " -o p.speedscope.json")), 0) << err_;
  const nlohmann::json j = nlohmann::json::parse(ReadFile(root_ / "p.speedscope.json"));
  EXPECT_EQ(j["profiles"][0]["endValue"].get<uint64_t>(), total);
  ASSERT_EQ(Run(absl::StrCat("profile ", program, " -o p.svgz")), 0) << err_;
  EXPECT_TRUE(absl::StrContains(*profile::GzipDecompress(ReadFile(root_ / "p.svgz")),
                                "Miden VM Flame Graph"));
}

// `profile --summary`: the numbers add up to the job's cycles, and phases follow the markers.
TEST_F(CliTest, ProfileSummaryAddsUpAndFollowsTheMarkers) {
  WriteFile(root_ / "phases.masm", R"(begin
  emit.event("demo::phase::setup")
  push.1 push.2 add drop
  emit.event("demo::phase::work")
  repeat.3 push.5 push.6 mul drop end
  emit.event("demo::phase::done")
  push.7 drop
end
)");
  // An event nobody named is an error, as without --summary.
  EXPECT_NE(Run("profile phases.masm -o p.svg --summary s.json"), 0);
  EXPECT_TRUE(absl::StrContains(err_, "demo::phase::setup")) << err_;

  ASSERT_EQ(Run("profile phases.masm -o p.folded --summary s.json --marker demo::phase:: "
                "--phase demo::phase::setup=demo::phase::done"),
            0)
      << err_;
  const nlohmann::json s = nlohmann::json::parse(ReadFile(root_ / "s.json"));
  EXPECT_EQ(s["schema"], "flamefleet.summary/1");
  EXPECT_EQ(s["status"], "ok");
  const uint64_t cycles = s["cycles"].get<uint64_t>();
  uint64_t folded_total = 0;
  for (const auto& [stack, n] : ParseFoldedCounts(ReadFile(root_ / "p.folded"))) {
    folded_total += n;
  }
  EXPECT_EQ(cycles, folded_total);
  for (const char* list : {"procedures", "instructions", "operations"}) {
    const char* field = std::string(list) == "procedures" ? "self" : "cycles";
    uint64_t sum = 0;
    for (const auto& row : s[list]) sum += row[field].get<uint64_t>();
    EXPECT_EQ(sum, cycles) << list;
  }
  std::map<std::string, nlohmann::json> phases;
  for (const auto& p : s["phases"]) phases[p["name"].get<std::string>()] = p;
  ASSERT_TRUE(phases.contains("demo::phase::setup")) << s["phases"].dump();
  ASSERT_TRUE(phases.contains("demo::phase::work"));
  ASSERT_TRUE(phases.contains("demo::phase::done"));
  ASSERT_TRUE(phases.contains("demo::phase::setup..demo::phase::done"));
  EXPECT_EQ(phases["demo::phase::setup"]["count"], 1);
  // The work phase runs three times the setup's arithmetic; the pair spans both.
  const uint64_t setup = phases["demo::phase::setup"]["total"].get<uint64_t>();
  const uint64_t work = phases["demo::phase::work"]["total"].get<uint64_t>();
  EXPECT_GT(work, setup);
  EXPECT_EQ(phases["demo::phase::setup..demo::phase::done"]["total"].get<uint64_t>(), setup + work);
  EXPECT_TRUE(phases["demo::phase::done"]["open"].get<bool>());  // the program ends inside it
  EXPECT_FALSE(phases["demo::phase::work"]["open"].get<bool>());
  EXPECT_LT(setup + work + phases["demo::phase::done"]["total"].get<uint64_t>(), cycles);
}

// --debug-print (issue #15): the v0.25 core library's prints go to stderr as miden-vm v0.25.7
// prints them, stdout stays the command's own; without the flag they print nothing, and the
// cycles are the same either way. A recorded run's snapshot replays with the same prints.
TEST_F(CliTest, Issue15DebugPrintWritesTheCoreLibrarysPrintsToStderr) {
  WriteFile(root_ / "p.masm", R"(begin
  push.1 push.2 push.3
  emit.event("miden::core::debug::print_stack")
  drop drop drop
  push.42 push.100 mem_store
  push.106 push.100 emit.event("miden::core::debug::print_mem") drop drop
end
)");
  // Naming miden::core needs a core library mapped; the program imports nothing from it.
  fs::create_directories(root_ / "corelib");
  const std::string lib = " --lib miden::core=corelib";
  ASSERT_EQ(Run("exec p.masm --json" + lib), 0) << err_;
  const std::string json = out_;
  EXPECT_EQ(err_, "");
  ASSERT_EQ(Run("exec p.masm --json --debug-print" + lib), 0) << err_;
  EXPECT_EQ(out_, json);  // the same stack and cycles, and nothing else on stdout
  std::string stack = "Stack state before step 11:\n├──  0: 3\n├──  1: 2\n├──  2: 1\n";
  for (int i = 3; i < 18; ++i) absl::StrAppend(&stack, "├── ", i < 10 ? " " : "", i, ": 0\n");
  absl::StrAppend(&stack, "└── 18: 0\n");
  const std::string printed = absl::StrCat(stack,
                                           "Memory state before step 25 for context 0 in the "
                                           "range [100, 105]:\n"
                                           "├── 0x00000064: 42\n"
                                           "├── 0x00000065: 0\n"
                                           "├── 0x00000066: 0\n"
                                           "├── 0x00000067: 0\n"
                                           "├── 0x00000068: EMPTY\n"
                                           "└── 0x00000069: EMPTY\n");
  EXPECT_EQ(err_, printed);

  // record prints while it records; a replay of its snapshot prints the same.
  ASSERT_EQ(Run("record p.masm -o p.snap --debug-print" + lib), 0) << err_;
  EXPECT_TRUE(absl::StartsWith(err_, printed)) << err_;
  EXPECT_THAT(err_, HasSubstr("and 0 events to p.snap"));  // the prints are not logged
  ASSERT_EQ(Run("exec --replay p.snap --json --debug-print"), 0) << err_;
  EXPECT_EQ(out_, json);
  EXPECT_EQ(err_, printed);
  ASSERT_EQ(Run("exec --replay p.snap --json"), 0) << err_;
  EXPECT_EQ(err_, "");
  ASSERT_EQ(Run("profile p.masm -o p.folded --debug-print" + lib), 0) << err_;
  EXPECT_TRUE(absl::StartsWith(err_, printed)) << err_;
  ASSERT_EQ(Run("profile --replay p.snap -o r.folded --debug-print"), 0) << err_;
  EXPECT_TRUE(absl::StartsWith(err_, printed)) << err_;

  // print_mem's errors are the run's error with the flag, nothing without it.
  WriteFile(root_ / "bad.masm", R"(begin
  push.1025 push.0 emit.event("miden::core::debug::print_mem") drop drop
end
)");
  EXPECT_EQ(Run("exec bad.masm --debug-print" + lib), 1);
  EXPECT_THAT(err_, HasSubstr("print_mem range length 1025 exceeds maximum of 1024"));
  EXPECT_EQ(Run("exec bad.masm" + lib), 0) << err_;

  // v0.16's debug.* decorators are not printed.
  WriteFile(root_ / "classic.masm", "begin push.1 debug.stack drop end\n");
  ASSERT_EQ(Run("exec classic.masm --dialect v0.16 --debug-print"), 0) << err_;
  EXPECT_EQ(err_, "");
}

TEST_F(CliTest, RenderExportsFoldedInputByName) {
  WriteFile(root_ / "in.folded", absl::StrCat(kFast, kSlow));
  ASSERT_EQ(Run("render in.folded -o r.pb.gz"), 0) << err_;
  EXPECT_EQ(PprofStacks(ReadFile(root_ / "r.pb.gz")),
            ParseFoldedCounts(absl::StrCat(kFast, kSlow)));
  ASSERT_EQ(Run("render in.folded -o r.speedscope.json --title Mine"), 0) << err_;
  EXPECT_EQ(nlohmann::json::parse(ReadFile(root_ / "r.speedscope.json"))["name"], "Mine");
  ASSERT_EQ(Run("render in.folded -o r.svg"), 0) << err_;
  EXPECT_TRUE(absl::StrContains(ReadFile(root_ / "r.svg"), "<svg"));
  ASSERT_EQ(Run("render in.folded -o r.html"), 0) << err_;  // unclaimed name: SVG as before
  EXPECT_TRUE(absl::StrContains(ReadFile(root_ / "r.html"), "<svg"));
}

#ifdef FLAMEFLEET_GO
// `go tool pprof -traces` prints every sample leaf first between separator
// lines:
//   -----------+-------------------------------------------------------
//         400   std::mem::copy
//               ex::slow
//               $exec::$main
Stacks GoTraces(const std::string& text, std::string* type) {
  Stacks out;
  std::vector<std::string> frames;
  uint64_t value = 0;
  auto flush = [&] {
    if (frames.empty()) return;
    std::reverse(frames.begin(), frames.end());
    out[absl::StrJoin(frames, ";")] += value;
    frames.clear();
  };
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "Type: ")) *type = std::string(line.substr(6));
    if (absl::StartsWith(line, "-----------+")) {
      flush();
      continue;
    }
    if (line.size() < 14 || line[11] != ' ') continue;
    const absl::string_view count = absl::StripAsciiWhitespace(line.substr(0, 11));
    const absl::string_view name = absl::StripAsciiWhitespace(line.substr(11));
    if (name.empty()) continue;
    if (!count.empty()) {
      flush();
      if (!absl::SimpleAtoi(count, &value)) continue;
    }
    frames.emplace_back(name);
  }
  flush();
  return out;
}

TEST_F(CliTest, GoToolPprofReadsTheProfileExactly) {
  const std::string program = absl::StrCat(FLAMEFLEET_EXAMPLES, "/primes.masm");
  ASSERT_EQ(Run(absl::StrCat("profile ", program, " -o p.folded")), 0) << err_;
  ASSERT_EQ(Run(absl::StrCat("profile ", program, " -o p.pb.gz")), 0) << err_;
  const Stacks folded = ParseFoldedCounts(ReadFile(root_ / "p.folded"));
  // Go needs a writable home and build cache; keep them inside the test's
  // directory.
  const std::string env = absl::StrCat("HOME='", root_.string(), "' GOCACHE='", root_.string(),
                                       "/gocache' GOFLAGS= GOPATH='", root_.string(),
                                       "/gopath' PPROF_TMPDIR='", root_.string(), "' ");
  const std::string cmd = absl::StrCat("cd '", root_.string(), "' && ", env, FLAMEFLEET_GO,
                                       " tool pprof -traces p.pb.gz > traces.txt 2> go_err.txt");
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << ReadFile(root_ / "go_err.txt");
  std::string type;
  const Stacks traces = GoTraces(ReadFile(root_ / "traces.txt"), &type);
  EXPECT_EQ(type, "cycles");
  EXPECT_EQ(traces, folded);
  // -top: the total line names every cycle.
  uint64_t total = 0;
  for (const auto& [stack, n] : folded) total += n;
  const std::string top_cmd = absl::StrCat("cd '", root_.string(), "' && ", env, FLAMEFLEET_GO,
                                           " tool pprof -top p.pb.gz > top.txt 2>&1");
  ASSERT_EQ(std::system(top_cmd.c_str()), 0) << ReadFile(root_ / "top.txt");
  EXPECT_TRUE(absl::StrContains(ReadFile(root_ / "top.txt"), absl::StrCat(" of ", total, " total")))
      << ReadFile(root_ / "top.txt");
}
#endif

}  // namespace
}  // namespace flamefleet::cli
