// Tests of vm/executor/system_events.h: lookups by id, name and handler, the table checks, and
// the v0.16 rows.
#include "vm/executor/system_events.h"

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "vm/dialects/v0_16/v0_16.h"

namespace flamefleet::vm {
namespace {

using H = SystemEventHandler;

constexpr SystemEventRow kRows[] = {
    {10, "push_u64div", H::kU64Div},
    {20, "", H::kU32Clz},
    {30, "has_mapkey", H::kHasMapKey},
};

SystemEventTable Table() {
  absl::StatusOr<SystemEventTable> table = SystemEventTable::Create(kRows);
  EXPECT_TRUE(table.ok()) << table.status();
  return *table;
}

TEST(SystemEventTableTest, FindsRowsById) {
  const SystemEventTable table = Table();
  for (const SystemEventRow& row : kRows) {
    ASSERT_EQ(table.FindById(row.id), &row) << row.id;
  }
  EXPECT_EQ(table.FindById(0), nullptr);
  EXPECT_EQ(table.FindById(15), nullptr);
  EXPECT_EQ(table.FindById(31), nullptr);
  EXPECT_EQ(table.FindById(UINT32_MAX), nullptr);
}

TEST(SystemEventTableTest, FindsRowsByAdvName) {
  const SystemEventTable table = Table();
  ASSERT_NE(table.FindByName("has_mapkey"), nullptr);
  EXPECT_EQ(table.FindByName("has_mapkey")->id, 30u);
  EXPECT_EQ(table.FindByName("push_u64div")->handler, H::kU64Div);
  EXPECT_EQ(table.FindByName("adv.has_mapkey"), nullptr);  // names come without "adv."
  EXPECT_EQ(table.FindByName("push_nothing"), nullptr);
  EXPECT_EQ(table.FindByName(""), nullptr);  // unnamed rows are not reachable by name
}

TEST(SystemEventTableTest, GivesTheIdOfAHandler) {
  const SystemEventTable table = Table();
  EXPECT_EQ(table.IdOf(H::kU32Clz), std::optional<uint32_t>(20));
  EXPECT_EQ(table.IdOf(H::kU64Div), std::optional<uint32_t>(10));
  EXPECT_EQ(table.IdOf(H::kFalconDiv), std::nullopt);
}

TEST(SystemEventTableTest, CreateRefusesIdsOutOfOrder) {
  constexpr SystemEventRow kBad[] = {{20, "a", H::kU64Div}, {10, "b", H::kU32Clz}};
  absl::StatusOr<SystemEventTable> table = SystemEventTable::Create(kBad);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(table.status().message(), "id 10 does not follow 20"))
      << table.status();
}

TEST(SystemEventTableTest, CreateRefusesDuplicateIds) {
  constexpr SystemEventRow kBad[] = {{10, "a", H::kU64Div}, {10, "b", H::kU32Clz}};
  EXPECT_EQ(SystemEventTable::Create(kBad).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SystemEventTableTest, CreateRefusesDuplicateHandlers) {
  constexpr SystemEventRow kBad[] = {{10, "a", H::kU64Div}, {20, "b", H::kU64Div}};
  absl::StatusOr<SystemEventTable> table = SystemEventTable::Create(kBad);
  EXPECT_EQ(table.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(table.status().message(), "same handler")) << table.status();
}

TEST(SystemEventTableTest, CreateRefusesDuplicateNamesButAllowsSeveralUnnamedRows) {
  constexpr SystemEventRow kBad[] = {{10, "a", H::kU64Div}, {20, "a", H::kU32Clz}};
  EXPECT_EQ(SystemEventTable::Create(kBad).status().code(), absl::StatusCode::kInvalidArgument);
  constexpr SystemEventRow kGood[] = {{10, "", H::kU64Div}, {20, "", H::kU32Clz}};
  EXPECT_TRUE(SystemEventTable::Create(kGood).ok());
}

TEST(SystemEventTableTest, V016HasEighteenEventsEachWithItsOwnHandler) {
  const SystemEventTable& table = v0_16::SystemEvents();
  EXPECT_EQ(table.rows().size(), 18u);
  std::set<H> handlers;
  for (const SystemEventRow& row : table.rows()) handlers.insert(row.handler);
  EXPECT_EQ(handlers.size(), 18u);
  // Spot checks of the ids and the adv.<name> spellings.
  EXPECT_EQ(table.IdOf(H::kU32Clz), std::optional<uint64_t>(1951932030));
  EXPECT_EQ(table.IdOf(H::kMerkleNodeMerge), std::optional<uint64_t>(276124218));
  ASSERT_NE(table.FindByName("push_mapval"), nullptr);
  EXPECT_EQ(table.FindByName("push_mapval")->id, 574478993u);
  ASSERT_NE(table.FindById(3419226155u), nullptr);
  EXPECT_EQ(table.FindById(3419226155u)->name, "push_falcon_div");
}

TEST(SystemEventTableTest, V016NamesTheElevenAdvEvents) {
  std::set<std::string> names;
  for (const SystemEventRow& row : v0_16::SystemEvents().rows()) {
    if (!row.name.empty()) names.insert(std::string(row.name));
  }
  EXPECT_EQ(names,
            (std::set<std::string>{"has_mapkey", "insert_hdword", "insert_hdword_d", "insert_hperm",
                                   "insert_mem", "push_falcon_div", "push_mapval", "push_mapvaln",
                                   "push_mtnode", "push_smtpeek", "push_u64div"}));
}

TEST(SystemEventTableTest, LibraryRowsAreFoundByIdOnly) {
  static constexpr SystemEventRow kLibrary[] = {
      {5, "lib::a", H::kNoop},
      {25, "lib::b", H::kNoop},  // library rows may share a handler
      {40, "lib::c", H::kUnhandled},
  };
  absl::StatusOr<SystemEventTable> table =
      SystemEventTable::Create(kRows, SystemEventLayout{.operand_offset = 1}, kLibrary);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->FindLibraryEventById(25), &kLibrary[1]);
  EXPECT_EQ(table->FindLibraryEventById(10), nullptr);  // a system event
  EXPECT_EQ(table->FindById(25), nullptr);
  EXPECT_EQ(table->FindByName("lib::a"), nullptr);
  EXPECT_EQ(table->IdOf(H::kNoop), std::nullopt);
  EXPECT_EQ(table->layout().operand_offset, 1);
}

TEST(SystemEventTableTest, RejectsLibraryRowsOutOfOrderOrSharingASystemId) {
  static constexpr SystemEventRow kUnsorted[] = {{25, "b", H::kNoop}, {5, "a", H::kNoop}};
  EXPECT_EQ(SystemEventTable::Create(kRows, {}, kUnsorted).status().code(),
            absl::StatusCode::kInvalidArgument);
  static constexpr SystemEventRow kShared[] = {{20, "clz", H::kNoop}};
  absl::StatusOr<SystemEventTable> shared = SystemEventTable::Create(kRows, {}, kShared);
  EXPECT_EQ(shared.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(shared.status().message(), "both a system and a library event"));
}

TEST(SystemEventTableTest, V016KeepsTheClassicLayout) {
  const SystemEventLayout& layout = v0_16::SystemEvents().layout();
  EXPECT_EQ(layout.operand_offset, 0);
  EXPECT_EQ(layout.order, SystemEventLayout::Order::kElement0Deepest);
  EXPECT_FALSE(layout.unknown_events_fail);
  EXPECT_TRUE(v0_16::SystemEvents().library_rows().empty());
}

}  // namespace
}  // namespace flamefleet::vm
