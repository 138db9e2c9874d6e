// Tests of the v0.25 system and library events (vm/dialects/v0_25/events.cc) as the executor
// answers them: operands from s1 (the id on top), words with element 0 nearest the top,
// Poseidon2 keys, the advice layouts of the v0.25.7 handlers, and the errors for events nobody
// handles. The v0.25 instruction table is written elsewhere, so the programs are v0.16-assembled
// `push.ID emit.ID drop` (the same native operations) re-targeted at the v0.25 tables.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vm/crypto/blake3.h"
#include "vm/crypto/poseidon2.h"
#include "vm/dialect.h"
#include "vm/vm.h"

namespace flamefleet::vm {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using H = SystemEventHandler;

constexpr uint64_t kPlaceholder = 777777;

const SystemEventTable& Events() { return *GetDialectSpec(Dialect::kV0_25).events; }

uint64_t IdOf(H handler) {
  std::optional<uint64_t> id = Events().IdOf(handler);
  EXPECT_TRUE(id.has_value());
  return id.value_or(0);
}

uint64_t LibraryId(absl::string_view name) {
  for (const SystemEventRow& row : Events().library_rows()) {
    if (row.name == std::string_view(name.data(), name.size())) return row.id;
  }
  ADD_FAILURE() << "no library event " << name;
  return 0;
}

std::vector<Felt> Felts(std::initializer_list<uint64_t> values) {
  std::vector<Felt> out;
  for (uint64_t v : values) out.push_back(Felt(v));
  return out;
}

AdviceProvider V025Advice() { return AdviceProvider(Poseidon2Hasher::Get()); }

struct EventRun {
  Executor::State state;
  Trap trap;
  AdviceProvider advice;
};

// Runs `prelude push.ID emit.ID drop` with `stack` (top first) below the id, under the v0.25
// tables. `prelude` is v0.16 MASM that leaves the stack as it found it.
EventRun RunEvent(uint64_t id, const std::vector<Felt>& stack, AdviceProvider advice,
                  const std::string& prelude = "") {
  AssemblerOptions options;
  options.dialect = Dialect::kV0_16;
  absl::StatusOr<Program> program = Assembler(options).AssembleSource(
      "e.masm",
      absl::StrCat("begin ", prelude, " push.", kPlaceholder, " emit.", kPlaceholder, " drop end"));
  EXPECT_TRUE(program.ok()) << program.status();
  if (!program.ok()) return {Executor::State::kTrapped, {}, V025Advice()};
  int patched = 0;
  for (Instruction& in : program->code) {
    if ((in.opcode == Opcode::kPush || in.opcode == Opcode::kEmit) && in.imm == kPlaceholder) {
      in.imm = id;
      ++patched;
    }
  }
  EXPECT_EQ(patched, 2);
  program->dialect = &GetDialectSpec(Dialect::kV0_25);
  Executor exec(*program, stack, std::move(advice), ExecutionOptions{});
  exec.Run();
  return {exec.state(), exec.trap(), exec.advice()};
}

// The advice stack, next popped first.
std::vector<uint64_t> PopOrder(const AdviceProvider& advice) {
  std::vector<uint64_t> out;
  for (auto it = advice.stack.rbegin(); it != advice.stack.rend(); ++it) out.push_back(it->value());
  return out;
}

TEST(V025EventsTest, LibraryIdsAreBlake3OfTheNames) {
  ASSERT_FALSE(Events().library_rows().empty());
  for (const SystemEventRow& row : Events().library_rows()) {
    const std::array<uint8_t, 32> digest =
        Blake3(absl::string_view(row.name.data(), row.name.size()));
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | digest[i];
    EXPECT_EQ(row.id, Felt::FromU64(v).value()) << row.name;
  }
}

TEST(V025EventsTest, TableHasNineteenSystemEventsAndTheLittleEndianLayout) {
  EXPECT_EQ(Events().rows().size(), 19u);
  EXPECT_EQ(Events().library_rows().size(), 23u);
  EXPECT_EQ(Events().layout().operand_offset, 1);
  EXPECT_EQ(Events().layout().order, SystemEventLayout::Order::kElement0Top);
  EXPECT_EQ(Events().layout().ext2, SystemEventLayout::Ext2Field::kXSquaredMinus7);
  EXPECT_TRUE(Events().layout().unknown_events_fail);
}

TEST(V025EventsTest, U32CountsReadTheOperandBelowTheId) {
  EventRun r = RunEvent(IdOf(H::kU32Clz), Felts({0x00F00000}), V025Advice());
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({8}));
  r = RunEvent(IdOf(H::kU32Cto), Felts({0b0111}), V025Advice());
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({3}));
  r = RunEvent(IdOf(H::kIlog2), Felts({1025}), V025Advice());
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({10}));
}

