// A fleet for CLI end-to-end tests: a renderer, a coordinator and N one-slot workers as child
// processes on loopback ports the OS chose, and a runner for the `flamefleet` binary against
// that coordinator. Used by the export and metrics fleet tests.
//
//   class MyFleetTest : public testutil::CliFleetTest {
//    protected:
//     MyFleetTest() : CliFleetTest("my_fleet", /*workers=*/2) {}
//   };
//   TEST_F(MyFleetTest, X) { std::string id = SubmitAndWait(root_ / "suite"); ... }
#ifndef FLAMEFLEET_TESTS_E2E_CLI_FLEET_FIXTURE_H_
#define FLAMEFLEET_TESTS_E2E_CLI_FLEET_FIXTURE_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"
#include "tests/testing/test_files.h"

namespace flamefleet::testutil {

// A program that loops `iterations` times through two nested procedures ($exec::step calls
// $exec::mix), so its profile has a known shape and its cycles grow with `iterations`.
inline std::string NestedLoopProgram(int iterations) {
  return absl::StrCat(R"(
proc mix
  dup.0 u32shl.3 u32xor u32wrapping_add.7
end
proc step
  exec.mix
  u32and.65535
end
begin
  push.1 push.)",
                      iterations, R"(
  dup.0 neq.0
  while.true
    swap exec.step swap sub.1 dup.0 neq.0
  end
  drop drop
end
)");
}

class CliFleetTest : public testing::Test {
 protected:
  // `name` names the test's scratch directory; `workers` one-slot workers are started.
  CliFleetTest(std::string name, int workers) : name_(std::move(name)), num_workers_(workers) {}

  void SetUp() override {
    root_ = std::filesystem::path(testing::TempDir()) / absl::StrCat(name_, "_", getpid());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_ / "state");
    renderer_ = Start({FLAMEFLEET_RENDERER, "--listen", "127.0.0.1:0"});
    ASSERT_NE(renderer_, nullptr);
    absl::StatusOr<int> rport = renderer_->WaitForListeningPort(absl::Seconds(60));
    ASSERT_TRUE(rport.ok()) << rport.status();
    coordinator_ =
        Start({FLAMEFLEET_COORDINATOR, "--listen", "127.0.0.1:0", "--state-dir",
               (root_ / "state").string(), "--renderer", absl::StrCat("127.0.0.1:", *rport)});
    ASSERT_NE(coordinator_, nullptr);
    absl::StatusOr<int> cport = coordinator_->WaitForListeningPort(absl::Seconds(60));
    ASSERT_TRUE(cport.ok()) << cport.status();
    address_ = absl::StrCat("127.0.0.1:", *cport);
    for (int i = 0; i < num_workers_; ++i) {
      workers_.push_back(Start({FLAMEFLEET_WORKER, "--coordinator", address_, "--slots", "1"}));
    }
  }

  void TearDown() override {
    for (auto& w : workers_) {
      if (w != nullptr) w->Stop(absl::Seconds(10));
    }
    for (auto* p : {&coordinator_, &renderer_}) {
      if (*p != nullptr) (*p)->Stop(absl::Seconds(10));
    }
    std::filesystem::remove_all(root_);
  }

  static std::unique_ptr<Subprocess> Start(const std::vector<std::string>& argv) {
    auto p = Subprocess::Start(argv);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? std::move(*p) : nullptr;
  }

  // Runs `flamefleet ARGS --coordinator ADDR` in root_ and keeps its stdout and stderr in out_
  // and err_; returns the exit code.
  int Cli(const std::string& args) {
    const std::string cmd = absl::StrCat("cd '", root_.string(), "' && ", FLAMEFLEET_CLI, " ", args,
                                         " --coordinator ", address_, " > out.txt 2> err.txt");
    const int status = std::system(cmd.c_str());
    out_ = ReadFile(root_ / "out.txt");
    err_ = ReadFile(root_ / "err.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  // Submits the programs under `dir` and waits for the batch; returns its id.
  std::string SubmitAndWait(const std::filesystem::path& dir) {
    EXPECT_EQ(Cli(absl::StrCat("submit ", dir.string())), 0) << err_;
    const std::string id(absl::StripAsciiWhitespace(out_));
    EXPECT_EQ(Cli(absl::StrCat("watch ", id)), 0) << err_;
    return id;
  }

  std::filesystem::path root_;
  std::unique_ptr<Subprocess> renderer_, coordinator_;
  std::vector<std::unique_ptr<Subprocess>> workers_;
  std::string address_;
  std::string out_, err_;

 private:
  std::string name_;
  int num_workers_;
};

}  // namespace flamefleet::testutil

#endif  // FLAMEFLEET_TESTS_E2E_CLI_FLEET_FIXTURE_H_
