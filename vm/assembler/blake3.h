// Forwarding header: BLAKE3 moved to vm/crypto/blake3.h (issue #13). Include that instead.
// TODO(#13): remove once worker/snapshot.cc includes vm/crypto/blake3.h (worker/ is re-homed
// to runner/ in the same issue).
#ifndef FLAMEFLEET_VM_ASSEMBLER_BLAKE3_H_
#define FLAMEFLEET_VM_ASSEMBLER_BLAKE3_H_

#include "vm/crypto/blake3.h"  // IWYU pragma: export

#endif  // FLAMEFLEET_VM_ASSEMBLER_BLAKE3_H_
