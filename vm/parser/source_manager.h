// SourceManager owns the text of every MASM source file seen by the VM and
// turns a `SourceLocation` back into a human-readable diagnostic with the
// offending line and a caret.
//
//   SourceManager sources;
//   uint32_t id = sources.Add("main.masm", "begin\n  push.1 foo\nend\n");
//   std::string msg = sources.Format({id, 2, 10}, "unknown instruction 'foo'");
//   // main.masm:2:10: unknown instruction 'foo'
//   //   push.1 foo
//   //          ^
#ifndef FLAMEFLEET_VM_PARSER_SOURCE_MANAGER_H_
#define FLAMEFLEET_VM_PARSER_SOURCE_MANAGER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vm/parser/ast.h"

namespace flamefleet::vm {

// How much of a long source line a diagnostic echoes: a window of this many bytes around the
// caret, with a `…` mark on each side that was cut (SourceManager::Format).
inline constexpr size_t kMaxEchoedColumns = 120;

// A registry of source files, addressed by dense ids starting at 0.
//
// Thread safety: `Add` and `Load` mutate the registry and must not run
// concurrently with any other call. All const methods may be called
// concurrently with each other. References and views returned by const methods
// stay valid until the SourceManager is destroyed (files are never removed or
// moved).
class SourceManager {
 public:
  SourceManager() = default;
  SourceManager(const SourceManager&) = delete;
  SourceManager& operator=(const SourceManager&) = delete;

  // Registers `text` under the display name `path` and returns its file id (0,
  // 1, 2, ...). Never fails; the text is stored as given (any bytes).
  uint32_t Add(std::string path, std::string text);

  // Reads the file at `path` and registers it under that name. Returns the new
  // file id, or NotFound if the file does not exist, or InvalidArgument if it
  // cannot be read (e.g. it is a directory). Error messages name the path.
  absl::StatusOr<uint32_t> Load(const std::string& path);

  // Returns the number of registered files.
  size_t size() const { return files_.size(); }

  // Returns the display name of file `id`, or an empty string for an unknown
  // id.
  const std::string& path(uint32_t id) const;

  // Returns the full text of file `id`, or an empty string for an unknown id.
  const std::string& text(uint32_t id) const;

  // Returns line `line` (1-based) of file `id` without its line terminator
  // ("\n" or "\r\n"). Returns an empty view for an unknown id or a line number
  // out of range.
  absl::string_view Line(uint32_t id, uint32_t line) const;

  // Formats a diagnostic as exactly three lines:
  //   "PATH:LINE:COL: MESSAGE\n<the source line>\n<padding>^"
  // where the padding has one character per byte before column COL, copying
  // tabs from the source line (so the caret lines up) and using spaces
  // otherwise. An unknown file or line yields an empty source line. A line
  // longer than kMaxEchoedColumns bytes is cut to that many bytes around the
  // caret, with "…" where it was cut (the caret still points at COL).
  std::string Format(ast::SourceLocation loc, absl::string_view message) const;

 private:
  struct File {
    std::string path;
    std::string text;
    std::vector<size_t> line_starts;  // byte offset of the first byte of each line
  };

  const File* Find(uint32_t id) const;

  std::vector<std::unique_ptr<File>> files_;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_PARSER_SOURCE_MANAGER_H_
