// Tests of the v0.25 core library's print debugging (vm/executor/debug_print.h) as the executor
// answers it: small v0.25 programs emit the events of `miden::core::debug` with the stack
// layout of crates/lib/core/asm/debug.masm at v0.25.7 (each procedure is `emit.EVENT` plus its
// drops, so `emit.event("...")` with the same pushes reproduces it; the core library itself is
// not needed), with a sink capturing what they print. The expected texts follow miden-vm
// v0.25.7's DebugPrinter (crates/lib/core/src/handlers/debug.rs) and tree format
// (processor/src/host/debug.rs).
#include "vm/executor/debug_print.h"

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/status_matchers.h"
#include "vm/vm.h"

namespace flamefleet::vm {
namespace {

using ::testing::HasSubstr;
using testutil::StatusIs;

// The emits of debug.masm's procedures, with their drops (the stack effect of the procedure).
constexpr char kPrintStack[] = R"(emit.event("miden::core::debug::print_stack"))";
constexpr char kPrintMem[] = R"(emit.event("miden::core::debug::print_mem") drop drop)";
constexpr char kPrintMemAll[] = R"(emit.event("miden::core::debug::print_mem_all"))";
constexpr char kPrintAdvStack[] = R"(emit.event("miden::core::debug::print_adv_stack") drop drop)";
constexpr char kPrintAdvStackAll[] =
    R"(push.18446744069414584320 push.0 emit.event("miden::core::debug::print_adv_stack") drop drop)";
constexpr char kPrintAdvMap[] = R"(emit.event("miden::core::debug::print_adv_map"))";
constexpr char kPrintAdvMapItem[] = R"(emit.event("miden::core::debug::print_adv_map_item") dropw)";

Word W(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return Word{Felt(a), Felt(b), Felt(c), Felt(d)};
}

struct Printed {
  absl::StatusOr<RunResult> result;
  std::string text;  // what the prints wrote
};

absl::StatusOr<Program> Assemble(absl::string_view source) {
  AssemblerOptions options;
  options.dialect = Dialect::kV0_25;
  return Assembler(options).AssembleSource("debug.masm", source);
}

// Runs `source` (v0.25) with a sink for the prints; `max_items` is the sink's item cap.
Printed RunPrinting(absl::string_view source, const ProgramInputs& inputs = {},
                    uint64_t max_items = kDefaultDebugPrintMaxItems) {
  absl::StatusOr<Program> program = Assemble(source);
  if (!program.ok()) return {program.status(), ""};
  std::ostringstream out;
  ExecutionOptions options;
  options.debug_print = &out;
  options.debug_print_max_items = max_items;
  absl::StatusOr<RunResult> result = RunProgram(*program, inputs, options);
  return {std::move(result), out.str()};
}

// Runs `source` without a sink: the prints do nothing.
absl::StatusOr<RunResult> RunQuietly(absl::string_view source, const ProgramInputs& inputs = {}) {
  absl::StatusOr<Program> program = Assemble(source);
  if (!program.ok()) return program.status();
  return RunProgram(*program, inputs, ExecutionOptions{});
}

// Runs `source` with and without a sink, expects both to succeed with the same cycles and
// stack, and returns what was printed.
std::string PrintedText(absl::string_view source, const ProgramInputs& inputs = {},
                        uint64_t expected_cycles = 0) {
  Printed printed = RunPrinting(source, inputs);
  absl::StatusOr<RunResult> quiet = RunQuietly(source, inputs);
  EXPECT_TRUE(printed.result.ok()) << printed.result.status();
  EXPECT_TRUE(quiet.ok()) << quiet.status();
  if (!printed.result.ok() || !quiet.ok()) return printed.text;
  EXPECT_EQ(printed.result->cycles, quiet->cycles);
  EXPECT_EQ(printed.result->stack, quiet->stack);
  if (expected_cycles != 0) {
    EXPECT_EQ(printed.result->cycles, expected_cycles);
  }
  return printed.text;
}

TEST(DebugPrintTest, PrintStackShowsTheWholeStackBelowTheEventIdAligned) {
  // SPAN 0, the entry prologue 1-4, push.1 (PAD INCR) 5-6, push.2 push.3 7-8, a padding NOOP
  // 9 (an op with an immediate does not end a group), PUSH(id) 10, EMIT 11, DROP 12, drop x3
  // 13-15, NOOP 16, END 17: 18 cycles. 19 elements below the id: labels two wide.
  const std::string text = PrintedText(
      absl::StrCat("begin push.1 push.2 push.3 ", kPrintStack, " drop drop drop end"), {}, 18);
  std::string expected = "Stack state before step 11:\n├──  0: 3\n├──  1: 2\n├──  2: 1\n";
  for (int i = 3; i < 18; ++i) {
    absl::StrAppend(&expected, "├── ", i < 10 ? " " : "", i, ": 0\n");
  }
  absl::StrAppend(&expected, "└── 18: 0\n");
  EXPECT_EQ(text, expected);
}

TEST(DebugPrintTest, BeforeStepIsTheClockAClkInstructionSeesInPlaceOfTheEmit) {
  // The print names the clk of its EMIT row, which is what upstream's process.clock() is while
  // the event is handled; `clk` in the EMIT's place (same rows before it) pushes the same value.
  uint64_t id = 0;
  for (const SystemEventRow& row : GetDialectSpec(Dialect::kV0_25).events->library_rows()) {
    if (row.name == "miden::core::debug::print_stack") id = row.id;
  }
  ASSERT_NE(id, 0u);
  const std::string prefix = "begin push.7 mem_store.40 repeat.3 push.1 drop end ";
  const std::string text = PrintedText(absl::StrCat(prefix, kPrintStack, " end"));
  ASSERT_OK_AND_ASSIGN(
      RunResult clk, RunQuietly(absl::StrCat(prefix, "push.", id, " clk swap drop swap drop end")));
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("Stack state before step ", clk.stack[0].value(), ":\n")));
}

