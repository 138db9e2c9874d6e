// Writing a profile in any output format, chosen by the output file's name: SVG (drawn here),
// gzipped SVG, folded stacks, pprof or speedscope (profile/export.h). Every command that writes a
// profile (`flamefleet profile -o`, `render -o`, `fetch --format`, `aggregate -o`) goes through
// WriteProfileFile, so one name means one format everywhere.
//
// It lives in renderer/ because that is the lowest layer that sees both sides: the exports are pure
// functions of profile/ (which must not depend on the renderer), and the SVG needs the renderer.
// The renderer library is gRPC-free, so the CLI, the coordinator and the worker can all link it.
//
//   RenderOptions options;
//   options.title = "nightly";
//   FLAMEFLEET_RETURN_IF_ERROR(WriteProfileFile(profile, "out/nightly.pb.gz", options));
//
// Thread-safety: the functions are pure apart from writing the named file or stream; concurrent
// calls on shared const profiles are safe.
#ifndef FLAMEFLEET_RENDERER_PROFILE_FILE_H_
#define FLAMEFLEET_RENDERER_PROFILE_FILE_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "profile/export.h"
#include "profile/profile.h"
#include "renderer/flamegraph.h"

namespace flamefleet::renderer {

// Returns the bytes of `profile` in `format` (gzip-compressed if format.gzip): an SVG drawn with
// `options`, folded text, pprof (profile::EncodePprof) or speedscope JSON
// (profile::EncodeSpeedscope); the exports take their name from options.title and ignore the
// other options. Returns InvalidArgument for bad SVG options, FailedPrecondition for an SVG of an
// empty profile (the bytes are then lost: use WriteProfileFile to keep flamegraph.pl's error SVG),
// and the exports' errors.
absl::StatusOr<std::string> EncodeProfile(const profile::Profile& profile,
                                          profile::OutputFormat format,
                                          const RenderOptions& options);

// Writes `profile` to `out` in `format` (as EncodeProfile). For an SVG of an empty profile the
// error SVG is still written and FailedPrecondition returned. DataLoss if the stream fails.
absl::Status WriteProfile(const profile::Profile& profile, profile::OutputFormat format,
                          const RenderOptions& options, std::ostream& out);

// Writes `profile` to the file `path` in the format its name asks for
// (profile::OutputFormatForPath(path, fallback)): .svg/.svgz/.svg.gz, .pb.gz, .speedscope.json,
// .folded/.txt(.gz), otherwise `fallback` (gzipped if the name ends in .gz). The file is written
// as WriteBytesToFile does (temporary name + rename), so readers never see half a file. An empty
// profile gives a valid empty export; for an SVG it gives flamegraph.pl's error SVG and returns
// FailedPrecondition. Returns NotFound / PermissionDenied / InvalidArgument if the file cannot be
// created, DataLoss if writing fails, and EncodeProfile's errors.
absl::Status WriteProfileFile(const profile::Profile& profile, const std::string& path,
                              const RenderOptions& options,
                              profile::ProfileFormat fallback = profile::ProfileFormat::kFolded);

// Writes `bytes` to `path` verbatim, through a temporary file beside it and a rename (a path that
// exists and is not a regular file, such as /dev/stdout, is written in place). Errors as
// WriteProfileFile.
absl::Status WriteBytesToFile(const std::string& path, absl::string_view bytes);

}  // namespace flamefleet::renderer

#endif  // FLAMEFLEET_RENDERER_PROFILE_FILE_H_
