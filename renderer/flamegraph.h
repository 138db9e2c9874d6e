// Interactive SVG flame graphs (and icicle graphs, flame charts and differential graphs) of a
// profile::Profile, at feature parity with flamegraph.pl and inferno.
//
// The SVG is self-contained: click a frame to zoom (ancestors stretch, unrelated frames hide),
// "Reset Zoom" to go back, "Search" / Ctrl-F / F3 for a regular-expression search that
// highlights matches and shows "Matched: N%", "ic" / Ctrl-I for case-insensitive search, a
// tooltip (<title>) per frame with name, cycles and percent, and a detail line at the bottom
// on hover. Zoom and search are kept in the URL (?x=&y=&s=) so links reopen the same view.
// Frames narrower than `min_width` are pruned, and each surviving parent's tooltip says how
// many descendant frames (and cycles) were hidden below it. Output bytes are a pure function
// of the profile and the options.
//
//   RenderOptions options;
//   options.title = "Miden VM Flame Graph (cycles)";
//   options.count_name = "cycles";
//   options.palette = Palette::kMasm;
//   FLAMEFLEET_RETURN_IF_ERROR(WriteSvgFile(profile, options, "out.svgz"));  // gzip by extension
//
// Thread-safety: the functions are pure; concurrent calls on shared const profiles are safe.
#ifndef FLAMEFLEET_RENDERER_FLAMEGRAPH_H_
#define FLAMEFLEET_RENDERER_FLAMEGRAPH_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "profile/diff.h"
#include "profile/profile.h"

namespace flamefleet::renderer {

// Colour schemes. The hue families match flamegraph.pl's names; kMasm classifies MASM
// procedure paths: `$exec::` (the user's program) warm, `std::` (standard library) blue,
// `$kernel::` / syscalls purple, other libraries green, `[unknown]`/`[hidden]` grey.
enum class Palette : uint8_t {
  kHot,
  kMem,
  kIo,
  kRed,
  kGreen,
  kBlue,
  kAqua,
  kYellow,
  kPurple,
  kOrange,
  kMasm,
};

// Which profile of a diff sets frame widths.
enum class DiffWidth : uint8_t {
  kAfter,   // flamegraph.pl's choice; vanished stacks have width 0 (and so are pruned)
  kBefore,  // what `--negate` users do with swapped inputs
  kMax,     // per node max(before, after) self, so new AND vanished stacks are visible
};

// Rendering options. Defaults match flamegraph.pl's.
struct RenderOptions {
  std::string title = "Flame Graph";
  std::string subtitle;                 // second centred line; empty = none
  std::string notes;                    // written into an XML comment
  std::string count_name = "samples";   // unit word in tooltips ("cycles")
  std::string name_type = "Function:";  // prefix of the hover detail line
  int width = 1200;                     // image width in px (10 px padding each side)
  int frame_height = 16;                // px per row
  std::string font_type = "Verdana";
  double font_size = 12;
  double font_width = 0.59;        // average glyph width / font size, to fit labels
  double min_width = 0.1;          // prune frames narrower than this many px ...
  bool min_width_percent = false;  // ... or, if true, this percent of the total
  Palette palette = Palette::kHot;
  bool hash = false;      // prefix-weighted name hash: similar names, similar colours
  std::string bg_colors;  // "" = by palette; yellow|blue|green|grey|#rrggbb
  std::string search_color = "rgb(230,0,230)";
  bool inverted = false;    // icicle graph: root on top
  bool reverse = false;     // reverse every stack (merge at the leaf) before layout
  bool flamechart = false;  // siblings in creation (input) order, not by name
  uint64_t total = 0;       // denominator override if larger than the real total
  double factor = 1.0;      // multiplies counts shown in tooltips (not widths)
  std::string encoding;     // XML declaration encoding; empty = none
  // Differential graphs only.
  bool negate = false;  // swap the colours (and delta signs)
  DiffWidth diff_width = DiffWidth::kMax;
  bool diff_inclusive = false;  // colour by inclusive delta instead of self delta
  bool diff_normalize = false;  // scale "before" to "after"'s total first
};

// Parses a palette name (hot, mem, io, red, green, blue, aqua, yellow, purple, orange, masm).
// Returns InvalidArgument for anything else.
absl::StatusOr<Palette> ParsePalette(absl::string_view name);

// Parses a flamegraph.pl `--minwidth` value ("0.5" px or "0.01%") into `options`. Returns
// InvalidArgument if it is not a non-negative number. `options` must not be null.
absl::Status ParseMinWidth(absl::string_view text, RenderOptions* options);

// Returns the fraction of the graph's total below which a frame is pruned with `options`
// (from min_width and width). Readers may prune earlier with it (see FoldedReadOptions).
double MinVisibleFraction(const RenderOptions& options);

// Checks option ranges (width, heights, fonts, factor, colours). Returns InvalidArgument
// naming the first bad option.
absl::Status ValidateOptions(const RenderOptions& options);

// Writes an interactive SVG flame graph of `profile` to `out`. With options.reverse the
// stacks are reversed first (pruned as they are built); with options.flamechart siblings keep
// node-creation order (read the input into a ChildMatching::kAdjacent profile for a real
// flame chart). Returns InvalidArgument for bad options, FailedPrecondition if the total is 0
// (an SVG holding the message "ERROR: No valid input provided" is still written, as
// flamegraph.pl does), DataLoss if the stream fails.
absl::Status RenderSvg(const profile::Profile& profile, const RenderOptions& options,
                       std::ostream& out);

// Writes a differential flame graph: widths per options.diff_width, red where cycles grew and
// blue where they shrank (intensity by |delta| / max |delta|; options.negate swaps), new call
// paths outlined dashed red, vanished ones faded with a dashed blue outline; tooltips give
// before, after, self and inclusive deltas. Errors as RenderSvg.
absl::Status RenderDiffSvg(const profile::ProfileDiff& diff, const RenderOptions& options,
                           std::ostream& out);

// Writes `contents` to `path`, gzip-compressed if the path ends in ".svgz" or ".gz". Returns
// NotFound / PermissionDenied / InvalidArgument if the file cannot be created, DataLoss if
// writing fails.
absl::Status WriteFileByExtension(const std::string& path, absl::string_view contents);

// Renders `profile` with RenderSvg and writes it to `path` (gzip if ".svgz"/".gz"). The SVG is
// still written when RenderSvg returns FailedPrecondition (empty profile), and that status is
// returned. Other errors as RenderSvg and WriteFileByExtension.
absl::Status WriteSvgFile(const profile::Profile& profile, const RenderOptions& options,
                          const std::string& path);

// As WriteSvgFile, for a differential graph.
absl::Status WriteDiffSvgFile(const profile::ProfileDiff& diff, const RenderOptions& options,
                              const std::string& path);

}  // namespace flamefleet::renderer

#endif  // FLAMEFLEET_RENDERER_FLAMEGRAPH_H_