TEST(DebugPrintTest, PrintMemListsEveryAddressOfTheRangeWithEmptyCells) {
  // mem_store writes the whole word 100..103 (the other three elements read 0); 104..109 were
  // never written.
  const std::string text = PrintedText(
      absl::StrCat("begin push.42 push.100 mem_store push.110 push.100 ", kPrintMem, " end"));
  EXPECT_EQ(text,
            "Memory state before step 14 for context 0 in the range [100, 109]:\n"
            "├── 0x00000064: 42\n"
            "├── 0x00000065: 0\n"
            "├── 0x00000066: 0\n"
            "├── 0x00000067: 0\n"
            "├── 0x00000068: EMPTY\n"
            "├── 0x00000069: EMPTY\n"
            "├── 0x0000006a: EMPTY\n"
            "├── 0x0000006b: EMPTY\n"
            "├── 0x0000006c: EMPTY\n"
            "└── 0x0000006d: EMPTY\n");
}

TEST(DebugPrintTest, PrintMemOfAnEmptyRangeSaysSo) {
  EXPECT_EQ(PrintedText(absl::StrCat("begin push.0 push.0 ", kPrintMem, " end")),
            "Memory state before step 8 for context 0: range is empty.\n");
}

TEST(DebugPrintTest, PrintMemReachesTheLastAddress) {
  // [2^32 - 1, 2^32): the last element of the word the entry prologue wrote (the frame pointer,
  // 2^31, is its element 2).
  EXPECT_EQ(PrintedText(absl::StrCat("begin push.4294967296 push.4294967294 ", kPrintMem,
                                     " push.4294967296 push.4294967295 ", kPrintMem, " end")),
            "Memory state before step 8 for context 0 in the range [4294967294, 4294967295]:\n"
            "├── 0xfffffffe: 2147483648\n"
            "└── 0xffffffff: 0\n"
            "Memory state before step 17 for context 0 in the range [4294967295, 4294967295]:\n"
            "└── 0xffffffff: 0\n");
}

TEST(DebugPrintTest, PrintMemAllListsTheWrittenCellsInAddressOrder) {
  const std::string text = PrintedText(absl::StrCat(
      "begin push.7 push.200 mem_store push.9 push.5 mem_store ", kPrintMemAll, " end"));
  EXPECT_EQ(text,
            "Memory state before step 15 for context 0:\n"
            "├── 0x00000004: 0\n"
            "├── 0x00000005: 9\n"
            "├── 0x00000006: 0\n"
            "├── 0x00000007: 0\n"
            "├── 0x000000c8: 7\n"
            "├── 0x000000c9: 0\n"
            "├── 0x000000ca: 0\n"
            "├── 0x000000cb: 0\n"
            "├── 0xfffffffc: 0\n"
            "├── 0xfffffffd: 0\n"
            "├── 0xfffffffe: 2147483648\n"
            "└── 0xffffffff: 0\n");
}

