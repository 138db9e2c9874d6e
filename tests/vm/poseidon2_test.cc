#include "vm/crypto/poseidon2.h"

#include <cstdint>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vm/assembler/opcodes.h"
#include "vm/dialect.h"
#include "vm/felt.h"

namespace flamefleet::vm {
namespace {

using ::testing::ElementsAreArray;

std::vector<uint64_t> Values(const Word& w) {
  return {w[0].value(), w[1].value(), w[2].value(), w[3].value()};
}

Word MakeWord(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return Word{Felt(a), Felt(b), Felt(c), Felt(d)};
}

std::vector<Felt> Felts(std::initializer_list<uint64_t> values) {
  std::vector<Felt> out;
  for (uint64_t v : values) out.push_back(Felt(v));
  return out;
}

const Hasher& P2() { return Poseidon2Hasher::Get(); }

// The digest of a basic block with one op group of ops (op k of a group is opcode << 7k), as
// vm/assembler/mast.cc builds it: the batch's 8 group felts, unused groups zero.
Word OneGroupBlockDigest(std::initializer_list<Opcode> ops) {
  const WireOpcodeTable& wire = *GetDialectSpec(Dialect::kV0_25).wire;
  uint64_t group = 0;
  int k = 0;
  for (Opcode op : ops) {
    group |= static_cast<uint64_t>(wire[OpcodeIndex(op)]) << (7 * k++);
  }
  std::vector<Felt> groups(8, Felt(0));
  groups[0] = Felt(group);
  return P2().HashElements(groups);
}

constexpr Felt kJoinDomain(0x57);

TEST(Poseidon2Test, PermutesZeroToElevenToTheUpstreamVector) {
  // miden-crypto v0.28.0 poseidon2/test.rs permutation_test_vector (= Plonky3's test of
  // default_goldilocks_poseidon2_12).
  HasherState state;
  for (int i = 0; i < kHasherStateWidth; ++i) state[i] = Felt(static_cast<uint64_t>(i));
  Poseidon2Permute(state);
  const uint64_t expected[kHasherStateWidth] = {
      0xf292ab67c0f14b03, 0x0a32f1b37656544c, 0x053c61ab895498de, 0x02ff92e55b196ffb,
      0x58176e8f6f58cab2, 0xb0aa1206e7aec0f8, 0xe90c13f3dce83ca4, 0xf4da15333edf39c2,
      0x23b701c053c2ca6c, 0xd233d593dcdfbf58, 0x4effa5f9516fb52e, 0x0aaf4489f1f40166,
  };
  for (int i = 0; i < kHasherStateWidth; ++i) EXPECT_EQ(state[i].value(), expected[i]) << i;
}

TEST(Poseidon2Test, HasherPermuteEqualsFreeFunction) {
  HasherState a, b;
  for (int i = 0; i < kHasherStateWidth; ++i) {
    a[i] = b[i] = Felt(Felt::kModulus - 1 - static_cast<uint64_t>(i) * 0x123456789ULL);
  }
  Poseidon2Permute(a);
  P2().Permute(b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(P2().name(), "poseidon2");
}

TEST(Poseidon2Test, OutputIsCanonicalForLargeInputs) {
  HasherState state;
  state.fill(Felt(Felt::kModulus - 1));
  for (int round = 0; round < 100; ++round) {
    Poseidon2Permute(state);
    for (Felt f : state) ASSERT_LT(f.value(), Felt::kModulus);
  }
}

TEST(Poseidon2Test, JoinProgramDigestsMatchUpstreamTraceSnapshot) {
  // processor/src/trace/parallel/tests.rs join_program @v0.25.7 and its snapshot
  // test_trace_generation_at_fragment_boundaries__case_01.
  const Word mul = OneGroupBlockDigest({Opcode::kMul});
  const Word add = OneGroupBlockDigest({Opcode::kAdd});
  const Word swap = OneGroupBlockDigest({Opcode::kSwap});
  EXPECT_THAT(Values(mul),
              ElementsAreArray<uint64_t>({14618787401296499486ULL, 12175440663040620259ULL,
                                          17580394656599216612ULL, 9332791485604804823ULL}));
  EXPECT_THAT(Values(add),
              ElementsAreArray<uint64_t>({1942941126776981551ULL, 9461460041610899538ULL,
                                          7600020670677266955ULL, 3257731577738044347ULL}));
  EXPECT_THAT(Values(swap),
              ElementsAreArray<uint64_t>({16913455875204140146ULL, 8451315773087502901ULL,
                                          3716949716844628593ULL, 10394526050930609580ULL}));
  const Word inner = P2().MergeInDomain(add, swap, kJoinDomain);
  EXPECT_THAT(Values(inner),
              ElementsAreArray<uint64_t>({11950369617180951798ULL, 9444935041463352282ULL,
                                          8315531457715846029ULL, 9889393354952375157ULL}));
  const Word program = P2().MergeInDomain(mul, inner, kJoinDomain);
  EXPECT_THAT(Values(program),
              ElementsAreArray<uint64_t>({10033257784419832427ULL, 14686140193024196894ULL,
                                          15436783799654791584ULL, 11131623826151749048ULL}));
}

TEST(Poseidon2Test, DynAndDynCallDigestsAreMergeInDomainOfZeroWords) {
  // core/src/mast/node/dyn_node.rs @v0.25.7 (dyn_hash_is_correct in core/src/mast/tests.rs).
  EXPECT_THAT(Values(P2().MergeInDomain(Word{}, Word{}, Felt(0x58))),
              ElementsAreArray<uint64_t>({16952228088962355159ULL, 5793482471479538911ULL,
                                          14446299416172848527ULL, 13522295374716441620ULL}));
  EXPECT_THAT(Values(P2().MergeInDomain(Word{}, Word{}, Felt(0x5C))),
              ElementsAreArray<uint64_t>({16830415514927835337ULL, 12164645914672292987ULL,
                                          13192574193032437705ULL, 4604554596675732269ULL}));
}

TEST(Poseidon2Test, DynDigestsOfTheV025MastRulesAgree) {
  const DialectSpec& spec = GetDialectSpec(Dialect::kV0_25);
  EXPECT_EQ(spec.hasher, &Poseidon2Hasher::Get());
}

TEST(Poseidon2Test, HashOfEmptyInputIsTheZeroWord) { EXPECT_EQ(P2().HashElements({}), Word{}); }

TEST(Poseidon2Test, HashElementsMatchesDerivedVectors) {
  EXPECT_THAT(Values(P2().HashElements(Felts({0}))),
              ElementsAreArray<uint64_t>({817562949342896344ULL, 12393444655129944760ULL,
                                          7989133384081196518ULL, 13331289818488258375ULL}));
  EXPECT_THAT(Values(P2().HashElements(Felts({0, 1}))),
              ElementsAreArray<uint64_t>({10769843608148867614ULL, 17440670753815548906ULL,
                                          154517788046673341ULL, 3721376671848532542ULL}));
  EXPECT_THAT(Values(P2().HashElements(Felts({1, 2, 3, 4}))),
              ElementsAreArray<uint64_t>({14206540680072267069ULL, 9571949196318390099ULL,
                                          5950603493574130513ULL, 3457190364553631046ULL}));
  EXPECT_THAT(Values(P2().HashElements(Felts({1, 2, 3, 4, 5, 6, 7, 8}))),
              ElementsAreArray<uint64_t>({12175850710574191021ULL, 13800397389470483709ULL,
                                          10717919348058185020ULL, 5151936205780666844ULL}));
}

TEST(Poseidon2Test, MergeEqualsHashOfEightElements) {
  const Word a = MakeWord(1, 2, 3, 4), b = MakeWord(5, 6, 7, 8);
  EXPECT_EQ(P2().Merge(a, b), P2().HashElements(Felts({1, 2, 3, 4, 5, 6, 7, 8})));
  EXPECT_EQ(P2().Merge(a, b), P2().MergeInDomain(a, b, Felt(0)));
  EXPECT_NE(P2().Merge(a, b), P2().Merge(b, a));
}

TEST(Poseidon2Test, HashElementsAbsorbsInBlocksOfEight) {
  // Ten elements: a full block, then a zero-filled partial one; the length 10 mod 8 = 2 goes
  // into state[8] before the first permutation.
  std::vector<Felt> elements = Felts({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  HasherState state{};
  state[8] = Felt(2);
  for (int i = 0; i < 8; ++i) state[i] = elements[i];
  Poseidon2Permute(state);
  state[0] = Felt(9);
  state[1] = Felt(10);
  for (int i = 2; i < 8; ++i) state[i] = Felt(0);
  Poseidon2Permute(state);
  EXPECT_EQ(P2().HashElements(elements), (Word{state[0], state[1], state[2], state[3]}));
}

TEST(Poseidon2Test, SyscallOfCallerBlockMatchesDerivedDigest) {
  // env_ops.rs `caller` test @v0.25.7: foo = [CALLER] (one group), SYSCALL domain 0x68.
  const Word foo = OneGroupBlockDigest({Opcode::kCallerAny});
  EXPECT_THAT(Values(foo),
              ElementsAreArray<uint64_t>({10445431681561042636ULL, 317389030305965894ULL,
                                          5740135893056104779ULL, 1535961078340380052ULL}));
  EXPECT_THAT(Values(P2().MergeInDomain(foo, Word{}, Felt(0x68))),
              ElementsAreArray<uint64_t>({801716320522881597ULL, 1003970481894184430ULL,
                                          825403729357249437ULL, 12056788342160990837ULL}));
}

}  // namespace
}  // namespace flamefleet::vm
