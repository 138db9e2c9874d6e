// Issue #12 (fleet hardening), coordinator side: bounded strings, library paths and
// namespaces, request-id conflicts, store failures during CompleteTask, the in-flight result
// budget and abandoned long-polls.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/server.h"
#include "coordinator/clock.h"
#include "coordinator/coordinator_service.h"
#include "coordinator/internal/byte_budget.h"
#include "coordinator/internal/digest.h"
#include "coordinator/internal/validation.h"
#include "coordinator/job_store.h"
#include "coordinator/render_client.h"
#include "coordinator/scheduler.h"
#include "flamefleet/v1/coordinator.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/profile_proto.h"
#include "tests/testing/profile_helpers.h"
#include "tests/testing/status_matchers.h"
#include "vm/vm.h"

namespace flamefleet::coordinator {
namespace {

using ::testing::HasSubstr;

v1::SubmitBatchRequest OneJob(const std::string& name = "a.masm") {
  v1::SubmitBatchRequest request;
  v1::JobSpec* job = request.add_jobs();
  job->set_name(name);
  job->set_source("begin push.1 drop end");
  return request;
}

std::string ProfileBytes() {
  return profile::SerializeProfile(testutil::FromFolded("$main;f 5\n"));
}

// --- validation (items 9 and 14) ---

TEST(SubmitValidationTest, OversizedLabelValueNamesTheLabelTheLimitAndTheFlag) {
  v1::SubmitBatchRequest request = OneJob();
  (*request.mutable_labels())["k"] = std::string(10485760, 'x');
  absl::Status status = internal::ValidateSubmitBatchRequest(request, {});
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "labels[\"k\"]: value is 10485760 bytes, the limit is 1024 (--max-name-bytes)");
}

TEST(SubmitValidationTest, EveryNameLikeStringIsBounded) {
  const std::string big(2000, 'a');
  internal::SubmitLimits limits;
  struct Case {
    std::function<void(v1::SubmitBatchRequest&)> mutate;
    std::string field;
  };
  std::vector<Case> cases = {
      {[&](auto& r) { r.set_request_id(big); }, "request_id: 2000 bytes"},
      {[&](auto& r) { r.mutable_options()->set_title(big); }, "options.title: 2000 bytes"},
      {[&](auto& r) { (*r.mutable_labels())[big] = "v"; }, "key is 2000 bytes"},
      {[&](auto& r) { r.mutable_jobs(0)->set_name(big); }, "jobs[0].name: 2000 bytes"},
      {[&](auto& r) { r.mutable_options()->set_dialect(big); }, "options.dialect: 2000 bytes"},
      {[&](auto& r) { r.mutable_jobs(0)->set_dialect(big); }, "jobs[0].dialect: 2000 bytes"},
      {[&](auto& r) { r.mutable_libraries()->add_libraries()->set_namespace_(big); },
       "libraries.libraries[0].namespace: 2000 bytes"},
      {[&](auto& r) {
         v1::Library* l = r.mutable_libraries()->add_libraries();
         l->set_namespace_("std");
         l->add_files()->set_path(big);
       },
       "libraries.libraries[0].files[0].path: 2000 bytes"},
  };
  for (const Case& c : cases) {
    v1::SubmitBatchRequest request = OneJob();
    c.mutate(request);
    absl::Status status = internal::ValidateSubmitBatchRequest(request, limits);
    EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << c.field;
    EXPECT_THAT(status.message(), HasSubstr(c.field));
    EXPECT_THAT(status.message(), HasSubstr("the limit is 1024 (--max-name-bytes)"));
    EXPECT_LT(status.message().size(), 300u);  // the oversized string is never echoed
  }
  v1::SubmitBatchRequest request = OneJob();
  for (int i = 0; i < 33; ++i)
    (*request.mutable_labels())[absl::StrCat("k", i)] = std::string(1, 'v');
  absl::Status status = internal::ValidateSubmitBatchRequest(request, limits);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(), "labels: 33 labels, the limit is 32 (--max-labels)");
}

