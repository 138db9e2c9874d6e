#include "vm/felt.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace flamefleet::vm {
namespace {

constexpr uint64_t kP = Felt::kModulus;

// Reference: arbitrary-precision modular arithmetic via __int128.
uint64_t RefMul(uint64_t a, uint64_t b) {
  return static_cast<uint64_t>(static_cast<unsigned __int128>(a) * b % kP);
}

TEST(FeltTest, AddWrapsAtModulus) {
  EXPECT_EQ((Felt(kP - 1) + Felt(1)).value(), 0u);
  EXPECT_EQ((Felt(kP - 1) + Felt(kP - 1)).value(), kP - 2);
  EXPECT_EQ((Felt(0) + Felt(0)).value(), 0u);
  EXPECT_EQ((Felt(0xFFFFFFFFull) + Felt(1)).value(), 0x100000000ull);
}

TEST(FeltTest, SubBorrowsModulus) {
  EXPECT_EQ((Felt(0) - Felt(1)).value(), kP - 1);
  EXPECT_EQ((Felt(1) - Felt(kP - 1)).value(), 2u);
  EXPECT_EQ((-Felt(0)).value(), 0u);
  EXPECT_EQ((-Felt(1)).value(), kP - 1);
}

TEST(FeltTest, MulReducesAtModulus) {
  const uint64_t samples[] = {0,
                              1,
                              2,
                              kP - 1,
                              kP - 2,
                              0xFFFFFFFFull,
                              0x100000000ull,
                              0x100000001ull,
                              0xFFFFFFFEull,
                              0x8000000000000000ull,
                              0xFFFFFFFF00000000ull,
                              12345678901234567ull};
  for (uint64_t a : samples) {
    for (uint64_t b : samples) {
      EXPECT_EQ((Felt(a) * Felt(b)).value(), RefMul(a, b)) << a << " * " << b;
    }
  }
}

TEST(FeltTest, MulMatchesReferenceOnPseudoRandomValues) {
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 100000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uint64_t a = x % kP;
    uint64_t b = (x * 0x2545F4914F6CDD1Dull) % kP;
    ASSERT_EQ((Felt(a) * Felt(b)).value(), RefMul(a, b));
    ASSERT_EQ((Felt(a) + Felt(b)).value(),
              static_cast<uint64_t>((static_cast<unsigned __int128>(a) + b) % kP));
  }
}

TEST(FeltTest, InverseOfNonZeroGivesOne) {
  for (uint64_t a : std::initializer_list<uint64_t>{1, 2, kP - 1, 0xFFFFFFFF, 0x100000000, 7}) {
    EXPECT_EQ((Felt(a) * Felt(a).Inverse()).value(), 1u) << a;
  }
  EXPECT_EQ(Felt(2).Inverse().value(), (kP + 1) / 2);
}

TEST(FeltTest, ExpMatchesRepeatedMultiplication) {
  Felt acc(1);
  for (uint64_t e = 0; e < 70; ++e) {
    EXPECT_EQ(Felt(3).Exp(e), acc);
    acc *= Felt(3);
  }
  EXPECT_EQ(Felt(0).Exp(0).value(), 1u);
}

TEST(FeltTest, FromU64Reduces) {
  EXPECT_EQ(Felt::FromU64(kP).value(), 0u);
  EXPECT_EQ(Felt::FromU64(~uint64_t{0}).value(), 0xFFFFFFFEull);
  EXPECT_TRUE(Felt::IsCanonical(kP - 1));
  EXPECT_FALSE(Felt::IsCanonical(kP));
}

static_assert((Felt(kP - 1) * Felt(kP - 1)).value() == 1);
static_assert((Felt(5) + Felt(7)).value() == 12);

}  // namespace
}  // namespace flamefleet::vm
