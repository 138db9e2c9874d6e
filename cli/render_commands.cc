#include "cli/render_commands.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/batch_client.h"
#include "cli/client_commands.h"
#include "cli/command.h"
#include "cli/profile_commands.h"
#include "cli/suite_diff.h"
#include "common/channel.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "profile/diff.h"
#include "profile/export.h"
#include "profile/folded.h"
#include "profile/profile.h"
#include "renderer/flamegraph.h"
#include "renderer/profile_file.h"

namespace flamefleet::cli {
namespace {

using profile::FoldedReader;
using profile::FoldedReadOptions;
using profile::Profile;
using renderer::RenderOptions;

// kExitOk (0) comes from cli/command.h.
constexpr int kExitError = 1;
constexpr int kExitNoSamples = 2;
constexpr int kExitRegression = 3;  // diff --fail-above: a job grew by more than PCT

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
  cmd->add_option("-o,--output", a->output, "output file (.svg, .svgz; - = stdout)");
  cmd->add_option("--title", o.title, "title text");
  cmd->add_option("--subtitle", o.subtitle, "second title line");
  cmd->add_option("--countname", o.count_name, "count type label (e.g. cycles)");
  cmd->add_option("--nametype", o.name_type, "name type label of the detail line");
  cmd->add_option("--width", o.width, "width of image (default 1200)");
  cmd->add_option("--height", o.frame_height, "height of each frame (default 16)");
  cmd->add_option("--fonttype", o.font_type, "font type (default Verdana)");
  cmd->add_option("--fontsize", o.font_size, "font size (default 12)");
  cmd->add_option("--fontwidth", o.font_width, "font width (default 0.59)");
  cmd->add_option("--minwidth", a->min_width, "omit frames narrower than N px, or N% (0.1)");
  cmd->add_option("--colors", a->colors,
                  "palette: hot (default), mem, io, red, green, blue, aqua, "
                  "yellow, purple, "
                  "orange, masm");
  cmd->add_option("--bgcolors", o.bg_colors, "background: yellow, blue, green, grey, #rrggbb");
  cmd->add_option("--searchcolor", o.search_color, "search highlight colour");
  cmd->add_flag("--hash", o.hash, "colours by a prefix-weighted name hash");
  cmd->add_flag("--inverted", o.inverted, "icicle graph");
  cmd->add_flag("--reverse", o.reverse, "generate stack-reversed flame graph");
  cmd->add_flag("--flamechart", o.flamechart, "flame chart (input order, no merging by name)");
  cmd->add_option("--total", o.total, "total count if larger than the input's");
  cmd->add_option("--factor", o.factor, "factor to scale counts by in tooltips");
  cmd->add_option("--notes", o.notes, "notes put into an XML comment");
  cmd->add_flag("--negate", o.negate, "switch differential hues (blue<->red)");
  cmd->add_option("--encoding", o.encoding, "XML encoding declaration");
  cmd->add_option("--scale", a->scale,
                  "multiply input counts by this before rounding (decimal counts)");
}

// Completes `a->options` from the string options; prints and returns false on
// error.
bool FinishOptions(RenderArgs* a, bool title_given, absl::string_view auto_title) {
  absl::Status st = renderer::ParseMinWidth(a->min_width, &a->options);
  if (st.ok()) {
    absl::StatusOr<renderer::Palette> palette = renderer::ParsePalette(a->colors);
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
    std::cerr << "flamefleet: rounded " << reader.stats().fractional_lines
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
  } else if (absl::EndsWith(a.output, ".svgz") || absl::EndsWith(a.output, ".gz")) {
    std::ostringstream svg;
    st = render(svg);
    if (st.ok() || absl::IsFailedPrecondition(st)) {
      absl::Status written = renderer::WriteFileByExtension(a.output, svg.str());
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
  Profile after(o.flamechart ? Profile::ChildMatching::kAdjacent : Profile::ChildMatching::kByName);
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
  const profile::OutputFormat format =
      a->output == "-" ? profile::OutputFormat{profile::ProfileFormat::kSvg, false}
                       : profile::OutputFormatForPath(a->output, profile::ProfileFormat::kSvg);
  if (format.format != profile::ProfileFormat::kSvg) {
    // An export of the merged input (folded, pprof, speedscope): no drawing
    // options apply.
    if (two_column_lines != 0) {
      std::cerr << "flamefleet: two-column (differential) input: writing the "
                   "AFTER column "
                   "only; use `flamefleet diff` for a differential graph\n";
    }
    absl::Status st = renderer::WriteProfileFile(after, a->output, o);
    if (!st.ok()) {
      std::cerr << "flamefleet: " << st.message() << "\n";
      return kExitError;
    }
    return kExitOk;
  }
  if (two_column_lines != 0) {
    // flamegraph.pl renders two-column input as a differential graph.
    const profile::ProfileDiff diff = profile::ProfileDiff::Compute(before, after);
    RenderOptions diff_options = o;
    diff_options.diff_width = renderer::DiffWidth::kAfter;
    return Emit(
        *a, [&](std::ostream& out) { return renderer::RenderDiffSvg(diff, diff_options, out); });
  }
  return Emit(*a, [&](std::ostream& out) { return renderer::RenderSvg(after, o, out); });
}

// The options only `diff` has, beyond the rendering ones.
struct DiffFlags {
  bool diff_inclusive = false;
  bool normalize = false;
  CoordinatorFlags coordinator;  // for batch-id inputs
  size_t top = 10;
  std::vector<std::string> fail_above;  // [METRIC=]PCT, repeatable (cli/suite_diff.h Gate)
  bool json = false;
};

// Loads one side of a diff: `batch:ID`, a directory from `flamefleet fetch`, a
// .masm program, a folded file (or "-"), else a batch id on the coordinator.
absl::StatusOr<DiffInput> LoadDiffSide(const std::string& arg, const RenderArgs& a,
                                       const DiffFlags& flags,
                                       const FoldedReadOptions& read_options) {
  auto from_batch = [&](const std::string& id, bool explicit_batch) -> absl::StatusOr<DiffInput> {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
        ConnectToCoordinator(flags.coordinator);
    if (!channel.ok()) return channel.status();
    BatchClient client(*channel);
    absl::StatusOr<DiffInput> in = LoadBatch(client, id);
    if (in.ok()) {
      in->label = arg;
      return in;
    }
    return absl::Status(
        in.status().code(),
        absl::StrCat(arg, explicit_batch ? "" : ": no such file or directory; as a batch id",
                     " on ", flags.coordinator.address, ": ", in.status().message()));
  };
  if (absl::StartsWith(arg, "batch:")) return from_batch(arg.substr(6), true);
  std::error_code ec;
  if (arg != "-" && std::filesystem::is_directory(arg, ec)) {
    return LoadOutputDirectory(arg, read_options);
  }
  if (absl::EndsWith(arg, ".json") && std::filesystem::exists(arg, ec)) {
    return LoadSummarySide(arg);
  }
  DiffInput in;
  in.kind = DiffInput::Kind::kProfile;
  in.label = arg;
  if (absl::EndsWith(arg, ".masm")) {
    // A program: run it and diff its profile.
    absl::StatusOr<Profile> p = ProfileMasmFile(arg, "", a.libs, false);
    if (!p.ok()) {
      return absl::Status(p.status().code(), absl::StrCat(arg, ": ", p.status().message()));
    }
    in.aggregate = *std::move(p);
    return in;
  }
  if (arg == "-" || std::filesystem::exists(arg, ec)) {
    FoldedReader reader(&in.aggregate, nullptr, read_options);
    FLAMEFLEET_RETURN_IF_ERROR(ReadInput(&reader, arg));
    ReportStats(reader);
    return in;
  }
  return from_batch(arg, false);
}

// Writes the differential graph (or two-column folded stacks) of the two sides' aggregates.
int WriteDiffGraph(RenderArgs* a, std::vector<DiffInput>& sides,
                   const profile::OutputFormat& format) {
  RenderOptions& o = a->options;
  Profile& before = sides[0].aggregate;
  Profile& after = sides[1].aggregate;
  if (o.reverse) {
    before = before.Reversed(0);
    after = after.Reversed(0);
    o.reverse = false;
  }
  const profile::ProfileDiff diff = profile::ProfileDiff::Compute(before, after);
  int code = kExitOk;
  if (format.format == profile::ProfileFormat::kFolded) {
    std::ostringstream folded;
    absl::Status st = profile::WriteFoldedDiff(diff, folded);
    absl::StatusOr<std::string> bytes = folded.str();
    if (st.ok() && format.gzip) bytes = profile::GzipCompress(*bytes);
    if (st.ok()) st = bytes.status();
    if (st.ok()) st = renderer::WriteBytesToFile(a->output, *bytes);
    if (!st.ok()) {
      std::cerr << "flamefleet: " << st.message() << "\n";
      code = kExitError;
    }
  } else {
    code = Emit(*a, [&](std::ostream& out) { return renderer::RenderDiffSvg(diff, o, out); });
  }
  return code;
}

int RunDiff(RenderArgs* a, bool title_given, const DiffFlags& flags) {
  if (!FinishOptions(a, title_given, "Differential Flame Graph")) return kExitError;
  RenderOptions& o = a->options;
  o.diff_inclusive = flags.diff_inclusive;
  o.diff_normalize = flags.normalize;
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
  const profile::OutputFormat format =
      a->output == "-" ? profile::OutputFormat{profile::ProfileFormat::kSvg, false}
                       : profile::OutputFormatForPath(a->output, profile::ProfileFormat::kSvg);
  if (format.format != profile::ProfileFormat::kSvg &&
      format.format != profile::ProfileFormat::kFolded) {
    std::cerr << "flamefleet: diff writes a differential SVG (.svg, .svgz) or "
                 "two-column "
                 "folded stacks (.folded, .txt); "
              << a->output << " asks for " << profile::ProfileFormatName(format.format)
              << ", which has no differential form\n";
    return kExitError;
  }
  std::vector<Gate> gates;
  for (const std::string& spec : flags.fail_above) {
    absl::StatusOr<Gate> gate = ParseGate(spec);
    if (!gate.ok()) {
      std::cerr << "flamefleet: " << gate.status().message() << "\n";
      return kExitError;
    }
    gates.push_back(*std::move(gate));
  }
  FoldedReadOptions read_options;
  read_options.scale = a->scale;
  std::vector<DiffInput> sides;
  for (const std::string& arg : a->inputs) {
    absl::StatusOr<DiffInput> side = LoadDiffSide(arg, *a, flags, read_options);
    if (!side.ok()) {
      std::cerr << "flamefleet: " << side.status().message() << "\n";
      return kExitError;
    }
    sides.push_back(*std::move(side));
  }
  if (absl::Status st = CheckComparable(sides[0], sides[1]); !st.ok()) {
    std::cerr << "flamefleet: " << st.message() << "\n";
    return kExitError;
  }
  // A summary file has no stacks: then only the tables, on stdout, and no graph.
  const bool no_stacks =
      sides[0].kind == DiffInput::Kind::kSummary || sides[1].kind == DiffInput::Kind::kSummary;
  if (no_stacks && a->output != "-") {
    std::cerr << "flamefleet: "
              << (sides[0].kind == DiffInput::Kind::kSummary ? sides[0].label : sides[1].label)
              << " is a summary without stacks, so there is no differential graph to write to "
              << a->output
              << "; drop -o for the tables, or compare fetched directories or folded files\n";
    return kExitError;
  }
  const SuiteDiff suite = CompareSuites(sides[0], sides[1]);
  // What each gate found over its threshold; judged before anything is written, so a misspelt
  // procedure fails at once.
  std::vector<std::vector<CycleDelta>> over;
  for (const Gate& gate : gates) {
    absl::StatusOr<std::vector<CycleDelta>> regressions = GateRegressions(suite, gate);
    if (!regressions.ok()) {
      std::cerr << "flamefleet: " << regressions.status().message() << "\n";
      return kExitError;
    }
    over.push_back(*std::move(regressions));
  }
  // The tables go to stdout, unless the graph does.
  std::ostream& table = a->output == "-" && !no_stacks ? std::cerr : std::cout;
  if (flags.json) {
    nlohmann::json j = SuiteDiffJson(suite, flags.top);
    j["gates"] = nlohmann::json::array();
    for (size_t i = 0; i < gates.size(); ++i) {
      nlohmann::json rows = nlohmann::json::array();
      for (const CycleDelta& d : over[i]) {
        rows.push_back({{"name", d.name},
                        {"before", d.before},
                        {"after", d.after},
                        {"delta", d.delta()},
                        {"percent", std::isinf(d.percent()) ? nlohmann::json(nullptr)
                                                            : nlohmann::json(d.percent())}});
      }
      j["gates"].push_back({{"metric", gates[i].MetricName()},
                            {"fail_above_percent", gates[i].percent},
                            {"failed", !over[i].empty()},
                            {"over", rows}});
      const std::string note = GateNote(suite, gates[i]);
      if (!note.empty()) j["gates"].back()["note"] = note;
    }
    table << j.dump(2) << "\n";
  } else {
    PrintSuiteDiff(suite, flags.top, table);
  }
  table.flush();
  for (const Gate& gate : gates) {
    const std::string note = GateNote(suite, gate);
    if (!note.empty()) std::cerr << "flamefleet: note: " << note << "\n";
  }

  int code = kExitOk;
  if (!no_stacks) code = WriteDiffGraph(a, sides, format);
  if (code != kExitOk) return code;
  for (size_t i = 0; i < gates.size(); ++i) {
    if (over[i].empty()) continue;
    code = kExitRegression;
    if (gates[i].metric == Gate::Metric::kJobCycles) {
      std::cerr << "flamefleet: " << over[i].size() << " job(s) grew by more than "
                << gates[i].percent << "%:";
    } else if (gates[i].metric == Gate::Metric::kPhase) {
      std::cerr << "flamefleet: " << gates[i].MetricName() << " (total cycles) grew by more than "
                << gates[i].percent << "%:";
    } else if (gates[i].metric == Gate::Metric::kPadded) {
      std::cerr << "flamefleet: " << over[i].size()
                << " job(s) whose padded trace length grew by more than " << gates[i].percent
                << "%:";
    } else {
      std::cerr << "flamefleet: " << gates[i].MetricName()
                << " (inclusive cycles) grew by more than " << gates[i].percent << "%:";
    }
    for (const CycleDelta& d : over[i]) {
      std::cerr << " " << d.name << " ("
                << (std::isinf(d.percent()) ? std::string("new cycles")
                                            : absl::StrFormat("%+.2f%%", d.percent()))
                << ")";
    }
    std::cerr << "\n";
  }
  return code;
}

}  // namespace

void AddRenderCommands(CLI::App& app, int* exit_code) {
  // The argument structs must live as long as `app` (CLI11 binds options to
  // their fields) and are shared by the option bindings and the callback, hence
  // shared_ptr owned by the callbacks that `app` keeps.
  auto render = std::make_shared<RenderArgs>();
  CLI::App* render_cmd =
      app.add_subcommand("render",
                         "Render folded stacks as an interactive SVG flame graph (or as folded, "
                         "pprof or speedscope, by the output name)");
  render_cmd->add_option("inputs", render->inputs, "folded input files (- = stdin)")->required();
  AddCommonOptions(render_cmd, render.get());
  // render and diff print their own "flamefleet: ..." messages and pick their exit codes.
  SetCommand(render_cmd, exit_code, [render, render_cmd] {
    return ExitCode{RunRender(render.get(), render_cmd->count("--title") != 0)};
  });

  auto diff = std::make_shared<RenderArgs>();
  auto diff_flags = std::make_shared<DiffFlags>();
  CLI::App* diff_cmd = app.add_subcommand(
      "diff",
      "Compare two profiles, fetched directories or batches: a differential SVG flame graph and "
      "delta tables (--json: JSON), with a regression gate (--fail-above)");
  diff_cmd->add_option("--lib", diff->libs, "library NAMESPACE=DIR for .masm inputs (repeatable)");
  diff_cmd
      ->add_option("inputs", diff->inputs,
                   "BEFORE AFTER: each a folded file, a .masm program, a summary .json, a "
                   "directory written by `flamefleet fetch`, or a batch id (batch:ID forces one)")
      ->required()
      ->expected(2);
  AddCommonOptions(diff_cmd, diff.get());
  diff_cmd->get_option("--output")
      ->description(
          "output file: .svg/.svgz differential graph (default - = stdout) or "
          ".folded two-column stacks");
  diff_cmd->add_option("--diff-width", diff->diff_width,
                       "frame widths from: max (default; shows new and "
                       "vanished), after, before");
  diff_cmd->add_flag("--diff-inclusive", diff_flags->diff_inclusive, "colour by inclusive delta");
  diff_cmd->add_flag("-n,--normalize", diff_flags->normalize, "scale BEFORE to AFTER's total");
  AddCoordinatorFlags(diff_cmd, &diff_flags->coordinator);  // for batch-id inputs
  diff_cmd->add_option("--top", diff_flags->top, "rows in the jobs and frames tables (default 10)");
  diff_cmd
      ->add_option("--fail-above", diff_flags->fail_above,
                   "exit 3 if a metric grew by more than PCT percent: PCT or cycles=PCT (any job "
                   "on both sides), proc:NAME=PCT (a procedure's inclusive cycles), "
                   "phase:NAME=PCT (a phase's total cycles; needs summaries), padded:PCT (a "
                   "job's padded trace length; needs summaries with a trace shape); repeatable")
      ->allow_extra_args(false);
  diff_cmd->add_flag("--json", diff_flags->json, "print the tables as JSON");
  SetCommand(diff_cmd, exit_code, [diff, diff_cmd, diff_flags] {
    return ExitCode{RunDiff(diff.get(), diff_cmd->count("--title") != 0, *diff_flags)};
  });
}

}  // namespace flamefleet::cli