TEST(SubmitValidationTest, UnknownDialectNamesTheFieldAndTheKnownDialects) {
  v1::SubmitBatchRequest request = OneJob();
  request.mutable_options()->set_dialect("v9.9");
  EXPECT_THAT(internal::ValidateSubmitBatchRequest(request, {}),
              testutil::StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("options.dialect: unknown dialect 'v9.9': expected "
                                           "one of v0.16")));
  request = OneJob();
  request.mutable_jobs(0)->set_dialect("classic");
  EXPECT_THAT(internal::ValidateSubmitBatchRequest(request, {}),
              testutil::StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("jobs[0].dialect: unknown dialect 'classic'")));
  for (const char* good : {"", "v0.16", "0.16"}) {
    request = OneJob();
    request.mutable_options()->set_dialect(good);
    request.mutable_jobs(0)->set_dialect(good);
    EXPECT_OK(internal::ValidateSubmitBatchRequest(request, {})) << good;
  }
}

TEST(SubmitValidationTest, SummaryPhasesAndMarkersAreCheckedNamingTheField) {
  v1::SubmitBatchRequest request = OneJob();
  request.mutable_options()->add_phases("a=b");
  request.mutable_options()->add_phases("nope");
  EXPECT_THAT(internal::ValidateSubmitBatchRequest(request, {}),
              testutil::StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("options.phases[1]: --phase 'nope'")));
  request = OneJob();
  request.mutable_options()->add_markers("");
  EXPECT_THAT(internal::ValidateSubmitBatchRequest(request, {}),
              testutil::StatusIs(absl::StatusCode::kInvalidArgument,
                                 HasSubstr("options.markers[0]: empty")));
  request = OneJob();
  request.mutable_options()->add_markers(std::string(2000, 'm'));
  EXPECT_THAT(internal::ValidateSubmitBatchRequest(request, {}),
              testutil::StatusIs(absl::StatusCode::kResourceExhausted,
                                 HasSubstr("options.markers[0]: 2000 bytes")));
  request = OneJob();
  for (int i = 0; i <= static_cast<int>(internal::kMaxPhaseOptions); ++i) {
    request.mutable_options()->add_phases("a=b");
  }
  EXPECT_THAT(internal::ValidateSubmitBatchRequest(request, {}),
              testutil::StatusIs(absl::StatusCode::kResourceExhausted,
                                 HasSubstr("options.phases: 65 entries, the limit is 64")));
  request = OneJob();
  request.mutable_options()->add_phases("app::start=app::end");
  request.mutable_options()->add_markers("app::phase::");
  EXPECT_OK(internal::ValidateSubmitBatchRequest(request, {}));
}

TEST(SubmitValidationTest, LibraryPathsAndNamespacesMustBeUsable) {
  struct Case {
    std::string ns, path, error;
  };
  std::vector<Case> bad = {
      {"std", "../x.masm", "libraries.libraries[0].files[1].path: \"../x.masm\" has a \"..\""},
      {"std", "a/../../x.masm", "files[1].path: \"a/../../x.masm\" has a \"..\""},
      {"std", "/etc/x.masm", "files[1].path: \"/etc/x.masm\" must be relative"},
      {"std", "a//b.masm", "files[1].path: \"a//b.masm\" has an empty component"},
      {"std", "./b.masm", "has a \".\" component"},
      {"../x", "ok.masm", "libraries.libraries[0].namespace: \"../x\" is not a MASM identifier"},
      {"a b", "ok.masm", "namespace: \"a b\" is not a MASM identifier"},
      {"a::", "ok.masm", "namespace: \"a::\" is not a MASM identifier"},
      {"::a", "ok.masm", "namespace: \"::a\" is not a MASM identifier"},
      {"a:b", "ok.masm", "namespace: \"a:b\" is not a MASM identifier"},
      {"9lib", "ok.masm", "is not a MASM identifier"},
      {"STD", "ok.masm", "is not a MASM identifier"},
      {"_", "ok.masm", "is not a MASM identifier"},
  };
  for (const Case& c : bad) {
    v1::SubmitBatchRequest request = OneJob();
    v1::Library* library = request.mutable_libraries()->add_libraries();
    library->set_namespace_(c.ns);
    library->add_files()->set_path("math/u64.masm");
    library->add_files()->set_path(c.path);
    absl::Status status = internal::ValidateSubmitBatchRequest(request, {});
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.ns << " " << c.path;
    EXPECT_THAT(status.message(), HasSubstr(c.error));
  }
  for (const std::string ns : {"std", "my_lib", "Lib2", "_private", "miden::core", "a::b::c"}) {
    v1::SubmitBatchRequest request = OneJob();
    v1::Library* library = request.mutable_libraries()->add_libraries();
    library->set_namespace_(ns);
    library->add_files()->set_path("math/u64.masm");
    EXPECT_TRUE(internal::ValidateSubmitBatchRequest(request, {}).ok()) << ns;
  }
}

