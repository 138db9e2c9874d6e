#include "vm/dialect.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "vm/assembler/assembler.h"
#include "vm/crypto/hasher.h"

namespace flamefleet::vm {
namespace {

using ::flamefleet::testutil::StatusIs;
using ::testing::HasSubstr;

TEST(DialectTest, ParsesNamesWithOrWithoutTheLeadingV) {
  ASSERT_OK_AND_ASSIGN(Dialect with_v, ParseDialect("v0.16"));
  EXPECT_EQ(with_v, Dialect::kV0_16);
  ASSERT_OK_AND_ASSIGN(Dialect bare, ParseDialect("0.16"));
  EXPECT_EQ(bare, Dialect::kV0_16);
}

TEST(DialectTest, UnknownNameListsTheKnownDialects) {
  for (const char* bad : {"", "v", "v0.1", "v0.16.4", "V0.16", "v0.16 ", "vv0.16", "latest"}) {
    EXPECT_THAT(ParseDialect(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected one of v0.16")))
        << bad;
  }
  EXPECT_THAT(ParseDialect("v9"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown dialect 'v9'")));
}

TEST(DialectTest, EveryDialectRoundTripsThroughItsNameAndSpec) {
  ASSERT_FALSE(AllDialects().empty());
  for (Dialect d : AllDialects()) {
    const DialectSpec& spec = GetDialectSpec(d);
    EXPECT_EQ(spec.dialect, d);
    EXPECT_EQ(spec.name, DialectName(d));
    ASSERT_OK_AND_ASSIGN(Dialect parsed, ParseDialect(std::string(spec.name)));
    EXPECT_EQ(parsed, d);
    ASSERT_NE(spec.hasher, nullptr);
    EXPECT_FALSE(spec.engine_version.empty());
    EXPECT_EQ(&GetDialectSpec(d), &spec);  // one immutable spec per dialect
  }
}

TEST(DialectTest, ClassicDialectHashesWithRpoAndReadsJsonStacksLastOnTop) {
  const DialectSpec& spec = GetDialectSpec(Dialect::kV0_16);
  EXPECT_EQ(spec.hasher->name(), "rpo256");
  EXPECT_EQ(spec.json_stack_order, JsonStackOrder::kLastOnTop);
  // The cache key of every result computed so far: changing it invalidates them.
  EXPECT_EQ(spec.engine_version, "flamefleet-vm v0.16 r3");
  EXPECT_EQ(DialectNamesForHelp(), "v0.16, v0.25");
}

TEST(DialectTest, CurrentMidenIsTheDefaultAndUnnamedSnapshotsStayClassic) {
  // Miden developers write v0.25 today; what was recorded before dialects were named was v0.16.
  EXPECT_EQ(kDefaultDialect, Dialect::kV0_25);
  EXPECT_EQ(kUnnamedLegacyDialect, Dialect::kV0_16);
  EXPECT_EQ(AssemblerOptions{}.dialect, Dialect::kV0_25);
}

}  // namespace
}  // namespace flamefleet::vm
