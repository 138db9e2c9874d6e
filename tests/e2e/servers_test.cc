// Multi-process tests of issue #12 items on the service processes themselves: a port in use
// is never shared (no SO_REUSEPORT), and a state dir is owned by one coordinator at a time.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/subprocess.h"
#include "gtest/gtest.h"
#include "tests/testing/test_files.h"

namespace flamefleet {
namespace {

namespace fs = std::filesystem;
using testutil::ReadFile;

class ServersTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::TempDir()) /
            absl::StrCat("servers_", testing::UnitTest::GetInstance()->current_test_info()->name(),
                         "_", getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    for (auto& p : running_) p->Stop(absl::Seconds(10));
    fs::remove_all(root_);
  }

  // Starts `argv` with stderr in root/<name>.log.
  std::unique_ptr<Subprocess> Spawn(const std::string& name, std::vector<std::string> argv) {
    std::vector<std::string> sh = {"/bin/sh", "-c", "f=$1; shift; exec \"$@\" 2>>\"$f\"", "sh",
                                   Log(name).string()};
    sh.insert(sh.end(), argv.begin(), argv.end());
    auto p = Subprocess::Start(sh);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? std::move(*p) : nullptr;
  }
  fs::path Log(const std::string& name) const { return root_ / absl::StrCat(name, ".log"); }

  // Starts a service that must come up; returns its port.
  int StartServing(const std::string& name, std::vector<std::string> argv) {
    std::unique_ptr<Subprocess> p = Spawn(name, std::move(argv));
    if (p == nullptr) return 0;
    auto port = p->WaitForListeningPort(absl::Seconds(60));
    EXPECT_TRUE(port.ok()) << name << ": " << port.status() << "\n" << ReadFile(Log(name));
    running_.push_back(std::move(p));
    return port.ok() ? *port : 0;
  }

  // Runs a service that must fail to start: returns its exit code (bounded wait) and leaves
  // its log in *log.
  int ExpectFailsToStart(const std::string& name, std::vector<std::string> argv, std::string* log) {
    std::unique_ptr<Subprocess> p = Spawn(name, std::move(argv));
    if (p == nullptr) return -1;
    auto port = p->WaitForListeningPort(absl::Seconds(60));  // returns when the child exits
    EXPECT_FALSE(port.ok()) << name << " started on port " << *port;
    const int status = p->Stop(absl::Seconds(30));
    *log = ReadFile(Log(name));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::vector<std::string> Coordinator(const std::string& state, const std::string& listen,
                                       std::vector<std::string> extra = {}) const {
    std::vector<std::string> argv = {FLAMEFLEET_COORDINATOR, "--listen", listen, "--state-dir",
                                     (root_ / state).string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  fs::path root_;
  std::vector<std::unique_ptr<Subprocess>> running_;
};

TEST_F(ServersTest, SecondCoordinatorOnAPortInUseExitsWithAddressInUse) {
  const int port = StartServing("first", Coordinator("a", "127.0.0.1:0"));
  ASSERT_GT(port, 0);
  const std::string address = absl::StrCat("127.0.0.1:", port);
  std::string log;
  EXPECT_NE(ExpectFailsToStart("second", Coordinator("b", address), &log), 0);
  EXPECT_NE(log.find(absl::StrCat("cannot listen on ", address, ": address already in use")),
            std::string::npos)
      << log;
}

TEST_F(ServersTest, SecondRendererOnAPortInUseExitsWithAddressInUse) {
  const int port = StartServing("first", {FLAMEFLEET_RENDERER, "--listen", "127.0.0.1:0"});
  ASSERT_GT(port, 0);
  const std::string address = absl::StrCat("127.0.0.1:", port);
  std::string log;
  EXPECT_NE(ExpectFailsToStart("second", {FLAMEFLEET_RENDERER, "--listen", address}, &log), 0);
  EXPECT_NE(log.find(absl::StrCat("cannot listen on ", address, ": address already in use")),
            std::string::npos)
      << log;
}

TEST_F(ServersTest, HealthPortInUseStopsRendererCoordinatorAndWorker) {
  const int port = StartServing("first", {FLAMEFLEET_RENDERER, "--listen", "127.0.0.1:0"});
  ASSERT_GT(port, 0);
  const std::string address = absl::StrCat("127.0.0.1:", port);
  const std::string expected =
      absl::StrCat("cannot listen on ", address, " (--health-listen): address already in use");
  std::string log;
  EXPECT_NE(ExpectFailsToStart(
                "renderer",
                {FLAMEFLEET_RENDERER, "--listen", "127.0.0.1:0", "--health-listen", address}, &log),
            0);
  EXPECT_NE(log.find(expected), std::string::npos) << log;
  EXPECT_NE(ExpectFailsToStart("coordinator",
                               Coordinator("c", "127.0.0.1:0", {"--health-listen", address}), &log),
            0);
  EXPECT_NE(log.find(expected), std::string::npos) << log;
  EXPECT_NE(
      ExpectFailsToStart(
          "worker", {FLAMEFLEET_WORKER, "--coordinator", "127.0.0.1:1", "--health-listen", address},
          &log),
      0);
  EXPECT_NE(log.find(expected), std::string::npos) << log;
}

TEST_F(ServersTest, SecondCoordinatorOnALockedStateDirNamesTheHolder) {
  const int port = StartServing("first", Coordinator("state", "127.0.0.1:0"));
  ASSERT_GT(port, 0);
  std::string log;
  EXPECT_EQ(ExpectFailsToStart("second", Coordinator("state", "127.0.0.1:0"), &log), 1);
  EXPECT_NE(log.find(absl::StrCat("is in use by another coordinator (pid ", running_[0]->pid())),
            std::string::npos)
      << log;
  // The holder's pid is in the lock file, and once it stops the dir can be opened again.
  running_[0]->Stop(absl::Seconds(30));
  running_.clear();
  EXPECT_GT(StartServing("third", Coordinator("state", "127.0.0.1:0")), 0);
}

TEST_F(ServersTest, EmptyDatabaseBesideArtifactsIsRefused) {
  ASSERT_GT(StartServing("first", Coordinator("state", "127.0.0.1:0")), 0);
  running_[0]->Stop(absl::Seconds(30));
  running_.clear();
  std::ofstream(root_ / "state" / "artifacts" / "0000") << "bytes";
  fs::resize_file(root_ / "state" / "state.db", 0);
  fs::remove(root_ / "state" / "state.db-wal");
  std::string log;
  EXPECT_EQ(ExpectFailsToStart("second", Coordinator("state", "127.0.0.1:0"), &log), 1);
  EXPECT_NE(log.find("state.db is empty but artifacts/ holds results"), std::string::npos) << log;
}

}  // namespace
}  // namespace flamefleet