TEST(SubmitValidationTest, AJobsKernelMustBeAUsableFileOfAProgramJob) {
  struct Case {
    std::string path, source, error;
    bool snapshot = false;
  };
  const std::vector<Case> bad = {
      {"", "pub proc k\n  add\nend\n", "jobs[0].kernel.path: empty"},
      {"../k.masm", "pub proc k\n  add\nend\n", "jobs[0].kernel.path: \"../k.masm\" has a \"..\""},
      {"/k.masm", "pub proc k\n  add\nend\n", "jobs[0].kernel.path: \"/k.masm\" must be relative"},
      {"k.masm", "", "jobs[0].kernel.source: empty"},
      {"k.masm", std::string(2000, 'x'), "jobs[0].kernel.source: 2000 bytes"},
      {"k.masm", "pub proc k\n  add\nend\n", "jobs[0].kernel: a snapshot job takes no kernel",
       true},
  };
  internal::SubmitLimits limits;
  limits.max_source_bytes = 1024;
  for (const Case& c : bad) {
    v1::SubmitBatchRequest request = OneJob();
    if (c.snapshot) {
      request.mutable_jobs(0)->clear_source();
      request.mutable_jobs(0)->set_snapshot("snapshot bytes");
    }
    request.mutable_jobs(0)->mutable_kernel()->set_path(c.path);
    request.mutable_jobs(0)->mutable_kernel()->set_source(c.source);
    absl::Status status = internal::ValidateSubmitBatchRequest(request, limits);
    EXPECT_FALSE(status.ok()) << c.error;
    EXPECT_THAT(status.message(), HasSubstr(c.error));
  }
  v1::SubmitBatchRequest request = OneJob();
  request.mutable_jobs(0)->mutable_kernel()->set_path("kernels/app.masm");
  request.mutable_jobs(0)->mutable_kernel()->set_source("pub proc k\n  add\nend\n");
  EXPECT_OK(internal::ValidateSubmitBatchRequest(request, limits));
}

// The kernel is part of the program: a cached result of the program with one kernel never
// answers the same source with another, or with none.
TEST(SubmitValidationTest, TheKernelIsPartOfTheProgramDigest) {
  v1::JobSpec plain = OneJob().jobs(0);
  v1::JobSpec with = plain;
  with.mutable_kernel()->set_path("k.masm");
  with.mutable_kernel()->set_source("pub proc k\n  add\nend\n");
  v1::JobSpec other = with;
  other.mutable_kernel()->set_source("pub proc k\n  mul\nend\n");
  const std::string a = internal::JobProgramDigest(plain, "libs");
  const std::string b = internal::JobProgramDigest(with, "libs");
  const std::string c = internal::JobProgramDigest(other, "libs");
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_EQ(b, internal::JobProgramDigest(with, "libs"));
  // So are its submodules.
  v1::JobSpec with_module = with;
  v1::LibraryFile* sub = with_module.add_kernel_modules();
  sub->set_path("sys.masm");
  sub->set_source("pub proc s\n  add\nend\n");
  EXPECT_NE(internal::JobProgramDigest(with_module, "libs"), b);
}

