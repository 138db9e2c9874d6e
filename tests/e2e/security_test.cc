// Multi-process tests of a secured fleet: the real renderer, coordinator and worker binaries
// with mutual TLS (the committed test identities in tests/testdata/tls) and a bearer token,
// driven by the `flamefleet` CLI binary and by raw gRPC calls. Each service's stderr goes to a
// file so the tests can prove that the token never reaches a log.
#include "common/security.h"

#include <grpcpp/grpcpp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "cli/batch_client.h"
#include "common/channel.h"
#include "common/subprocess.h"
#include "flamefleet/v1/coordinator.grpc.pb.h"
#include "flamefleet/v1/renderer.grpc.pb.h"
#include "google/protobuf/descriptor.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "tests/testing/generic_call.h"
#include "tests/testing/test_files.h"

namespace flamefleet {
namespace {

namespace fs = std::filesystem;
using testutil::ReadFile;

constexpr char kToken[] = "e2e-Token-0f9a8b7c6d5e4f3a2b1c";
constexpr char kWrongToken[] = "e2e-Wrong-1122334455667788";
constexpr char kReflection[] = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

std::string Tls(const std::string& name) {
  return absl::StrCat(FLAMEFLEET_TLS_TESTDATA, "/", name);
}

// A small program: `iterations` loop turns of about 20 cycles.
std::string Program(int iterations) {
  return absl::StrCat("proc step\n  add.1\nend\nbegin\n  push.0 push.", iterations,
                      "\n  dup.0 neq.0\n  while.true\n    swap exec.step swap sub.1 dup.0 neq.0\n"
                      "  end\n  drop drop\nend\n");
}

// One service process with its stderr in a file.
struct Service {
  std::unique_ptr<Subprocess> process;
  fs::path log;
  int port = 0;
  int health_port = 0;
};

class SecurityTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::TempDir()) /
            absl::StrCat("security_", testing::UnitTest::GetInstance()->current_test_info()->name(),
                         "_", getpid());
    fs::remove_all(root_);
    fs::create_directories(root_ / "state");
    token_file_ = root_ / "token";
    std::ofstream(token_file_) << "\n  " << kToken << "  \n";
  }
  void TearDown() override {
    StopAll();
    fs::remove_all(root_);
  }

  // The TLS flags every service gets: its identity, the CA, mutual TLS, the token.
  std::vector<std::string> SecureFlags() const {
    return {"--tls-cert",        Tls("server.pem"),   "--tls-key",
            Tls("server.key"),   "--tls-ca",          Tls("ca.pem"),
            "--tls-client-auth", "--auth-token-file", token_file_.string()};
  }

  // Starts `argv` with stderr appended to root/<name>.log; waits for LISTENING (and
  // HEALTH_LISTENING when `health`) unless `listens` is false.
  Service Start(const std::string& name, std::vector<std::string> argv, bool listens = true,
                bool health = false) {
    Service s;
    s.log = root_ / absl::StrCat(name, ".log");
    std::vector<std::string> sh = {"/bin/sh", "-c", "f=$1; shift; exec \"$@\" 2>>\"$f\"", "sh",
                                   s.log.string()};
    sh.insert(sh.end(), argv.begin(), argv.end());
    auto p = Subprocess::Start(sh);
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok()) return s;
    s.process = std::move(*p);
    if (listens) {
      auto port = s.process->WaitForListeningPort(absl::Seconds(60));
      EXPECT_TRUE(port.ok()) << name << ": " << port.status() << "\n" << ReadFile(s.log);
      s.port = port.ok() ? *port : 0;
    }
    if (health) {
      auto line = s.process->WaitForLine("HEALTH_LISTENING ", absl::Seconds(60));
      EXPECT_TRUE(line.ok()) << name << ": " << line.status();
      if (line.ok()) {
        EXPECT_TRUE(absl::SimpleAtoi(*line, &s.health_port)) << *line;
      }
    }
    logs_.push_back(s.log);
    return s;
  }

  // Starts renderer and coordinator with full security (plus `coordinator_flags`).
  void StartServices(const std::vector<std::string>& coordinator_flags = {}) {
    std::vector<std::string> r = {FLAMEFLEET_RENDERER, "--listen", "127.0.0.1:0", "--health-listen",
                                  "127.0.0.1:0"};
    for (const std::string& f : SecureFlags()) r.push_back(f);
    renderer_ = Start("renderer", r, true, true);
    ASSERT_GT(renderer_.port, 0);
    std::vector<std::string> c = {FLAMEFLEET_COORDINATOR,
                                  "--listen",
                                  "127.0.0.1:0",
                                  "--state-dir",
                                  (root_ / "state").string(),
                                  "--renderer",
                                  absl::StrCat("127.0.0.1:", renderer_.port),
                                  "--lease-ms",
                                  "2000",
                                  "--health-listen",
                                  "127.0.0.1:0"};
    for (const std::string& f : SecureFlags()) c.push_back(f);
    for (const std::string& f : coordinator_flags) c.push_back(f);
    coordinator_ = Start("coordinator", c, true, true);
    ASSERT_GT(coordinator_.port, 0);
  }

  void AddWorker(bool health = false) {
    std::vector<std::string> w = {FLAMEFLEET_WORKER,
                                  "--coordinator",
                                  absl::StrCat("127.0.0.1:", coordinator_.port),
                                  "--slots",
                                  "1",
                                  "--worker-id",
                                  absl::StrCat("w", workers_.size()),
                                  "--grace",
                                  "1s",
                                  "--tls-cert",
                                  Tls("server.pem"),
                                  "--tls-key",
                                  Tls("server.key"),
                                  "--tls-ca",
                                  Tls("ca.pem"),
                                  "--auth-token-file",
                                  token_file_.string()};
    if (health) {
      w.push_back("--health-listen");
      w.push_back("127.0.0.1:0");
    }
    workers_.push_back(Start(absl::StrCat("worker", workers_.size()), w, false, health));
  }

  void StopAll() {
    std::vector<Service*> all = {&renderer_, &coordinator_};
    for (Service& w : workers_) all.push_back(&w);
    for (Service* s : all) {
      if (s->process) s->process->Signal(SIGTERM);
    }
    for (Service* s : all) {
      if (s->process) s->process->Stop(absl::Seconds(10));
      s->process.reset();
    }
  }

  // A client's security: the CLI's certificate, the CA, and `token`.
  Security ClientSecurity(const std::string& token) const {
    absl::StatusOr<Security> s = LoadSecurity({.tls_cert_file = Tls("client.pem"),
                                               .tls_key_file = Tls("client.key"),
                                               .tls_ca_file = Tls("ca.pem")});
    EXPECT_TRUE(s.ok()) << s.status();
    Security out = s.ok() ? *s : Security{};
    out.token = token;
    return out;
  }
  std::shared_ptr<grpc::Channel> Channel(int port, const std::string& token) const {
    return MakeChannel(absl::StrCat("127.0.0.1:", port), ClientSecurity(token));
  }

  // Runs the CLI with `args` (and `env`, "K=V ..."); returns its exit code, stdout in *out.
  int Cli(const std::string& env, const std::string& args, std::string* out,
          std::string* err = nullptr) {
    fs::path o = root_ / "cli.out", e = root_ / "cli.err";
    int rc = std::system(
        absl::StrCat(env, " ", FLAMEFLEET_CLI, " ", args, " >", o.string(), " 2>", e.string())
            .c_str());
    *out = ReadFile(o);
    std::string errors = ReadFile(e);
    cli_output_ += *out + errors;
    if (err != nullptr) *err = errors;
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }

  // Expects that no service log and no CLI output holds the token or key material.
  void ExpectNoSecretInLogs() {
    std::string key = ReadFile(Tls("server.key"));
    // A line from the middle of the PEM body.
    std::string key_line = key.substr(key.find('\n') + 1, 40);
    for (const fs::path& log : logs_) {
      std::string text = ReadFile(log);
      EXPECT_EQ(text.find(kToken), std::string::npos) << log;
      EXPECT_EQ(text.find(kWrongToken), std::string::npos) << log;
      EXPECT_EQ(text.find(key_line), std::string::npos) << log;
    }
    EXPECT_EQ(cli_output_.find(kToken), std::string::npos);
  }

  fs::path root_;
  fs::path token_file_;
  Service renderer_;
  Service coordinator_;
  std::vector<Service> workers_;
  std::vector<fs::path> logs_;
  std::string cli_output_;
};

