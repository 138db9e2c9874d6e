// Whole-file helpers shared by every component that writes state or artifacts to disk: an atomic
// replace (temp file beside the target, fsync, rename, fsync of the directory, as leveldb's
// SetCurrentFile), a bounded read, and gzip in memory. Nothing here logs or throws; every failure
// is a Status whose message names the file (or "gzip") and the step that failed.
//
//   FLAMEFLEET_RETURN_IF_ERROR(WriteFileAtomically(path, bytes));
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::string again, ReadFile(path, /*max_bytes=*/1 << 20));
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::string gz, Gzip(again));
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::string plain, Gunzip(gz, /*max_bytes=*/1 << 20));
#ifndef FLAMEFLEET_COMMON_FILE_H_
#define FLAMEFLEET_COMMON_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace flamefleet {

// Replaces `path` with `bytes` so that a reader (or a crash) sees either the old file or the whole
// new one: writes `<path>.tmp.<pid>.<n>` beside it (mode 0644), fsyncs it, renames it over
// `path`, then fsyncs the directory so the rename is durable. On failure the temp file is removed
// and `path` is untouched. Returns Internal("<step> <file>: <strerror>"), step being one of
// open / write / fsync / close / rename. Thread-safe (each call uses its own temp name).
absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes);

// Reads the whole of `path`. Returns NotFound("<path>: no such file") if it does not exist,
// ResourceExhausted naming the path and `max_bytes` if it is larger than `max_bytes` (checked
// before reading, and again while reading for files that grow), InvalidArgument for a directory,
// and Internal("read <path>: <strerror>") for other I/O errors. Thread-safe.
absl::StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes);

// Compresses `bytes` into one gzip member (deflate level 6, gzip header and trailer). The same
// input always gives the same output. Returns Internal only if zlib fails. Thread-safe.
absl::StatusOr<std::string> Gzip(absl::string_view bytes);

// Decompresses gzip data (one or more concatenated members). Returns InvalidArgument("not a gzip
// stream") or InvalidArgument("truncated gzip stream") for bad input, and ResourceExhausted naming
// `max_bytes` if the output would be larger than `max_bytes` (decompression stops there, so a
// small "zip bomb" costs at most `max_bytes` of memory). Thread-safe.
absl::StatusOr<std::string> Gunzip(absl::string_view bytes, size_t max_bytes);

}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_FILE_H_
