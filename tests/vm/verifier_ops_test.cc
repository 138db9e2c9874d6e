#include "vm/executor/verifier_ops.h"

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/testing/classic.h"
#include "vm/vm.h"

namespace flamefleet::vm {
namespace {

using verifier_ops::OpResult;

// ---- reference arithmetic, written from the definitions --------------------------------------

// c0 + c1 x in F_p[x]/(x^2 - u x - w): v0.16 uses x^2 - x + 2 (u = 1, w = -2), v0.25 x^2 - 7
// (u = 0, w = 7).
struct Ext {
  Felt c0, c1;
};

struct Field {
  Felt u, w;
  Ext Add(Ext a, Ext b) const { return {a.c0 + b.c0, a.c1 + b.c1}; }
  Ext Mul(Ext a, Ext b) const {
    // (a0 + a1 x)(b0 + b1 x) = a0 b0 + (a0 b1 + a1 b0) x + a1 b1 x^2, x^2 = u x + w.
    const Felt sq = a.c1 * b.c1;
    return {a.c0 * b.c0 + sq * w, a.c0 * b.c1 + a.c1 * b.c0 + sq * u};
  }
  Ext Pow(Ext a, int e) const {
    Ext r{Felt(1), Felt(0)};
    for (int i = 0; i < e; ++i) r = Mul(r, a);
    return r;
  }
  // c[0] + c[1] t + c[2] t^2 + ... evaluated as a sum of powers (not by Horner).
  Ext Eval(const std::vector<Ext>& c, Ext t) const {
    Ext sum{Felt(0), Felt(0)};
    for (size_t i = 0; i < c.size(); ++i) sum = Add(sum, Mul(c[i], Pow(t, static_cast<int>(i))));
    return sum;
  }
};

const Field kClassic{Felt(1), -Felt(2)};
const Field kLe{Felt(0), Felt(7)};

Ext Base(Felt a) { return {a, Felt(0)}; }
Ext Base(uint64_t a) { return {Felt::FromU64(a), Felt(0)}; }

// tau, the 4th root of unity FRIE2F4 uses: tau^4 = 1, tau^2 = -1 (tau = 2^48).
const Felt kTau = Felt(uint64_t{1} << 48);

// ---- a 16-element operand stack with room below it, and a sparse memory ----------------------

class TestStack {
 public:
  // Sets positions 0.. from `top_first`; the rest (and the overflow below) stay 0.
  explicit TestStack(const std::vector<uint64_t>& top_first, uint64_t overflow = 0) {
    for (size_t i = 0; i < top_first.size(); ++i) sp()[-static_cast<int>(i)] = Felt(top_first[i]);
    sp()[-16] = Felt(overflow);
  }
  Felt* sp() { return &buf_[kTop]; }
  uint64_t at(int i) { return sp()[-i].value(); }
  // The stack after FRIE2F4 and the drop the executor does: position i is old position i + 1.
  uint64_t after_drop(int i) { return sp()[-(i + 1)].value(); }

 private:
  static constexpr int kTop = 24;
  std::array<Felt, 32> buf_{};
};

class TestMemory {
 public:
  void Store(uint32_t addr, std::vector<uint64_t> values) {
    for (uint64_t v : values) cells_[addr++] = Felt(v);
  }
  verifier_ops::LoadElement load() { return verifier_ops::LoadElement(fn_); }