TEST(V025EventsTest, Ext2InvInvertsOverXSquaredMinusSeven) {
  // [a0, a1] = [3, 5]; two adv_push give [b0, b1] with b1 popped first.
  EventRun r = RunEvent(IdOf(H::kExt2Inv), Felts({3, 5}), V025Advice());
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  ASSERT_EQ(r.advice.stack.size(), 2u);
  const Felt b1 = r.advice.stack[1], b0 = r.advice.stack[0];
  const Felt a0(3), a1(5);
  EXPECT_EQ(a0 * b0 + Felt(7) * a1 * b1, Felt(1));
  EXPECT_EQ(a0 * b1 + a1 * b0, Felt(0));
}

TEST(V025EventsTest, HdwordToMapKeysTheTopWordFirst) {
  const std::vector<Felt> stack = Felts({1, 2, 3, 4, 5, 6, 7, 8});
  EventRun r = RunEvent(IdOf(H::kHdwordToMap), stack, V025Advice());
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  const Word a{Felt(1), Felt(2), Felt(3), Felt(4)}, b{Felt(5), Felt(6), Felt(7), Felt(8)};
  auto it = r.advice.map.find(Poseidon2Hasher::Get().Merge(a, b));
  ASSERT_NE(it, r.advice.map.end());
  EXPECT_EQ(it->second, stack);
}

TEST(V025EventsTest, HdwordToMapWithDomainReadsTheDomainAtNine) {
  const std::vector<Felt> stack = Felts({1, 2, 3, 4, 5, 6, 7, 8, 42});
  EventRun r = RunEvent(IdOf(H::kHdwordToMapWithDomain), stack, V025Advice());
  const Word a{Felt(1), Felt(2), Felt(3), Felt(4)}, b{Felt(5), Felt(6), Felt(7), Felt(8)};
  EXPECT_TRUE(r.advice.map.contains(Poseidon2Hasher::Get().MergeInDomain(a, b, Felt(42))));
}

TEST(V025EventsTest, HqwordToMapKeysByTheHashOfSixteenElements) {
  std::vector<Felt> stack;
  for (uint64_t i = 1; i <= 16; ++i) stack.push_back(Felt(i * 11));
  AdviceProvider advice = V025Advice();
  // The stack input holds 16 values; the id pushes the 16th to the overflow (s16 stays put).
  EventRun r = RunEvent(IdOf(H::kHqwordToMap), stack, std::move(advice));
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  auto it = r.advice.map.find(Poseidon2Hasher::Get().HashElements(stack));
  ASSERT_NE(it, r.advice.map.end());
  EXPECT_EQ(it->second, stack);
}

