#include "profile/profile_proto.h"

#include <climits>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace flamefleet::profile {

void ToProto(const Profile& profile, v1::Profile* out) {
  out->Clear();
  const size_t nodes = profile.num_nodes();
  out->mutable_frames()->Reserve(static_cast<int>(profile.num_frames()));
  for (size_t f = 0; f < profile.num_frames(); ++f) {
    out->add_frames(std::string(profile.frame_name(static_cast<Profile::FrameId>(f))));
  }
  auto* parent = out->mutable_parent();
  auto* frame = out->mutable_frame();
  auto* self = out->mutable_self_cycles();
  parent->Reserve(static_cast<int>(nodes));
  frame->Reserve(static_cast<int>(nodes));
  self->Reserve(static_cast<int>(nodes));
  for (size_t i = 0; i < nodes; ++i) {
    const auto node = static_cast<Profile::NodeId>(i);
    if (node == Profile::kRoot) {
      parent->Add(0);
      frame->Add(0);
    } else {
      parent->Add(profile.parent(node));
      frame->Add(profile.frame(node));
    }
    uint64_t cycles = profile.self(node);
    if (profile.has_hidden()) cycles += profile.hidden(node).cycles;
    self->Add(cycles);
  }
  out->set_total_cycles(profile.total());
}

absl::StatusOr<Profile> FromProto(const v1::Profile& proto) {
  const int nodes = proto.parent_size();
  if (proto.frame_size() != nodes) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile: frame has ", proto.frame_size(), " entries, parent has ", nodes));
  }
  if (proto.self_cycles_size() != nodes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "profile: self_cycles has ", proto.self_cycles_size(), " entries, parent has ", nodes));
  }
  Profile out;
  if (nodes == 0) {
    if (proto.total_cycles() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "profile: total_cycles is ", proto.total_cycles(), " but the profile has no nodes"));
    }
    return out;
  }
  // Sizes need no limit of their own: a repeated field holds at most 2^31 - 1 entries, so every
  // index fits a NodeId / FrameId below kNoNode / kNoFrame, and the bytes were bounded by the
  // caller (message and profile limits).
  const int num_frames = proto.frames_size();
  std::vector<Profile::FrameId> frame_ids;
  frame_ids.reserve(static_cast<size_t>(num_frames));
  for (int f = 0; f < num_frames; ++f) {
    const std::string& name = proto.frames(f);
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("profile: frames[", f, "] is empty (frame names must be non-empty)"));
    }
    frame_ids.push_back(out.InternFrame(name));
  }
  out.Reserve(static_cast<size_t>(nodes));

  // Message node index -> Profile node id (differs only if the message repeats a
  // (parent, frame) pair, which Child() merges).
  std::vector<Profile::NodeId> ids(static_cast<size_t>(nodes));
  ids[0] = Profile::kRoot;
  uint64_t sum = 0;
  for (int i = 0; i < nodes; ++i) {
    if (i > 0) {
      const uint32_t parent = proto.parent(i);
      if (parent >= static_cast<uint32_t>(i)) {
        return absl::InvalidArgumentError(
            absl::StrCat("profile: parent[", i, "] is ", parent, ", not less than the node index"));
      }
      const uint32_t frame = proto.frame(i);
      if (frame >= static_cast<uint32_t>(num_frames)) {
        return absl::InvalidArgumentError(absl::StrCat("profile: frame[", i, "] is ", frame,
                                                       ", but there are ", num_frames, " frames"));
      }
      ids[static_cast<size_t>(i)] = out.Child(ids[parent], frame_ids[frame]);
    }
    const uint64_t cycles = proto.self_cycles(i);
    if (__builtin_add_overflow(sum, cycles, &sum)) {
      return absl::InvalidArgumentError(
          absl::StrCat("profile: self_cycles overflow 64 bits at node ", i));
    }
    if (cycles != 0) out.AddSelf(ids[static_cast<size_t>(i)], cycles);
  }
  if (sum != proto.total_cycles()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "profile: total_cycles is ", proto.total_cycles(), " but self_cycles sum to ", sum));
  }
  return out;
}

std::string SerializeProfile(const Profile& profile) {
  v1::Profile proto;
  ToProto(profile, &proto);
  return proto.SerializeAsString();
}

absl::StatusOr<Profile> ParseProfile(absl::string_view bytes) {
  if (bytes.size() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile: ", bytes.size(), " bytes exceed the 2 GiB message limit"));
  }
  v1::Profile proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile: ", bytes.size(), " bytes are not a flamefleet.v1.Profile"));
  }
  return FromProto(proto);
}

}  // namespace flamefleet::profile