TEST(DebugPrintTest, PrintsInACalledProcedureSeeItsContextAndMemory) {
  // The CALL row at clk 15 creates context 16 with its own memory (its frame pointer word written
  // by the CALL row): the root's cell 4 is not in it. After the return, the root's again.
  const std::string text = PrintedText(absl::StrCat("proc callee\n  push.5 push.8 mem_store ",
                                                    kPrintMemAll, " push.12 push.4 ", kPrintMem,
                                                    "\nend\nbegin\n  push.3 push.4 mem_store "
                                                    "call.callee push.5 push.4 ",
                                                    kPrintMem, "\nend\n"));
  EXPECT_EQ(text,
            "Memory state before step 22 for context 16:\n"
            "├── 0x00000008: 5\n"
            "├── 0x00000009: 0\n"
            "├── 0x0000000a: 0\n"
            "├── 0x0000000b: 0\n"
            "├── 0xfffffffc: 0\n"
            "├── 0xfffffffd: 0\n"
            "├── 0xfffffffe: 2147483648\n"
            "└── 0xffffffff: 0\n"
            "Memory state before step 28 for context 16 in the range [4, 11]:\n"
            "├── 0x00000004: EMPTY\n"
            "├── 0x00000005: EMPTY\n"
            "├── 0x00000006: EMPTY\n"
            "├── 0x00000007: EMPTY\n"
            "├── 0x00000008: 5\n"
            "├── 0x00000009: 0\n"
            "├── 0x0000000a: 0\n"
            "└── 0x0000000b: 0\n"
            "Memory state before step 39 for context 0 in the range [4, 4]:\n"
            "└── 0x00000004: 3\n");
}

TEST(DebugPrintTest, PrintAdvStackPrintsTheRangeClampedToTheStack) {
  ProgramInputs inputs;
  inputs.advice_stack = {Felt(7), Felt(8), Felt(9), Felt(10)};  // 7 is popped first
  EXPECT_EQ(PrintedText(absl::StrCat("begin push.3 push.1 ", kPrintAdvStack, " end"), inputs),
            "Advice stack state before step 9:\n├── 0: 8\n└── 1: 9\n");
  EXPECT_EQ(PrintedText(absl::StrCat("begin ", kPrintAdvStackAll, " end"), inputs),
            "Advice stack state before step 8:\n├── 0: 7\n├── 1: 8\n├── 2: 9\n└── 3: 10\n");
  // An empty slice (and one past the end) prints that the stack is empty.
  EXPECT_EQ(PrintedText(absl::StrCat("begin push.9 push.6 ", kPrintAdvStack, " end"), inputs),
            "Advice stack empty before step 8.\n");
  EXPECT_EQ(PrintedText(absl::StrCat("begin push.1 push.3 ", kPrintAdvStack, " end"), inputs),
            "Advice stack empty before step 9.\n");
}

TEST(DebugPrintTest, PrintAdvMapIsEmptyOrListsEntriesInWordOrder) {
  EXPECT_EQ(PrintedText(absl::StrCat("begin ", kPrintAdvMap, " end")),
            "Advice map before step 6: empty.\n");
  ProgramInputs inputs;
  // Word order: element 3 is the most significant, so [100, 0, 0, 0] < [1, 2, 3, 4] < [5, 6, 7,
  // 8]. Keys are right-aligned to the widest.
  inputs.advice_map = {
      {W(5, 6, 7, 8), {Felt(30)}}, {W(1, 2, 3, 4), {Felt(10), Felt(20)}}, {W(100, 0, 0, 0), {}}};
  EXPECT_EQ(PrintedText(absl::StrCat("begin ", kPrintAdvMap, " end"), inputs),
            "Advice map before step 6:\n"
            "├── [100, 0, 0, 0]: []\n"
            "├──   [1, 2, 3, 4]: [10, 20]\n"
            "└──   [5, 6, 7, 8]: [30]\n");
}