TEST(SubmitValidationTest, KernelModulesSitBesideTheKernelOncePerPath) {
  internal::SubmitLimits limits;
  limits.max_source_bytes = 1024;
  auto request_with = [](std::vector<std::pair<std::string, std::string>> modules) {
    v1::SubmitBatchRequest request = OneJob();
    request.mutable_jobs(0)->mutable_kernel()->set_path("kern/mod.masm");
    request.mutable_jobs(0)->mutable_kernel()->set_source("mod sys\npub proc k\n  add\nend\n");
    for (const auto& [path, source] : modules) {
      v1::LibraryFile* file = request.mutable_jobs(0)->add_kernel_modules();
      file->set_path(path);
      file->set_source(source);
    }
    return request;
  };
  const std::string text = "pub proc s\n  add\nend\n";
  EXPECT_OK(internal::ValidateSubmitBatchRequest(
      request_with({{"kern/sys.masm", text}, {"kern/io/mod.masm", text}}), limits));
  const std::vector<std::pair<std::vector<std::pair<std::string, std::string>>, std::string>> bad =
      {{{{"other/sys.masm", text}},
        "jobs[0].kernel_modules[0].path: \"other/sys.masm\" is not a .masm file beside the kernel"},
       {{{"kern/sys.txt", text}},
        "jobs[0].kernel_modules[0].path: \"kern/sys.txt\" is not a .masm"},
       {{{"kern/../x.masm", text}},
        "jobs[0].kernel_modules[0].path: \"kern/../x.masm\" has a \"..\""},
       {{{"kern/sys.masm", text}, {"kern/sys.masm", text}},
        "jobs[0].kernel_modules[1].path: \"kern/sys.masm\" is given twice"},
       {{{"kern/mod.masm", text}},
        "jobs[0].kernel_modules[0].path: \"kern/mod.masm\" is given twice"},
       {{{"kern/sys.masm", std::string(2000, 'x')}},
        "jobs[0].kernel_modules[0].source: 2000 bytes"}};
  for (const auto& [modules, error] : bad) {
    absl::Status status = internal::ValidateSubmitBatchRequest(request_with(modules), limits);
    EXPECT_THAT(status.message(), HasSubstr(error));
  }
  std::vector<std::pair<std::string, std::string>> many;
  for (size_t i = 0; i <= vm::kMaxKernelSubmodules; ++i) {
    many.emplace_back(absl::StrCat("kern/m", i, ".masm"), text);
  }
  EXPECT_THAT(internal::ValidateSubmitBatchRequest(request_with(many), limits).message(),
              HasSubstr("jobs[0].kernel_modules: 257 files, the limit is 256"));
  // Submodules without a kernel.
  v1::SubmitBatchRequest orphan = OneJob();
  orphan.mutable_jobs(0)->add_kernel_modules()->set_path("sys.masm");
  EXPECT_THAT(internal::ValidateSubmitBatchRequest(orphan, limits).message(),
              HasSubstr("jobs[0].kernel_modules: given without a kernel"));
}

// Static links name library namespaces, at most kMaxStaticLinks of them, and are part of the
// digests (a static and a dynamic build of one program are different programs).
TEST(SubmitValidationTest, StaticLinksAreNamespacesAndPartOfTheDigests) {
  internal::SubmitLimits limits;
  v1::SubmitBatchRequest request = OneJob();
  v1::Library* lib = request.mutable_libraries()->add_libraries();
  lib->set_namespace_("app::util");
  v1::LibraryFile* file = lib->add_files();
  file->set_path("mod.masm");
  file->set_source("pub proc f\n    nop\nend\n");
  lib->add_static_links("miden::core");
  request.mutable_jobs(0)->add_static_libraries("app::util");
  EXPECT_OK(internal::ValidateSubmitBatchRequest(request, limits));

  v1::SubmitBatchRequest bad = request;
  bad.mutable_jobs(0)->set_static_libraries(0, "../etc");
  EXPECT_THAT(internal::ValidateSubmitBatchRequest(bad, limits).message(),
              HasSubstr("jobs[0].static_libraries[0]: \"../etc\" is not a library namespace"));
  bad = request;
  for (size_t i = 0; i < internal::kMaxStaticLinks; ++i) {
    *bad.mutable_libraries()->mutable_libraries(0)->add_static_links() = absl::StrCat("lib", i);
  }
  EXPECT_THAT(internal::ValidateSubmitBatchRequest(bad, limits).message(),
              HasSubstr("libraries.libraries[0].static_links: 65 namespaces, the limit is 64"));

  v1::LibrarySet dynamic = request.libraries();
  dynamic.mutable_libraries(0)->clear_static_links();
  EXPECT_NE(internal::LibrarySetDigest(request.libraries()), internal::LibrarySetDigest(dynamic));
  v1::JobSpec plain = request.jobs(0);
  plain.clear_static_libraries();
  EXPECT_NE(internal::JobProgramDigest(request.jobs(0), "libs"),
            internal::JobProgramDigest(plain, "libs"));
}