std::string TlsFlags() {
  return absl::StrCat("--tls-ca ", Tls("ca.pem"), " --tls-cert ", Tls("client.pem"), " --tls-key ",
                      Tls("client.key"));
}

TEST_F(SecurityTest, MutualTlsFleetWithTokenRunsABatchThroughTheCli) {
  StartServices();
  AddWorker(/*health=*/true);
  AddWorker();
  fs::path programs = root_ / "programs";
  fs::create_directories(programs);
  for (int i = 0; i < 4; ++i) {
    std::ofstream(programs / absl::StrCat("p", i, ".masm")) << Program(50 + i);
  }
  std::string coordinator = absl::StrCat("127.0.0.1:", coordinator_.port);
  // Token from the environment, TLS from flags.
  std::string env = absl::StrCat("FLAMEFLEET_AUTH_TOKEN_FILE=", token_file_.string(),
                                 " FLAMEFLEET_COORDINATOR=", coordinator);
  std::string out;
  ASSERT_EQ(Cli(env, absl::StrCat("submit ", programs.string(), " ", TlsFlags()), &out), 0)
      << out << cli_output_;
  std::string id(absl::StripAsciiWhitespace(out));
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(Cli(env, absl::StrCat("watch ", id, " ", TlsFlags()), &out), 0) << cli_output_;
  EXPECT_EQ(
      Cli(env, absl::StrCat("fetch ", id, " -o ", (root_ / "out").string(), " ", TlsFlags()), &out),
      0)
      << cli_output_;
  EXPECT_TRUE(fs::exists(root_ / "out" / "aggregate.svg"));
  EXPECT_TRUE(fs::exists(root_ / "out" / "jobs" / "p3.masm.svg"));

  // BatchClient over the same security sees the batch succeed.
  cli::BatchClient client(Channel(coordinator_.port, kToken));
  auto batch = client.Get(id);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->state(), v1::BATCH_STATE_SUCCEEDED);
  EXPECT_EQ(batch->jobs_succeeded(), 4u);

  // The CLI without the token, or with a wrong one, or without trusting the CA, fails.
  std::string err;
  EXPECT_EQ(Cli(absl::StrCat("FLAMEFLEET_COORDINATOR=", coordinator),
                absl::StrCat("status ", id, " ", TlsFlags()), &out, &err),
            1);
  EXPECT_NE(err.find(kUnauthenticatedMessage), std::string::npos) << err;
  std::ofstream(root_ / "wrong") << kWrongToken;
  EXPECT_EQ(Cli(absl::StrCat("FLAMEFLEET_COORDINATOR=", coordinator),
                absl::StrCat("status ", id, " ", TlsFlags(), " --auth-token-file ",
                             (root_ / "wrong").string()),
                &out, &err),
            1);
  EXPECT_EQ(err.find(kWrongToken), std::string::npos) << err;
  EXPECT_EQ(Cli(env, absl::StrCat("status ", id, " --tls-ca ", Tls("other-ca.pem")), &out, &err),
            1);
  // A missing key file is named, before any call.
  EXPECT_EQ(Cli(env,
                absl::StrCat("status ", id, " --tls-ca ", Tls("ca.pem"), " --tls-cert ",
                             Tls("client.pem"), " --tls-key /nonexistent.key"),
                &out, &err),
            2);  // a usage error
  EXPECT_NE(err.find("--tls-key: cannot read /nonexistent.key"), std::string::npos) << err;

  // The worker's health-only port answers in plaintext without a token.
  ASSERT_GT(workers_[0].health_port, 0);
  grpc::ClientContext ctx;
  grpc::health::v1::HealthCheckResponse health;
  ASSERT_TRUE(grpc::health::v1::Health::NewStub(
                  MakeChannel(absl::StrCat("127.0.0.1:", workers_[0].health_port)))
                  ->Check(&ctx, {}, &health)
                  .ok());
  EXPECT_EQ(health.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  StopAll();
  // The logs were captured (so the check below can see a leak), and hold no secret.
  EXPECT_NE(ReadFile(coordinator_.log).find("SubmitBatch"), std::string::npos);
  ExpectNoSecretInLogs();
}

