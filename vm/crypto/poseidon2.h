// Poseidon2 over the Goldilocks field, width 12: the native hash of Miden VM v0.23+ and so of
// the v0.25 dialect (`hperm`, `hmerge`, `hash`, MAST digests, the Merkle store, hash events).
// It is Plonky3's `default_goldilocks_poseidon2_12` instance as 0xMiden/crypto v0.28.0 uses it
// (miden-crypto/src/hash/algebraic_sponge/poseidon2/), the version miden-vm v0.25.7 locks.
// (VM v0.21-v0.22 used the HorizenLabs instance, with other linear layers: not this one.)
//
// State layout (the reverse of RPO's, vm/crypto/rpo.h):
//
//   index:  0  1  2  3 | 4  5  6  7 | 8  9 10 11
//           rate word 0 | rate word 1 | capacity
//           = digest
//
// The permutation: the external linear layer M_E; 4 external rounds (12 round constants,
// x^7 on every element, M_E); 22 internal rounds (a constant added to element 0, x^7 on
// element 0, the internal layer s_i <- s_i * D_i + sum(s)); 4 external rounds. M_E applies
// the 4x4 matrix [[2,3,1,1],[1,2,3,1],[1,1,2,3],[3,1,1,2]] to each block of four and adds the
// three blocks' column sums to every element.
//
//   HasherState state{};
//   Poseidon2Permute(state);                           // in place: the HPERM hot path
//   const Hasher& h = Poseidon2Hasher::Get();          // the sponge, via the interface
//   Word d = h.HashElements(std::vector<Felt>{Felt(0), Felt(1)});
//   Word root = h.Merge(left, right);                  // state [left, right, 0-word]
//
// All functions are pure and thread-safe.
#ifndef FLAMEFLEET_VM_CRYPTO_POSEIDON2_H_
#define FLAMEFLEET_VM_CRYPTO_POSEIDON2_H_

#include <span>

#include "absl/strings/string_view.h"
#include "vm/crypto/hasher.h"
#include "vm/felt.h"

namespace flamefleet::vm {

inline constexpr int kPoseidon2ExternalRounds = 4;  // at each end
inline constexpr int kPoseidon2InternalRounds = 22;

// Applies the Poseidon2 permutation to `state` in place. Never fails; thread-safe.
void Poseidon2Permute(HasherState& state);

// Poseidon2 as a Hasher (the sponge of miden-crypto v0.28.0). Stateless and thread-safe.
//   HashElements: state[8] = len mod 8; 8 elements at a time overwrite state[0..8], permuting
//     after each full block; a final partial block is zero-filled and permuted; the digest is
//     state[0..4]. The empty input hashes to the zero word without a permutation.
//   Merge(a, b): state [a, b, 0-word], one permutation, digest state[0..4].
//   MergeInDomain(a, b, d): as Merge with state[9] = d.
class Poseidon2Hasher final : public Hasher {
 public:
  // Returns the process-wide instance; never destroyed, thread-safe.
  static const Poseidon2Hasher& Get();

  // Returns "poseidon2".
  absl::string_view name() const override { return "poseidon2"; }
  // Returns 0: the rate is state[0..8].
  int rate_start() const override { return 0; }
  // Returns 0: the digest is state[0..4].
  int digest_start() const override { return 0; }
  // Applies the permutation to `state` in place (see Poseidon2Permute).
  void Permute(HasherState& state) const override;
  // Returns the sponge hash of `elements` (any length, possibly empty).
  Word HashElements(std::span<const Felt> elements) const override;
  // Returns the 2-to-1 hash of `a` and `b` (a Merkle parent): a in state[0..4], b in [4..8].
  Word Merge(const Word& a, const Word& b) const override;
  // Returns the 2-to-1 hash of `a` and `b` with `domain` in state[9].
  Word MergeInDomain(const Word& a, const Word& b, Felt domain) const override;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_CRYPTO_POSEIDON2_H_