TEST(V025EventsTest, HpermToMapKeysByThePermutedDigest) {
  const std::vector<Felt> stack = Felts({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  EventRun r = RunEvent(IdOf(H::kHpermToMap), stack, V025Advice());
  HasherState state;
  for (int i = 0; i < 12; ++i) state[i] = stack[i];
  Poseidon2Permute(state);
  auto it = r.advice.map.find(Word{state[0], state[1], state[2], state[3]});
  ASSERT_NE(it, r.advice.map.end());
  EXPECT_EQ(it->second, Felts({1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(V025EventsTest, MapValueToStackNPadsAfterTheValues) {
  const Word key{Felt(9), Felt(8), Felt(7), Felt(6)};
  const std::vector<Felt> stack = Felts({9, 8, 7, 6});
  for (auto [handler, expected] : std::vector<std::pair<H, std::vector<uint64_t>>>{
           {H::kMapValueToStack, {1, 2, 3, 4, 5}},
           {H::kMapValueToStackN, {5, 1, 2, 3, 4, 5}},
           {H::kMapValueToStackN4, {5, 1, 2, 3, 4, 5, 0, 0, 0}},
           {H::kMapValueToStackN8, {5, 1, 2, 3, 4, 5, 0, 0, 0}},
           {H::kMapValueCountToStack, {5}},
           {H::kHasMapKey, {1}},
       }) {
    AdviceProvider advice = V025Advice();
    advice.map[key] = Felts({1, 2, 3, 4, 5});
    EventRun r = RunEvent(IdOf(handler), stack, std::move(advice));
    ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
    EXPECT_THAT(PopOrder(r.advice), ElementsAreArray(expected)) << static_cast<int>(handler);
  }
  EventRun r = RunEvent(IdOf(H::kMapValueCountToStack), Felts({1}), V025Advice());
  EXPECT_EQ(r.trap.kind, TrapKind::kAdviceMapKeyNotFound);
}

TEST(V025EventsTest, MemToMapReadsTheRangeAfterTheKey) {
  EventRun r =
      RunEvent(IdOf(H::kMemToMap), Felts({1, 2, 3, 4, 0, 3}), V025Advice(), "push.5 mem_store.1");
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  auto it = r.advice.map.find(Word{Felt(1), Felt(2), Felt(3), Felt(4)});
  ASSERT_NE(it, r.advice.map.end());
  EXPECT_EQ(it->second, Felts({0, 5, 0}));
}

TEST(V025EventsTest, MemToMapInACalledProcedureReadsThatContextsMemory) {
  // The callee's cell 0 is 9, the root's 5: adv.insert_mem in the callee must read 9 whether
  // the run is one Run() slice or one Step() per cycle (it once read the memory of the context
  // the slice started in).
  AssemblerOptions options;
  options.dialect = Dialect::kV0_25;
  absl::StatusOr<Program> program = Assembler(options).AssembleSource("m.masm", R"(proc callee
  push.9 push.0 mem_store
  push.1 push.0 push.4 push.3 push.2 push.1 adv.insert_mem dropw drop drop
  push.4 push.3 push.2 push.1 adv.push_mapval dropw adv_push swap drop
end
begin
  push.5 push.0 mem_store call.callee
end
)");
  ASSERT_TRUE(program.ok()) << program.status();
  Executor run(*program, {}, V025Advice(), ExecutionOptions{});
  run.Run();
  ASSERT_EQ(run.state(), Executor::State::kFinished) << run.trap().message;
  EXPECT_EQ(run.StackTop(1)[0], Felt(9));
  Executor step(*program, {}, V025Advice(), ExecutionOptions{});
  while (step.state() == Executor::State::kPaused) step.Step();
  ASSERT_EQ(step.state(), Executor::State::kFinished) << step.trap().message;
  EXPECT_EQ(step.StackTop(1)[0], Felt(9));
}

TEST(V025EventsTest, MerkleNodeEventsUseLittleEndianWords) {
  AdviceProvider advice = V025Advice();
  const Word l{Felt(1), Felt(2), Felt(3), Felt(4)}, rr{Felt(5), Felt(6), Felt(7), Felt(8)};
  const Word root = advice.merkle_store.MergeRoots(l, rr);
  EXPECT_EQ(root, Poseidon2Hasher::Get().Merge(l, rr));
  // [d, i, R]: the right child of the root; a following adv_loadw pops element 0 first.
  EventRun r = RunEvent(IdOf(H::kMerkleNodeToStack),
                        {Felt(1), Felt(1), root[0], root[1], root[2], root[3]}, advice);
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({5, 6, 7, 8}));
  // [L, R]: the store gains the tree Merge(L, R), L the top word.
  r = RunEvent(IdOf(H::kMerkleNodeMerge), Felts({5, 6, 7, 8, 1, 2, 3, 4}), V025Advice());
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  absl::StatusOr<Word> left =
      r.advice.merkle_store.GetNode(Poseidon2Hasher::Get().Merge(rr, l), 1, 0);
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_EQ(*left, rr);
}

TEST(V025EventsTest, CoreU64DivPushesQuotientHighFirst) {
  // a = 2^32 * 7 + 100, b = 2^32 + 1: q = 6, r = 2^32 * 7 + 100 - 6 * (2^32 + 1).
  const uint64_t a = (uint64_t{7} << 32) + 100, b = (uint64_t{1} << 32) + 1;
  const uint64_t q = a / b, rem = a % b;
  EventRun r =
      RunEvent(LibraryId("miden::core::math::u64::u64_div"), Felts({1, 1, 100, 7}), V025Advice());
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  EXPECT_THAT(PopOrder(r.advice),
              ElementsAreArray<uint64_t>({q >> 32, q & 0xFFFFFFFF, rem >> 32, rem & 0xFFFFFFFF}));
  r = RunEvent(LibraryId("miden::core::math::u64::u64_div"), Felts({0, 0, 1, 1}), V025Advice());
  EXPECT_EQ(r.trap.kind, TrapKind::kDivideByZero);
}

TEST(V025EventsTest, CoreU128AndU256DivPushRemainderFirst) {
  EventRun r = RunEvent(LibraryId("miden::core::math::u128::u128_div"),
                        Felts({3, 256, 0, 0, 12345, 1280, 0, 16}), V025Advice());
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  EXPECT_THAT(PopOrder(r.advice),
              ElementsAreArray<uint64_t>({9449514, 0, 0, 0, 4291821573, 268435455, 0, 0}));
  // 16 operands: b = 3 * 2^70 + 17, a = 7 * 2^200 + 2^130 + 99 (the last limb is the 16th).
  r = RunEvent(LibraryId("miden::core::math::u256::u256_div"),
               Felts({17, 0, 192, 0, 0, 0, 0, 0, 99, 0, 0, 0, 4, 0, 1792, 0}), V025Advice());
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  EXPECT_THAT(PopOrder(r.advice),
              ElementsAreArray<uint64_t>({0, 0, 0, 0, 477218695, 119304647, 99, 0, 9, 0, 0, 0,
                                          477218588, 2266788295, 1431655764, 1431655765}));
}

TEST(V025EventsTest, FalconDivPushesQuotientThenRemainder) {
  const uint64_t n = (uint64_t{3} << 32) + 5;
  EventRun r = RunEvent(LibraryId("miden::core::crypto::dsa::falcon512_poseidon2::falcon_div"),
                        Felts({3, 5}), V025Advice());
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  const uint64_t q = n / 12289;
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({q >> 32, q & 0xFFFFFFFF, n % 12289}));
}

TEST(V025EventsTest, LowerboundArrayFindsTheFirstWordNotBelowTheKey) {
  // Words [0,0,0,5] at 0 and [0,0,0,9] at 4 (element 3 most significant); v0.16 mem_storew
  // stores the deepest element at the lowest address.
  const std::string prelude = "push.0.0.0.5 mem_storew.0 dropw push.0.0.0.9 mem_storew.4 dropw";
  const uint64_t id = LibraryId("miden::core::collections::sorted_array::lowerbound_array");
  EventRun r = RunEvent(id, Felts({0, 0, 0, 7, 0, 8}), V025Advice(), prelude);
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({4, 0}));
  r = RunEvent(id, Felts({0, 0, 0, 9, 0, 8}), V025Advice(), prelude);
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({4, 1}));
  r = RunEvent(id, Felts({0, 0, 0, 10, 0, 8}), V025Advice(), prelude);
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({8, 0}));
  r = RunEvent(id, Felts({0, 0, 0, 10, 4, 4}), V025Advice());
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({4, 0}));
  r = RunEvent(id, Felts({0, 0, 0, 1, 0, 8}), V025Advice(),
               "push.0.0.0.9 mem_storew.0 dropw push.0.0.0.5 mem_storew.4 dropw");
  EXPECT_EQ(r.trap.kind, TrapKind::kEventFailed);
}

