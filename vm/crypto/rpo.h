// Rescue Prime Optimized (RPO-256) over the Goldilocks field, exactly as the classic Miden VM
// uses it (0xMiden/crypto v0.15.9, its hash/rescue/rpo module):
// the native hash behind `hperm`, `hmerge`, `hash`, the Merkle store and MAST
// roots. RpoHasher exposes it through the Hasher interface (vm/crypto/hasher.h),
// which is how everything but the executor's HPERM opcode reaches it; the free
// functions below are its implementation.
//
// State layout (the "old" layout of crypto <= v0.19, not the one of crypto
// HEAD):
//
//   index:  0  1  2  3 | 4  5  6  7 | 8  9 10 11
//           capacity   | rate: digest word | rate
//
// The permutation has 7 rounds; round r is: MDS, + ARK1[r], x^7, MDS, +
// ARK2[r], x^(1/7) (x^10540996611094048183). The MDS matrix is the 12x12
// circulant with first row 7 23 8 26 13 10 9 7 6 22 21 8.
//
//   std::array<Felt, 12> state{};
//   Permute(state);                                   // in place
//   Word d = HashElements(std::vector<Felt>{Felt(0), Felt(1)});
//   Word m = Merge(a, b);                             // = hash of the two words
//   const Hasher& h = RpoHasher::Get();               // the same, via the interface
//
// All functions are pure and thread-safe.
#ifndef FLAMEFLEET_VM_CRYPTO_RPO_H_
#define FLAMEFLEET_VM_CRYPTO_RPO_H_

#include <array>
#include <span>

#include "absl/strings/string_view.h"
#include "vm/crypto/hasher.h"
#include "vm/felt.h"

namespace flamefleet::vm {

// The RPO sponge state: capacity state[0..4], rate state[4..12], digest
// state[4..8].
using RpoState = HasherState;

inline constexpr int kRpoStateWidth = kHasherStateWidth;
inline constexpr int kRpoNumRounds = 7;
// 1/7 mod (p - 1): the exponent of the inverse S-box.
inline constexpr uint64_t kRpoInvAlpha = 10540996611094048183ULL;

// Applies the RPO permutation to `state` in place.
void Permute(RpoState& state);

// Hashes a sequence of field elements: capacity[0] = len mod 8, absorb 8
// elements at a time into the rate (overwriting), permuting after each full
// block; a last partial block is zero-padded and permuted. Returns the digest
// state[4..8].
Word HashElements(std::span<const Felt> elements);

// Returns the 2-to-1 hash of two digests: rate = a || b, capacity zero, one
// permutation.
Word Merge(const Word& a, const Word& b);

// Like Merge, with `domain` in state[1] (the VM's `hmerge` domain / MAST node
// domain).
Word MergeInDomain(const Word& a, const Word& b, Felt domain);

// Returns the S-box inverse x^(1/7) of `x` through the addition chain used by
// Permute (exposed for tests).
Felt RpoInverseSboxForTest(Felt x);

// Selects the AVX2 permutation (when the CPU has it) or the portable scalar one for every
// later call; returns whether AVX2 is now in use. Not thread-safe: tests only.
bool UseRpoAvx2ForTest(bool enable);

// RPO-256 as a Hasher: each method is the free function of the same name above
// (so the AVX2 selection applies to both). Stateless and thread-safe.
class RpoHasher final : public Hasher {
 public:
  // Returns the process-wide instance; never destroyed, thread-safe.
  static const RpoHasher& Get();

  // Returns "rpo256".
  absl::string_view name() const override { return "rpo256"; }
  // Returns 4: the rate is state[4..12].
  int rate_start() const override { return 4; }
  // Returns 4: the digest is state[4..8].
  int digest_start() const override { return 4; }
  // Applies the RPO permutation to `state` in place (see vm::Permute).
  void Permute(HasherState& state) const override;
  // Returns the RPO sponge hash of `elements` (see vm::HashElements).
  Word HashElements(std::span<const Felt> elements) const override;
  // Returns the RPO 2-to-1 hash of `a` and `b` (see vm::Merge).
  Word Merge(const Word& a, const Word& b) const override;
  // Returns the RPO 2-to-1 hash with `domain` in state[1] (see vm::MergeInDomain).
  Word MergeInDomain(const Word& a, const Word& b, Felt domain) const override;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_CRYPTO_RPO_H_
