#include "vm/parser/source_manager.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace flamefleet::vm {
namespace {

const std::string& EmptyString() {
  static const std::string* const kEmpty = new std::string();
  return *kEmpty;
}

}  // namespace

uint32_t SourceManager::Add(std::string path, std::string text) {
  auto file = std::make_unique<File>();
  file->path = std::move(path);
  file->text = std::move(text);
  file->line_starts.push_back(0);
  const std::string& t = file->text;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '\n') file->line_starts.push_back(i + 1);
  }
  files_.push_back(std::move(file));
  return static_cast<uint32_t>(files_.size() - 1);
}

absl::StatusOr<uint32_t> SourceManager::Load(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  }
  if (std::filesystem::is_directory(st)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot open file"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat(path, ": read error"));
  return Add(path, std::move(text));
}

const SourceManager::File* SourceManager::Find(uint32_t id) const {
  return id < files_.size() ? files_[id].get() : nullptr;
}

const std::string& SourceManager::path(uint32_t id) const {
  const File* f = Find(id);
  return f != nullptr ? f->path : EmptyString();
}

const std::string& SourceManager::text(uint32_t id) const {
  const File* f = Find(id);
  return f != nullptr ? f->text : EmptyString();
}

absl::string_view SourceManager::Line(uint32_t id, uint32_t line) const {
  const File* f = Find(id);
  if (f == nullptr || line == 0 || line > f->line_starts.size()) return {};
  const size_t begin = f->line_starts[line - 1];
  size_t end = line < f->line_starts.size() ? f->line_starts[line] - 1 : f->text.size();
  if (end > begin && f->text[end - 1] == '\r') --end;
  return absl::string_view(f->text).substr(begin, end - begin);
}

std::string SourceManager::Format(ast::SourceLocation loc, absl::string_view message) const {
  const absl::string_view full = Line(loc.file_id, loc.line);
  const size_t column = loc.column > 0 ? loc.column - 1 : 0;  // byte offset of the caret
  // A long line is cut to a window of kMaxEchoedColumns bytes around the caret.
  size_t begin = 0, end = full.size();
  if (full.size() > kMaxEchoedColumns) {
    const size_t caret = std::min(column, full.size());
    begin = caret > kMaxEchoedColumns / 2 ? caret - kMaxEchoedColumns / 2 : 0;
    end = std::min(full.size(), begin + kMaxEchoedColumns);
    begin = end > kMaxEchoedColumns ? std::min(begin, end - kMaxEchoedColumns) : 0;
    // Never cut a UTF-8 sequence.
    auto continuation = [&](size_t i) {
      return (static_cast<unsigned char>(full[i]) & 0xC0) == 0x80;
    };
    while (begin > 0 && begin < full.size() && continuation(begin)) --begin;
    while (end < full.size() && end > begin && continuation(end)) --end;
  }
  const bool cut_left = begin > 0, cut_right = end < full.size();
  const absl::string_view line = full.substr(begin, end - begin);
  std::string out =
      absl::StrCat(path(loc.file_id), ":", loc.line, ":", loc.column, ": ", message, "\n",
                   cut_left ? "\u2026" : "", line, cut_right ? "\u2026" : "", "\n");
  if (cut_left) out.push_back(' ');  // under the one-column mark
  for (size_t i = begin; i < column; ++i) {
    out.push_back(i < full.size() && full[i] == '\t' ? '\t' : ' ');
  }
  out.push_back('^');
  return out;
}

}  // namespace flamefleet::vm