TEST(V025EventsTest, LowerboundKeyValueComparesHalfKeys) {
  // Pairs (key, value) of 8 elements: keys [1,1,0,3] at 0 and [0,0,0,6] at 8.
  const std::string prelude = "push.0.3.0.1 mem_storew.0 dropw push.0.0.0.6 mem_storew.8 dropw";
  // v0.16 push.a.b.c.d leaves d on top, so mem[0..4] = [0, 3, 0, 1]: key [0,3,0,1].
  const uint64_t id = LibraryId("miden::core::collections::sorted_array::lowerbound_key_value");
  // Half key [_, _, 0, 1] with use_full_key = 0 matches the first key.
  EventRun r = RunEvent(id, Felts({9, 9, 0, 1, 0, 16, 0}), V025Advice(), prelude);
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({0, 1}));
  // The full key [9,9,0,1] is above [0,3,0,1] and below [0,0,0,6].
  r = RunEvent(id, Felts({9, 9, 0, 1, 0, 16, 1}), V025Advice(), prelude);
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({8, 0}));
  r = RunEvent(id, Felts({9, 9, 0, 1, 0, 16, 2}), V025Advice(), prelude);
  EXPECT_EQ(r.trap.kind, TrapKind::kEventFailed);
}

TEST(V025EventsTest, SmtPeekReturnsTheValueOfTheKey) {
  AdviceProvider advice = V025Advice();
  // An empty depth-64 tree: every key has the empty value.
  const Word root = EmptySubtreeRoot(Poseidon2Hasher::Get(), 64);
  std::vector<Felt> stack = Felts({1, 2, 3, 4});
  stack.insert(stack.end(), root.begin(), root.end());
  EventRun r = RunEvent(LibraryId("miden::core::collections::smt::smt_peek"), stack, advice);
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  EXPECT_THAT(PopOrder(r.advice), ElementsAreArray<uint64_t>({0, 0, 0, 0}));
}