TEST(SubmitValidationTest, TruncateMiddleKeepsHeadAndTailAndSaysHowMuchWasCut) {
  EXPECT_EQ(internal::TruncateMiddle("short", 100), "short");
  std::string error = absl::StrCat("HEAD", std::string(10000, 'x'), "TAIL");
  std::string cut = internal::TruncateMiddle(error, 200);
  EXPECT_LE(cut.size(), 200u);
  EXPECT_TRUE(absl::StartsWith(cut, "HEAD"));
  EXPECT_TRUE(absl::EndsWith(cut, "TAIL"));
  const size_t marker = cut.find("\n... [");
  const size_t tail = cut.size() - cut.rfind("] ...\n") - 6;
  EXPECT_THAT(cut, HasSubstr(absl::StrCat("[", error.size() - marker - tail, " bytes cut]")));
}

// A GetBatch / WatchBatch response of a batch at the job limit, with every string at its
// limit, fits the default gRPC message limit (64 MiB).
TEST(SubmitValidationTest, WorstCaseBatchResponseFitsTheMessageLimit) {
  internal::SubmitLimits limits;
  v1::Batch batch;
  batch.set_batch_id("18446744073709551615");
  for (size_t i = 0; i < limits.max_labels; ++i) {
    (*batch.mutable_labels())[absl::StrCat(i, std::string(limits.max_name_bytes, 'k'))
                                  .substr(0, limits.max_name_bytes)] =
        std::string(limits.max_name_bytes, 'v');
  }
  for (size_t i = 0; i < limits.max_jobs; ++i) {
    v1::JobStatus* job = batch.add_jobs();
    job->set_name(std::string(limits.max_name_bytes, 'n'));
    job->set_state(v1::JOB_STATE_FAILED);
    job->set_attempts(~0u);
    job->set_cycles(~uint64_t{0});
    for (size_t j = 0; j < internal::kMaxResultStackValues; ++j) job->add_stack(~uint64_t{0});
    job->set_error(std::string(internal::kDefaultMaxErrorBytes, 'e'));
    job->set_cached_from(absl::StrCat(batch.batch_id(), "/", job->name()));
  }
  EXPECT_LT(batch.ByteSizeLong(), size_t{64} << 20);
}

// --- a store that fails on demand (item 8) ---

class FailingJobStore : public InMemoryJobStore {
 public:
  std::atomic<bool> fail_put{false};
  std::atomic<bool> fail_update{false};

  absl::StatusOr<std::string> PutArtifact(absl::string_view data) override {
    if (fail_put) return absl::ResourceExhaustedError("write artifacts/x: No space left on device");
    return InMemoryJobStore::PutArtifact(data);
  }
  absl::Status UpdateJob(absl::string_view batch_id, const JobRecord& job) override {
    if (fail_update && job.state != v1::JOB_STATE_QUEUED && job.state != v1::JOB_STATE_RUNNING) {
      return absl::InternalError("database or disk is full");
    }
    return InMemoryJobStore::UpdateJob(batch_id, job);
  }
};

class StoreFailureTest : public ::testing::Test {
 protected:
  StoreFailureTest()
      : scheduler_(&clock_, SchedulerOptions{.max_lost_leases = 3}),
        manager_(&store_, &scheduler_, &render_, &clock_,
                 BatchManagerOptions{.sweep_interval = absl::ZeroDuration()}) {}
  ~StoreFailureTest() override { manager_.Shutdown(); }

