#include "common/logging.h"

namespace flamefleet {

void InitLogging(const char* argv0) {
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv0);
}

}  // namespace flamefleet
