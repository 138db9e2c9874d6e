#include "profile/export.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/file.h"
#include "nlohmann/json.hpp"
#include "pprof/profile.pb.h"

namespace flamefleet::profile {
namespace {

using NodeId = Profile::NodeId;

constexpr absl::string_view kUnknown = "[unknown]";
constexpr absl::string_view kHidden = "[hidden]";

// The stacks of a profile as export sees them: distinct names (frame names plus the synthetic
// "[unknown]" and "[hidden]", deduplicated by text) and, per stack, name ids root first.
class StackWalker {
 public:
  explicit StackWalker(const Profile& profile) : profile_(profile) {
    frame_name_id_.assign(profile.num_frames(), kNone);
  }

  // Calls fn(path, cycles) for every stack with non-zero cycles, `path` being name ids root first
  // (valid during the call). Children are visited by name (kByName) or in creation order
  // (kAdjacent).
  template <typename Fn>
  void Walk(Fn fn) {
    const Profile& p = profile_;
    const size_t n = p.num_nodes();
    const bool by_name = p.child_matching() == Profile::ChildMatching::kByName;
    std::vector<uint32_t> first(n + 1, 0);
    for (size_t i = 1; i < n; ++i) ++first[p.parent(static_cast<NodeId>(i)) + 1];
    for (size_t i = 0; i < n; ++i) first[i + 1] += first[i];
    std::vector<NodeId> kids(n > 0 ? n - 1 : 0);
    {
      std::vector<uint32_t> fill(first.begin(), first.end() - 1);
      for (size_t i = 1; i < n; ++i) {
        kids[fill[p.parent(static_cast<NodeId>(i))]++] = static_cast<NodeId>(i);
      }
    }
    if (by_name) {
      for (size_t i = 0; i < n; ++i) {
        std::sort(kids.begin() + first[i], kids.begin() + first[i + 1], [&](NodeId a, NodeId b) {
          return p.frame_name(p.frame(a)) < p.frame_name(p.frame(b));
        });
      }
    }
    std::vector<uint32_t> path;
    auto emit_extra = [&](absl::string_view leaf, uint64_t cycles) {
      path.push_back(NameId(leaf));
      fn(static_cast<const std::vector<uint32_t>&>(path), cycles);
      path.pop_back();
    };
    if (n == 0) return;
    if (p.self(Profile::kRoot) != 0) emit_extra(kUnknown, p.self(Profile::kRoot));
    if (p.hidden(Profile::kRoot).cycles != 0) {
      emit_extra(kHidden, p.hidden(Profile::kRoot).cycles);
    }
    struct Entry {
      NodeId node;
      uint32_t next;
    };
    std::vector<Entry> stack;
    stack.push_back({Profile::kRoot, first[0]});
    while (!stack.empty()) {
      Entry& e = stack.back();
      if (e.next == first[e.node + 1]) {
        stack.pop_back();
        if (!path.empty()) path.pop_back();
        continue;
      }
      const NodeId child = kids[e.next++];
      path.push_back(FrameNameId(p.frame(child)));
      if (p.self(child) != 0) fn(static_cast<const std::vector<uint32_t>&>(path), p.self(child));
      if (p.hidden(child).cycles != 0) emit_extra(kHidden, p.hidden(child).cycles);
      stack.push_back({child, first[child]});
    }
  }

  const std::vector<absl::string_view>& names() const { return names_; }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

  uint32_t NameId(absl::string_view name) {
    auto [it, inserted] = ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
    if (inserted) names_.push_back(name);
    return it->second;
  }
  uint32_t FrameNameId(Profile::FrameId frame) {
    uint32_t& id = frame_name_id_[frame];
    if (id == kNone) id = NameId(profile_.frame_name(frame));
    return id;
  }

  const Profile& profile_;
  std::vector<uint32_t> frame_name_id_;   // FrameId -> name id (kNone: not seen yet)
  std::vector<absl::string_view> names_;  // name id -> text (views into the profile or
                                          // the static synthetic names)
  absl::flat_hash_map<absl::string_view, uint32_t> ids_;
};

// pprof's string table: "" first, each string once.
class StringTable {
 public:
  explicit StringTable(perftools::profiles::Profile* out) : out_(out) { Index(""); }
  int64_t Index(absl::string_view s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const int64_t id = out_->string_table_size();
    out_->add_string_table(std::string(s));
    ids_.emplace(std::string(s), id);
    return id;
  }

