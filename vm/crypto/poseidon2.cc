#include "vm/crypto/poseidon2.h"

#include <cstdint>

namespace flamefleet::vm {
namespace {

using Raw = std::array<uint64_t, kHasherStateWidth>;

// The numeric data of 0xMiden/crypto v0.28.0
// miden-crypto/src/hash/algebraic_sponge/poseidon2/constants.rs (equal to Plonky3
// p3-goldilocks 0.6.1 MATRIX_DIAG_12_GOLDILOCKS and GOLDILOCKS_POSEIDON2_RC_12_*): the internal
// layer's diagonal D, then the round constants of the 4 initial external rounds (12 per round),
// the 22 internal rounds (element 0 only) and the 4 terminal external rounds. All canonical.
// D as fractions: -2, 1, 2, 1/2, 3, 4, -1/2, -3, -4, 1/4, -1/4, 1/8.
// clang-format off
constexpr uint64_t kMatDiag[kHasherStateWidth] = {
    0xfffffffeffffffffULL, 0x0000000000000001ULL, 0x0000000000000002ULL, 0x7fffffff80000001ULL,
    0x0000000000000003ULL, 0x0000000000000004ULL, 0x7fffffff80000000ULL, 0xfffffffefffffffeULL,
    0xfffffffefffffffdULL, 0xbfffffff40000001ULL, 0x3fffffffc0000000ULL, 0xdfffffff20000001ULL,
};
constexpr uint64_t kArkExtInitial[kPoseidon2ExternalRounds * kHasherStateWidth] = {
    0x13dcf33aba214f46ULL, 0x30b3b654a1da6d83ULL, 0x1fc634ada6159b56ULL, 0x937459964dc03466ULL,
    0xedd2ef2ca7949924ULL, 0xede9affde0e22f68ULL, 0x8515b9d6bac9282dULL, 0x6b5c07b4e9e900d8ULL,
    0x1ec66368838c8a08ULL, 0x9042367d80d1fbabULL, 0x400283564a3c3799ULL, 0x4a00be0466bca75eULL,
    0x7913beee58e3817fULL, 0xf545e88532237d90ULL, 0x22f8cb8736042005ULL, 0x6f04990e247a2623ULL,
    0xfe22e87ba37c38cdULL, 0xd20e32c85ffe2815ULL, 0x117227674048fe73ULL, 0x4e9fb7ea98a6b145ULL,
    0xe0866c232b8af08bULL, 0x00bbc77916884964ULL, 0x7031c0fb990d7116ULL, 0x240a9e87cf35108fULL,
    0x2e6363a5a12244b3ULL, 0x5e1c3787d1b5011cULL, 0x4132660e2a196e8bULL, 0x3a013b648d3d4327ULL,
    0xf79839f49888ea43ULL, 0xfe85658ebafe1439ULL, 0xb6889825a14240bdULL, 0x578453605541382bULL,
    0x4508cda8f6b63ce9ULL, 0x9c3ef35848684c91ULL, 0x0812bde23c87178cULL, 0xfe49638f7f722c14ULL,
    0x8e3f688ce885cbf5ULL, 0xb8e110acf746a87dULL, 0xb4b2e8973a6dabefULL, 0x9e714c5da3d462ecULL,
    0x6438f9033d3d0c15ULL, 0x24312f7cf1a27199ULL, 0x23f843bb47acbf71ULL, 0x9183f11a34be9f01ULL,
    0x839062fbb9d45dbfULL, 0x24b56e7e6c2e43faULL, 0xe1683da61c962a72ULL, 0xa95c63971a19bfa7ULL,
};
constexpr uint64_t kArkInt[kPoseidon2InternalRounds] = {
    0x4adf842aa75d4316ULL, 0xf8fbb871aa4ab4ebULL, 0x68e85b6eb2dd6aebULL, 0x07a0b06b2d270380ULL,
    0xd94e0228bd282de4ULL, 0x8bdd91d3250c5278ULL, 0x209c68b88bba778fULL, 0xb5e18cdab77f3877ULL,
    0xb296a3e808da93faULL, 0x8370ecbda11a327eULL, 0x3f9075283775dad8ULL, 0xb78095bb23c6aa84ULL,
    0x3f36b9fe72ad4e5fULL, 0x69bc96780b10b553ULL, 0x3f1d341f2eb7b881ULL, 0x4e939e9815838818ULL,
    0xda366b3ae2a31604ULL, 0xbc89db1e7287d509ULL, 0x6102f411f9ef5659ULL, 0x58725c5e7ac1f0abULL,
    0x0df5856c798883e7ULL, 0xf7bb62a8da4c961bULL,
};
constexpr uint64_t kArkExtTerminal[kPoseidon2ExternalRounds * kHasherStateWidth] = {
    0xc68be7c94882a24dULL, 0xaf996d5d5cdaedd9ULL, 0x9717f025e7daf6a5ULL, 0x6436679e6e7216f4ULL,
    0x8a223d99047af267ULL, 0xbb512e35a133ba9aULL, 0xfbbf44097671aa03ULL, 0xf04058ebf6811e61ULL,
    0x5cca84703fac7ffbULL, 0x9b55c7945de6469fULL, 0x8e05bf09808e934fULL, 0x2ea900de876307d7ULL,
    0x7748fff2b38dfb89ULL, 0x6b99a676dd3b5d81ULL, 0xac4bb7c627cf7c13ULL, 0xadb6ebe5e9e2f5baULL,
    0x2d33378cafa24ae3ULL, 0x1e5b73807543f8c2ULL, 0x09208814bfebb10fULL, 0x782e64b6bb5b93ddULL,
    0xadd5a48eac90b50fULL, 0xadd4c54c736ea4b1ULL, 0xd58dbb86ed817fd8ULL, 0x6d5ed1a533f34dddULL,
    0x28686aa3e36b7cb9ULL, 0x591abd3476689f36ULL, 0x047d766678f13875ULL, 0xa2a11112625f5b49ULL,
    0x21fd10a3f8304958ULL, 0xf9b40711443b0280ULL, 0xd2697eb8b2bde88eULL, 0x3493790b51731b3fULL,
    0x11caf9dd73764023ULL, 0x7acfb8f72878164eULL, 0x744ec4db23cefc26ULL, 0x1e00e58f422c6340ULL,
    0x21dd28d906a62ddaULL, 0xf32a46ab5f465b5fULL, 0xbfce13201f3f7e6bULL, 0xf30d2e7adb5304e2ULL,
    0xecdf4ee4abad48e9ULL, 0xf94e82182d395019ULL, 0x4ee52e3744d887c5ULL, 0xa1341c7cac0083b2ULL,
    0x2302fb26c30c834aULL, 0xaea3c587273bf7d3ULL, 0xf798e24961823ec7ULL, 0x962deba3e9a2cd94ULL,
};
// clang-format on

// Arithmetic on raw u64 representatives (any value < 2^64 congruent mod p): the permutation
// reduces only where a value could leave u64 and brings the state below p once, at the end.

// Returns a value < 2^64 congruent to x; x < 2^96 (the high part of x is below 2^32).
inline uint64_t ReduceSmall(unsigned __int128 x) {
  const uint64_t lo = static_cast<uint64_t>(x), hi = static_cast<uint64_t>(x >> 64);
  uint64_t r;
  const uint64_t carry = __builtin_add_overflow(lo, hi * Felt::kEpsilon, &r);  // 2^64 = eps
  return r + (Felt::kEpsilon & (0 - carry));  // cannot wrap: r < hi * eps < 2^64 - eps
}

// Returns a value < 2^64 congruent to a + b, for any a and b < p (the sum past 2^64 is below
// 2^64 - eps, so adding eps for the wrap cannot wrap again).
inline uint64_t AddNc(uint64_t a, uint64_t b) {
  uint64_t r;
  const uint64_t carry = __builtin_add_overflow(a, b, &r);
  return r + (Felt::kEpsilon & (0 - carry));
}

// Returns a value < 2^64 congruent to a * b, for any a and b; branch-free (the carries are
// data-dependent, as in rpo.cc's MulNc).
inline uint64_t MulNc(uint64_t a, uint64_t b) {
  const unsigned __int128 x = static_cast<unsigned __int128>(a) * b;
  const uint64_t lo = static_cast<uint64_t>(x), hi = static_cast<uint64_t>(x >> 64);
  uint64_t t0;
  const uint64_t borrow = __builtin_sub_overflow(lo, hi >> 32, &t0);  // 2^96 = -1
  t0 -= Felt::kEpsilon & (0 - borrow);
  uint64_t r;
  const uint64_t carry = __builtin_add_overflow(t0, (hi & Felt::kEpsilon) * Felt::kEpsilon, &r);
  return r + (Felt::kEpsilon & (0 - carry));
}

// Returns the canonical representative of r (< 2^64).
inline uint64_t Canonical(uint64_t r) { return r >= Felt::kModulus ? r - Felt::kModulus : r; }

inline uint64_t Sbox(uint64_t x) {  // x^7 = x^4 * x^3
  const uint64_t x2 = MulNc(x, x);
  const uint64_t x3 = MulNc(x2, x);
  const uint64_t x4 = MulNc(x2, x2);
  return MulNc(x4, x3);
}

// M_E: M4 on each block of four, then every element gains its column's sum over the three
// blocks. The sums are taken in 128 bits (every output is below 28 * 2^64) and reduced once.
inline void ExternalLayer(Raw& s) {
  using U = unsigned __int128;
  U t[kHasherStateWidth];
  for (int b = 0; b < kHasherStateWidth; b += 4) {
    const U x0 = s[b], x1 = s[b + 1], x2 = s[b + 2], x3 = s[b + 3];
    const U t01 = x0 + x1, t23 = x2 + x3, t0123 = t01 + t23;
    const U t01123 = t0123 + x1, t01233 = t0123 + x3;
    t[b] = t01123 + t01;         // 2 x0 + 3 x1 + x2 + x3
    t[b + 1] = t01123 + 2 * x2;  // x0 + 2 x1 + 3 x2 + x3
    t[b + 2] = t01233 + t23;     // x0 + x1 + 2 x2 + 3 x3
    t[b + 3] = t01233 + 2 * x0;  // 3 x0 + x1 + x2 + 2 x3
  }
  for (int l = 0; l < 4; ++l) {
    const U c = t[l] + t[4 + l] + t[8 + l];
    s[l] = ReduceSmall(t[l] + c);
    s[4 + l] = ReduceSmall(t[4 + l] + c);
    s[8 + l] = ReduceSmall(t[8 + l] + c);
  }
}

inline void ExternalRound(Raw& s, const uint64_t* ark) {
  for (int i = 0; i < kHasherStateWidth; ++i) s[i] = Sbox(AddNc(s[i], ark[i]));
  ExternalLayer(s);
}

// One internal round: element 0 gains the constant and goes through the S-box, then
// s_i <- s_i * D_i + sum(s). The sum is made canonical so that adding it to any raw value
// folds at most one carry.
inline void InternalRound(Raw& s, uint64_t ark) {
  // The sum of s1..s11 does not wait for the S-box of s0.
  unsigned __int128 sum = 0;
  for (int i = 1; i < kHasherStateWidth; ++i) sum += s[i];
  s[0] = Sbox(AddNc(s[0], ark));
  sum += s[0];
  const uint64_t total = Canonical(ReduceSmall(sum));
  s[1] = AddNc(s[1], total);  // D_1 = 1
  s[0] = AddNc(MulNc(s[0], kMatDiag[0]), total);
  for (int i = 2; i < kHasherStateWidth; ++i) s[i] = AddNc(MulNc(s[i], kMatDiag[i]), total);
}

}  // namespace

void Poseidon2Permute(HasherState& state) {
  Raw s;
  for (int i = 0; i < kHasherStateWidth; ++i) s[i] = state[i].value();
  ExternalLayer(s);
  for (int r = 0; r < kPoseidon2ExternalRounds; ++r) {
    ExternalRound(s, &kArkExtInitial[r * kHasherStateWidth]);
  }
  for (int r = 0; r < kPoseidon2InternalRounds; ++r) InternalRound(s, kArkInt[r]);
  for (int r = 0; r < kPoseidon2ExternalRounds; ++r) {
    ExternalRound(s, &kArkExtTerminal[r * kHasherStateWidth]);
  }
  for (int i = 0; i < kHasherStateWidth; ++i) state[i] = Felt(Canonical(s[i]));
}

const Poseidon2Hasher& Poseidon2Hasher::Get() {
  // Intentionally never destroyed (no exit-time destructor).
  static const Poseidon2Hasher* const kInstance = new Poseidon2Hasher;
  return *kInstance;
}

void Poseidon2Hasher::Permute(HasherState& state) const { Poseidon2Permute(state); }

Word Poseidon2Hasher::HashElements(std::span<const Felt> elements) const {
  if (elements.empty()) return Word{};
  HasherState state{};
  state[8] = Felt(elements.size() % 8);
  size_t i = 0;
  for (Felt e : elements) {
    state[i] = e;
    if (++i == 8) {
      Poseidon2Permute(state);
      i = 0;
    }
  }
  if (i > 0) {
    for (; i < 8; ++i) state[i] = Felt(0);
    Poseidon2Permute(state);
  }
  return Word{state[0], state[1], state[2], state[3]};
}

Word Poseidon2Hasher::MergeInDomain(const Word& a, const Word& b, Felt domain) const {
  HasherState state{};
  for (int i = 0; i < 4; ++i) {
    state[i] = a[i];
    state[4 + i] = b[i];
  }
  state[9] = domain;
  Poseidon2Permute(state);
  return Word{state[0], state[1], state[2], state[3]};
}

Word Poseidon2Hasher::Merge(const Word& a, const Word& b) const {
  return MergeInDomain(a, b, Felt(0));
}

}  // namespace flamefleet::vm