  v1::TaskHeader Header(const v1::Task& task, const std::string& bytes) {
    v1::TaskHeader header;
    header.set_task_id(task.task_id());
    header.set_lease_id(task.lease_id());
    header.set_succeeded(true);
    header.set_cycles(5);
    header.set_profile_bytes(bytes.size());
    return header;
  }

  FakeClock clock_;
  FailingJobStore store_;
  InProcessRenderClient render_;
  JobScheduler scheduler_;
  BatchManager manager_;
};

TEST_F(StoreFailureTest, FailedStoreRequeuesTheTaskAndCountsTheAttemptUntilItFails) {
  absl::StatusOr<std::string> id = manager_.SubmitBatch(OneJob());
  ASSERT_TRUE(id.ok());
  const std::string bytes = ProfileBytes();
  for (uint32_t attempt = 1; attempt <= 3; ++attempt) {
    // The artifact write fails on odd attempts, the job row on even ones.
    store_.fail_put = attempt % 2 == 1;
    store_.fail_update = attempt % 2 == 0;
    auto task = manager_.LeaseTask("w1", absl::ZeroDuration(), {});
    ASSERT_TRUE(task.ok() && task->has_value()) << "attempt " << attempt;
    EXPECT_EQ((*task)->attempt(), attempt);
    absl::StatusOr<bool> done = manager_.CompleteTask(Header(**task, bytes), bytes);
    EXPECT_FALSE(done.ok());
    EXPECT_THAT(done.status().message(), HasSubstr("result not stored"));
    v1::Batch batch = *manager_.GetBatch(*id, true);
    EXPECT_EQ(batch.jobs_running(), 0u) << "attempt " << attempt;  // never stuck RUNNING
    EXPECT_EQ(batch.jobs(0).attempts(), attempt);
    if (attempt < 3) {
      EXPECT_EQ(batch.jobs_queued(), 1u);
    } else {
      EXPECT_EQ(batch.jobs_failed(), 1u);
      EXPECT_THAT(batch.jobs(0).error(), HasSubstr("worker lost 3 times (last: result not stored"));
      EXPECT_EQ(batch.state(), v1::BATCH_STATE_FAILED);
    }
  }
}

TEST_F(StoreFailureTest, ResultIsAcceptedOnceTheStoreRecovers) {
  absl::StatusOr<std::string> id = manager_.SubmitBatch(OneJob());
  ASSERT_TRUE(id.ok());
  const std::string bytes = ProfileBytes();
  store_.fail_update = true;
  auto first = manager_.LeaseTask("w1", absl::ZeroDuration(), {});
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_FALSE(manager_.CompleteTask(Header(**first, bytes), bytes).ok());
  store_.fail_update = false;
  // The old lease is over; the retry of the same result is stale.
  absl::StatusOr<bool> stale = manager_.CompleteTask(Header(**first, bytes), bytes);
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(*stale);
  auto second = manager_.LeaseTask("w1", absl::ZeroDuration(), {});
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->attempt(), 2u);
  absl::StatusOr<bool> done = manager_.CompleteTask(Header(**second, bytes), bytes);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(*done);
  EXPECT_EQ(manager_.GetBatch(*id, false)->state(), v1::BATCH_STATE_SUCCEEDED);
}

// --- request ids (item 16) ---

TEST_F(StoreFailureTest, ReusedRequestIdWithOtherContentIsAlreadyExists) {
  v1::SubmitBatchRequest request = OneJob();
  request.set_request_id("nightly-42");
  (*request.mutable_labels())["a"] = "1";
  (*request.mutable_labels())["b"] = "2";
  absl::StatusOr<std::string> id = manager_.SubmitBatch(request);
  ASSERT_TRUE(id.ok());
  v1::SubmitBatchRequest same = OneJob();  // same content, labels inserted in another order
  same.set_request_id("nightly-42");
  (*same.mutable_labels())["b"] = "2";
  (*same.mutable_labels())["a"] = "1";
  absl::StatusOr<std::string> again = manager_.SubmitBatch(same);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *id);
  v1::SubmitBatchRequest other = request;
  other.mutable_jobs(0)->set_source("begin push.2 drop end");
  absl::StatusOr<std::string> conflict = manager_.SubmitBatch(other);
  EXPECT_EQ(conflict.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(conflict.status().message(),
              HasSubstr(absl::StrCat("request_id: \"nightly-42\" was used for batch ", *id,
                                     " with different content")));
}

