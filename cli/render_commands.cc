#include "cli/render_commands.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "cli/profile_commands.h"
#include "profile/diff.h"
#include "profile/folded.h"
#include "profile/profile.h"
#include "renderer/flamegraph.h"

namespace flamefleet::cli {
namespace {

using profile::FoldedReader;
using profile::FoldedReadOptions;
using profile::Profile;
using renderer::RenderOptions;

constexpr int kExitOk = 0;
constexpr int kExitError = 1;
constexpr int kExitNoSamples = 2;

// Everything the two subcommands parse into.
struct RenderArgs {
  std::vector<std::string> inputs;
  std::string output = "-";
  RenderOptions options;
  std::string min_width = "0.1";
  std::string colors = "hot";
  std::string diff_width = "max";
  double scale = 1.0;
  std::vector<std::string> libs;  // diff of programs: --lib NS=DIR
};

void AddCommonOptions(CLI::App* cmd, RenderArgs* a) {
  RenderOptions& o = a->options;
  cmd->add_option("-o,--output", a->output,
                  "output file (.svg, .svgz; - = stdout)");
  cmd->add_option("--title", o.title, "title text");
  cmd->add_option("--subtitle", o.subtitle, "second title line");
  cmd->add_option("--countname", o.count_name,
                  "count type label (e.g. cycles)");
  cmd->add_option("--nametype", o.name_type,
                  "name type label of the detail line");
  cmd->add_option("--width", o.width, "width of image (default 1200)");
  cmd->add_option("--height", o.frame_height,
                  "height of each frame (default 16)");
  cmd->add_option("--fonttype", o.font_type, "font type (default Verdana)");
  cmd->add_option("--fontsize", o.font_size, "font size (default 12)");
  cmd->add_option("--fontwidth", o.font_width, "font width (default 0.59)");
  cmd->add_option("--minwidth", a->min_width,
                  "omit frames narrower than N px, or N% (0.1)");
  cmd->add_option("--colors", a->colors,
                  "palette: hot (default), mem, io, red, green, blue, aqua, "
                  "yellow, purple, "
                  "orange, masm");
  cmd->add_option("--bgcolors", o.bg_colors,
                  "background: yellow, blue, green, grey, #rrggbb");
  cmd->add_option("--searchcolor", o.search_color, "search highlight colour");
  cmd->add_flag("--hash", o.hash, "colours by a prefix-weighted name hash");
  cmd->add_flag("--inverted", o.inverted, "icicle graph");
  cmd->add_flag("--reverse", o.reverse, "generate stack-reversed flame graph");
  cmd->add_flag("--flamechart", o.flamechart,
                "flame chart (input order, no merging by name)");
  cmd->add_option("--total", o.total, "total count if larger than the input's");
  cmd->add_option("--factor", o.factor,
                  "factor to scale counts by in tooltips");
  cmd->add_option("--notes", o.notes, "notes put into an XML comment");
  cmd->add_flag("--negate", o.negate, "switch differential hues (blue<->red)");
  cmd->add_option("--encoding", o.encoding, "XML encoding declaration");
  cmd->add_option(
      "--scale", a->scale,
      "multiply input counts by this before rounding (decimal counts)");
}

// Completes `a->options` from the string options; prints and returns false on
// error.
bool FinishOptions(RenderArgs* a, bool title_given,
                   absl::string_view auto_title) {
  absl::Status st = renderer::ParseMinWidth(a->min_width, &a->options);
  if (st.ok()) {
    absl::StatusOr<renderer::Palette> palette =
        renderer::ParsePalette(a->colors);
    st = palette.status();
    if (palette.ok()) a->options.palette = *palette;
  }
  if (st.ok()) st = renderer::ValidateOptions(a->options);
  if (!st.ok()) {
    std::cerr << "flamefleet: " << st.message() << "\n";
    return false;
  }
  if (!title_given) a->options.title = std::string(auto_title);
  return true;
}

absl::Status ReadInput(FoldedReader* reader, const std::string& path) {
  if (path == "-") return reader->ReadStream(std::cin, "<stdin>");
  return reader->ReadFile(path);
}

void ReportStats(const FoldedReader& reader) {
  const std::string summary = reader.stats().Summary();
  if (!summary.empty()) std::cerr << "flamefleet: " << summary;
  if (reader.stats().fractional_lines != 0) {
    std::cerr
        << "flamefleet: rounded " << reader.stats().fractional_lines
        << " fractional count(s) to integers (use --scale and --factor to keep "
           "precision)\n";
  }
}

// Writes `render(out)` to a.output ("-" = stdout) and maps the status to an
// exit code.
template <typename RenderFn>
int Emit(const RenderArgs& a, RenderFn render) {
  absl::Status st;
  if (a.output == "-") {
    st = render(std::cout);
  } else if (absl::EndsWith(a.output, ".svgz") ||
             absl::EndsWith(a.output, ".gz")) {
    std::ostringstream svg;
    st = render(svg);
    if (st.ok() || absl::IsFailedPrecondition(st)) {
      absl::Status written =
          renderer::WriteFileByExtension(a.output, svg.str());
      if (!written.ok()) st = written;
    }
  } else {
    std::ofstream file(a.output, std::ios::binary);
    if (!file) {
      std::cerr << "flamefleet: cannot create " << a.output << "\n";
      return kExitError;
    }
    st = render(file);
  }
  if (absl::IsFailedPrecondition(st)) {
    std::cerr << "flamefleet: " << st.message() << "\n";
    return kExitNoSamples;
  }
  if (!st.ok()) {
    std::cerr << "flamefleet: " << st.message() << "\n";
    return kExitError;
  }
  return kExitOk;
}

int RunRender(RenderArgs* a, bool title_given) {
  const RenderOptions& o = a->options;
  if (!FinishOptions(a, title_given,
                     o.inverted     ? "Icicle Graph"
                     : o.flamechart ? "Flame Chart"
                                    : "Flame Graph")) {
    return kExitError;
  }
  Profile after(o.flamechart ? Profile::ChildMatching::kAdjacent
                             : Profile::ChildMatching::kByName);
  Profile before(after.child_matching());
  FoldedReadOptions read_options;
  read_options.scale = a->scale;
  // Flame charts cannot merge, so prune closed subtrees while reading; the
  // picture is the same because the renderer would prune them anyway.
  read_options.prune_fraction = renderer::MinVisibleFraction(o);
  uint64_t two_column_lines = 0;
  {  // The reader's index is freed before rendering.
    FoldedReader reader(&after, &before, read_options);
    for (const std::string& in : a->inputs) {
      absl::Status st = ReadInput(&reader, in);
      if (!st.ok()) {
        std::cerr << "flamefleet: " << st.message() << "\n";
        return kExitError;
      }
    }
    ReportStats(reader);
    two_column_lines = reader.stats().two_column_lines;
  }
  if (absl::EndsWith(a->output, ".folded") ||
      absl::EndsWith(a->output, ".txt")) {
    std::ofstream file(a->output, std::ios::binary);
    absl::Status st =
        file ? profile::WriteFolded(after, file)
             : absl::InvalidArgumentError("cannot create " + a->output);
    if (!st.ok()) {
      std::cerr << "flamefleet: " << st.message() << "\n";
      return kExitError;
    }
    return kExitOk;
  }
  if (two_column_lines != 0) {
    // flamegraph.pl renders two-column input as a differential graph.
    const profile::ProfileDiff diff =
        profile::ProfileDiff::Compute(before, after);
    RenderOptions diff_options = o;
    diff_options.diff_width = renderer::DiffWidth::kAfter;
    return Emit(*a, [&](std::ostream& out) {
      return renderer::RenderDiffSvg(diff, diff_options, out);
    });
  }
  return Emit(*a, [&](std::ostream& out) {
    return renderer::RenderSvg(after, o, out);
  });
}

int RunDiff(RenderArgs* a, bool title_given, bool diff_inclusive,
            bool normalize) {
  if (!FinishOptions(a, title_given, "Differential Flame Graph"))
    return kExitError;
  RenderOptions& o = a->options;
  o.diff_inclusive = diff_inclusive;
  o.diff_normalize = normalize;
  if (a->diff_width == "after") {
    o.diff_width = renderer::DiffWidth::kAfter;
  } else if (a->diff_width == "before") {
    o.diff_width = renderer::DiffWidth::kBefore;
  } else if (a->diff_width == "max") {
    o.diff_width = renderer::DiffWidth::kMax;
  } else {
    std::cerr << "flamefleet: --diff-width must be after, before or max\n";
    return kExitError;
  }
  Profile before, after;
  FoldedReadOptions read_options;
  read_options.scale = a->scale;
  FoldedReader before_reader(&before, nullptr, read_options);
  FoldedReader after_reader(&after, nullptr, read_options);
  for (auto [reader, path, target] :
       {std::tuple{&before_reader, a->inputs[0], &before},
        std::tuple{&after_reader, a->inputs[1], &after}}) {
    if (absl::EndsWith(path, ".masm")) {
      // A program: run it and diff its profile.
      absl::StatusOr<Profile> p = ProfileMasmFile(path, "", a->libs, false);
      if (!p.ok()) {
        std::cerr << "flamefleet: " << path << ": " << p.status().message() << "\n";
        return kExitError;
      }
      *target = *std::move(p);
      continue;
    }
    absl::Status st = ReadInput(reader, path);
    if (!st.ok()) {
      std::cerr << "flamefleet: " << st.message() << "\n";
      return kExitError;
    }
    ReportStats(*reader);
  }
  if (o.reverse) {
    before = before.Reversed(0);
    after = after.Reversed(0);
    o.reverse = false;
  }
  const profile::ProfileDiff diff =
      profile::ProfileDiff::Compute(before, after);
  return Emit(*a, [&](std::ostream& out) {
    return renderer::RenderDiffSvg(diff, o, out);
  });
}

}  // namespace

void AddRenderCommands(CLI::App& app, int* exit_code) {
  // The argument structs must live as long as `app` (CLI11 binds options to
  // their fields) and are shared by the option bindings and the callback, hence
  // shared_ptr owned by the callbacks that `app` keeps.
  auto render = std::make_shared<RenderArgs>();
  CLI::App* render_cmd = app.add_subcommand(
      "render", "render folded stacks as an interactive SVG flame graph");
  render_cmd
      ->add_option("inputs", render->inputs, "folded input files (- = stdin)")
      ->required();
  AddCommonOptions(render_cmd, render.get());
  render_cmd->callback([render, render_cmd, exit_code] {
    *exit_code = RunRender(render.get(), render_cmd->count("--title") != 0);
  });

  auto diff = std::make_shared<RenderArgs>();
  auto diff_inclusive = std::make_shared<bool>(false);
  auto normalize = std::make_shared<bool>(false);
  CLI::App* diff_cmd =
      app.add_subcommand("diff",
                         "render a differential flame graph of two folded "
                         "inputs (red grew, blue shrank)");
  diff_cmd->add_option("--lib", diff->libs,
                       "library NAMESPACE=DIR for .masm inputs (repeatable)");
  diff_cmd->add_option("inputs", diff->inputs,
                       "BEFORE AFTER: folded files, or .masm programs to run and profile")
      ->required()
      ->expected(2);
  AddCommonOptions(diff_cmd, diff.get());
  diff_cmd->add_option("--diff-width", diff->diff_width,
                       "frame widths from: max (default; shows new and "
                       "vanished), after, before");
  diff_cmd->add_flag("--diff-inclusive", *diff_inclusive,
                     "colour by inclusive delta");
  diff_cmd->add_flag("-n,--normalize", *normalize,
                     "scale BEFORE to AFTER's total");
  diff_cmd->callback([diff, diff_cmd, diff_inclusive, normalize, exit_code] {
    *exit_code = RunDiff(diff.get(), diff_cmd->count("--title") != 0,
                         *diff_inclusive, *normalize);
  });
}

}  // namespace flamefleet::cli
