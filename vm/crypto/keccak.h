// Keccak-256: the original Keccak submission's 256-bit hash (Keccak[r=1088, c=512] with the
// pad10*1 rule, as Ethereum uses it), which the keccak256 precompile of Miden VM v0.25
// answers. It is not FIPS 202 SHA3-256: that appends the domain bits 01 before pad10*1, so the
// two differ on every input. OpenSSL 3.0 (Debian 12) offers only SHA3 and KMAC, hence this
// small implementation of keccak-f[1600].
//
//   std::array<uint8_t, 32> d = Keccak256(bytes);  // any length, possibly empty
//
// Pure and thread-safe.
#ifndef FLAMEFLEET_VM_CRYPTO_KECCAK_H_
#define FLAMEFLEET_VM_CRYPTO_KECCAK_H_

#include <array>
#include <cstdint>
#include <span>

namespace flamefleet::vm {

// Applies keccak-f[1600] (24 rounds) to the 25 lanes of `state`; lane (x, y) is state[x + 5y].
void KeccakF1600(std::array<uint64_t, 25>& state);

// Returns the Keccak-256 digest of `bytes`.
std::array<uint8_t, 32> Keccak256(std::span<const uint8_t> bytes);

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_CRYPTO_KECCAK_H_
