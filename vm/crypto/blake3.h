// A small, self-contained BLAKE3 hash (hash mode, 32-byte output), written from
// the public BLAKE3 specification
// (https://github.com/BLAKE3-team/BLAKE3-specs). It is portable scalar code
// with no SIMD and no keyed or derive-key modes: flamefleet only needs it to
// derive the error codes of `.err="message"` assertions, so speed does
// not matter.
//
//   std::array<uint8_t, 32> digest = Blake3("hello");
//   uint64_t first8 = ...;  // little-endian read of digest[0..8)
#ifndef FLAMEFLEET_VM_CRYPTO_BLAKE3_H_
#define FLAMEFLEET_VM_CRYPTO_BLAKE3_H_

#include <array>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace flamefleet::vm {

// Returns the default-length (32-byte) BLAKE3 hash of `data`, which may have
// any length (inputs longer than one 1024-byte chunk use the full chunk/parent
// tree). Never fails; thread-safe (no shared state).
std::array<uint8_t, 32> Blake3(absl::string_view data);

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_CRYPTO_BLAKE3_H_
