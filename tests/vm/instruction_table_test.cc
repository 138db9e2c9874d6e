// Tests of vm/assembler/instruction_table.h: lookups, the sortedness check, and the v0.16
// table's agreement with its system events.
#include "vm/assembler/instruction_table.h"

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "vm/dialects/v0_16/v0_16.h"
#include "vm/executor/system_events.h"

namespace flamefleet::vm {
namespace {

absl::Status LowerNothing(lowering::Lowering&) { return absl::OkStatus(); }

constexpr SystemEventRow kNoEvents[] = {{7, "seven", SystemEventHandler::kU64Div}};

constexpr InstructionRow kSorted[] = {
    {"add", Form::kFelt, 0, 0, LowerNothing},    {"adv", Form::kAdv, 0, 0, LowerNothing},
    {"debug", Form::kDebug, 0, 0, LowerNothing}, {"exec", Form::kInvoke, 0, 0, nullptr},
    {"exp", Form::kExp, 0, 0, LowerNothing},     {"swap", Form::kStackIndex, 1, 15, LowerNothing},
};
static_assert(RowsSortedAndUnique(kSorted));

constexpr InstructionRow kUnsorted[] = {
    {"swap", Form::kPlain, 0, 0, LowerNothing},
    {"add", Form::kPlain, 0, 0, LowerNothing},
};
static_assert(!RowsSortedAndUnique(kUnsorted));

constexpr InstructionRow kDuplicate[] = {
    {"add", Form::kPlain, 0, 0, LowerNothing},
    {"add", Form::kFelt, 0, 0, LowerNothing},
};
static_assert(!RowsSortedAndUnique(kDuplicate));

const SystemEventTable& Events() {
  static const SystemEventTable* const events =
      new SystemEventTable(*SystemEventTable::Create(kNoEvents));
  return *events;
}

InstructionTable SortedTable() {
  absl::StatusOr<InstructionTable> table = InstructionTable::Create(kSorted, Events());
  EXPECT_TRUE(table.ok()) << table.status();
  return *table;
}

TEST(InstructionTableTest, FindReturnsTheRowOfAMnemonic) {
  const InstructionTable table = SortedTable();
  const InstructionRow* swap = table.Find("swap");
  ASSERT_NE(swap, nullptr);
  EXPECT_EQ(swap->name, "swap");
  EXPECT_EQ(swap->form, Form::kStackIndex);
  EXPECT_EQ(swap->min, 1u);
  EXPECT_EQ(swap->max, 15u);
  ASSERT_NE(table.Find("add"), nullptr);
  EXPECT_EQ(table.Find("add")->name, "add");
  EXPECT_EQ(table.rows().size(), 6u);
  EXPECT_EQ(&table.events(), &Events());
}

TEST(InstructionTableTest, FindReturnsNullForUnknownNames) {
  const InstructionTable table = SortedTable();
  EXPECT_EQ(table.Find("frobnicate"), nullptr);
  EXPECT_EQ(table.Find(""), nullptr);
  EXPECT_EQ(table.Find("ad"), nullptr);     // a prefix of a row
  EXPECT_EQ(table.Find("adds"), nullptr);   // a row is a prefix of it
  EXPECT_EQ(table.Find("zzz"), nullptr);    // after the last row
  EXPECT_EQ(table.Find("aaa"), nullptr);    // before the first row
  EXPECT_EQ(table.Find("adv.x"), nullptr);  // Find takes mnemonics, not AST names
}

TEST(InstructionTableTest, FindForInstructionUnderstandsDottedAstNames) {
  const InstructionTable table = SortedTable();
  EXPECT_EQ(table.FindForInstruction("add"), table.Find("add"));
  EXPECT_EQ(table.FindForInstruction("adv.push_mapval"), table.Find("adv"));
  EXPECT_EQ(table.FindForInstruction("debug.stack"), table.Find("debug"));
  EXPECT_EQ(table.FindForInstruction("exp"), table.Find("exp"));
  EXPECT_EQ(table.FindForInstruction("exp.u"), table.Find("exp"));
  // The AST never holds a bare adv/debug, and only those three forms take a dotted suffix.
  EXPECT_EQ(table.FindForInstruction("adv"), nullptr);
  EXPECT_EQ(table.FindForInstruction("debug"), nullptr);
  EXPECT_EQ(table.FindForInstruction("add.1"), nullptr);
  EXPECT_EQ(table.FindForInstruction("exec.foo"), nullptr);
  EXPECT_EQ(table.FindForInstruction("frob.x"), nullptr);
  EXPECT_EQ(table.FindForInstruction("exec"), table.Find("exec"));
}

TEST(InstructionTableTest, CreateRefusesUnsortedRows) {
  absl::StatusOr<InstructionTable> table = InstructionTable::Create(kUnsorted, Events());
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(table.status().message(), "'add' does not follow 'swap'"))
      << table.status();
}

TEST(InstructionTableTest, CreateRefusesDuplicateNames) {
  absl::StatusOr<InstructionTable> table = InstructionTable::Create(kDuplicate, Events());
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(table.status().message(), "'add' does not follow 'add'"))
      << table.status();
}

TEST(InstructionTableTest, CreateRefusesEmptyNames) {
  constexpr InstructionRow kEmpty[] = {{"", Form::kPlain, 0, 0, LowerNothing}};
  absl::StatusOr<InstructionTable> table = InstructionTable::Create(kEmpty, Events());
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(InstructionTableTest, CreateAcceptsAnEmptyTable) {
  absl::StatusOr<InstructionTable> table =
      InstructionTable::Create(std::span<const InstructionRow>(), Events());
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->Find("add"), nullptr);
}

TEST(InstructionTableTest, V016TableHasEveryMnemonicOnceWithItsSyntax) {
  const InstructionTable& table = v0_16::Instructions();
  EXPECT_TRUE(RowsSortedAndUnique(table.rows()));
  EXPECT_EQ(table.rows().size(), 126u);
  EXPECT_EQ(&table.events(), &v0_16::SystemEvents());
  ASSERT_NE(table.Find("u32rotr"), nullptr);
  EXPECT_EQ(table.Find("u32rotr")->form, Form::kShift);
  EXPECT_EQ(table.Find("u32rotr")->max, 31u);
  ASSERT_NE(table.Find("loc_storew"), nullptr);
  EXPECT_EQ(table.Find("loc_storew")->form, Form::kLocal);
  EXPECT_EQ(table.Find("loc_storew")->max, 65535u);
  EXPECT_EQ(table.Find("eval_circuit"), nullptr);  // a later dialect's spelling
}

TEST(InstructionTableTest, V016RowsWithoutLoweringAreTheMastNodeInstructions) {
  std::string names;
  for (const InstructionRow& row : v0_16::Instructions().rows()) {
    if (row.lower == nullptr) names += std::string(row.name) + " ";
  }
  EXPECT_EQ(names, "call dyncall dynexec exec procref syscall ");
}

}  // namespace
}  // namespace flamefleet::vm
