#include "profile/profile_proto.h"

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "bench/folded_gen.h"
#include "flamefleet/v1/profile.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "profile/folded.h"
#include "profile/profile.h"

namespace flamefleet::profile {
namespace {

using ::testing::HasSubstr;

void AddPath(Profile& p, const std::vector<std::string>& frames, uint64_t cycles) {
  Profile::NodeId node = Profile::kRoot;
  for (const std::string& f : frames) node = p.Child(node, p.InternFrame(f));
  p.AddSelf(node, cycles);
}

std::string Folded(const Profile& p) {
  std::ostringstream out;
  EXPECT_TRUE(WriteFolded(p, out).ok());
  return out.str();
}

Profile Sample() {
  Profile p;
  AddPath(p, {"$exec::$main"}, 3);
  AddPath(p, {"$exec::$main", "std::math::u64::add"}, 12);
  AddPath(p, {"$exec::$main", "std::math::u64::mul"}, 40);
  AddPath(p, {"$exec::$main", "std::math::u64::mul", "std::math::u64::add"}, 7);
  AddPath(p, {}, 2);  // cycles on the root ([unknown])
  return p;
}

TEST(ProfileProtoTest, RoundTripKeepsNodesFramesAndCycles) {
  const Profile p = Sample();
  absl::StatusOr<Profile> back = ParseProfile(SerializeProfile(p));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->total(), 64u);
  ASSERT_EQ(back->num_nodes(), p.num_nodes());
  for (Profile::NodeId n = 1; n < p.num_nodes(); ++n) {
    EXPECT_EQ(back->parent(n), p.parent(n));
    EXPECT_EQ(back->frame_name(back->frame(n)), p.frame_name(p.frame(n)));
    EXPECT_EQ(back->self(n), p.self(n));
  }
  EXPECT_EQ(back->self(Profile::kRoot), 2u);
  EXPECT_EQ(Folded(*back), Folded(p));
}

TEST(ProfileProtoTest, ToProtoFillsColumnsAndTotal) {
  v1::Profile proto;
  ToProto(Sample(), &proto);
  EXPECT_EQ(proto.parent_size(), 5);
  EXPECT_EQ(proto.frame_size(), 5);
  EXPECT_EQ(proto.self_cycles_size(), 5);
  EXPECT_EQ(proto.frames_size(), 3);
  EXPECT_EQ(proto.total_cycles(), 64u);
}

TEST(ProfileProtoTest, EmptyProfileRoundTrips) {
  absl::StatusOr<Profile> back = ParseProfile(SerializeProfile(Profile()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->total(), 0u);
  EXPECT_EQ(back->num_nodes(), 1u);
  absl::StatusOr<Profile> from_empty_message = ParseProfile("");
  ASSERT_TRUE(from_empty_message.ok()) << from_empty_message.status();
  EXPECT_EQ(from_empty_message->total(), 0u);
}

TEST(ProfileProtoTest, HiddenCyclesBecomeSelfCyclesOfTheirNode) {
  Profile p = Sample();
  p.AddHidden(1, Profile::Hidden{.nodes = 4, .cycles = 100});
  absl::StatusOr<Profile> back = ParseProfile(SerializeProfile(p));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->total(), p.total());
  EXPECT_EQ(back->self(1), p.self(1) + 100);
}

TEST(ProfileProtoTest, DuplicateChildrenAreMerged) {
  v1::Profile proto;
  proto.add_frames("a");
  for (uint32_t i = 0; i < 3; ++i) {
    proto.add_parent(0);
    proto.add_frame(0);
    proto.add_self_cycles(i == 0 ? 0 : 5);
  }
  proto.set_total_cycles(10);
  absl::StatusOr<Profile> p = FromProto(proto);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->num_nodes(), 2u);
  EXPECT_EQ(p->self(1), 10u);
}

v1::Profile ValidProto() {
  v1::Profile proto;
  ToProto(Sample(), &proto);
  return proto;
}

TEST(ProfileProtoTest, RejectsColumnsOfDifferentLength) {
  v1::Profile proto = ValidProto();
  proto.add_frame(0);
  absl::Status status = FromProto(proto).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("frame"));

  proto = ValidProto();
  proto.mutable_self_cycles()->RemoveLast();
  status = FromProto(proto).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("self_cycles"));
}

TEST(ProfileProtoTest, RejectsParentNotBeforeNode) {
  v1::Profile proto = ValidProto();
  proto.set_parent(2, 2);
  absl::Status status = FromProto(proto).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("parent[2]"));
}

TEST(ProfileProtoTest, RejectsFrameIdOutOfRange) {
  v1::Profile proto = ValidProto();
  proto.set_frame(3, 99);
  absl::Status status = FromProto(proto).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("frame[3]"));
}

TEST(ProfileProtoTest, RejectsWrongTotal) {
  v1::Profile proto = ValidProto();
  proto.set_total_cycles(65);
  absl::Status status = FromProto(proto).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("total_cycles"));
}

// Issue #12: an empty first frame name crashed the renderer and the coordinator
// (Profile::InternFrame); names must be non-empty.
TEST(ProfileProtoTest, RejectsEmptyFrameName) {
  v1::Profile proto;
  proto.add_frames("");
  proto.add_frames("main");
  for (uint32_t i : {0u, 1u}) {
    proto.add_parent(0);
    proto.add_frame(i);
    proto.add_self_cycles(5);
  }
  proto.set_total_cycles(10);
  absl::Status status = ParseProfile(proto.SerializeAsString()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("frames[0] is empty"));

  proto.set_frames(0, "x");
  proto.set_frames(1, "");  // unused by any node: still refused
  proto.set_frame(1, 0);
  status = ParseProfile(proto.SerializeAsString()).status();
  EXPECT_THAT(status.message(), HasSubstr("frames[1] is empty"));
}

TEST(ProfileProtoTest, RejectsSelfCyclesPastTwoToTheSixtyFour) {
  v1::Profile proto = ValidProto();
  proto.set_self_cycles(1, UINT64_MAX);
  absl::Status status = FromProto(proto).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("overflow 64 bits"));
}

TEST(ProfileProtoTest, RejectsGarbageBytes) {
  absl::Status status = ParseProfile(absl::string_view("\xff\xff\xff\xff", 4)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
}

TEST(ProfileProtoTest, WireFormIsAtMostAQuarterOfFoldedText) {
  bench::FoldedGenOptions options;
  options.lines = 20000;
  std::string text;
  bench::GenerateFolded(options,
                        [&](absl::string_view chunk) { text.append(chunk.data(), chunk.size()); });
  Profile p;
  FoldedReader reader(&p);
  ASSERT_TRUE(reader.ReadString(text, "generated").ok());
  ASSERT_EQ(reader.stats().malformed_lines, 0u);
  const std::string folded = Folded(p);
  const std::string wire = SerializeProfile(p);
  RecordProperty("wire_bytes", static_cast<int>(wire.size()));
  RecordProperty("folded_bytes", static_cast<int>(folded.size()));
  EXPECT_LE(wire.size() * 4, folded.size())
      << "wire " << wire.size() << " bytes, folded " << folded.size() << " bytes";
  absl::StatusOr<Profile> back = ParseProfile(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->total(), p.total());
  EXPECT_EQ(Folded(*back), folded);
}

}  // namespace
}  // namespace flamefleet::profile
