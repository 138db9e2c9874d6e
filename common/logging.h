// Logging glue: flamefleet logs with glog (Debian's abseil has no absl/log); its LOG(INFO),
// CHECK and VLOG(n) match the later absl/log macros. Only services and mains log.
//
//   int main(int argc, char** argv) { flamefleet::InitLogging(argv[0]); LOG(INFO) << "up"; }
#ifndef FLAMEFLEET_COMMON_LOGGING_H_
#define FLAMEFLEET_COMMON_LOGGING_H_

#include <glog/logging.h>

namespace flamefleet {

// Initialises glog for a process: logs go to stderr. Call once from main().
void InitLogging(const char* argv0);

}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_LOGGING_H_
