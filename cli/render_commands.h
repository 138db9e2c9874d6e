// The `render` and `diff` subcommands of the flamefleet CLI: flamegraph.pl-compatible
// rendering of folded stacks into interactive SVG (or .svgz, or folded text).
//
//   CLI::App app{"flamefleet"};
//   int exit_code = 0;
//   flamefleet::cli::AddRenderCommands(app, &exit_code);
//   CLI11_PARSE(app, argc, argv);   // runs the chosen subcommand's callback
//   return exit_code;
//
// Exit codes (written to *exit_code by the callback that ran): 0 success; 1 an input could not be
// read, an option was invalid or the output could not be written; 2 the input held no samples (an
// SVG with an error message is still written, as flamegraph.pl does); 3 (`diff --fail-above` only)
// a gated metric grew by more than its PCT percent: some job present on both sides (PCT,
// cycles=PCT) or a procedure's inclusive cycles (proc:NAME=PCT). Errors and the malformed-line
// report go to stderr. Nothing is thrown by our code; CLI11's own parse exceptions are handled by
// CLI11_PARSE in main.
#ifndef FLAMEFLEET_CLI_RENDER_COMMANDS_H_
#define FLAMEFLEET_CLI_RENDER_COMMANDS_H_

#include "CLI/CLI.hpp"

namespace flamefleet::cli {

// Registers `render IN.folded... -o OUT` and `diff BEFORE AFTER -o OUT` on `app`, with
// flamegraph.pl's options (--title --subtitle --countname --nametype --width --height --fonttype
// --fontsize --fontwidth --minwidth --colors --bgcolors --hash --inverted --reverse --flamechart
// --total --factor --notes --negate --encoding) plus --searchcolor, --scale, and for diff
// --diff-width, --diff-inclusive, --normalize, --coordinator, --top, --fail-above, --json.
// An input "-" is stdin; an output "-" (the default) is stdout.
//
// `render` writes what the output name asks for (profile::OutputFormatForPath with fallback SVG):
// .svg/.svgz (or any other name) a flame graph, .folded/.txt merged folded text, .pb.gz pprof,
// .speedscope.json speedscope.
//
// `diff` takes for BEFORE and AFTER each a folded file, a .masm program, a directory written by
// `flamefleet fetch`, or a batch id on the coordinator (`batch:ID` forces that reading); see
// cli/suite_diff.h. It writes the differential SVG of the aggregates (or two-column folded text for
// .folded/.txt names; pprof and speedscope names are an error), prints the job and frame tables (to
// stdout, or stderr when the SVG goes to stdout), and with --fail-above exits 3 on a regression.
// `exit_code` must not be null and must outlive `app`'s parse; the callback that runs writes it.
// Not thread-safe (CLI11 apps are not).
void AddRenderCommands(CLI::App& app, int* exit_code);

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_RENDER_COMMANDS_H_