TEST(V025EventsTest, DebugEventsAreNoOps) {
  for (absl::string_view name :
       {"miden::core::debug::print_stack", "readonly::miden_debug::frame_start"}) {
    EventRun r = RunEvent(LibraryId(name), {}, V025Advice());
    EXPECT_EQ(r.state, Executor::State::kFinished) << name << ": " << r.trap.message;
    EXPECT_TRUE(r.advice.stack.empty());
  }
}

TEST(V025EventsTest, PrecompileEventsAreAnsweredByTheVm) {
  // keccak256 of the empty input (ptr 0, 0 bytes: no memory read): the digest's LE u32 limbs,
  // limb 0 popped first.
  const uint64_t keccak = LibraryId("miden::core::hash::keccak256::hash_bytes");
  EventRun r = RunEvent(keccak, Felts({0, 0}), V025Advice());
  ASSERT_EQ(r.state, Executor::State::kFinished) << r.trap.message;
  EXPECT_THAT(PopOrder(r.advice),
              ElementsAreArray<uint64_t>({21418693, 1008990086, 2994568850, 3221473244, 1404436709,
                                          992445130, 81328763, 1889830237}));
  // A handler's error traps, naming the event: 8 bytes of never-written memory.
  r = RunEvent(LibraryId("miden::core::hash::sha512::hash_bytes"), Felts({0, 8}), V025Advice());
  EXPECT_EQ(r.trap.kind, TrapKind::kEventFailed);
  EXPECT_THAT(r.trap.message, HasSubstr("event miden::core::hash::sha512::hash_bytes failed: "
                                        "sha512: failed to read the input: failed to read memory "
                                        "at address 0"));
}

TEST(V025EventsTest, UnansweredEventsAreErrorsThatNameThem) {
  EventRun r = RunEvent(12345, {}, V025Advice());
  EXPECT_EQ(r.trap.kind, TrapKind::kEventFailed);
  EXPECT_THAT(r.trap.message, HasSubstr("no event handler registered for event id 12345"));
}