// --- the service: result budget (item 7) and long-polls (item 11) ---

class ServiceLimitsTest : public ::testing::Test {
 protected:
  void Start(CoordinatorServiceOptions options) {
    scheduler_ = std::make_unique<JobScheduler>(&clock_, SchedulerOptions{});
    manager_ = std::make_unique<BatchManager>(&store_, scheduler_.get(), &render_, &clock_,
                                              BatchManagerOptions{});
    ASSERT_TRUE(manager_->Recover().ok());
    service_ = std::make_unique<CoordinatorServiceImpl>(manager_.get(), options);
    auto server = GrpcServer::Start(ServerOptions{}, {service_.get()});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = v1::Coordinator::NewStub(channel_);
  }
  void TearDown() override {
    if (manager_) manager_->Shutdown();
    if (server_) server_->Shutdown(absl::ZeroDuration());
  }

  std::string Submit() {
    grpc::ClientContext context;
    v1::SubmitBatchResponse response;
    EXPECT_TRUE(stub_->SubmitBatch(&context, OneJob(), &response).ok());
    return response.batch_id();
  }

  // Waits (bounded) until `done` holds.
  static bool Eventually(const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (!done()) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return true;
  }

  RealClock clock_;
  InMemoryJobStore store_;
  InProcessRenderClient render_;
  std::unique_ptr<JobScheduler> scheduler_;
  std::unique_ptr<BatchManager> manager_;
  std::unique_ptr<CoordinatorServiceImpl> service_;
  std::unique_ptr<GrpcServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

TEST_F(ServiceLimitsTest, ConcurrentUploadsBeyondTheResultBudgetAreResourceExhausted) {
  const std::string bytes = ProfileBytes();
  CoordinatorServiceOptions options;
  options.max_inflight_result_bytes = bytes.size() * 2 + 10;  // two uploads at once
  options.result_budget_wait = absl::Milliseconds(300);
  Start(options);
  const std::string id = Submit();
  (void)id;
  // Two open streams that sent only their header hold the whole budget.
  struct Open {
    grpc::ClientContext context;
    v1::CompleteTaskResponse response;
    std::unique_ptr<grpc::ClientWriter<v1::CompleteTaskChunk>> writer;
  };
  auto open = [&](size_t profile_bytes) {
    auto stream = std::make_unique<Open>();
    stream->writer = stub_->CompleteTask(&stream->context, &stream->response);
    v1::CompleteTaskChunk chunk;
    chunk.mutable_header()->set_task_id("1/0");
    chunk.mutable_header()->set_lease_id("nope");
    chunk.mutable_header()->set_succeeded(true);
    chunk.mutable_header()->set_profile_bytes(profile_bytes);
    EXPECT_TRUE(stream->writer->Write(chunk));
    return stream;
  };
  std::vector<std::unique_ptr<Open>> holders;
  holders.push_back(open(bytes.size()));
  holders.push_back(open(bytes.size()));
  ASSERT_TRUE(Eventually([&] { return service_->result_bytes_in_flight() == 2 * bytes.size(); }));
  // A third one waits for room, then is refused naming the budget and the flag.
  auto third = open(bytes.size());
  third->writer->WritesDone();
  grpc::Status refused = third->writer->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("--max-inflight-result-bytes"));
  // One more than the whole budget is refused at once.
  auto huge = open(options.max_inflight_result_bytes + 1);
  huge->writer->WritesDone();
  EXPECT_EQ(huge->writer->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  // When a holder ends, the room comes back.
  for (auto& holder : holders) {
    v1::CompleteTaskChunk data;
    data.set_profile_data(bytes);
    holder->writer->Write(data);
    holder->writer->WritesDone();
    holder->writer->Finish();  // stale lease: accepted = false
  }
  EXPECT_TRUE(Eventually([&] { return service_->result_bytes_in_flight() == 0; }));
}

TEST_F(ServiceLimitsTest, CancelledLongPollsNeverGetTheNextTask) {
  Start(CoordinatorServiceOptions{});
  constexpr int kPolls = 64;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::thread> polls;
  for (int i = 0; i < kPolls; ++i) contexts.push_back(std::make_unique<grpc::ClientContext>());
  for (int i = 0; i < kPolls; ++i) {
    polls.emplace_back([&, i] {
      v1::LeaseTaskRequest request;
      request.set_worker_id(absl::StrCat("dead", i));
      request.set_wait_ms(30000);
      v1::LeaseTaskResponse response;
      stub_->LeaseTask(contexts[i].get(), request, &response).IgnoreError();
    });
  }
  ASSERT_TRUE(Eventually([&] { return service_->lease_polls_in_progress() == kPolls; }));
  for (auto& context : contexts) context->TryCancel();
  for (std::thread& t : polls) t.join();
  // The job arrives while the server may still be noticing the cancellations.
  const std::string id = Submit();
  grpc::ClientContext context;
  v1::LeaseTaskRequest request;
  request.set_worker_id("live");
  request.set_wait_ms(10000);
  v1::LeaseTaskResponse response;
  ASSERT_TRUE(stub_->LeaseTask(&context, request, &response).ok());
  ASSERT_TRUE(response.has_task());
  EXPECT_EQ(response.task().attempt(), 1u);
  grpc::ClientContext get_context;
  v1::GetBatchRequest get;
  get.set_batch_id(id);
  v1::Batch batch;
  ASSERT_TRUE(stub_->GetBatch(&get_context, get, &batch).ok());
  EXPECT_EQ(batch.jobs(0).attempts(), 1u);
  // Every dead poll ended: no thread is left waiting for them.
  EXPECT_TRUE(Eventually([&] { return service_->lease_polls_in_progress() == 0; }));
}

TEST_F(ServiceLimitsTest, LongPollsBeyondTheLimitAreRefusedAtOnce) {
  CoordinatorServiceOptions options;
  options.max_lease_polls = 2;
  Start(options);
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::thread> polls;
  for (int i = 0; i < 2; ++i) contexts.push_back(std::make_unique<grpc::ClientContext>());
  for (int i = 0; i < 2; ++i) {
    polls.emplace_back([&, i] {
      v1::LeaseTaskRequest request;
      request.set_worker_id("w");
      request.set_wait_ms(30000);
      v1::LeaseTaskResponse response;
      stub_->LeaseTask(contexts[i].get(), request, &response).IgnoreError();
    });
  }
  ASSERT_TRUE(Eventually([&] { return service_->lease_polls_in_progress() == 2; }));
  grpc::ClientContext context;
  v1::LeaseTaskRequest request;
  request.set_worker_id("w");
  request.set_wait_ms(30000);
  v1::LeaseTaskResponse response;
  const absl::Time start = absl::Now();
  grpc::Status status = stub_->LeaseTask(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max-lease-polls"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  for (auto& c : contexts) c->TryCancel();
  for (std::thread& t : polls) t.join();
}

TEST(ByteBudgetTest, WaitsForRoomAndGivesUpAfterTheWait) {
  internal::ByteBudget budget(100);
  ASSERT_TRUE(budget.Acquire(60, absl::ZeroDuration()).ok());
  EXPECT_EQ(budget.Acquire(60, absl::Milliseconds(50)).code(),
            absl::StatusCode::kResourceExhausted);
  std::thread releaser([&] {
    absl::SleepFor(absl::Milliseconds(50));
    budget.Release(60);
  });
  EXPECT_TRUE(budget.Acquire(60, absl::Seconds(20)).ok());
  releaser.join();
  EXPECT_EQ(budget.in_use(), 60u);
  EXPECT_EQ(budget.Acquire(1, absl::Seconds(20), [] { return true; }).code(),
            absl::StatusCode::kCancelled);
}

}  // namespace
}  // namespace flamefleet::coordinator
