#include "profile/profile.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/diff.h"

namespace flamefleet::profile {
namespace {

using ::testing::HasSubstr;

using NodeId = Profile::NodeId;

// Adds `cycles` to the path `frames` (root first).
NodeId AddPath(Profile& p, const std::vector<std::string>& frames, uint64_t cycles) {
  NodeId node = Profile::kRoot;
  for (const std::string& f : frames) node = p.Child(node, p.InternFrame(f));
  p.AddSelf(node, cycles);
  return node;
}

// Returns the node at `frames` or kNoNode, without creating anything.
NodeId Find(const Profile& p, const std::vector<std::string>& frames) {
  NodeId node = Profile::kRoot;
  for (const std::string& f : frames) {
    NodeId found = Profile::kNoNode;
    for (NodeId n = 1; n < p.num_nodes(); ++n) {
      if (p.parent(n) == node && p.frame_name(p.frame(n)) == f) found = n;
    }
    if (found == Profile::kNoNode) return found;
    node = found;
  }
  return node;
}

TEST(ProfileTest, InternReturnsSameIdForSameName) {
  Profile p;
  const auto a = p.InternFrame("std::math::u64::add");
  const auto b = p.InternFrame("$exec::$main");
  EXPECT_NE(a, b);
  EXPECT_EQ(p.InternFrame(std::string("std::math::u64::add")), a);
  EXPECT_EQ(p.frame_name(b), "$exec::$main");
  EXPECT_EQ(p.num_frames(), 2u);
}

TEST(ProfileTest, AddNewFrameIsFoundByLaterInterning) {
  Profile p;
  const auto a = p.InternFrame("a");
  const auto b = p.AddNewFrame("b");
  const auto empty = p.AddNewFrame("");
  EXPECT_EQ(p.num_frames(), 3u);
  EXPECT_EQ(p.frame_name(b), "b");
  EXPECT_EQ(p.InternFrame("b"), b);
  EXPECT_EQ(p.InternFrame(""), empty);
  EXPECT_EQ(p.InternFrame("a"), a);
  const auto c = p.InternFrame("c");
  EXPECT_EQ(c, 3u);
  const auto d = p.AddNewFrame("d");
  Profile copy = p;  // copies re-intern every name
  EXPECT_EQ(copy.InternFrame("d"), d);
  EXPECT_EQ(copy.InternFrame("b"), b);
  EXPECT_EQ(copy.num_frames(), 5u);
}

TEST(ProfileTest, InternedNamesSurviveManyInsertionsAndMoves) {
  Profile p;
  std::vector<Profile::FrameId> ids;
  for (int i = 0; i < 20000; ++i) ids.push_back(p.InternFrame("frame_" + std::to_string(i)));
  Profile moved = std::move(p);
  for (int i = 0; i < 20000; i += 997) {
    EXPECT_EQ(moved.frame_name(ids[i]), "frame_" + std::to_string(i));
  }
}

TEST(ProfileTest, ChildFindsOrCreates) {
  Profile p;
  const auto f = p.InternFrame("f");
  const NodeId a = p.Child(Profile::kRoot, f);
  EXPECT_EQ(p.Child(Profile::kRoot, f), a);
  const NodeId b = p.Child(a, f);
  EXPECT_NE(a, b);
  EXPECT_EQ(p.parent(b), a);
  EXPECT_EQ(p.frame(b), f);
  EXPECT_EQ(p.num_nodes(), 3u);
  EXPECT_EQ(p.Depth(b), 2);
}

TEST(ProfileTest, SelfAndInclusiveAndTotal) {
  Profile p;
  AddPath(p, {"a", "b"}, 5);
  AddPath(p, {"a"}, 2);
  AddPath(p, {"a", "c"}, 3);
  EXPECT_EQ(p.total(), 10u);
  const auto incl = p.InclusiveCycles();
  EXPECT_EQ(incl[Profile::kRoot], 10u);
  EXPECT_EQ(incl[Find(p, {"a"})], 10u);
  EXPECT_EQ(p.self(Find(p, {"a"})), 2u);
  EXPECT_EQ(incl[Find(p, {"a", "c"})], 3u);
}

TEST(ProfileTest, AdjacentMatchingMergesOnlyTheLastChild) {
  Profile p(Profile::ChildMatching::kAdjacent);
  AddPath(p, {"a", "b"}, 1);
  AddPath(p, {"a", "b"}, 1);  // adjacent: merged
  AddPath(p, {"a", "c"}, 1);
  AddPath(p, {"a", "b"}, 1);     // not adjacent any more: new node
  EXPECT_EQ(p.num_nodes(), 5u);  // root, a, b, c, b
  EXPECT_EQ(p.self(2), 2u);
}

TEST(ProfileTest, MergeIsExactByNamePath) {
  Profile a, b;
  AddPath(a, {"x", "y"}, 7);
  AddPath(a, {"x"}, 1);
  b.InternFrame("unrelated");  // different frame ids in b
  AddPath(b, {"x", "y"}, 3);
  AddPath(b, {"z"}, UINT64_C(1) << 40);
  a.MergeFrom(b);
  EXPECT_EQ(a.total(), 11u + (UINT64_C(1) << 40));
  EXPECT_EQ(a.self(Find(a, {"x", "y"})), 10u);
  EXPECT_EQ(a.self(Find(a, {"z"})), UINT64_C(1) << 40);
  // Merging is commutative in sums.
  Profile c;
  c.MergeFrom(b);
  EXPECT_EQ(c.total(), b.total());
}

// Issue #12: an empty name as the very first frame read an empty block list.
TEST(ProfileTest, EmptyFrameNameInternsSafely) {
  Profile p;
  const Profile::FrameId empty = p.InternFrame("");
  EXPECT_EQ(p.frame_name(empty), "");
  EXPECT_EQ(p.InternFrame(""), empty);
  const Profile::FrameId x = p.InternFrame("x");
  EXPECT_NE(x, empty);
  EXPECT_EQ(p.frame_name(x), "x");
  p.AddSelf(p.Child(p.Child(Profile::kRoot, empty), x), 3);
  Profile copy = p;  // re-interns the names into the copy's arena
  EXPECT_EQ(copy.frame_name(copy.frame(1)), "");
  EXPECT_EQ(copy.frame_name(copy.frame(2)), "x");
  Profile merged;
  merged.MergeFrom(p);
  EXPECT_EQ(merged.total(), 3u);
}

TEST(ProfileTest, AddSelfCheckedRefusesToWrapTheTotal) {
  Profile p;
  const Profile::NodeId a = p.Child(Profile::kRoot, p.InternFrame("a"));
  ASSERT_TRUE(p.AddSelfChecked(a, UINT64_MAX - 1));
  EXPECT_FALSE(p.AddSelfChecked(Profile::kRoot, 2));
  EXPECT_EQ(p.total(), UINT64_MAX - 1);
  EXPECT_EQ(p.self(Profile::kRoot), 0u);
  EXPECT_TRUE(p.AddSelfChecked(Profile::kRoot, 1));
  EXPECT_EQ(p.total(), UINT64_MAX);
}

TEST(ProfileTest, MergeFromCheckedRefusesOverflowAndMergesNothing) {
  Profile a, b;
  AddPath(a, {"x"}, UINT64_MAX / 2 + 1);
  AddPath(b, {"y"}, UINT64_MAX / 2 + 1);
  const absl::Status status = a.MergeFromChecked(b);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("overflow"));
  EXPECT_EQ(a.total(), UINT64_MAX / 2 + 1);
  EXPECT_EQ(a.num_nodes(), 2u);  // nothing of b was added
  Profile c;
  AddPath(c, {"y"}, UINT64_MAX / 2);
  ASSERT_TRUE(a.MergeFromChecked(c).ok());
  EXPECT_EQ(a.total(), UINT64_MAX);
}

TEST(ProfileTest, CopyIsDeep) {
  Profile a;
  AddPath(a, {"x", "y"}, 7);
  Profile b = a;
  AddPath(b, {"x", "y"}, 1);
  EXPECT_EQ(a.total(), 7u);
  EXPECT_EQ(b.total(), 8u);
  EXPECT_EQ(b.frame_name(b.frame(Find(b, {"x"}))), "x");
}

TEST(ProfileTest, PrunedKeepsTotalsAndCountsHiddenDescendants) {
  Profile p;
  AddPath(p, {"main", "big"}, 100);
  AddPath(p, {"main", "small", "a"}, 2);
  AddPath(p, {"main", "small", "b"}, 1);
  AddPath(p, {"main", "tiny"}, 1);
  const Profile pruned = p.Pruned(10);
  EXPECT_EQ(pruned.total(), p.total());
  const NodeId main = Find(pruned, {"main"});
  ASSERT_NE(main, Profile::kNoNode);
  EXPECT_EQ(Find(pruned, {"main", "small"}), Profile::kNoNode);
  const Profile::Hidden h = pruned.hidden(main);
  EXPECT_EQ(h.nodes, 4u);  // small, a, b, tiny
  EXPECT_EQ(h.cycles, 4u);
  EXPECT_EQ(pruned.InclusiveCycles()[main], 104u);
  // Pruning again accumulates into the parent's hidden count.
  const Profile again = pruned.Pruned(200);
  EXPECT_EQ(again.num_nodes(), 1u);
  EXPECT_EQ(again.hidden(Profile::kRoot).nodes, 6u);
  EXPECT_EQ(again.total(), p.total());
}

TEST(ProfileTest, ReversedMergesAtTheLeaf) {
  Profile p;
  AddPath(p, {"a", "x"}, 3);
  AddPath(p, {"b", "x"}, 4);
  AddPath(p, {"b"}, 1);
  const Profile r = p.Reversed(0);
  EXPECT_EQ(r.total(), 8u);
  const NodeId x = Find(r, {"x"});
  ASSERT_NE(x, Profile::kNoNode);
  EXPECT_EQ(r.InclusiveCycles()[x], 7u);
  EXPECT_EQ(r.self(Find(r, {"x", "b"})), 4u);
  EXPECT_EQ(r.self(Find(r, {"b"})), 1u);
}

TEST(ProfileTest, ReversedPrunesWhileBuilding) {
  Profile p;
  AddPath(p, {"a", "x"}, 50);
  AddPath(p, {"b", "x"}, 2);
  AddPath(p, {"c", "y"}, 1);
  const Profile r = p.Reversed(10);
  EXPECT_EQ(r.total(), 53u);
  EXPECT_EQ(Find(r, {"y"}), Profile::kNoNode);
  EXPECT_EQ(Find(r, {"x", "b"}), Profile::kNoNode);
  EXPECT_EQ(r.hidden(Profile::kRoot).cycles, 1u);
  EXPECT_EQ(r.hidden(Find(r, {"x"})).cycles, 2u);
}

TEST(ProfileDiffTest, UnionTreeWithBeforeAndAfter) {
  Profile before, after;
  AddPath(before, {"main", "old"}, 10);
  AddPath(before, {"main", "same"}, 5);
  AddPath(after, {"main", "same"}, 8);
  AddPath(after, {"main", "new"}, 4);
  const ProfileDiff d = ProfileDiff::Compute(before, after);
  const Profile& t = d.tree();
  const NodeId old_node = Find(t, {"main", "old"});
  const NodeId new_node = Find(t, {"main", "new"});
  const NodeId same = Find(t, {"main", "same"});
  const NodeId main = Find(t, {"main"});
  EXPECT_TRUE(d.is_vanished(old_node));
  EXPECT_TRUE(d.is_new(new_node));
  EXPECT_FALSE(d.is_new(same));
  EXPECT_EQ(d.before_self(same), 5u);
  EXPECT_EQ(d.after_self(same), 8u);
  EXPECT_EQ(d.before_inclusive(main), 15u);
  EXPECT_EQ(d.after_inclusive(main), 12u);
  EXPECT_EQ(d.before_total(), 15u);
  EXPECT_EQ(d.after_total(), 12u);
}

}  // namespace
}  // namespace flamefleet::profile
