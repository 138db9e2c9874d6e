#include "vm/executor/system_events.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace flamefleet::vm {

namespace {

const SystemEventRow* FindRow(std::span<const SystemEventRow> rows, uint64_t id) {
  const auto it =
      std::lower_bound(rows.begin(), rows.end(), id,
                       [](const SystemEventRow& row, uint64_t key) { return row.id < key; });
  if (it == rows.end() || it->id != id) return nullptr;
  return &*it;
}

}  // namespace

absl::StatusOr<SystemEventTable> SystemEventTable::Create(
    std::span<const SystemEventRow> rows, const SystemEventLayout& layout,
    std::span<const SystemEventRow> library_rows) {
  SystemEventTable table(rows, layout, library_rows);
  for (size_t i = 0; i < library_rows.size(); ++i) {
    const SystemEventRow& row = library_rows[i];
    if (i > 0 && library_rows[i - 1].id >= row.id) {
      return absl::InvalidArgumentError(absl::StrCat("system event table: library id ", row.id,
                                                     " does not follow ", library_rows[i - 1].id,
                                                     " (ids must be strictly increasing)"));
    }
    if (static_cast<size_t>(row.handler) >= kNumSystemEventHandlers) {
      return absl::InvalidArgumentError(
          absl::StrCat("system event table: event ", row.id, " has an unknown handler"));
    }
    if (FindRow(rows, row.id) != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("system event table: id ", row.id, " is both a system and a library event"));
    }
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const SystemEventRow& row = rows[i];
    if (i > 0 && rows[i - 1].id >= row.id) {
      return absl::InvalidArgumentError(absl::StrCat("system event table: id ", row.id,
                                                     " does not follow ", rows[i - 1].id,
                                                     " (ids must be strictly increasing)"));
    }
    const size_t h = static_cast<size_t>(row.handler);
    if (h >= kNumSystemEventHandlers) {
      return absl::InvalidArgumentError(
          absl::StrCat("system event table: event ", row.id, " has an unknown handler"));
    }
    if (table.row_by_handler_[h] != 0) {
      return absl::InvalidArgumentError(absl::StrCat("system event table: events ",
                                                     rows[table.row_by_handler_[h] - 1].id, " and ",
                                                     row.id, " have the same handler"));
    }
    table.row_by_handler_[h] = static_cast<uint32_t>(i + 1);
    if (!row.name.empty()) {
      for (size_t j = 0; j < i; ++j) {
        if (rows[j].name == row.name) {
          return absl::InvalidArgumentError(
              absl::StrCat("system event table: duplicate name 'adv.", std::string(row.name), "'"));
        }
      }
    }
  }
  return table;
}

const SystemEventRow* SystemEventTable::FindById(uint64_t id) const { return FindRow(rows_, id); }

const SystemEventRow* SystemEventTable::FindLibraryEventById(uint64_t id) const {
  return FindRow(library_rows_, id);
}

const SystemEventRow* SystemEventTable::FindByName(absl::string_view name) const {
  if (name.empty()) return nullptr;
  const std::string_view key(name.data(), name.size());
  for (const SystemEventRow& row : rows_) {
    if (row.name == key) return &row;
  }
  return nullptr;
}

std::optional<uint64_t> SystemEventTable::IdOf(SystemEventHandler handler) const {
  const size_t h = static_cast<size_t>(handler);
  if (h >= kNumSystemEventHandlers || row_by_handler_[h] == 0) return std::nullopt;
  return rows_[row_by_handler_[h] - 1].id;
}

}  // namespace flamefleet::vm
