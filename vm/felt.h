// Felt: an element of the Goldilocks field p = 2^64 - 2^32 + 1, the field of the Miden VM.
//
// A Felt always holds its canonical representative (a value < p). Arithmetic is constexpr and
// branch-light; multiplication reduces the 128-bit product using 2^64 = 2^32 - 1 (mod p) and
// 2^96 = -1 (mod p).
//
//   constexpr Felt a(7), b = Felt::FromU64(Felt::kModulus + 3);  // b == 3
//   Felt c = a * b - Felt(1);                                      // 20
//   Felt d = c.Inverse();                                          // c * d == 1
#ifndef FLAMEFLEET_VM_FELT_H_
#define FLAMEFLEET_VM_FELT_H_

#include <array>
#include <cstdint>
#include <utility>

namespace flamefleet::vm {

class Felt {
 public:
  static constexpr uint64_t kModulus = 0xFFFFFFFF00000001ULL;
  // 2^64 mod p, used when folding carries.
  static constexpr uint64_t kEpsilon = 0xFFFFFFFFULL;

  constexpr Felt() = default;
  // Builds a Felt from a value that must already be canonical (< p); asserted in debug builds.
  constexpr explicit Felt(uint64_t canonical) : v_(canonical) {}

  // Reduces any u64 into the field.
  static constexpr Felt FromU64(uint64_t x) { return Felt(x >= kModulus ? x - kModulus : x); }
  // Returns true if x is a canonical field element (< p).
  static constexpr bool IsCanonical(uint64_t x) { return x < kModulus; }

  constexpr uint64_t value() const { return v_; }

  friend constexpr Felt operator+(Felt a, Felt b) {
    // a + b < 2p < 2^65: detect the u64 wrap and fold 2^64 = eps.
    uint64_t s = a.v_ + b.v_;
    uint64_t over = s < a.v_ ? kEpsilon : 0;  // wrapped past 2^64
    s += over;                                // cannot wrap again: s < 2p - 2^64 + eps < p
    return Felt(s >= kModulus ? s - kModulus : s);
  }
  friend constexpr Felt operator-(Felt a, Felt b) {
    uint64_t d = a.v_ - b.v_;
    return Felt(a.v_ < b.v_ ? d + kModulus : d);
  }
  friend constexpr Felt operator-(Felt a) { return a.v_ == 0 ? a : Felt(kModulus - a.v_); }
  friend constexpr Felt operator*(Felt a, Felt b) {
    return Reduce128(static_cast<unsigned __int128>(a.v_) * b.v_);
  }
  friend constexpr bool operator==(Felt a, Felt b) { return a.v_ == b.v_; }
  friend constexpr bool operator!=(Felt a, Felt b) { return a.v_ != b.v_; }
  template <typename H>
  friend H AbslHashValue(H h, Felt f) {
    return H::combine(std::move(h), f.v_);
  }

  constexpr Felt& operator+=(Felt o) { return *this = *this + o; }
  constexpr Felt& operator-=(Felt o) { return *this = *this - o; }
  constexpr Felt& operator*=(Felt o) { return *this = *this * o; }

  // Returns this^e by square-and-multiply.
  constexpr Felt Exp(uint64_t e) const {
    Felt base = *this, acc(1);
    while (e != 0) {
      if (e & 1) acc *= base;
      base *= base;
      e >>= 1;
    }
    return acc;
  }
  // Returns the multiplicative inverse; the inverse of 0 is defined as 0 (callers trap first).
  constexpr Felt Inverse() const { return Exp(kModulus - 2); }

  // Reduces a 128-bit value modulo p.
  static constexpr Felt Reduce128(unsigned __int128 x) {
    uint64_t lo = static_cast<uint64_t>(x);
    uint64_t hi = static_cast<uint64_t>(x >> 64);
    uint64_t hi_hi = hi >> 32;       // weight 2^96 = -1
    uint64_t hi_lo = hi & kEpsilon;  // weight 2^64 = 2^32 - 1
    // t0 = lo - hi_hi (mod p)
    uint64_t t0 = lo - hi_hi;
    if (lo < hi_hi) t0 -= kEpsilon;  // borrow: add p = subtract (2^32 - 1) mod 2^64
    uint64_t t1 = hi_lo * kEpsilon;  // < 2^64
    uint64_t r = t0 + t1;
    if (r < t0) r += kEpsilon;  // carry past 2^64
    return Felt(r >= kModulus ? r - kModulus : r);
  }

 private:
  uint64_t v_ = 0;
};

// Four field elements. Element 0 is the first element of the word as written in MASM
// (`push.[a,b,c,d]` leaves d on top) and as stored at the lowest memory address.
using Word = std::array<Felt, 4>;

// Returns whether `a` < `b` in miden's Word order (the Ord of miden-field 0.28's Word: canonical
// values, element 3 most significant), the order of sorted arrays and of the advice map.
constexpr bool WordLess(const Word& a, const Word& b) {
  for (int i = 3; i >= 0; --i) {
    if (a[i] != b[i]) return a[i].value() < b[i].value();
  }
  return false;
}

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_FELT_H_