// Calls every method of `service` on `port`: without a token and with a wrong one each is
// UNAUTHENTICATED with the fixed message; with the right token none is (proving the paths).
void ExpectEveryMethodNeedsTheToken(const google::protobuf::ServiceDescriptor* descriptor, int port,
                                    const std::shared_ptr<grpc::Channel>& tokenless,
                                    const std::shared_ptr<grpc::Channel>& with_token) {
  ASSERT_NE(descriptor, nullptr);
  ASSERT_GT(descriptor->method_count(), 0);
  const std::string& service = descriptor->full_name();
  std::vector<std::string> paths = {kReflection};
  for (int i = 0; i < descriptor->method_count(); ++i) {
    paths.push_back(absl::StrCat("/", service, "/", descriptor->method(i)->name()));
  }
  for (const std::string& path : paths) {
    SCOPED_TRACE(absl::StrCat(path, " on port ", port));
    grpc::Status missing = testutil::GenericCall(tokenless, path, "");
    EXPECT_EQ(missing.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(missing.error_message(), kUnauthenticatedMessage);
    grpc::Status wrong =
        testutil::GenericCall(tokenless, path, "", absl::StrCat("Bearer ", kWrongToken));
    EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(wrong.error_message(), kUnauthenticatedMessage);
    EXPECT_EQ(wrong.error_message().find(kWrongToken), std::string::npos);
    grpc::Status right = testutil::GenericCall(with_token, path, "");
    EXPECT_NE(right.error_code(), grpc::StatusCode::UNAUTHENTICATED) << right.error_message();
    EXPECT_NE(right.error_code(), grpc::StatusCode::UNIMPLEMENTED) << right.error_message();
  }
}

TEST_F(SecurityTest, EveryMethodAndReflectionRefuseMissingAndWrongTokensWithoutSideEffects) {
  StartServices();
  auto tokenless = Channel(coordinator_.port, "");
  // A valid SubmitBatch with a wrong token creates nothing (the handler never runs).
  v1::SubmitBatchRequest request;
  request.add_jobs()->set_name("a.masm");
  request.mutable_jobs(0)->set_source(Program(3));
  std::string bytes = request.SerializeAsString();
  grpc::Status refused = testutil::GenericCall(tokenless, "/flamefleet.v1.Coordinator/SubmitBatch",
                                               bytes, absl::StrCat("Bearer ", kWrongToken));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(ReadFile(coordinator_.log).find("SubmitBatch"), std::string::npos);
  cli::BatchClient client(Channel(coordinator_.port, kToken));
  auto batches = client.List(v1::ListBatchesRequest());
  ASSERT_TRUE(batches.ok()) << batches.status();
  EXPECT_TRUE(batches->empty());

  // The descriptors of the generated services (through a message of each file, which also
  // links the file in): every method, streaming ones included, present and future.
  const google::protobuf::ServiceDescriptor* coordinator =
      v1::SubmitBatchRequest::descriptor()->file()->FindServiceByName("Coordinator");
  ASSERT_NE(coordinator, nullptr);
  EXPECT_EQ(coordinator->full_name(), v1::Coordinator::service_full_name());
  EXPECT_GE(coordinator->method_count(), 9);
  ExpectEveryMethodNeedsTheToken(coordinator, coordinator_.port, tokenless,
                                 Channel(coordinator_.port, kToken));
  const google::protobuf::ServiceDescriptor* renderer =
      v1::RenderRequest::descriptor()->file()->FindServiceByName("Renderer");
  ASSERT_NE(renderer, nullptr);
  EXPECT_EQ(renderer->full_name(), v1::Renderer::service_full_name());
  ExpectEveryMethodNeedsTheToken(renderer, renderer_.port, Channel(renderer_.port, ""),
                                 Channel(renderer_.port, kToken));
  // The positive control's empty SubmitBatch was refused as invalid: still no batch.
  batches = client.List(v1::ListBatchesRequest());
  ASSERT_TRUE(batches.ok()) << batches.status();
  EXPECT_TRUE(batches->empty());
  StopAll();
  ExpectNoSecretInLogs();
}

TEST_F(SecurityTest, HealthPortAnswersWithoutTlsOrTokenWhileTheMainPortRequiresThem) {
  StartServices();
  for (const Service* s : {&coordinator_, &renderer_}) {
    ASSERT_GT(s->health_port, 0);
    auto check = [](const std::shared_ptr<grpc::Channel>& channel,
                    grpc::health::v1::HealthCheckResponse* out) {
      grpc::ClientContext ctx;
      ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
      return grpc::health::v1::Health::NewStub(channel)->Check(&ctx, {}, out);
    };
    grpc::health::v1::HealthCheckResponse response;
    // Health port: plaintext, no token.
    grpc::Status st = check(MakeChannel(absl::StrCat("127.0.0.1:", s->health_port)), &response);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
    // Main port: plaintext is refused; with TLS, health needs no token but the rest does.
    EXPECT_EQ(check(MakeChannel(absl::StrCat("127.0.0.1:", s->port)), &response).error_code(),
              grpc::StatusCode::UNAVAILABLE);
    st = check(Channel(s->port, ""), &response);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
    EXPECT_EQ(testutil::GenericCall(Channel(s->port, ""), kReflection, "").error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
}

TEST_F(SecurityTest, OversizedRequestsAreResourceExhaustedAndTheCycleCeilingApplies) {
  StartServices({"--max-message-bytes", "1048576", "--max-jobs-per-batch", "3",
                 "--max-program-bytes", "2000", "--max-cycle-cap", "5000"});
  cli::BatchClient client(Channel(coordinator_.port, kToken));
  auto request = [](int jobs, size_t program_bytes) {
    v1::SubmitBatchRequest r;
    for (int i = 0; i < jobs; ++i) {
      v1::JobSpec* job = r.add_jobs();
      job->set_name(absl::StrCat("j", i, ".masm"));
      std::string source = Program(1000);
      if (source.size() < program_bytes) source += std::string(program_bytes - source.size(), '\n');
      job->set_source(source);
    }
    return r;
  };
  auto too_many = client.Submit(request(4, 0));
  EXPECT_EQ(too_many.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(too_many.status().message(), "jobs: 4 jobs exceeds the limit of 3");
  auto too_big = client.Submit(request(1, 3000));
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(too_big.status().message(),
            "jobs[0].source: 3000 bytes exceeds the limit of 2000 bytes");
  v1::SubmitBatchRequest capped = request(1, 0);
  capped.mutable_options()->set_max_cycles(5001);
  auto over_cap = client.Submit(capped);
  EXPECT_EQ(over_cap.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(over_cap.status().message(),
            "options.max_cycles: 5001 exceeds the limit of 5000 cycles");
  v1::SubmitBatchRequest huge = request(1, 0);
  (*huge.mutable_labels())["big"] = std::string(2 << 20, 'x');  // over --max-message-bytes
  auto over_message = client.Submit(huge);
  EXPECT_EQ(over_message.status().code(), absl::StatusCode::kResourceExhausted)
      << over_message.status();

  // A batch without a cap gets the ceiling: a long loop fails at 5000 cycles.
  AddWorker();
  auto id = client.Submit(request(1, 0));
  ASSERT_TRUE(id.ok()) << id.status();
  auto final_batch = client.Watch(*id, [](const v1::Batch&) {});
  ASSERT_TRUE(final_batch.ok()) << final_batch.status();
  auto batch = client.Get(*id);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->jobs_size(), 1);
  EXPECT_EQ(batch->jobs(0).state(), v1::JOB_STATE_FAILED);
  EXPECT_NE(batch->jobs(0).error().find("5000"), std::string::npos) << batch->jobs(0).error();
}

}  // namespace
}  // namespace flamefleet
