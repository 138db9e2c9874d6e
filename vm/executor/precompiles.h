// Host-computed precompiles of Miden VM v0.25.7: the core-library events whose answer the host
// computes from bytes in VM memory (crates/lib/core/src/handlers/{keccak256, sha512, ecdsa,
// eddsa_ed25519, aead_decrypt}.rs at v0.25.7), and the crypto primitives they use.
//
// Each handler reads its operands from the stack (the event id at position 0, operands from
// 1), reads memory of the current context, and returns the values it pushes onto the advice
// stack and, except AEAD, the precompile request a prover would log (event id and calldata).
// Bytes are packed 4 per element, little-endian, from a word-aligned address; the unused bytes
// of the last element must be 0; a never-written memory word is an error (as the v0.25.7
// processor's ProcessorState::get_mem_value, which returns None for it).
//
//   absl::StatusOr<PrecompileAnswer> a = RunPrecompile(
//       Precompile::kKeccak256, id, [&](int i) { return s(i); },
//       [&](uint32_t addr) { return mem.LoadWritten(addr); }, hasher);
//   advice.PushFront(a->advice);  // a->advice[0] is popped first
//
// All functions are thread-safe. Crypto: OpenSSL 3 (SHA-512, Ed25519), libsecp256k1 (ECDSA),
// vm/crypto/keccak.h (Keccak-256).
#ifndef FLAMEFLEET_VM_EXECUTOR_PRECOMPILES_H_
#define FLAMEFLEET_VM_EXECUTOR_PRECOMPILES_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "vm/crypto/hasher.h"
#include "vm/felt.h"

namespace flamefleet::vm {

enum class Precompile : uint8_t {
  kKeccak256,        // [ptr, len_bytes]: advice [d0..d7], d0 popped first
  kSha512,           // [ptr, len_bytes]: advice [d0..d15]
  kEcdsaK256Keccak,  // [ptr_pk, ptr_digest, ptr_sig]: advice [1 or 0]
  kEddsaEd25519,     // [ptr_pk, ptr_msg, ptr_sig]: advice [1 or 0]
  kAeadDecrypt,      // [KEY, NONCE, src, dst, num_blocks]: advice the plaintext, element 0 first
};

// The largest input of a hash precompile, in bytes: ExecutionOptions::max_hash_len_bytes'
// default at v0.25.7 (1 MiB). A longer `len_bytes` is an error, before any memory is read.
inline constexpr uint64_t kMaxPrecompileHashBytes = uint64_t{1} << 20;
// The most plaintext elements AEAD decrypt pushes: MAX_ADVICE_STACK_SIZE at v0.25.7 (2^17).
inline constexpr uint64_t kMaxAeadPlaintextElements = uint64_t{1} << 17;

// A request a prover would log (AdviceMutation::extend_precompile_requests): the event id and
// the handler's calldata (the preimage; pk || digest || sig for the signature schemes).
struct PrecompileRequest {
  uint64_t event_id = 0;
  std::vector<uint8_t> calldata;
};

struct PrecompileAnswer {
  // The values for the advice stack, in the order the handler lists them: element 0 is popped
  // first (AdviceMutation::extend_stack).
  std::vector<Felt> advice;
  std::optional<PrecompileRequest> request;  // none for AEAD decrypt
};

// What a handler reads from the VM: the operand stack element at position i (0: the event id),
// and the memory element at `addr` of the current context (nullopt if its word was never
// written).
using PrecompileStack = absl::FunctionRef<Felt(int)>;
using PrecompileMemory = absl::FunctionRef<std::optional<Felt>(uint32_t)>;

// Runs the handler `which` for event `event_id` (recorded in the request). `poseidon2` is the
// program's hasher (AEAD's sponge). Errors (FailedPrecondition/InvalidArgument) carry the
// upstream handler's reason: an unaligned or overflowing pointer, a never-written word, a
// limb that is not a u32, non-zero padding, a length over the limit, a malformed public key or
// signature encoding, an AEAD tag that does not match.
absl::StatusOr<PrecompileAnswer> RunPrecompile(Precompile which, uint64_t event_id,
                                               PrecompileStack stack, PrecompileMemory memory,
                                               const Hasher& poseidon2);

// ---- the primitives (exposed for their test vectors)

// SHA-512 (FIPS 180-4) of `bytes`.
std::array<uint8_t, 64> Sha512(std::span<const uint8_t> bytes);

// Ed25519 (RFC 8032, cofactorless as ed25519-dalek's `verify`) of `message` under the 32-byte
// public key `pk` with the 64-byte signature `sig`. InvalidArgument if `pk` is not the encoding
// of a curve point (ed25519-dalek's VerifyingKey::from_bytes fails); else true or false.
absl::StatusOr<bool> Ed25519Verify(std::span<const uint8_t, 32> pk,
                                   std::span<const uint8_t> message,
                                   std::span<const uint8_t, 64> sig);

// ECDSA over secp256k1 of the 32-byte prehash `digest` under the public key with big-endian
// affine coordinates `x`, `y`, and the big-endian scalars `r`, `s`. InvalidArgument if (x, y)
// is not a curve point; false for r or s out of [1, n), a high s (k256 and libsecp256k1 both
// require low-s), or a wrong signature.
absl::StatusOr<bool> Secp256k1VerifyPrehash(std::span<const uint8_t, 32> x,
                                            std::span<const uint8_t, 32> y,
                                            std::span<const uint8_t, 32> digest,
                                            std::span<const uint8_t, 32> r,
                                            std::span<const uint8_t, 32> s);

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_EXECUTOR_PRECOMPILES_H_