TEST(V025EventsTest, MerkleStoreInputsBuildThePoseidon2RootsOfTheMasmExample) {
  // miden-vm/masm-examples/merkle_store/merkle_store.{inputs,masm} @v0.25.7: the three trees of
  // the example's .inputs and the roots its MASM hard-codes.
  auto leaf = [](uint64_t v) { return Word{Felt(v), Felt(0), Felt(0), Felt(0)}; };
  auto values = [](const Word& w) {
    return std::vector<uint64_t>{w[0].value(), w[1].value(), w[2].value(), w[3].value()};
  };
  MerkleStore store(Poseidon2Hasher::Get());
  absl::StatusOr<Word> pmt = store.AddInput({.kind = MerkleStoreInput::Kind::kPartialMerkleTree,
                                             .indices = {2, 0, 2, 1, 1, 1},
                                             .leaves = {leaf(20), leaf(21), leaf(11)}});
  ASSERT_TRUE(pmt.ok()) << pmt.status();
  EXPECT_THAT(values(*pmt),
              ElementsAreArray<uint64_t>({12598010592505582824ULL, 868370131607961867ULL,
                                          13428921982874124294ULL, 13514551084444143236ULL}));
  absl::StatusOr<Word> smt = store.AddInput({.kind = MerkleStoreInput::Kind::kSparseMerkleTree,
                                             .indices = {0, 1, 3},
                                             .leaves = {leaf(20), leaf(21), leaf(23)}});
  ASSERT_TRUE(smt.ok()) << smt.status();
  EXPECT_THAT(values(*smt),
              ElementsAreArray<uint64_t>({7504381463224585554ULL, 3191971290185126131ULL,
                                          213169417210918065ULL, 17616398227807096838ULL}));
  absl::StatusOr<Word> tree = store.AddInput({.kind = MerkleStoreInput::Kind::kMerkleTree,
                                              .indices = {},
                                              .leaves = {leaf(20), leaf(21), leaf(22), leaf(23)}});
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_THAT(values(*tree),
              ElementsAreArray<uint64_t>({6611496865107420098ULL, 2171421300812663290ULL,
                                          5052678114877406371ULL, 9772299691978421006ULL}));
}

TEST(V025EventsTest, HPermP2PermutesTheTopTwelveInStackOrder) {
  // v0.16-assembled `hperm` with its HPERM re-targeted at kHPermP2: state[i] = s_i.
  AssemblerOptions options;
  options.dialect = Dialect::kV0_16;
  absl::StatusOr<Program> program = Assembler(options).AssembleSource("h.masm", "begin hperm end");
  ASSERT_TRUE(program.ok()) << program.status();
  int patched = 0;
  for (Instruction& in : program->code) {
    if (in.opcode == Opcode::kHPerm) {
      in.opcode = Opcode::kHPermP2;
      ++patched;
    }
  }
  ASSERT_EQ(patched, 1);
  program->dialect = &GetDialectSpec(Dialect::kV0_25);
  std::vector<Felt> stack;
  for (uint64_t i = 0; i < 12; ++i) stack.push_back(Felt(i));
  Executor exec(*program, stack, V025Advice(), ExecutionOptions{});
  exec.Run();
  ASSERT_EQ(exec.state(), Executor::State::kFinished) << exec.trap().message;
  const std::vector<Felt> top = exec.StackTop(12);
  const uint64_t expected[12] = {
      0xf292ab67c0f14b03, 0x0a32f1b37656544c, 0x053c61ab895498de, 0x02ff92e55b196ffb,
      0x58176e8f6f58cab2, 0xb0aa1206e7aec0f8, 0xe90c13f3dce83ca4, 0xf4da15333edf39c2,
      0x23b701c053c2ca6c, 0xd233d593dcdfbf58, 0x4effa5f9516fb52e, 0x0aaf4489f1f40166,
  };
  for (int i = 0; i < 12; ++i) EXPECT_EQ(top[i].value(), expected[i]) << i;
}

}  // namespace
}  // namespace flamefleet::vm