TEST(DebugPrintTest, PrintAdvMapItemPrintsTheValuesOfTheKeyOrSaysThereAreNone) {
  ProgramInputs inputs;
  inputs.advice_map = {{W(1, 2, 3, 4), {Felt(10), Felt(20), Felt(30)}}};
  // KEY = [1, 2, 3, 4]: element 0 on top.
  const std::string program =
      absl::StrCat("begin push.4 push.3 push.2 push.1 ", kPrintAdvMapItem, " end");
  EXPECT_EQ(PrintedText(program, inputs),
            "Advice map entry for key [1, 2, 3, 4] before step 11:\n"
            "├── 0: 10\n"
            "├── 1: 20\n"
            "└── 2: 30\n");
  EXPECT_EQ(PrintedText(program), "No advice map entry for key [1, 2, 3, 4] before step 11.\n");
}

TEST(DebugPrintTest, PrintMemRangeErrorsStopTheRunWithUpstreamsMessages) {
  struct Case {
    const char* pushes;  // end, then start (start on top)
    const char* message;
  };
  for (const Case& c : {
           Case{"push.1025 push.0", "print_mem range length 1025 exceeds maximum of 1024"},
           Case{"push.4294967296 push.0",
                "print_mem range length 4294967296 exceeds maximum of 1024"},
           Case{"push.18446744069414584320 push.0",
                "memory address cannot exceed 2^32 but was 18446744069414584320"},
           Case{"push.4294967296 push.4294967296",
                "memory address cannot exceed 2^32 but was 4294967296"},
           Case{"push.4 push.8",
                "memory range start address cannot exceed end address, but was (8, 4)"},
       }) {
    const std::string program = absl::StrCat("begin ", c.pushes, " ", kPrintMem, " end");
    Printed printed = RunPrinting(program);
    EXPECT_THAT(printed.result,
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr(absl::StrCat("event miden::core::debug::print_mem failed: ",
                                                c.message))))
        << c.pushes;
    EXPECT_EQ(printed.text, "") << c.pushes;
    // Without a sink the print is a no-op, as upstream's noop handlers: no error.
    EXPECT_TRUE(RunQuietly(program).ok()) << c.pushes;
  }
  // 1024 addresses are allowed.
  EXPECT_TRUE(RunPrinting(absl::StrCat("begin push.1024 push.0 ", kPrintMem, " end")).result.ok());
}

TEST(DebugPrintTest, ListsLongerThanTheItemCapEndWithTheCountOfTheRest) {
  Printed stack = RunPrinting(
      absl::StrCat("begin push.1 push.2 push.3 ", kPrintStack, " drop drop drop end"), {}, 2);
  ASSERT_OK(stack.result.status());
  EXPECT_EQ(stack.text,
            "Stack state in interval [0, 1] before step 11:\n├── 0: 3\n├── 1: 2\n"
            "└── (17 more items)\n");
  Printed mem = RunPrinting(absl::StrCat("begin ", kPrintMemAll, " end"), {}, 3);
  ASSERT_OK(mem.result.status());
  EXPECT_EQ(mem.text,
            "Memory state before step 6 for context 0:\n"
            "├── 0xfffffffc: 0\n├── 0xfffffffd: 0\n├── 0xfffffffe: 2147483648\n"
            "└── (1 more items)\n");
}

TEST(DebugPrintTest, PrintMemBoundsAreInclusiveAndChecked) {
  ASSERT_OK_AND_ASSIGN(auto bounds, PrintMemBounds(100, 110));
  EXPECT_EQ(bounds, std::make_optional(std::make_pair(100u, 109u)));
  ASSERT_OK_AND_ASSIGN(bounds, PrintMemBounds(7, 7));
  EXPECT_EQ(bounds, std::nullopt);
  ASSERT_OK_AND_ASSIGN(bounds, PrintMemBounds(4294967295, 4294967296));
  EXPECT_EQ(bounds, std::make_optional(std::make_pair(4294967295u, 4294967295u)));
  EXPECT_THAT(PrintMemBounds(4294967296, 4294967296),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "memory address cannot exceed 2^32 but was 4294967296"));
}

}  // namespace
}  // namespace flamefleet::vm
