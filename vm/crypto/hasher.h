// Hasher: the native algebraic hash of a Miden dialect, as one abstract interface. Everything
// outside the executor's hot loop that hashes field elements — MAST node and basic-block digests,
// advice-map keys, the Merkle store, the hash events of `emit` — calls it through a
// `const Hasher&`, so a dialect with another hash (e.g. Poseidon2) supplies its own Hasher
// instead of forking those callers. The dialect's `hperm` opcode is the exception: it calls its
// permutation directly from the executor's switch (one opcode per hash, no virtual call per
// cycle); see Opcode::kHPerm.
//
//   const Hasher& hasher = *program.dialect->hasher;   // RPO-256 or Poseidon2 (vm/crypto/)
//   HasherState state{};
//   hasher.Permute(state);
//   Word d = hasher.HashElements(std::vector<Felt>{Felt(0), Felt(1)});
//   Word root = hasher.MergeInDomain(left, right, /*domain=*/Felt(7));
//
// There is no default hasher: every Merkle store, MAST forest and advice provider is built with
// its program's (Program::dialect->hasher), and the Executor checks that they agree.
//
// Implementations are stateless and immutable: every method is const and thread-safe, and a
// Hasher lives for the whole process (callers keep references and pointers to it).
#ifndef FLAMEFLEET_VM_CRYPTO_HASHER_H_
#define FLAMEFLEET_VM_CRYPTO_HASHER_H_

#include <array>
#include <span>

#include "absl/strings/string_view.h"
#include "vm/felt.h"

namespace flamefleet::vm {

// The width of a hasher's sponge state in field elements.
inline constexpr int kHasherStateWidth = 12;

// A 12-felt sponge state. The layout (which elements are capacity, rate and digest) is the
// hasher's own; see the implementation's header.
using HasherState = std::array<Felt, kHasherStateWidth>;

class Hasher {
 public:
  virtual ~Hasher() = default;

  // Returns the hash's short name, e.g. "rpo256"; for messages and logs only.
  virtual absl::string_view name() const = 0;

  // Returns the index of the first of the 8 rate elements of the sponge state.
  virtual int rate_start() const = 0;
  // Returns the index of the first of the 4 digest elements of the sponge state.
  virtual int digest_start() const = 0;

  // Applies the permutation to `state` in place.
  virtual void Permute(HasherState& state) const = 0;

  // Returns the sponge hash (digest word) of `elements`, which may be empty or of any length.
  virtual Word HashElements(std::span<const Felt> elements) const = 0;

  // Returns the 2-to-1 hash of the words `a` and `b` (a Merkle tree's parent of a and b).
  virtual Word Merge(const Word& a, const Word& b) const = 0;

  // Returns the 2-to-1 hash of `a` and `b` in the domain `domain` (MAST node kinds, `hmerge`
  // with a domain). MergeInDomain(a, b, Felt(0)) equals Merge(a, b).
  virtual Word MergeInDomain(const Word& a, const Word& b, Felt domain) const = 0;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_CRYPTO_HASHER_H_
