// Profile exports for other tools: pprof (`go tool pprof`, Pyroscope, Parca, speedscope),
// speedscope's own JSON, and the choice of a file format from an output file name.
//
// Every export writes the same stacks as WriteFolded (folded.h): one per node with self cycles,
// root first in the profile, with `[unknown]` for cycles on the root and a final `[hidden]` frame
// for pruned cycles. So the values of every export add up to Profile::total() exactly, and frame
// names are kept verbatim (no `;` sanitising).
//
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::string pb_gz, EncodePprof(profile));
//   std::string json = EncodeSpeedscope(profile, {.name = "fib.masm"});
//   OutputFormat f = OutputFormatForPath("agg.pb.gz");  // {kPprof, gzip}
//
// The SVG format is named here (so one function maps every output name) but drawn by the renderer:
// renderer/profile_file.h has WriteProfileFile, which writes any of these formats.
//
// pprof details: sample_type and period_type are {"cycles", "count"} and period is 1 (every cycle
// is counted, nothing is sampled); one Function per distinct frame name (name and system_name are
// the full procedure path, filename its MASM module path, e.g. `std::math::u64` for
// `std::math::u64::wrapping_add`, "" when the name has no module); one Location per Function
// (profiles carry no addresses or lines, so a location per call site would add nothing that the
// sample stacks do not already say); no Mapping (locations with functions count as symbolised); one
// Sample per distinct stack with non-zero cycles, location ids leaf first, value = cycles.
// Flame-chart profiles (ChildMatching::kAdjacent) are merged by name first, so no two pprof samples
// share a stack.
//
// speedscope details: one "sampled" profile (unit "none", startValue 0, endValue = total),
// shared.frames = one per distinct name (with `file` = module when known), samples = frame index
// stacks root first, weights = cycles, exporter "flamefleet". Samples follow folded order (children
// by name); for kAdjacent profiles, creation (input) order, so speedscope's "Time Order" view shows
// the flame chart.
//
// Thread-safety: all functions are pure; concurrent calls on shared const profiles are safe.
#ifndef FLAMEFLEET_PROFILE_EXPORT_H_
#define FLAMEFLEET_PROFILE_EXPORT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "profile/profile.h"

namespace flamefleet::profile {

// The file formats a profile can be written in.
enum class ProfileFormat : uint8_t {
  kFolded,      // folded stacks text ("a;b;c 123")
  kSvg,         // interactive SVG flame graph (drawn by renderer/)
  kPprof,       // gzip-compressed perftools.profiles.Profile protobuf
  kSpeedscope,  // speedscope JSON (file-format-schema.json)
};

// A format plus whether the bytes are gzip-compressed on disk.
struct OutputFormat {
  ProfileFormat format = ProfileFormat::kFolded;
  bool gzip = false;  // always true for kPprof
};

// Returns the format an output file name asks for (case-insensitive):
//   *.pb.gz                      -> pprof
//   *.speedscope.json            -> speedscope
//   *.svg                        -> SVG;  *.svgz, *.svg.gz -> gzipped SVG
//   *.folded, *.txt (+ .gz)      -> folded (gzipped with .gz)
//   anything else                -> `fallback`, gzipped if the name ends in .gz
// `flamefleet profile` uses fallback kFolded; `render`, which draws by default, kSvg.
OutputFormat OutputFormatForPath(absl::string_view path,
                                 ProfileFormat fallback = ProfileFormat::kFolded);

// Parses a format name as `--format` takes it: "folded", "svg", "pprof" or "speedscope". Returns
// InvalidArgument for anything else.
absl::StatusOr<ProfileFormat> ParseProfileFormat(absl::string_view name);

// Returns the name ParseProfileFormat accepts for `format`.
absl::string_view ProfileFormatName(ProfileFormat format);

// Returns the file-name suffix that OutputFormatForPath maps back to `format`: ".folded", ".svg",
// ".pb.gz" or ".speedscope.json".
absl::string_view ProfileFormatSuffix(ProfileFormat format);

// Options shared by the exports.
struct ExportOptions {
  // speedscope: the file's and the profile's "name"; pprof: a comment (if non-empty).
  std::string name;
  // pprof time_nanos (collection time, Unix ns); 0 leaves it unset so the bytes are a pure function
  // of the profile and the options.
  int64_t time_nanos = 0;
};

// Returns the uncompressed serialized pprof Profile message of `profile` (see the file comment).
// Returns OutOfRange if a stack's cycles do not fit pprof's int64 values.
absl::StatusOr<std::string> SerializePprof(const Profile& profile,
                                           const ExportOptions& options = {});

// Returns SerializePprof's bytes gzip-compressed: the contents of a *.pb.gz file. Errors as
// SerializePprof, or Internal if compression fails.
absl::StatusOr<std::string> EncodePprof(const Profile& profile, const ExportOptions& options = {});

// Returns speedscope JSON for `profile` (see the file comment). Names that are not valid UTF-8 have
// the bad bytes replaced by U+FFFD. Never fails.
std::string EncodeSpeedscope(const Profile& profile, const ExportOptions& options = {});

// Returns `data` as a gzip stream (RFC 1952, level 6). Returns Internal if zlib fails.
absl::StatusOr<std::string> GzipCompress(absl::string_view data);

// Returns the decompressed contents of the gzip stream `data` (concatenated members are joined).
// Returns InvalidArgument if `data` is not a complete gzip stream.
absl::StatusOr<std::string> GzipDecompress(absl::string_view data);

// Returns the MASM module of a procedure path: everything before the last "::" ("std::math::u64"
// for "std::math::u64::wrapping_add"), or "" if there is none.
absl::string_view ModuleOfFrame(absl::string_view name);

}  // namespace flamefleet::profile

#endif  // FLAMEFLEET_PROFILE_EXPORT_H_
