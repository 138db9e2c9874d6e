#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace flamefleet {

absl::StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(
    const std::vector<std::string>& argv) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  }
  if (pid == 0) {
    // Child: die with the parent; stdout -> pipe.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    dup2(fds[1], STDOUT_FILENO);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(fds[1]);
  return std::unique_ptr<Subprocess>(new Subprocess(pid, fds[0]));
}

Subprocess::~Subprocess() {
  if (!status_.has_value()) {
    kill(pid_, SIGKILL);
    Wait();
  }
  if (stdout_fd_ >= 0) close(stdout_fd_);
}

absl::StatusOr<int> Subprocess::WaitForListeningPort(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    absl::StatusOr<std::string> rest = WaitForLine("LISTENING ", deadline - absl::Now());
    if (!rest.ok()) return rest.status();
    int port = 0;
    if (absl::SimpleAtoi(*rest, &port)) return port;
  }
}

absl::StatusOr<std::string> Subprocess::WaitForLine(absl::string_view prefix,
                                                    absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    size_t nl;
    while ((nl = buffered_.find('\n')) != std::string::npos) {
      std::string line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      absl::string_view rest = line;
      if (absl::ConsumePrefix(&rest, prefix)) return std::string(rest);
    }
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          absl::StrCat("process ", pid_, " did not print \"", prefix, "...\" in time"));
    }
    pollfd p{stdout_fd_, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (r < 0 && errno != EINTR) return absl::InternalError(strerror(errno));
    if (r <= 0) continue;
    char buf[4096];
    ssize_t n = read(stdout_fd_, buf, sizeof(buf));
    if (n == 0) {
      return absl::UnavailableError(
          absl::StrCat("process ", pid_, " exited before it printed \"", prefix, "...\""));
    }
    if (n > 0) buffered_.append(buf, static_cast<size_t>(n));
  }
}

void Subprocess::Signal(int signal) {
  if (!status_.has_value()) kill(pid_, signal);
}

std::optional<int> Subprocess::Poll() {
  if (status_.has_value()) return status_;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) status_ = status;
  return status_;
}

int Subprocess::Wait() {
  if (status_.has_value()) return *status_;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
  return status;
}

int Subprocess::Stop(absl::Duration timeout) {
  if (status_.has_value()) return *status_;
  Signal(SIGTERM);
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (Poll().has_value()) return *status_;
    usleep(10000);  // reaping a child that was told to stop; not waiting for a server
  }
  Signal(SIGKILL);
  return Wait();
}

std::string SelfDirectory() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return ".";
  return self.parent_path().string();
}

absl::StatusOr<std::string> FindServiceBinary(const std::string& name,
                                              const std::string& component) {
  std::string dir = SelfDirectory();
  std::vector<std::string> candidates = {
      absl::StrCat(dir, "/", name),
      absl::StrCat(dir, "/../", component, "/", name),
  };
  if (const char* path = std::getenv("PATH")) {
    for (absl::string_view p : absl::StrSplit(path, ':')) {
      if (!p.empty()) candidates.push_back(absl::StrCat(p, "/", name));
    }
  }
  for (const std::string& c : candidates) {
    if (access(c.c_str(), X_OK) == 0) return std::filesystem::path(c).lexically_normal().string();
  }
  return absl::NotFoundError(
      absl::StrCat("cannot find ", name, " next to ", dir, ", in the build tree or on PATH"));
}

}  // namespace flamefleet
