#include "vm/crypto/hasher.h"

#include <atomic>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "vm/assembler/mast.h"
#include "vm/crypto/merkle_store.h"
#include "vm/crypto/rpo.h"
#include "vm/dialect.h"
#include "vm/dialects/v0_16/v0_16.h"

namespace flamefleet::vm {
namespace {

Word W(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return Word{Felt(a), Felt(b), Felt(c), Felt(d)};
}

// A deterministic pseudo-random felt stream (splitmix64), so failures reproduce.
class FeltStream {
 public:
  Felt Next() {
    uint64_t z = (x_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return Felt(z ^ (z >> 31));
  }
  Word NextWord() { return Word{Next(), Next(), Next(), Next()}; }

 private:
  uint64_t x_ = 13;
};

// An RPO hasher that counts its calls, to show which callers go through the interface.
class CountingHasher final : public Hasher {
 public:
  absl::string_view name() const override { return "counting-rpo256"; }
  int rate_start() const override { return RpoHasher::Get().rate_start(); }
  int digest_start() const override { return RpoHasher::Get().digest_start(); }
  void Permute(HasherState& state) const override {
    ++calls;
    RpoHasher::Get().Permute(state);
  }
  Word HashElements(std::span<const Felt> elements) const override {
    ++calls;
    return RpoHasher::Get().HashElements(elements);
  }
  Word Merge(const Word& a, const Word& b) const override {
    ++calls;
    return RpoHasher::Get().Merge(a, b);
  }
  Word MergeInDomain(const Word& a, const Word& b, Felt domain) const override {
    ++calls;
    return RpoHasher::Get().MergeInDomain(a, b, domain);
  }
  mutable std::atomic<int> calls{0};
};

TEST(HasherTest, ClassicDialectHashesWithRpo) {
  EXPECT_EQ(GetDialectSpec(Dialect::kV0_16).hasher, &RpoHasher::Get());
  EXPECT_EQ(GetDialectSpec(Dialect::kV0_16).hasher->name(), "rpo256");
}

TEST(HasherTest, RpoHasherHashElementsMatchesPublishedVectorsAndFreeFunction) {
  const Hasher& h = RpoHasher::Get();
  // hash_test_vectors of 0xMiden/crypto v0.15.9 (see rpo_test.cc): HashElements([0, 1]) and
  // HashElements([0, ..., 18]).
  EXPECT_EQ(
      h.HashElements(std::vector<Felt>{Felt(0), Felt(1)}),
      W(10139303045932500183u, 2293916558361785533u, 15496361415980502047u, 17904948502382283940u));
  std::vector<Felt> nineteen;
  for (uint64_t k = 0; k <= 18; ++k) nineteen.push_back(Felt(k));
  EXPECT_EQ(h.HashElements(nineteen), W(13205273108219124830u, 2524898486192849221u,
                                        14618764355375283547u, 10615614265042186874u));
  FeltStream rng;
  for (int len = 0; len <= 40; ++len) {
    std::vector<Felt> input;
    for (int k = 0; k < len; ++k) input.push_back(rng.Next());
    EXPECT_EQ(h.HashElements(input), HashElements(input)) << "len " << len;
  }
}

TEST(HasherTest, RpoHasherPermuteMatchesFreeFunctionOnBothPaths) {
  const Hasher& h = RpoHasher::Get();
  const bool has_avx2 = UseRpoAvx2ForTest(true);
  FeltStream rng;
  for (bool avx2 : {false, true}) {
    if (avx2 && !has_avx2) continue;
    UseRpoAvx2ForTest(avx2);
    for (int trial = 0; trial < 64; ++trial) {
      HasherState input;
      for (Felt& f : input) f = rng.Next();
      HasherState via_interface = input;
      h.Permute(via_interface);
      RpoState via_free = input;
      Permute(via_free);
      EXPECT_EQ(via_interface, via_free) << "avx2 " << avx2 << " trial " << trial;
    }
  }
  UseRpoAvx2ForTest(true);
}

TEST(HasherTest, RpoHasherMergeAndMergeInDomainMatchFreeFunctions) {
  const Hasher& h = RpoHasher::Get();
  FeltStream rng;
  for (int trial = 0; trial < 32; ++trial) {
    const Word a = rng.NextWord(), b = rng.NextWord();
    EXPECT_EQ(h.Merge(a, b), Merge(a, b));
    EXPECT_EQ(h.MergeInDomain(a, b, Felt(0)), Merge(a, b));
    for (uint64_t domain : {1u, 7u, 8u, 80u, 0xFFFFFFFFu}) {
      EXPECT_EQ(h.MergeInDomain(a, b, Felt(domain)), MergeInDomain(a, b, Felt(domain)))
          << "domain " << domain;
    }
  }
}

TEST(HasherTest, MerkleStoreHashesThroughItsHasher) {
  CountingHasher counting;
  MerkleStore store(counting);  // may build the hasher's empty-subtree table
  const int constructed = counting.calls.load();
  const Word root = store.MergeRoots(W(1, 0, 0, 0), W(2, 0, 0, 0));
  EXPECT_EQ(root, Merge(W(1, 0, 0, 0), W(2, 0, 0, 0)));
  EXPECT_GT(counting.calls.load(), constructed);
  const int before = counting.calls.load();
  EXPECT_EQ(ComputeMerkleRoot(counting, W(1, 0, 0, 0), std::vector<Word>{W(2, 0, 0, 0)}, 0), root);
  EXPECT_GT(counting.calls.load(), before);
  EXPECT_EQ(EmptySubtreeRoot(counting, 5), EmptySubtreeRoot(RpoHasher::Get(), 5));
}

TEST(HasherTest, MastForestDigestsThroughItsHasher) {
  CountingHasher counting;
  MastForest forest(counting, v0_16::MastRules(), v0_16::WireOpcodes());
  MastNode block;
  block.kind = MastKind::kBlock;
  block.ops.push_back(LoweredOp{});
  block.origins.push_back(OpOrigin{});
  const uint32_t id = forest.AddNode(block);
  EXPECT_EQ(forest.nodes[id].digest,
            BlockDigest(block.ops, v0_16::MastRules(), v0_16::WireOpcodes(), RpoHasher::Get()));
  EXPECT_GT(counting.calls.load(), 0);
}

}  // namespace
}  // namespace flamefleet::vm