 private:
  std::map<uint32_t, Felt> cells_;
  std::function<Felt(uint32_t)> fn_ = [this](uint32_t a) {
    auto it = cells_.find(a);
    return it == cells_.end() ? Felt(0) : it->second;
  };
};

constexpr uint64_t kBudget = uint64_t{1} << 30;

// ---- FRIE2F4 ---------------------------------------------------------------------------------

// A degree-3 polynomial f with extension coefficients folds by 4 to the constant f(alpha): the
// folded value does not depend on x, and the two intermediate folds are g(x^2) and g(-x^2) with
// g(Y) = (c0 + alpha c1) + (c2 + alpha c3) Y.
struct FriCase {
  std::vector<Ext> c;
  Ext alpha;
};

const FriCase kFri{
    {{Felt(3), Felt(5)}, {Felt(11), Felt(2)}, {Felt(7), Felt(13)}, {Felt(1), Felt(9)}},
    {Felt(123456789), Felt(987654321)}};

std::vector<Ext> G(const Field& f, const FriCase& k) {
  return {f.Add(k.c[0], f.Mul(k.alpha, k.c[1])), f.Add(k.c[2], f.Mul(k.alpha, k.c[3]))};
}

TEST(VerifierOpsTest, FriFoldClassicFoldsADegreeThreePolynomialToItsValueAtAlpha) {
  for (uint64_t d_seg = 0; d_seg < 4; ++d_seg) {
    const Felt poe(1234567), layer_ptr(1000), f_pos(77);
    // v0.16: x = 7 * poe * tau^-d_seg; the query values are f at x, x tau, -x, -x tau.
    const Felt x = Felt(7) * poe * kTau.Exp(4 - d_seg);
    std::array<Ext, 4> q = {kClassic.Eval(kFri.c, Base(x)), kClassic.Eval(kFri.c, Base(x * kTau)),
                            kClassic.Eval(kFri.c, Base(-x)),
                            kClassic.Eval(kFri.c, Base(-x * kTau))};
    // Stack: [v7 .. v0] with q_i = (v_2i, v_2i+1), then f_pos, d_seg, poe, pe1, pe0, a1, a0, cptr.
    TestStack st({q[3].c1.value(), q[3].c0.value(), q[2].c1.value(), q[2].c0.value(),
                  q[1].c1.value(), q[1].c0.value(), q[0].c1.value(), q[0].c0.value(), f_pos.value(),
                  d_seg, poe.value(), q[d_seg].c1.value(), q[d_seg].c0.value(),
                  kFri.alpha.c1.value(), kFri.alpha.c0.value(), layer_ptr.value()},
                 /*overflow=*/4242);
    OpResult r = verifier_ops::FriExt2Fold4Classic(st.sp());
    ASSERT_TRUE(r.ok()) << r.message;
    const Ext fa = kClassic.Eval(kFri.c, kFri.alpha);
    const std::vector<Ext> g = G(kClassic, kFri);
    const Ext t0 = kClassic.Add(g[0], kClassic.Mul(g[1], Base(x * x)));
    const Ext t1 = kClassic.Add(g[0], kClassic.Mul(g[1], Base(-(x * x))));
    std::array<uint64_t, 4> flags{};
    flags[3 - d_seg] = 1;  // flag d_seg at position 7 - d_seg
    const std::vector<uint64_t> want = {t0.c1.value(),
                                        t0.c0.value(),
                                        t1.c1.value(),
                                        t1.c0.value(),
                                        flags[0],
                                        flags[1],
                                        flags[2],
                                        flags[3],
                                        (poe * poe).value(),
                                        kTau.Exp(4 - d_seg).value(),
                                        1008,
                                        poe.Exp(4).value(),
                                        77,
                                        fa.c1.value(),
                                        fa.c0.value(),
                                        4242};
    for (int i = 0; i < 16; ++i)
      EXPECT_EQ(st.after_drop(i), want[i]) << "d_seg " << d_seg << " i " << i;
  }
}

TEST(VerifierOpsTest, FriFoldLeFoldsBitReversedQueryValues) {
  for (uint64_t d_seg = 0; d_seg < 4; ++d_seg) {
    const uint64_t rev = (d_seg == 1 || d_seg == 2) ? 3 - d_seg : d_seg;
    const Felt poe(7654321), layer_ptr(2000);
    const uint64_t p = 4 * 19 + d_seg;  // folded position 19
    // v0.25: x = poe * tau^-rev(d_seg); natural order f(x), f(x tau), f(-x), f(-x tau), stored
    // bit-reversed.
    const Felt x = poe * kTau.Exp(4 - rev);
    std::array<Ext, 4> q = {kLe.Eval(kFri.c, Base(x)), kLe.Eval(kFri.c, Base(-x)),
                            kLe.Eval(kFri.c, Base(x * kTau)), kLe.Eval(kFri.c, Base(-x * kTau))};
    TestStack st({q[0].c0.value(), q[0].c1.value(), q[1].c0.value(), q[1].c1.value(),
                  q[2].c0.value(), q[2].c1.value(), q[3].c0.value(), q[3].c1.value(),
                  /*f_pos, not read=*/5, p, poe.value(), q[d_seg].c0.value(), q[d_seg].c1.value(),
                  kFri.alpha.c0.value(), kFri.alpha.c1.value(), layer_ptr.value()},
                 /*overflow=*/99);
    OpResult r = verifier_ops::FriExt2Fold4Le(st.sp());
    ASSERT_TRUE(r.ok()) << r.message;
    const Ext fa = kLe.Eval(kFri.c, kFri.alpha);
    const std::vector<Ext> g = G(kLe, kFri);
    const Ext t0 = kLe.Add(g[0], kLe.Mul(g[1], Base(x * x)));
    const Ext t1 = kLe.Add(g[0], kLe.Mul(g[1], Base(-(x * x))));
    std::array<uint64_t, 4> flags{};
    flags[rev] = 1;  // flag rev(d_seg) at position 4 + rev(d_seg)
    const std::vector<uint64_t> want = {t0.c0.value(),
                                        t0.c1.value(),
                                        t1.c0.value(),
                                        t1.c1.value(),
                                        flags[0],
                                        flags[1],
                                        flags[2],
                                        flags[3],
                                        (poe * poe).value(),
                                        kTau.Exp(4 - rev).value(),
                                        2008,
                                        poe.Exp(4).value(),
                                        19,
                                        fa.c0.value(),
                                        fa.c1.value(),
                                        99};
    for (int i = 0; i < 16; ++i)
      EXPECT_EQ(st.after_drop(i), want[i]) << "d_seg " << d_seg << " i " << i;
  }
}

// processor/src/fast/tests/mod.rs test_frie2f4 and its snapshot
// miden_processor__fast__tests__frie2f4.snap (v0.25.7): PUSH(42) then FRIE2F4 over the inputs
// [16, 15, 14, 10, 11, 11, 10, 9, 38, 7, 10, 11, 2, 3, 1, 0].
TEST(VerifierOpsTest, FriFoldLeMatchesUpstreamSnapshot) {
  TestStack st({42, 16, 15, 14, 10, 11, 11, 10, 9, 38, 7, 10, 11, 2, 3, 1}, /*overflow=*/0);
  OpResult r = verifier_ops::FriExt2Fold4Le(st.sp());
  ASSERT_TRUE(r.ok()) << r.message;
  const std::vector<uint64_t> want = {6590052996059796070ULL,
                                      10542705566309791467ULL,
                                      15811494916641072287ULL,
                                      7905747458320536148ULL,
                                      0,
                                      1,
                                      0,
                                      0,
                                      49,
                                      18446462594437873665ULL,
                                      9,
                                      2401,
                                      9,
                                      14492051010740125224ULL,
                                      6668243544126892022ULL,
                                      0};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(st.after_drop(i), want[i]) << i;
}

// Cross-check with the independent Python model (masm_model --dialect v0.25): d_seg 0, poe 7.
TEST(VerifierOpsTest, FriFoldLeAgreesWithTheModel) {
  TestStack st({1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 7, 1, 2, 3, 5, 100}, /*overflow=*/0);
  ASSERT_TRUE(verifier_ops::FriExt2Fold4Le(st.sp()).ok());
  const std::vector<uint64_t> want = {10540996611094048180ULL,
                                      15811494916641072277ULL,
                                      7907275465336965419ULL,
                                      2635570838461181374ULL,
                                      1,
                                      0,
                                      0,
                                      0,
                                      49,
                                      1,
                                      108,
                                      2401,
                                      0,
                                      7580269654494917190ULL,
                                      10862769285124190093ULL,
                                      0};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(st.after_drop(i), want[i]) << i;
}

// all_ops.rs snapshot ..._stack_inputs_17_..._operations_66_..FriE2F4_.snap (v0.25.7): inputs
// 1..16 (1 on top).
TEST(VerifierOpsTest, FriFoldLeReportsTheInconsistentProjectionAsUpstream) {
  TestStack st({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  OpResult r = verifier_ops::FriExt2Fold4Le(st.sp());
  EXPECT_EQ(r.kind, TrapKind::kFriFoldingFailed);
  EXPECT_EQ(r.message,
            "FRI operation failed: degree-respecting projection is inconsistent at d_seg=2 poe=11 "
            "fpos=2: expected 12 + 13 X but was 5 + 6 X; all values: [0]=1 + 2 X [1]=3 + 4 X "
            "[2]=5 + 6 X [3]=7 + 8 X");
  EXPECT_EQ(st.at(0), 1u);  // nothing written
  EXPECT_EQ(st.at(15), 16u);
}

TEST(VerifierOpsTest, FriFoldLeRejectsAZeroDomainGenerator) {
  TestStack st({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 12, 13, 14, 15, 16});
  OpResult r = verifier_ops::FriExt2Fold4Le(st.sp());
  EXPECT_EQ(r.kind, TrapKind::kFriFoldingFailed);
  EXPECT_EQ(r.message, "FRI operation failed: domain size was 0");
}

TEST(VerifierOpsTest, FriFoldLePrintsExtensionElementsAsPlonky3Does) {
  // d_seg = 1: query value 1 is (s2, s3) = (0, 0), printed "0"; the previous value (0, 1) is "X".
  TestStack st({5, 1, 0, 0, 7, 0, 0, 0, 0, 1, 3, 0, 1, 0, 0, 0});
  OpResult r = verifier_ops::FriExt2Fold4Le(st.sp());
  EXPECT_EQ(r.kind, TrapKind::kFriFoldingFailed);
  EXPECT_TRUE(absl::StrContains(r.message,
                                "at d_seg=1 poe=3 fpos=0: expected X but was 0; all "
                                "values: [0]=5 + X [1]=0 [2]=7 [3]=0"))
      << r.message;
}

TEST(VerifierOpsTest, FriFoldClassicRejectsABadDomainSegmentAndABadPreviousValue) {
  TestStack bad_segment({1, 2, 3, 4, 5, 6, 7, 8, 9, 4, 11, 12, 13, 14, 15, 16});
  OpResult r = verifier_ops::FriExt2Fold4Classic(bad_segment.sp());
  EXPECT_EQ(r.kind, TrapKind::kFriFoldingFailed);
  EXPECT_EQ(r.message, "FRI domain segment value cannot exceed 3, but was 4");
  // d_seg = 2: query value 2 is (v4, v5) = (s3, s2) = (4, 3); the previous value is (13, 12).
  TestStack bad_value({1, 2, 3, 4, 5, 6, 7, 8, 9, 2, 11, 12, 13, 14, 15, 16});
  r = verifier_ops::FriExt2Fold4Classic(bad_value.sp());
  EXPECT_EQ(r.kind, TrapKind::kFriFoldingFailed);
  EXPECT_EQ(r.message,
            "degree-respecting projection is inconsistent: expected (13, 12) but was (4, 3)");
}

// ---- HORNERBASE / HORNEREXT --------------------------------------------------------------------

// acc * alpha^n + sum of coefficients (highest degree first) times powers of alpha.
Ext HornerByPowers(const Field& f, Ext acc, const std::vector<Ext>& highest_first, Ext alpha) {
  std::vector<Ext> low_first(highest_first.rbegin(), highest_first.rend());
  low_first.push_back(acc);
  return f.Eval(low_first, alpha);
}

TEST(VerifierOpsTest, HornerBaseClassicEvaluatesFromPositionSevenDown) {
  TestMemory mem;
  mem.Store(40, {1111, 2222, 3333, 4444});
  const std::vector<uint64_t> s = {10, 20, 30, 40, 50, 60, 70, 80, 9, 9, 9, 9, 9, 40, 555, 666};
  TestStack st(s);
  OpResult r = verifier_ops::HornerEvalBaseClassic(st.sp(), mem.load());
  ASSERT_TRUE(r.ok()) << r.message;
  std::vector<Ext> coeffs;
  for (int i = 7; i >= 0; --i) coeffs.push_back(Base(s[i]));
  const Ext want =
      HornerByPowers(kClassic, {Felt(666), Felt(555)}, coeffs, {Felt(1111), Felt(2222)});
  EXPECT_EQ(st.at(14), want.c1.value());
  EXPECT_EQ(st.at(15), want.c0.value());
  for (int i = 0; i < 14; ++i) EXPECT_EQ(st.at(i), s[i]);
}

TEST(VerifierOpsTest, HornerBaseLeEvaluatesFromTheTopDown) {
  TestMemory mem;
  mem.Store(41, {1111, 2222});  // no alignment needed
  const std::vector<uint64_t> s = {10, 20, 30, 40, 50, 60, 70, 80, 9, 9, 9, 9, 9, 41, 555, 666};
  TestStack st(s);
  OpResult r = verifier_ops::HornerEvalBaseLe(st.sp(), mem.load());
  ASSERT_TRUE(r.ok()) << r.message;
  std::vector<Ext> coeffs;
  for (int i = 0; i < 8; ++i) coeffs.push_back(Base(s[i]));
  const Ext want = HornerByPowers(kLe, {Felt(555), Felt(666)}, coeffs, {Felt(1111), Felt(2222)});
  EXPECT_EQ(st.at(14), want.c0.value());
  EXPECT_EQ(st.at(15), want.c1.value());
}

// all_ops.rs snapshot ..._stack_inputs_17_..._operations_67_..HornerBase_.snap (v0.25.7):
// alpha is 0 (empty memory at 14), so the accumulator becomes the constant term s7 = 8.
TEST(VerifierOpsTest, HornerBaseLeMatchesUpstreamSnapshot) {
  TestMemory mem;
  TestStack st({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  ASSERT_TRUE(verifier_ops::HornerEvalBaseLe(st.sp(), mem.load()).ok());
  const std::vector<uint64_t> want = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 8, 0};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(st.at(i), want[i]) << i;
}

TEST(VerifierOpsTest, HornerExtClassicEvaluatesPairsHighOnTop) {
  TestMemory mem;
  mem.Store(64, {31, 41, 59, 26});
  const std::vector<uint64_t> s = {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 64, 17, 19};
  TestStack st(s);
  ASSERT_TRUE(verifier_ops::HornerEvalExtClassic(st.sp(), mem.load()).ok());
  // Coefficient j is (s_2j+1, s_2j) as (low, high); j = 3 is the highest degree.
  const std::vector<Ext> coeffs = {
      {Felt(8), Felt(7)}, {Felt(6), Felt(5)}, {Felt(4), Felt(3)}, {Felt(2), Felt(1)}};
  const Ext want = HornerByPowers(kClassic, {Felt(19), Felt(17)}, coeffs, {Felt(31), Felt(41)});
  EXPECT_EQ(st.at(14), want.c1.value());
  EXPECT_EQ(st.at(15), want.c0.value());
}

TEST(VerifierOpsTest, HornerExtLeEvaluatesPairsLowOnTop) {
  TestMemory mem;
  mem.Store(64, {31, 41, 59, 26});
  const std::vector<uint64_t> s = {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 64, 17, 19};
  TestStack st(s);
  ASSERT_TRUE(verifier_ops::HornerEvalExtLe(st.sp(), mem.load()).ok());
  const std::vector<Ext> coeffs = {
      {Felt(1), Felt(2)}, {Felt(3), Felt(4)}, {Felt(5), Felt(6)}, {Felt(7), Felt(8)}};
  const Ext want = HornerByPowers(kLe, {Felt(17), Felt(19)}, coeffs, {Felt(31), Felt(41)});
  EXPECT_EQ(st.at(14), want.c0.value());
  EXPECT_EQ(st.at(15), want.c1.value());
}

// Cross-checks with the independent Python model (masm_model --dialect v0.25), which ran
// `push.[1111, 2222, 3333, 4444] mem_storew_le.40 dropw horner_eval_base` (and the same with
// [31, 41, 59, 26] at 64 and horner_eval_ext) over these stacks.
TEST(VerifierOpsTest, HornerLeAgreesWithTheModel) {
  TestMemory mem;
  mem.Store(40, {1111, 2222, 3333, 4444});
  mem.Store(64, {31, 41, 59, 26});
  TestStack base({10, 20, 30, 40, 50, 60, 70, 80, 9, 9, 9, 9, 9, 40, 555, 666});
  ASSERT_TRUE(verifier_ops::HornerEvalBaseLe(base.sp(), mem.load()).ok());
  EXPECT_EQ(base.at(14), 11448278848661305839ULL);
  EXPECT_EQ(base.at(15), 6826014810226906299ULL);
  TestStack ext({1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 64, 17, 19});
  ASSERT_TRUE(verifier_ops::HornerEvalExtLe(ext.sp(), mem.load()).ok());
  EXPECT_EQ(ext.at(14), 12138945326ULL);
  EXPECT_EQ(ext.at(15), 5040415723ULL);
  // `push.3 mem_store.40 push.1 mem_store.41 horner_eval_base`: alpha = (3, 1) element-wise.
  mem.Store(40, {3, 1});
  TestStack small({8, 7, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 40, 11, 13});
  ASSERT_TRUE(verifier_ops::HornerEvalBaseLe(small.sp(), mem.load()).ok());
  EXPECT_EQ(small.at(14), 24293619u);
  EXPECT_EQ(small.at(15), 9182124u);
}

TEST(VerifierOpsTest, HornerOpsTrapOnBadAlphaAddresses) {
  TestMemory mem;
  // all_ops.rs snapshot ..._operations_68_..HornerExt_.snap (v0.25.7): address 14 is unaligned.
  TestStack ext({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  OpResult r = verifier_ops::HornerEvalExtLe(ext.sp(), mem.load());
  EXPECT_EQ(r.kind, TrapKind::kUnalignedWord);
  EXPECT_TRUE(absl::StrContains(r.message, "address 14")) << r.message;
  TestStack base({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  EXPECT_EQ(verifier_ops::HornerEvalBaseClassic(base.sp(), mem.load()).kind,
            TrapKind::kUnalignedWord);
  EXPECT_EQ(verifier_ops::HornerEvalExtClassic(base.sp(), mem.load()).kind,
            TrapKind::kUnalignedWord);
  // v0.25 HORNERBASE reads alpha_addr and alpha_addr + 1: 2^32 - 1 + 1 is out of bounds.
  TestStack edge({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFFFFFFFFULL, 0, 0});
  r = verifier_ops::HornerEvalBaseLe(edge.sp(), mem.load());
  EXPECT_EQ(r.kind, TrapKind::kMemoryAddress);
  EXPECT_TRUE(absl::StrContains(r.message, "4294967296")) << r.message;
  TestStack far({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, uint64_t{1} << 32, 0, 0});
  EXPECT_EQ(verifier_ops::HornerEvalExtLe(far.sp(), mem.load()).kind, TrapKind::kMemoryAddress);
  EXPECT_EQ(far.at(14), 0u);  // nothing written
}

// ---- EVALCIRCUIT -------------------------------------------------------------------------------

// The circuit of stdlib/tests/crypto/arithmetic_circuit_eval.rs (v0.16.4) with a fixed input:
// wires 7 = in0, 6 = in1, 5 = -1, 4 = 0; gates 3 = 7 + 5, 2 = 7 * 3, 1 = 2 - 6, 0 = 1 * 1.
// It is zero iff in1 = in0 * (in0 - 1).
std::vector<uint64_t> Circuit(const Field& f, Ext in0, bool correct) {
  Ext in1 = f.Mul(in0, f.Add(in0, Base(-Felt(1))));
  if (!correct) in1.c0 += Felt(1);
  return {in0.c0.value(),
          in0.c1.value(),
          in1.c0.value(),
          in1.c1.value(),
          (-Felt(1)).value(),
          0,
          0,
          0,
          7 + (5ULL << 30) + (2ULL << 60),
          7 + (3ULL << 30) + (1ULL << 60),
          2 + (6ULL << 30),
          1 + (1ULL << 30) + (1ULL << 60)};
}

TEST(VerifierOpsTest, EvalCircuitAcceptsACircuitThatEvaluatesToZero) {
  const Ext in0{Felt(0x123456789ULL), Felt(0xABCDEF012ULL)};
  for (bool le : {false, true}) {
    TestMemory mem;
    mem.Store(1 << 16, Circuit(le ? kLe : kClassic, in0, true));
    TestStack st({1 << 16, 4, 4, 77});
    OpResult r = le ? verifier_ops::EvalCircuitLe(st.sp(), mem.load(), kBudget)
                    : verifier_ops::EvalCircuitClassic(st.sp(), mem.load(), kBudget);
    EXPECT_TRUE(r.ok()) << r.message;
    EXPECT_EQ(st.at(0), 1u << 16);  // the stack is unchanged
    EXPECT_EQ(st.at(3), 77u);
  }
}

TEST(VerifierOpsTest, EvalCircuitUsesTheDialectsExtension) {
  // The v0.16 circuit over x^2 - x + 2 is not zero over x^2 - 7 (in0 has a non-zero x part).
  const Ext in0{Felt(5), Felt(3)};
  TestMemory mem;
  mem.Store(0, Circuit(kClassic, in0, true));
  TestStack st({0, 4, 4});
  EXPECT_TRUE(verifier_ops::EvalCircuitClassic(st.sp(), mem.load(), kBudget).ok());
  OpResult r = verifier_ops::EvalCircuitLe(st.sp(), mem.load(), kBudget);
  EXPECT_EQ(r.kind, TrapKind::kCircuitEvaluationFailed);
  EXPECT_EQ(r.message,
            "failed to execute arithmetic circuit evaluation operation: ace circuit evaluation "
            "failed: circuit does not evaluate to zero");
}

TEST(VerifierOpsTest, EvalCircuitFailsWhenTheOutputIsNotZero) {
  TestMemory mem;
  mem.Store(8, Circuit(kClassic, {Felt(9), Felt(4)}, false));
  TestStack st({8, 4, 4});
  OpResult r = verifier_ops::EvalCircuitClassic(st.sp(), mem.load(), kBudget);
  EXPECT_EQ(r.kind, TrapKind::kCircuitEvaluationFailed);
  EXPECT_EQ(r.message,
            "failed to execute arithmetic circuit evaluation operation: circuit does not "
            "evaluate to zero");
}

TEST(VerifierOpsTest, EvalCircuitChecksItsLayout) {
  TestMemory mem;
  auto run = [&](std::vector<uint64_t> top) {
    TestStack st(top);
    return verifier_ops::EvalCircuitLe(st.sp(), mem.load(), kBudget);
  };
  // all_ops.rs snapshot ..._operations_69_..EvalCircuit_.snap (v0.25.7): inputs 1..16.
  OpResult r = run({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  EXPECT_EQ(r.kind, TrapKind::kCircuitEvaluationFailed);
  EXPECT_TRUE(absl::StrContains(
      r.message, "num of evaluation gates should be word aligned and non-zero but was 3"))
      << r.message;
  EXPECT_TRUE(absl::StrContains(run({0, 3, 4}).message,
                                "num of variables should be word aligned and non-zero but was 3"));
  EXPECT_TRUE(absl::StrContains(run({0, 0, 4}).message,
                                "num of variables should be word aligned and non-zero but was 0"));
  EXPECT_TRUE(absl::StrContains(run({0, 2, 0}).message,
                                "num of evaluation gates should be word aligned and non-zero"));
  EXPECT_TRUE(absl::StrContains(run({0, 1 << 29, 1 << 29}).message,
                                "num of wires must be less than 2^30 but was 1073741824"));
  EXPECT_TRUE(absl::StrContains(run({0, Felt::kModulus - 1, Felt::kModulus - 1}).message,
                                "num of wires must be less than 2^30"));
  // Reads: the READ section is words (aligned), the EVAL section elements.
  EXPECT_EQ(run({2, 2, 4}).kind, TrapKind::kUnalignedWord);
  EXPECT_EQ(run({uint64_t{1} << 32, 2, 4}).kind, TrapKind::kMemoryAddress);
  // The EVAL section's 5th gate would be at 2^32.
  mem.Store(0xFFFFFFF8U,
            {1, 0, 1, 0, 9 + (8ULL << 30), 7 + (7ULL << 30), 6 + (6ULL << 30), 5 + (5ULL << 30)});
  r = run({0xFFFFFFF8ULL, 2, 8});
  EXPECT_EQ(r.kind, TrapKind::kMemoryAddress) << r.message;
  EXPECT_TRUE(absl::StrContains(r.message, "4294967296")) << r.message;
}

TEST(VerifierOpsTest, EvalCircuitRejectsBadGates) {
  auto run = [](std::vector<uint64_t> gates) {
    TestMemory mem;
    std::vector<uint64_t> data = {1, 0, 1, 0};  // wires 5 = 1, 4 = 1
    data.insert(data.end(), gates.begin(), gates.end());
    mem.Store(0, data);
    TestStack st({0, 2, 4});
    return verifier_ops::EvalCircuitClassic(st.sp(), mem.load(), kBudget);
  };
  // 3 = 5 - 4 = 0, 2 = 3 * 3, 1 = 2 + 2, 0 = 1 * 5: zero.
  const uint64_t ok[] = {5 + (4ULL << 30), 3 + (3ULL << 30) + (1ULL << 60),
                         2 + (2ULL << 30) + (2ULL << 60), 1 + (5ULL << 30) + (1ULL << 60)};
  EXPECT_TRUE(run({ok[0], ok[1], ok[2], ok[3]}).ok());
  // op 3 does not decode.
  EXPECT_TRUE(absl::StrContains(run({ok[0], ok[1], ok[2], 1 + (5ULL << 30) + (3ULL << 60)}).message,
                                "failed to decode instruction"));
  // Gate 3 reading wire 2 (not produced yet) or wire 9 (no such wire).
  EXPECT_TRUE(absl::StrContains(run({5 + (2ULL << 30), ok[1], ok[2], ok[3]}).message,
                                "failed to read from the wiring bus"));
  EXPECT_TRUE(absl::StrContains(run({9, ok[1], ok[2], ok[3]}).message,
                                "failed to read from the wiring bus"));
}

TEST(VerifierOpsTest, EvalCircuitRespectsTheMemoryBudget) {
  TestMemory mem;
  TestStack st({0, 1 << 20, 4});
  OpResult r = verifier_ops::EvalCircuitLe(st.sp(), mem.load(), /*max_scratch_bytes=*/1 << 20);
  EXPECT_EQ(r.kind, TrapKind::kMemoryLimit);
}

// ---- through the executor ----------------------------------------------------------------------

absl::StatusOr<RunResult> RunV016(const std::string& source, std::vector<Felt> stack,
                                  std::vector<std::pair<Opcode, Opcode>> patch = {}) {
  absl::StatusOr<Program> program =
      Assembler(testutil::ClassicOptions()).AssembleSource("test.masm", source);
  if (!program.ok()) return program.status();
  // Runs the v0.25 layouts through the same executor cases (the v0.25 instruction table
  // produces these opcodes).
  for (Instruction& in : program->code) {
    for (const auto& [from, to] : patch) {
      if (in.opcode == from) in.opcode = to;
    }
  }
  ProgramInputs inputs;
  inputs.stack = std::move(stack);
  return RunProgram(*program, inputs, ExecutionOptions{});
}

std::vector<Felt> Felts(std::vector<uint64_t> v) {
  std::vector<Felt> out;
  for (uint64_t x : v) out.push_back(Felt(x));
  return out;
}

TEST(VerifierOpsTest, ExecutorRunsFriFoldAsOneCycleThatDropsOneElement) {
  // The upstream snapshot's stack with cptr = 1 pushed and moved to position 15, so that the
  // 16th input (4242) is the overflow element FRIE2F4 moves into position 15.
  const std::vector<Felt> in =
      Felts({42, 16, 15, 14, 10, 11, 11, 10, 9, 38, 7, 10, 11, 2, 3, 4242});
  auto fold = RunV016("begin push.1 movdn.15 fri_ext2fold4 end", in,
                      {{Opcode::kFriE2F4, Opcode::kFriE2F4Le}});
  ASSERT_TRUE(fold.ok()) << fold.status();
  auto nofold = RunV016("begin push.1 movdn.15 drop end", in);
  ASSERT_TRUE(nofold.ok()) << nofold.status();
  EXPECT_EQ(fold->cycles, nofold->cycles);  // one row, like DROP
  const std::vector<uint64_t> want = {6590052996059796070ULL,
                                      10542705566309791467ULL,
                                      15811494916641072287ULL,
                                      7905747458320536148ULL,
                                      0,
                                      1,
                                      0,
                                      0,
                                      49,
                                      18446462594437873665ULL,
                                      9,
                                      2401,
                                      9,
                                      14492051010740125224ULL,
                                      6668243544126892022ULL,
                                      4242};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(fold->stack[i].value(), want[i]) << i;
}

TEST(VerifierOpsTest, ExecutorTrapsWithTheOperationsError) {
  auto r = RunV016("begin fri_ext2fold4 end", Felts({1, 2, 3, 4, 5, 6, 7, 8, 9, 4}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "FRI domain segment value cannot exceed 3"))
      << r.status();
  r = RunV016("begin arithmetic_circuit_eval end", Felts({0, 2, 3}));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "failed to execute arithmetic circuit"))
      << r.status();
}

TEST(VerifierOpsTest, ExecutorChargesTheCircuitsWiresToTheMemoryBudget) {
  absl::StatusOr<Program> program =
      Assembler(testutil::ClassicOptions())
          .AssembleSource("test.masm",
                          "begin push.4 push.1048576 push.0 arithmetic_circuit_eval end");
  ASSERT_TRUE(program.ok()) << program.status();
  ExecutionOptions options;
  options.max_memory_bytes = 4 << 20;  // the 2^20 + 4 wires need 16 MiB
  auto r = RunProgram(*program, ProgramInputs{}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
  // With the default budget the circuit runs (and fails: its gates are zeros, reading wire 0).
  r = RunProgram(*program, ProgramInputs{}, ExecutionOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::StrContains(r.status().message(), "failed to read from the wiring bus"))
      << r.status();
}

TEST(VerifierOpsTest, ExecutorHornerReadsTheCurrentContextsMemory) {
  // v0.16 processor/src/fast/tests/masm_consistency.rs: alpha = (1, 2) at address 40.
  const std::vector<Felt> in = Felts({16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 40, 4, 100});
  auto base = RunV016("begin push.1.2.3.4 mem_storew.40 dropw horner_eval_base end", in);
  ASSERT_TRUE(base.ok()) << base.status();
  std::vector<Ext> coeffs;
  for (int i = 7; i >= 0; --i) coeffs.push_back(Base(in[i]));
  const Ext want = HornerByPowers(kClassic, {Felt(100), Felt(4)}, coeffs, {Felt(1), Felt(2)});
  EXPECT_EQ(base->stack[14], want.c1);
  EXPECT_EQ(base->stack[15], want.c0);
  auto le = RunV016("begin push.1.2.3.4 mem_storew.40 dropw horner_eval_base end", in,
                    {{Opcode::kHornerBase, Opcode::kHornerBaseLe}});
  ASSERT_TRUE(le.ok()) << le.status();
  std::vector<Ext> le_coeffs;
  for (int i = 0; i < 8; ++i) le_coeffs.push_back(Base(in[i]));
  const Ext le_want = HornerByPowers(kLe, {Felt(4), Felt(100)}, le_coeffs, {Felt(1), Felt(2)});
  EXPECT_EQ(le->stack[14], le_want.c0);
  EXPECT_EQ(le->stack[15], le_want.c1);
  EXPECT_EQ(le->cycles, base->cycles);
}

}  // namespace
}  // namespace flamefleet::vm
