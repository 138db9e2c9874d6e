// Child processes for `flamefleet run` and the multi-process tests: start a binary with
// arguments, read the first line it prints (services print "LISTENING <port>" once serving, so
// nobody sleeps waiting for a server), signal it and reap it. Children get SIGTERM if the parent
// dies (PR_SET_PDEATHSIG), so none outlives `flamefleet run`.
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(auto child, Subprocess::Start({"/bin/flamefleet-renderer"}));
//   FLAMEFLEET_ASSIGN_OR_RETURN(int port, child->WaitForListeningPort(absl::Seconds(30)));
//   child->Signal(SIGTERM); child->Wait();
#ifndef FLAMEFLEET_COMMON_SUBPROCESS_H_
#define FLAMEFLEET_COMMON_SUBPROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace flamefleet {

class Subprocess {
 public:
  // Starts argv[0] (a path) with the arguments. Its stdout is a pipe read by
  // WaitForListeningPort (and then drained to our stderr); stderr is inherited.
  static absl::StatusOr<std::unique_ptr<Subprocess>> Start(const std::vector<std::string>& argv);

  // Kills (SIGKILL) and reaps the child if it is still running.
  ~Subprocess();

  // Reads the child's stdout until a line "LISTENING <port>" and returns the port.
  // DeadlineExceeded after `timeout`, Unavailable if the child exits first.
  absl::StatusOr<int> WaitForListeningPort(absl::Duration timeout);
  // Reads the child's stdout until a line starting with `prefix`; returns the rest of it.
  // Errors as WaitForListeningPort.
  absl::StatusOr<std::string> WaitForLine(absl::string_view prefix, absl::Duration timeout);

  // Sends `signal` to the child (no-op once reaped).
  void Signal(int signal);
  // Returns the exit status if the child has exited (reaping it), without blocking.
  std::optional<int> Poll();
  // Blocks until the child exits; returns its wait status.
  int Wait();
  // Waits up to `timeout` for the child to exit after SIGTERM, then SIGKILLs it.
  int Stop(absl::Duration timeout);

  pid_t pid() const { return pid_; }

 private:
  Subprocess(pid_t pid, int stdout_fd) : pid_(pid), stdout_fd_(stdout_fd) {}

  pid_t pid_;
  int stdout_fd_;
  std::optional<int> status_;
  std::string buffered_;
};

// Returns the directory of the running executable.
std::string SelfDirectory();

// Finds a flamefleet service binary: next to the running executable, in the build tree
// (../<component>/<name>), or on PATH. NotFound lists where it looked.
absl::StatusOr<std::string> FindServiceBinary(const std::string& name,
                                              const std::string& component);

}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_SUBPROCESS_H_