 private:
  perftools::profiles::Profile* out_;
  absl::flat_hash_map<std::string, int64_t> ids_;
};

// Appends `s` to `out` as a JSON string literal.
void AppendJsonString(absl::string_view s, std::string* out) {
  bool plain = true;
  for (unsigned char c : s) {
    if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) {
      plain = false;
      break;
    }
  }
  if (plain) {
    out->push_back('"');
    out->append(s.data(), s.size());
    out->push_back('"');
    return;
  }
  out->append(nlohmann::json(std::string(s))
                  .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

OutputFormat OutputFormatForPath(absl::string_view path, ProfileFormat fallback) {
  const std::string lower = absl::AsciiStrToLower(path);
  auto ends = [&](absl::string_view suffix) { return absl::EndsWith(lower, suffix); };
  if (ends(".pb.gz")) return {ProfileFormat::kPprof, true};
  if (ends(".speedscope.json")) return {ProfileFormat::kSpeedscope, false};
  if (ends(".svg")) return {ProfileFormat::kSvg, false};
  if (ends(".svgz") || ends(".svg.gz")) return {ProfileFormat::kSvg, true};
  if (ends(".folded") || ends(".txt")) return {ProfileFormat::kFolded, false};
  if (ends(".folded.gz") || ends(".txt.gz")) return {ProfileFormat::kFolded, true};
  if (fallback == ProfileFormat::kPprof) return {ProfileFormat::kPprof, true};
  return {fallback, ends(".gz")};
}

absl::StatusOr<ProfileFormat> ParseProfileFormat(absl::string_view name) {
  for (ProfileFormat f : {ProfileFormat::kFolded, ProfileFormat::kSvg, ProfileFormat::kPprof,
                          ProfileFormat::kSpeedscope}) {
    if (name == ProfileFormatName(f)) return f;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown format '", name, "' (want svg, folded, pprof or speedscope)"));
}

absl::string_view ProfileFormatName(ProfileFormat format) {
  switch (format) {
    case ProfileFormat::kFolded:
      return "folded";
    case ProfileFormat::kSvg:
      return "svg";
    case ProfileFormat::kPprof:
      return "pprof";
    case ProfileFormat::kSpeedscope:
      return "speedscope";
  }
  return "folded";
}

absl::string_view ProfileFormatSuffix(ProfileFormat format) {
  switch (format) {
    case ProfileFormat::kFolded:
      return ".folded";
    case ProfileFormat::kSvg:
      return ".svg";
    case ProfileFormat::kPprof:
      return ".pb.gz";
    case ProfileFormat::kSpeedscope:
      return ".speedscope.json";
  }
  return ".folded";
}

absl::string_view ModuleOfFrame(absl::string_view name) {
  const size_t pos = name.rfind("::");
  if (pos == absl::string_view::npos || pos == 0) return "";
  return name.substr(0, pos);
}

absl::StatusOr<std::string> SerializePprof(const Profile& profile, const ExportOptions& options) {
  // Flame charts may hold the same stack several times; pprof wants each once.
  const Profile* source = &profile;
  Profile merged;
  if (profile.child_matching() != Profile::ChildMatching::kByName) {
    merged.MergeFrom(profile);
    source = &merged;
  }
  perftools::profiles::Profile pb;
  StringTable strings(&pb);
  const int64_t cycles = strings.Index("cycles");
  const int64_t count = strings.Index("count");
  perftools::profiles::ValueType* type = pb.add_sample_type();
  type->set_type(cycles);
  type->set_unit(count);
  pb.mutable_period_type()->set_type(cycles);
  pb.mutable_period_type()->set_unit(count);
  pb.set_period(1);
  pb.set_default_sample_type(cycles);
  if (!options.name.empty()) pb.add_comment(strings.Index(options.name));
  if (options.time_nanos != 0) pb.set_time_nanos(options.time_nanos);

  StackWalker walker(*source);
  // name id -> function id (= location id); 0 = not emitted yet.
  std::vector<uint64_t> function_of;
  bool too_large = false;
  walker.Walk([&](const std::vector<uint32_t>& path, uint64_t value) {
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      too_large = true;
      return;
    }
    perftools::profiles::Sample* sample = pb.add_sample();
    sample->mutable_location_id()->Reserve(static_cast<int>(path.size()));
    for (size_t i = path.size(); i-- > 0;) {  // leaf first
      const uint32_t name_id = path[i];
      if (name_id >= function_of.size()) function_of.resize(name_id + 1, 0);
      if (function_of[name_id] == 0) {
        const uint64_t id = static_cast<uint64_t>(pb.function_size()) + 1;
        function_of[name_id] = id;
        const absl::string_view name = walker.names()[name_id];
        perftools::profiles::Function* fn = pb.add_function();
        fn->set_id(id);
        fn->set_name(strings.Index(name));
        fn->set_system_name(fn->name());
        fn->set_filename(strings.Index(ModuleOfFrame(name)));
        perftools::profiles::Location* loc = pb.add_location();
        loc->set_id(id);
        loc->add_line()->set_function_id(id);
      }
      sample->add_location_id(function_of[name_id]);
    }
    sample->add_value(static_cast<int64_t>(value));
  });
  if (too_large) {
    return absl::OutOfRangeError("pprof: a stack has more than 2^63-1 cycles");
  }
  std::string bytes;
  pb.SerializeToString(&bytes);
  return bytes;
}

absl::StatusOr<std::string> EncodePprof(const Profile& profile, const ExportOptions& options) {
  absl::StatusOr<std::string> bytes = SerializePprof(profile, options);
  if (!bytes.ok()) return bytes.status();
  return GzipCompress(*bytes);
}

std::string EncodeSpeedscope(const Profile& profile, const ExportOptions& options) {
  StackWalker walker(profile);
  std::string samples;
  std::string weights;
  samples.reserve(1 << 16);
  bool first = true;
  walker.Walk([&](const std::vector<uint32_t>& path, uint64_t value) {
    if (!first) {
      samples.push_back(',');
      weights.push_back(',');
    }
    first = false;
    samples.push_back('[');
    for (size_t i = 0; i < path.size(); ++i) {
      if (i != 0) samples.push_back(',');
      absl::StrAppend(&samples, path[i]);
    }
    samples.push_back(']');
    absl::StrAppend(&weights, value);
  });
  const std::string name = options.name.empty() ? std::string("flamefleet profile") : options.name;
  std::string out;
  out.reserve(samples.size() + weights.size() + 1024);
  out.append(R"({"$schema":"https://www.speedscope.app/file-format-schema.json",)");
  out.append(R"("exporter":"flamefleet","name":)");
  AppendJsonString(name, &out);
  out.append(R"(,"activeProfileIndex":0,"shared":{"frames":[)");
  const std::vector<absl::string_view>& names = walker.names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (i != 0) out.push_back(',');
    out.append(R"({"name":)");
    AppendJsonString(names[i], &out);
    const absl::string_view module = ModuleOfFrame(names[i]);
    if (!module.empty()) {
      out.append(R"(,"file":)");
      AppendJsonString(module, &out);
    }
    out.push_back('}');
  }
  out.append(R"(]},"profiles":[{"type":"sampled","name":)");
  AppendJsonString(name, &out);
  absl::StrAppend(&out, R"(,"unit":"none","startValue":0,"endValue":)", profile.total(),
                  R"(,"samples":[)");
  out.append(samples);
  out.append(R"(],"weights":[)");
  out.append(weights);
  out.append("]}]}\n");
  return out;
}

absl::StatusOr<std::string> GzipCompress(absl::string_view data) { return Gzip(data); }

absl::StatusOr<std::string> GzipDecompress(absl::string_view data) {
  return Gunzip(data, std::numeric_limits<size_t>::max());
}

}  // namespace flamefleet::profile
