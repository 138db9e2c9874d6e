#include "vm/assembler/instruction_table.h"

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "vm/executor/system_events.h"

namespace flamefleet::vm {
namespace {

// Forms whose AST name carries a dotted suffix after the mnemonic.
bool HasDottedName(Form form) {
  return form == Form::kAdv || form == Form::kAdvPadded || form == Form::kDebug ||
         form == Form::kExp;
}

// Forms whose AST name always carries the suffix (the bare mnemonic is never an instruction).
bool RequiresDottedName(Form form) {
  return form == Form::kAdv || form == Form::kAdvPadded || form == Form::kDebug;
}

}  // namespace

absl::StatusOr<InstructionTable> InstructionTable::Create(std::span<const InstructionRow> rows,
                                                          const SystemEventTable& events) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("instruction table: row ", i, " has an empty name"));
    }
    if (i > 0 && !(rows[i - 1].name < rows[i].name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("instruction table: '", std::string(rows[i].name), "' does not follow '",
                       std::string(rows[i - 1].name), "' (names must be sorted and unique)"));
    }
  }
  return InstructionTable(rows, events);
}

const InstructionRow* InstructionTable::Find(absl::string_view name) const {
  const std::string_view key(name.data(), name.size());
  const auto it =
      std::lower_bound(rows_.begin(), rows_.end(), key,
                       [](const InstructionRow& row, std::string_view k) { return row.name < k; });
  if (it == rows_.end() || it->name != key) return nullptr;
  return &*it;
}

const InstructionRow* InstructionTable::FindForInstruction(
    absl::string_view instruction_name) const {
  const size_t dot = instruction_name.find('.');
  if (dot == absl::string_view::npos) {
    const InstructionRow* row = Find(instruction_name);
    if (row != nullptr && RequiresDottedName(row->form)) return nullptr;
    return row;
  }
  const InstructionRow* row = Find(instruction_name.substr(0, dot));
  if (row == nullptr || !HasDottedName(row->form)) return nullptr;
  return row;
}

}  // namespace flamefleet::vm
