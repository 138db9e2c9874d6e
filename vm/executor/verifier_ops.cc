#include "vm/executor/verifier_ops.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace flamefleet::vm::verifier_ops {
namespace {

constexpr uint64_t kU32Max = 0xFFFFFFFFULL;

// Powers of 1/tau, tau the 4th root of unity of the Goldilocks field, and 1/2: transcribed
// from processor/src/fast/fri_ops.rs (v0.16.4) and
// processor/src/execution/operations/fri_ops/mod.rs (v0.25.7), where they are the same.
constexpr Felt kTauInv(18446462594437873665ULL);
constexpr Felt kTau2Inv(18446744069414584320ULL);
constexpr Felt kTau3Inv(281474976710656ULL);
constexpr Felt kTwoInv(9223372034707292161ULL);
constexpr std::array<Felt, 4> kTauFactor = {Felt(1), kTauInv, kTau2Inv, kTau3Inv};
// v0.16's FRI domain offset (Felt::GENERATOR); v0.25.7 dropped it.
constexpr Felt kDomainOffset(7);

// The largest ACE wire id (processor/src/chiplets/ace/instruction.rs: 30-bit ids).
constexpr uint64_t kMaxAceWires = (uint64_t{1} << 30) - 1;

// An element c0 + c1 x of a quadratic extension of the Goldilocks field.
struct Quad {
  Felt c0, c1;
  friend bool operator==(const Quad& a, const Quad& b) { return a.c0 == b.c0 && a.c1 == b.c1; }
};

Quad operator+(Quad a, Quad b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
Quad operator-(Quad a, Quad b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
Quad Scale(Quad a, Felt k) { return {a.c0 * k, a.c1 * k}; }

// F_p[x]/(x^2 - x + 2), the v0.16 extension (winterfell's QuadExtension): x^2 = x - 2.
struct Classic {
  static Quad Mul(Quad a, Quad b) {
    const Felt a1b1 = a.c1 * b.c1;
    return {a.c0 * b.c0 - Felt(2) * a1b1, a.c0 * b.c1 + a.c1 * b.c0 + a1b1};
  }
  // winterfell prints an extension element as "(c0, c1)".
  static std::string Text(Quad a) {
    return absl::StrCat("(", a.c0.value(), ", ", a.c1.value(), ")");
  }
};

// F_p[x]/(x^2 - 7), the v0.25 extension (Plonky3's binomial extension): x^2 = 7.
struct Le {
  static Quad Mul(Quad a, Quad b) {
    return {a.c0 * b.c0 + Felt(7) * (a.c1 * b.c1), a.c0 * b.c1 + a.c1 * b.c0};
  }
  // Plonky3 prints the non-zero terms: "0", "5", "X", "5 + 6 X".
  static std::string Text(Quad a) {
    if (a.c0.value() == 0 && a.c1.value() == 0) return "0";
    std::string out;
    if (a.c0.value() != 0) out = absl::StrCat(a.c0.value());
    if (a.c1.value() != 0) {
      if (!out.empty()) out += " + ";
      out += a.c1.value() == 1 ? std::string("X") : absl::StrCat(a.c1.value(), " X");
    }
    return out;
  }
};

// Folds by 2: (f(x) + f(-x) + (f(x) - f(-x)) * ep) / 2.
template <typename E>
Quad Fold2(Quad f_x, Quad f_neg_x, Quad ep) {
  return Scale(f_x + f_neg_x + E::Mul(f_x - f_neg_x, ep), kTwoInv);
}

struct Folded {
  Quad value, tmp0, tmp1;
};

// Folds the 4 values (natural order) at ev = alpha / x, es = ev^2.
template <typename E>
Folded Fold4(const std::array<Quad, 4>& v, Quad alpha, Felt x_inv) {
  const Quad ev = Scale(alpha, x_inv);
  const Quad es = E::Mul(ev, ev);
  Folded f;
  f.tmp0 = Fold2<E>(v[0], v[2], ev);
  f.tmp1 = Fold2<E>(v[1], v[3], Scale(ev, kTauInv));
  f.value = Fold2<E>(f.tmp0, f.tmp1, es);
  return f;
}

OpResult Fail(TrapKind kind, std::string message) { return OpResult{kind, std::move(message)}; }

OpResult AddressOutOfBounds(uint64_t addr) {
  return Fail(TrapKind::kMemoryAddress,
              absl::StrCat("memory address ", addr, " is out of bounds (>= 2^32)"));
}

// Reads the word at `addr` (a stack or pointer value): traps as MLOADW does.
OpResult LoadWord(Felt addr, LoadElement load, std::array<Felt, 4>& word) {
  const uint64_t a = addr.value();
  if (a > kU32Max) return AddressOutOfBounds(a);
  if ((a & 3) != 0) {
    return Fail(TrapKind::kUnalignedWord, absl::StrCat("word memory access at address ", a,
                                                       " is not aligned to a multiple of 4"));
  }
  for (uint32_t i = 0; i < 4; ++i) word[i] = load(static_cast<uint32_t>(a) + i);
  return OpResult{};
}

// Reads the element at `addr`: traps as MLOAD does.
OpResult LoadOne(Felt addr, LoadElement load, Felt& out) {
  const uint64_t a = addr.value();
  if (a > kU32Max) return AddressOutOfBounds(a);
  out = load(static_cast<uint32_t>(a));
  return OpResult{};
}

// Writes the 15 results of FRIE2F4 to positions 1..15 (the caller drops one element).
void WriteFriResults(Felt* sp, const std::array<Felt, 15>& out) {
  for (int i = 0; i < 15; ++i) sp[-(i + 1)] = out[i];
}

template <typename E>
OpResult EvalCircuit(const Felt* sp, LoadElement load, uint64_t max_scratch_bytes,
                     const char* prefix) {
  auto ace_error = [prefix](const std::string& what) {
    return Fail(
        TrapKind::kCircuitEvaluationFailed,
        absl::StrCat("failed to execute arithmetic circuit evaluation operation: ", prefix, what));
  };
  Felt ptr = sp[0];
  const uint64_t num_vars = sp[-1].value();
  const uint64_t num_eval = sp[-2].value();
  const uint64_t num_wires =
      num_vars > ~uint64_t{0} - num_eval ? ~uint64_t{0} : num_vars + num_eval;
  if (num_wires > kMaxAceWires) {
    return ace_error(absl::StrCat("num of wires must be less than 2^30 but was ", num_wires));
  }
  if (num_vars % 2 != 0 || num_vars == 0) {
    return ace_error(
        absl::StrCat("num of variables should be word aligned and non-zero but was ", num_vars));
  }
  if (num_eval % 4 != 0 || num_eval == 0) {
    return ace_error(absl::StrCat(
        "num of evaluation gates should be word aligned and non-zero but was ", num_eval));
  }
  if (num_wires * sizeof(Quad) > max_scratch_bytes) {
    return Fail(
        TrapKind::kMemoryLimit,
        absl::StrCat("memory budget exceeded: the arithmetic circuit's ", num_wires, " wires need ",
                     num_wires * sizeof(Quad), " bytes (raise the budget with --max-memory)"));
  }
  // The wire with id `id` is wires[num_wires - 1 - id]: ids count down as wires are produced.
  std::vector<Quad> wires;
  wires.reserve(num_wires);
  for (uint64_t row = 0; row < num_vars / 2; ++row) {
    std::array<Felt, 4> word;
    if (OpResult r = LoadWord(ptr, load, word); !r.ok()) return r;
    wires.push_back(Quad{word[0], word[1]});
    wires.push_back(Quad{word[2], word[3]});
    ptr = ptr + Felt(4);
  }
  auto read_wire = [&](uint64_t id, Quad& v) {
    if (id + 1 > num_wires) return false;
    const uint64_t index = num_wires - 1 - id;
    if (index >= wires.size()) return false;  // not produced yet
    v = wires[index];
    return true;
  };
  for (uint64_t row = 0; row < num_eval; ++row) {
    Felt gate;
    if (OpResult r = LoadOne(ptr, load, gate); !r.ok()) return r;
    const uint64_t bits = gate.value();
    const uint64_t id_l = bits & kMaxAceWires;
    const uint64_t id_r = (bits >> 30) & kMaxAceWires;
    const uint64_t op = bits >> 60;
    if (op > 2) return ace_error("failed to decode instruction");
    Quad l, r;
    if (!read_wire(id_l, l) || !read_wire(id_r, r)) {
      return ace_error("failed to read from the wiring bus");
    }
    wires.push_back(op == 0 ? l - r : op == 1 ? E::Mul(l, r) : l + r);
    ptr = ptr + Felt(1);
  }
  const Quad out = wires.back();  // every wire has been produced: the last one is the output
  if (out.c0.value() != 0 || out.c1.value() != 0) {
    return ace_error("circuit does not evaluate to zero");
  }
  return OpResult{};
}

}  // namespace

OpResult FriExt2Fold4Classic(Felt* sp) {
  auto s = [sp](int i) { return sp[-i]; };
  // q_i = (v_2i, v_2i+1) with v0 at position 7 ... v7 at position 0.
  const std::array<Quad, 4> q = {Quad{s(7), s(6)}, Quad{s(5), s(4)}, Quad{s(3), s(2)},
                                 Quad{s(1), s(0)}};
  const Felt folded_pos = s(8);
  const uint64_t d_seg = s(9).value();
  const Felt poe = s(10);
  const Quad prev{s(12), s(11)};
  const Quad alpha{s(14), s(13)};
  const Felt layer_ptr = s(15);
  if (d_seg > 3) {
    return Fail(TrapKind::kFriFoldingFailed,
                absl::StrCat("FRI domain segment value cannot exceed 3, but was ", d_seg));
  }
  if (!(q[d_seg] == prev)) {
    return Fail(TrapKind::kFriFoldingFailed,
                absl::StrCat("degree-respecting projection is inconsistent: expected ",
                             Classic::Text(prev), " but was ", Classic::Text(q[d_seg])));
  }
  const Felt f_tau = kTauFactor[d_seg];
  const Felt x = poe * f_tau * kDomainOffset;
  const Folded f = Fold4<Classic>(q, alpha, x.Inverse());  // 1/0 is 0, as in winterfell
  const Felt poe2 = poe * poe;
  std::array<Felt, 4> flags{};
  flags[d_seg] = Felt(1);
  WriteFriResults(
      sp, {f.tmp0.c1, f.tmp0.c0, f.tmp1.c1, f.tmp1.c0, flags[3], flags[2], flags[1], flags[0], poe2,
           f_tau, layer_ptr + Felt(8), poe2 * poe2, folded_pos, f.value.c1, f.value.c0});
  return OpResult{};
}

OpResult FriExt2Fold4Le(Felt* sp) {
  auto s = [sp](int i) { return sp[-i]; };
  // Bit-reversed: q[i] = (v_2i, v_2i+1) with v_j at position j.
  const std::array<Quad, 4> q = {Quad{s(0), s(1)}, Quad{s(2), s(3)}, Quad{s(4), s(5)},
                                 Quad{s(6), s(7)}};
  const uint64_t p = s(9).value();
  const uint64_t d_seg = p & 3;
  const Felt folded_pos(p >> 2);
  const Felt poe = s(10);
  if (poe.value() == 0)
    return Fail(TrapKind::kFriFoldingFailed, "FRI operation failed: domain size was 0");
  const Quad prev{s(11), s(12)};
  const Quad alpha{s(13), s(14)};
  const Felt layer_ptr = s(15);
  if (!(q[d_seg] == prev)) {
    return Fail(
        TrapKind::kFriFoldingFailed,
        absl::StrCat(
            "FRI operation failed: degree-respecting projection is inconsistent at d_seg=", d_seg,
            " poe=", poe.value(), " fpos=", folded_pos.value(), ": expected ", Le::Text(prev),
            " but was ", Le::Text(q[d_seg]), "; all values: [0]=", Le::Text(q[0]),
            " [1]=", Le::Text(q[1]), " [2]=", Le::Text(q[2]), " [3]=", Le::Text(q[3])));
  }
  constexpr std::array<int, 4> kBitReverse = {0, 2, 1, 3};
  const int d_seg_rev = kBitReverse[d_seg];
  const Felt f_tau = kTauFactor[d_seg_rev];
  const Felt x = poe * f_tau;
  const Folded f = Fold4<Le>({q[0], q[2], q[1], q[3]}, alpha, x.Inverse());
  const Felt poe2 = poe * poe;
  std::array<Felt, 4> flags{};
  flags[d_seg_rev] = Felt(1);
  WriteFriResults(
      sp, {f.tmp0.c0, f.tmp0.c1, f.tmp1.c0, f.tmp1.c1, flags[0], flags[1], flags[2], flags[3], poe2,
           f_tau, layer_ptr + Felt(8), poe2 * poe2, folded_pos, f.value.c0, f.value.c1});
  return OpResult{};
}

OpResult HornerEvalBaseClassic(Felt* sp, LoadElement load) {
  std::array<Felt, 4> word;
  if (OpResult r = LoadWord(sp[-13], load, word); !r.ok()) return r;
  const Quad alpha{word[0], word[1]};
  Quad acc{sp[-15], sp[-14]};
  for (int i = 7; i >= 0; --i) acc = Classic::Mul(alpha, acc) + Quad{sp[-i], Felt(0)};
  sp[-14] = acc.c1;
  sp[-15] = acc.c0;
  return OpResult{};
}

OpResult HornerEvalBaseLe(Felt* sp, LoadElement load) {
  Felt a0, a1;
  if (OpResult r = LoadOne(sp[-13], load, a0); !r.ok()) return r;
  if (OpResult r = LoadOne(sp[-13] + Felt(1), load, a1); !r.ok()) return r;
  const Quad alpha{a0, a1};
  Quad acc{sp[-14], sp[-15]};
  for (int i = 0; i < 8; ++i) acc = Le::Mul(acc, alpha) + Quad{sp[-i], Felt(0)};
  sp[-14] = acc.c0;
  sp[-15] = acc.c1;
  return OpResult{};
}

OpResult HornerEvalExtClassic(Felt* sp, LoadElement load) {
  std::array<Felt, 4> word;
  if (OpResult r = LoadWord(sp[-13], load, word); !r.ok()) return r;
  const Quad alpha{word[0], word[1]};
  Quad acc{sp[-15], sp[-14]};
  for (int j = 3; j >= 0; --j) acc = Classic::Mul(alpha, acc) + Quad{sp[-(2 * j + 1)], sp[-2 * j]};
  sp[-14] = acc.c1;
  sp[-15] = acc.c0;
  return OpResult{};
}

OpResult HornerEvalExtLe(Felt* sp, LoadElement load) {
  std::array<Felt, 4> word;
  if (OpResult r = LoadWord(sp[-13], load, word); !r.ok()) return r;
  const Quad alpha{word[0], word[1]};
  Quad acc{sp[-14], sp[-15]};
  for (int j = 0; j < 4; ++j) acc = Le::Mul(acc, alpha) + Quad{sp[-2 * j], sp[-(2 * j + 1)]};
  sp[-14] = acc.c0;
  sp[-15] = acc.c1;
  return OpResult{};
}

OpResult EvalCircuitClassic(const Felt* sp, LoadElement load, uint64_t max_scratch_bytes) {
  return EvalCircuit<Classic>(sp, load, max_scratch_bytes, "");
}

OpResult EvalCircuitLe(const Felt* sp, LoadElement load, uint64_t max_scratch_bytes) {
  return EvalCircuit<Le>(sp, load, max_scratch_bytes, "ace circuit evaluation failed: ");
}

}  // namespace flamefleet::vm::verifier_ops
