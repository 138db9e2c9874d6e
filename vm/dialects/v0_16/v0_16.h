// The classic Miden VM v0.16 dialect: its system events (events.cc). Everything here is
// immutable data built once, on first use, and safe to read from any number of threads.
//
//   Executor exec(program, v0_16::SystemEvents(), stack, advice, options);
#ifndef FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_
#define FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_

#include "vm/executor/system_events.h"

namespace flamefleet::vm::v0_16 {

// Returns the v0.16 system events (the ids of the v0.16 assembler's system events). The
// reference lives for the whole process.
const SystemEventTable& SystemEvents();

}  // namespace flamefleet::vm::v0_16

#endif  // FLAMEFLEET_VM_DIALECTS_V0_16_V0_16_H_
