// The web view through real processes (issue #17): `flamefleet run --open --keep` serves the
// batch page it prints, and a coordinator started with --http-listen and a token announces
// HTTP_LISTENING, refuses pages without the token and refuses to share its HTTP port.
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/subprocess.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace flamefleet {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class WebFleetTest : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::TempDir()) /
            absl::StrCat("web_", testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                         getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path root_;
};

// Splits "http://127.0.0.1:PORT/path" into the port and the path.
void SplitUrl(const std::string& url, int* port, std::string* path) {
  const std::string prefix = "http://127.0.0.1:";
  ASSERT_EQ(url.rfind(prefix, 0), 0u) << url;
  const size_t slash = url.find('/', prefix.size());
  ASSERT_TRUE(absl::SimpleAtoi(url.substr(prefix.size(), slash - prefix.size()), port)) << url;
  *path = slash == std::string::npos ? "/" : url.substr(slash);
}

TEST_F(WebFleetTest, RunOpenKeepServesTheBatchPageUntilInterrupted) {
  auto run = Subprocess::Start({FLAMEFLEET_CLI, "run", FLAMEFLEET_EXAMPLES, "--open", "--keep",
                                "--workers", "2", "-o", (root_ / "out").string()});
  ASSERT_TRUE(run.ok()) << run.status();
  auto url = (*run)->WaitForLine("URL ", absl::Seconds(120));
  ASSERT_TRUE(url.ok()) << url.status();
  int port = 0;
  std::string path;
  SplitUrl(*url, &port, &path);
  EXPECT_EQ(path, "/batches/1");
  auto serving = (*run)->WaitForLine("SERVING ", absl::Seconds(120));
  ASSERT_TRUE(serving.ok()) << serving.status();
  EXPECT_EQ(*serving, absl::StrCat("http://127.0.0.1:", port));

  httplib::Client client("127.0.0.1", port);
  auto page = client.Get(path.c_str());
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->body, HasSubstr("SUCCEEDED"));
  EXPECT_THAT(page->body, HasSubstr(">fib.masm</a>"));
  auto job = client.Get("/batches/1/jobs/fib.masm?format=folded");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->status, 200);
  std::ifstream fetched(root_ / "out" / "jobs" / "fib.masm.folded");
  std::string folded((std::istreambuf_iterator<char>(fetched)), std::istreambuf_iterator<char>());
  EXPECT_EQ(job->body, folded);  // the same artifact `run` fetched

  (*run)->Signal(SIGINT);
  const int status = (*run)->Wait();
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);  // the batch's exit code, not 130
  EXPECT_FALSE(client.Get("/"));      // the fleet is gone
}

TEST_F(WebFleetTest, CoordinatorWithATokenAnnouncesItsHttpPortAndRefusesWithoutIt) {
  const fs::path token = root_ / "token";
  std::ofstream(token) << "web-token\n";
  auto coordinator = Subprocess::Start({FLAMEFLEET_COORDINATOR, "--listen", "127.0.0.1:0",
                                        "--state-dir", (root_ / "s1").string(), "--http-listen",
                                        "127.0.0.1:0", "--auth-token-file", token.string()});
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  ASSERT_TRUE((*coordinator)->WaitForListeningPort(absl::Seconds(60)).ok());
  auto http = (*coordinator)->WaitForLine("HTTP_LISTENING ", absl::Seconds(60));
  ASSERT_TRUE(http.ok()) << http.status();
  int port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(*http, &port));

  httplib::Client client("127.0.0.1", port);
  auto refused = client.Get("/");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  auto wrong = client.Get("/", {{"Authorization", "Bearer other"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto ok = client.Get("/", {{"Authorization", "Bearer web-token"}});
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_THAT(ok->body, HasSubstr("No batches match"));

  // A second coordinator cannot take the same HTTP port.
  auto second = Subprocess::Start({FLAMEFLEET_COORDINATOR, "--listen", "127.0.0.1:0", "--state-dir",
                                   (root_ / "s2").string(), "--http-listen",
                                   absl::StrCat("127.0.0.1:", port)});
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE((*second)->WaitForListeningPort(absl::Seconds(60)).ok());
  const int status = (*second)->Stop(absl::Seconds(30));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  (*coordinator)->Stop(absl::Seconds(10));
}

}  // namespace
}  // namespace flamefleet
