#include "vm/inputs.h"

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vm/felt.h"

namespace flamefleet::vm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kP = Felt::kModulus;

std::vector<Felt> Felts(std::initializer_list<uint64_t> values) {
  std::vector<Felt> out;
  for (uint64_t v : values) out.push_back(Felt(v));
  return out;
}

Word MakeWord(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  return Word{Felt(a), Felt(b), Felt(c), Felt(d)};
}

// Writes `text` to a fresh file under the test temp dir and returns its path.
// The pid keeps concurrent runs of this binary apart.
std::string WriteFile(const std::string& name, absl::string_view text) {
  std::string path = absl::StrCat(::testing::TempDir(), "inputs_test_", getpid(), "_", name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return path;
}

std::string Message(const absl::StatusOr<ProgramInputs>& result) {
  std::string message(result.status().message());
  return message;
}

// A 64-digit hex word whose elements are the given small values (each chunk
// little-endian).
constexpr char kWord1234[] = "0x0100000000000000020000000000000003000000000000000400000000000000";

// -----------------------------------------------------------------------------
// Stack order conventions

TEST(InputsTest, JsonAndTomlFilesDescribingTheSameStackAgree) {
  // miden-vm JSON: the last element ends on top. miden-debug TOML: the first
  // element is the top.
  const std::string json_path =
      WriteFile("same_stack.inputs", R"({"operand_stack": ["1", "2", "3"]})");
  const std::string toml_path = WriteFile("same_stack.toml", "[inputs]\nstack = [3, 2, 1]\n");
  absl::StatusOr<ProgramInputs> json = LoadInputs(json_path);
  absl::StatusOr<ProgramInputs> toml = LoadInputs(toml_path);
  ASSERT_TRUE(json.ok()) << json.status();
  ASSERT_TRUE(toml.ok()) << toml.status();
  EXPECT_EQ(json->stack, toml->stack);
  EXPECT_EQ(json->stack, Felts({3, 2, 1}));  // stack[0] is the top
  EXPECT_EQ(*json, *toml);
}

TEST(InputsTest, JsonOperandStackLastElementIsTop) {
  absl::StatusOr<ProgramInputs> in = ParseJsonInputs(R"({"operand_stack": ["7", "8"]})", "a.json");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->stack, Felts({8, 7}));
}

TEST(InputsTest, JsonOperandStackOrderFollowsTheDialect) {
  const char* text = R"({"operand_stack": ["7", "8", "9"]})";
  absl::StatusOr<ProgramInputs> last = ParseJsonInputs(text, "a.json", JsonStackOrder::kLastOnTop);
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(last->stack, Felts({9, 8, 7}));
  absl::StatusOr<ProgramInputs> first =
      ParseJsonInputs(text, "a.json", JsonStackOrder::kFirstOnTop);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->stack, Felts({7, 8, 9}));
  // The advice stack is popped first-element-first whatever the order.
  absl::StatusOr<ProgramInputs> advice =
      ParseJsonInputs(R"({"advice_stack": ["1", "2"]})", "a.json", JsonStackOrder::kFirstOnTop);
  ASSERT_TRUE(advice.ok()) << advice.status();
  EXPECT_EQ(advice->advice_stack, Felts({1, 2}));
}

TEST(InputsTest, TomlStackFirstElementIsTop) {
  absl::StatusOr<ProgramInputs> in = ParseTomlInputs("[inputs]\nstack = [7, 8]\n", "a.toml");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->stack, Felts({7, 8}));
}

TEST(InputsTest, AdviceStackFirstElementIsPoppedFirstInBothFormats) {
  absl::StatusOr<ProgramInputs> json =
      ParseJsonInputs(R"({"advice_stack": ["10", "20", "30"]})", "a.json");
  absl::StatusOr<ProgramInputs> toml =
      ParseTomlInputs("[inputs.advice]\nstack = [10, 20, 30]\n", "a.toml");
  ASSERT_TRUE(json.ok()) << json.status();
  ASSERT_TRUE(toml.ok()) << toml.status();
  EXPECT_EQ(json->advice_stack, Felts({10, 20, 30}));
  EXPECT_EQ(toml->advice_stack, json->advice_stack);
}

TEST(InputsTest, SixteenStackValuesAreAcceptedAndSeventeenRejected) {
  std::string json16 = R"({"operand_stack": [)";
  std::string toml16 = "[inputs]\nstack = [";
  for (int i = 0; i < 16; ++i) {
    absl::StrAppend(&json16, i == 0 ? "" : ", ", "\"", i, "\"");
    absl::StrAppend(&toml16, i == 0 ? "" : ", ", i);
  }
  EXPECT_TRUE(ParseJsonInputs(json16 + "]}", "a.json").ok());
  EXPECT_TRUE(ParseTomlInputs(toml16 + "]\n", "a.toml").ok());

  absl::StatusOr<ProgramInputs> json = ParseJsonInputs(json16 + ", \"16\"]}", "a.json");
  ASSERT_FALSE(json.ok());
  EXPECT_EQ(json.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(json), "a.json: operand_stack: 17 values given, at most 16 are allowed");

  absl::StatusOr<ProgramInputs> toml = ParseTomlInputs(toml16 + ", 16]\n", "a.toml");
  ASSERT_FALSE(toml.ok());
  EXPECT_EQ(toml.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(toml), "a.toml:2:9: inputs.stack: 17 values given, at most 16 are allowed");
}

// -----------------------------------------------------------------------------
// Number forms and field-element checks

TEST(InputsTest, JsonAcceptsDecimalHexStringsAndIntegers) {
  absl::StatusOr<ProgramInputs> in = ParseJsonInputs(
      R"({"operand_stack": ["16", "0x10", 16, "0XfF", "18446744069414584320"]})", "a.json");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->stack, Felts({kP - 1, 255, 16, 16, 16}));
}

TEST(InputsTest, TomlAcceptsAllIntegerForms) {
  absl::StatusOr<ProgramInputs> in =
      ParseTomlInputs("[inputs]\nstack = [16, 0x10, 0o20, 0b10000, 1_000]\n", "a.toml");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->stack, Felts({16, 16, 16, 16, 1000}));
}

TEST(InputsTest, JsonRejectsValueAtModulusNamingTheField) {
  absl::StatusOr<ProgramInputs> in = ParseJsonInputs(
      R"({"operand_stack": ["1", "2", "3", "18446744069414584321"]})", "inputs.json");
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(in),
            "inputs.json: operand_stack[3]: value 18446744069414584321 is not "
            "a field element "
            "(>= p)");
}

TEST(InputsTest, JsonRejectsIntegerNumberAtModulus) {
  absl::StatusOr<ProgramInputs> in =
      ParseJsonInputs(R"({"advice_stack": [1, 18446744073709551615]})", "a.json");
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(Message(in),
            "a.json: advice_stack[1]: value 18446744073709551615 is not a "
            "field element (>= p)");
}

TEST(InputsTest, JsonRejectsNumbersThatDoNotFitInSixtyFourBits) {
  absl::StatusOr<ProgramInputs> as_string =
      ParseJsonInputs(R"({"advice_stack": ["99999999999999999999"]})", "a.json");
  ASSERT_FALSE(as_string.ok());
  EXPECT_EQ(Message(as_string),
            "a.json: advice_stack[0]: value 99999999999999999999 is not a "
            "field element (>= p)");

  absl::StatusOr<ProgramInputs> as_number =
      ParseJsonInputs(R"({"advice_stack": [99999999999999999999]})", "a.json");
  ASSERT_FALSE(as_number.ok());
  EXPECT_THAT(Message(as_number), StartsWith("a.json: advice_stack[0]: value "));
  EXPECT_THAT(Message(as_number), HasSubstr("not an unsigned 64-bit integer"));
}

TEST(InputsTest, JsonRejectsNegativeAndFractionalNumbers) {
  absl::StatusOr<ProgramInputs> negative = ParseJsonInputs(R"({"operand_stack": [-1]})", "a.json");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(Message(negative), "a.json: operand_stack[0]: value -1 is negative");

  absl::StatusOr<ProgramInputs> fraction = ParseJsonInputs(R"({"operand_stack": [1.5]})", "a.json");
  ASSERT_FALSE(fraction.ok());
  EXPECT_THAT(Message(fraction), StartsWith("a.json: operand_stack[0]: value 1.5 is not"));

  absl::StatusOr<ProgramInputs> signed_text =
      ParseJsonInputs(R"({"operand_stack": ["-1"]})", "a.json");
  ASSERT_FALSE(signed_text.ok());
  EXPECT_THAT(Message(signed_text), StartsWith("a.json: operand_stack[0]: '-1' is not a number"));
}

TEST(InputsTest, TomlRejectsNegativeValueWithPosition) {
  absl::StatusOr<ProgramInputs> in = ParseTomlInputs("[inputs]\nstack = [1, -1]\n", "x.toml");
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(in), "x.toml:2:13: inputs.stack[1]: value -1 is negative");
}

TEST(InputsTest, TomlRejectsValuesBeyondSignedSixtyFourBits) {
  // TOML integers are signed 64-bit, so p and above cannot even be written.
  absl::StatusOr<ProgramInputs> in =
      ParseTomlInputs("[inputs]\nstack = [18446744069414584321]\n", "x.toml");
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(in), StartsWith("x.toml:2:"));
}

// -----------------------------------------------------------------------------
// Malformed documents and wrong types

TEST(InputsTest, MalformedJsonReportsLineAndColumn) {
  absl::StatusOr<ProgramInputs> in =
      ParseJsonInputs("{\n  \"operand_stack\": [\"1\",, \"2\"]\n}\n", "bad.json");
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(in), StartsWith("bad.json:2:25: syntax error"));
}

TEST(InputsTest, EmptyJsonTextIsAnError) {
  absl::StatusOr<ProgramInputs> in = ParseJsonInputs("", "empty.json");
  ASSERT_FALSE(in.ok());
  EXPECT_THAT(Message(in), StartsWith("empty.json:1:1: "));
  EXPECT_THAT(Message(in), HasSubstr("unexpected end of input"));
}

TEST(InputsTest, JsonTopLevelMustBeAnObject) {
  absl::StatusOr<ProgramInputs> in = ParseJsonInputs("[1, 2]", "a.json");
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(Message(in), "a.json: expected a JSON object at the top level, got array");
}

TEST(InputsTest, MalformedTomlReportsLineAndColumn) {
  absl::StatusOr<ProgramInputs> in = ParseTomlInputs("[inputs]\nstack = [1, 2\n", "x.toml");
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(in), StartsWith("x.toml:"));
  EXPECT_THAT(Message(in), testing::MatchesRegex("x\\.toml:[0-9]+:[0-9]+: .+"));
}

TEST(InputsTest, JsonWrongTypesNameTheField) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {R"({"operand_stack": "1"})", "a.json: operand_stack: expected an array, got string"},
      {R"({"advice_stack": [true]})",
       "a.json: advice_stack[0]: expected a string or an integer, got boolean"},
      {R"({"advice_map": []})", "a.json: advice_map: expected an object, got array"},
      {R"({"merkle_store": {}})", "a.json: merkle_store: expected an array, got object"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ProgramInputs> in = ParseJsonInputs(c.text, "a.json");
    ASSERT_FALSE(in.ok()) << c.text;
    EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_EQ(Message(in), c.message) << c.text;
  }
}

TEST(InputsTest, TomlWrongTypesNameTheFieldAndPosition) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"[inputs]\nstack = [\"1\"]\n",
       "a.toml:2:10: inputs.stack[0]: expected an integer, got a string"},
      {"[inputs]\nstack = 1\n",
       "a.toml:2:9: inputs.stack: expected an array of integers, got an "
       "integer"},
      {"inputs = 5\n", "a.toml:1:10: inputs: expected a table, got an integer"},
      {"[inputs.advice]\nstack = [1.5]\n",
       "a.toml:2:10: inputs.advice.stack[0]: expected an integer, got a float"},
      {"[[inputs.advice.map]]\nvalues = [1]\n",
       "a.toml:1:1: inputs.advice.map[0]: missing key 'digest'"},
      {"[[inputs.advice.map]]\ndigest = 5\nvalues = [1]\n",
       "a.toml:2:10: inputs.advice.map[0].digest: expected a string, got an "
       "integer"},
      {"[options]\nmax_cycles = \"many\"\n",
       "a.toml:2:14: options.max_cycles: expected an integer, got a string"},
      {"[options]\nmax_cycles = 4294967296\n",
       "a.toml:2:14: options.max_cycles: value 4294967296 does not fit in a "
       "u32"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ProgramInputs> in = ParseTomlInputs(c.text, "a.toml");
    ASSERT_FALSE(in.ok()) << c.text;
    EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_EQ(Message(in), c.message) << c.text;
  }
}

// -----------------------------------------------------------------------------
// Empty documents, unknown keys, options, files

TEST(InputsTest, EmptyJsonObjectGivesEmptyInputs) {
  absl::StatusOr<ProgramInputs> in = ParseJsonInputs("{}", "a.json");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(*in, ProgramInputs{});
}

TEST(InputsTest, JsonNullFieldsCountAsAbsent) {
  absl::StatusOr<ProgramInputs> in = ParseJsonInputs(
      R"({"operand_stack": null, "advice_stack": null, "advice_map": null,
          "merkle_store": null})",
      "a.json");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(*in, ProgramInputs{});
}

TEST(InputsTest, EmptyTomlGivesEmptyInputs) {
  absl::StatusOr<ProgramInputs> in = ParseTomlInputs("", "a.toml");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(*in, ProgramInputs{});
  absl::StatusOr<ProgramInputs> sections = ParseTomlInputs("[inputs]\n[options]\n", "a.toml");
  ASSERT_TRUE(sections.ok()) << sections.status();
  EXPECT_EQ(*sections, ProgramInputs{});
}

TEST(InputsTest, UnknownKeysAreErrors) {
  // Issue #12: a typo must not run silently with default inputs.
  absl::StatusOr<ProgramInputs> json =
      ParseJsonInputs(R"({"operand_stack": ["1"], "comment": {"x": [1, 2]}})", "a.json");
  ASSERT_FALSE(json.ok());
  EXPECT_THAT(std::string(json.status().message()), HasSubstr("unknown key \"comment\""));
  absl::StatusOr<ProgramInputs> toml =
      ParseTomlInputs("[inputs]\nstack = [1]\nextra = true\n", "a.toml");
  ASSERT_FALSE(toml.ok());
  EXPECT_THAT(std::string(toml.status().message()),
              HasSubstr("a.toml:3:1: inputs: unknown key 'extra'"));
}

TEST(InputsTest, TomlReadsMaxCyclesAndAcceptsExpectedCycles) {
  absl::StatusOr<ProgramInputs> in =
      ParseTomlInputs("[options]\nmax_cycles = 100000\nexpected_cycles = 2048\n", "a.toml");
  ASSERT_TRUE(in.ok()) << in.status();
  EXPECT_EQ(in->max_cycles, 100000u);
  absl::StatusOr<ProgramInputs> none = ParseTomlInputs("[inputs]\nstack = [1]\n", "a.toml");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->max_cycles.has_value());
}

TEST(InputsTest, MissingFileIsNotFound) {
  const std::string path = absl::StrCat(::testing::TempDir(), "inputs_test_does_not_exist.inputs");
  absl::StatusOr<ProgramInputs> in = LoadInputs(path);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(in), StartsWith(path + ": cannot open: "));
}

TEST(InputsTest, DirectoryIsNotReadable) {
  absl::StatusOr<ProgramInputs> in = LoadInputs(::testing::TempDir());
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(InputsTest, LoadInputsChoosesFormatByExtension) {
  // The same text is valid TOML (an empty document would be too), but not JSON.
  const std::string text = "[inputs]\nstack = [5]\n";
  absl::StatusOr<ProgramInputs> toml = LoadInputs(WriteFile("ext.TOML", text));
  ASSERT_TRUE(toml.ok()) << toml.status();
  EXPECT_EQ(toml->stack, Felts({5}));
  const std::string json_path = WriteFile("ext.inputs", text);
  absl::StatusOr<ProgramInputs> json = LoadInputs(json_path);
  ASSERT_FALSE(json.ok());
  EXPECT_THAT(Message(json), StartsWith(json_path + ":"));
}

TEST(InputsTest, LoadedErrorsNameTheFile) {
  const std::string path = WriteFile("bad_value.toml", "[inputs]\nstack = [-4]\n");
  absl::StatusOr<ProgramInputs> in = LoadInputs(path);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(Message(in), path + ":2:10: inputs.stack[0]: value -4 is negative");
}

// -----------------------------------------------------------------------------
// Advice map

TEST(InputsTest, AdviceMapKeyChunksAreLittleEndianElementZeroFirst) {
  absl::StatusOr<ProgramInputs> in = ParseJsonInputs(
      R"({"advice_map": {
            "0x0100000000000000020000000000000003000000000000000400000000000000": [9, "10"],
            "0001000000000000000000000000000000000000000000000000000000000001": []}})",
      "a.json");
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_EQ(in->advice_map.size(), 2u);
  EXPECT_EQ(in->advice_map[0].first, MakeWord(1, 2, 3, 4));
  EXPECT_EQ(in->advice_map[0].second, Felts({9, 10}));
  EXPECT_EQ(in->advice_map[1].first, MakeWord(256, 0, 0, uint64_t{1} << 56));
  EXPECT_TRUE(in->advice_map[1].second.empty());
}

TEST(InputsTest, AdviceMapKeepsFileOrder) {
  absl::StatusOr<ProgramInputs> in = ParseJsonInputs(
      R"({"advice_map": {
            "0x0200000000000000000000000000000000000000000000000000000000000000": [2],
            "0x0100000000000000000000000000000000000000000000000000000000000000": [1]}})",
      "a.json");
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_EQ(in->advice_map.size(), 2u);
  EXPECT_EQ(in->advice_map[0].first, MakeWord(2, 0, 0, 0));
  EXPECT_EQ(in->advice_map[1].first, MakeWord(1, 0, 0, 0));
}

TEST(InputsTest, AdviceMapDuplicateKeysAreErrors) {
  absl::StatusOr<ProgramInputs> json = ParseJsonInputs(
      absl::StrCat(R"({"advice_map": {")", kWord1234, R"(": [1], ")", kWord1234, R"(": [2]}})"),
      "a.json");
  ASSERT_FALSE(json.ok());
  EXPECT_THAT(std::string(json.status().message()),
              HasSubstr(absl::StrCat("advice_map: duplicate key \"", kWord1234, "\"")));

  absl::StatusOr<ProgramInputs> toml = ParseTomlInputs(
      absl::StrCat("[[inputs.advice.map]]\ndigest = \"", kWord1234, "\"\nvalues = [1]\n",
                   "[[inputs.advice.map]]\ndigest = \"", kWord1234, "\"\nvalues = [2]\n"),
      "a.toml");
  ASSERT_FALSE(toml.ok());
  EXPECT_THAT(std::string(toml.status().message()),
              HasSubstr(absl::StrCat("a.toml:5:10: inputs.advice.map[1].digest: duplicate digest ",
                                     kWord1234)));
}

TEST(InputsTest, TomlAndJsonAdviceMapDigestsAgree) {
  // The digest from miden-debug's own config test.
  const char* digest = "0x3cff5b58a573dc9d25fd3c57130cc57e5b1b381dc58b5ae3594b390c59835e63";
  absl::StatusOr<ProgramInputs> toml = ParseTomlInputs(
      absl::StrCat("[[inputs.advice.map]]\ndigest = \"", digest, "\"\nvalues = [1, 2, 3, 4]\n"),
      "a.toml");
  absl::StatusOr<ProgramInputs> json = ParseJsonInputs(
      absl::StrCat(R"({"advice_map": {")", digest, R"(": [1, 2, 3, 4]}})"), "a.json");
  ASSERT_TRUE(toml.ok()) << toml.status();
  ASSERT_TRUE(json.ok()) << json.status();
  ASSERT_EQ(toml->advice_map.size(), 1u);
  EXPECT_EQ(toml->advice_map[0].first, MakeWord(0x9ddc73a5585bff3cULL, 0x7ec50c13573cfd25ULL,
                                                0xe35a8bc51d381b5bULL, 0x635e83590c394b59ULL));
  EXPECT_EQ(toml->advice_map[0].second, Felts({1, 2, 3, 4}));
  EXPECT_EQ(toml->advice_map, json->advice_map);
}

TEST(InputsTest, AdviceMapRejectsBadKeys) {
  struct Case {
    const char* key;
    const char* message_part;
  };
  const Case cases[] = {
      {"0x0102", "is not a word: expected 64 hex digits (optionally after 0x), got 4"},
      {"0x01000000000000000200000000000000030000000000000004000000000000zz",
       "is not a word: invalid hex digit 'z'"},
      {"0xffffffffffffffff000000000000000000000000000000000000000000000000",
       "word element 0 (18446744073709551615) is not a field element (>= p)"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ProgramInputs> in =
        ParseJsonInputs(absl::StrCat(R"({"advice_map": {")", c.key, R"(": [1]}})"), "a.json");
    ASSERT_FALSE(in.ok()) << c.key;
    EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(in), StartsWith(absl::StrCat("a.json: advice_map[\"", c.key, "\"]: ")));
    EXPECT_THAT(Message(in), HasSubstr(c.message_part));
  }
  absl::StatusOr<ProgramInputs> value = ParseJsonInputs(
      absl::StrCat(R"({"advice_map": {")", kWord1234, R"(": [1, "18446744069414584321"]}})"),
      "a.json");
  ASSERT_FALSE(value.ok());
  EXPECT_EQ(Message(value), absl::StrCat("a.json: advice_map[\"", kWord1234,
                                         "\"][1]: value 18446744069414584321 is not a field "
                                         "element (>= p)"));
  absl::StatusOr<ProgramInputs> toml =
      ParseTomlInputs("[[inputs.advice.map]]\ndigest = \"0x12\"\nvalues = [1]\n", "a.toml");
  ASSERT_FALSE(toml.ok());
  EXPECT_THAT(Message(toml), StartsWith("a.toml:2:10: inputs.advice.map[0].digest: '0x12'"));
}

// -----------------------------------------------------------------------------
// Merkle store

TEST(InputsTest, MerkleStoreSourcesAreParsed) {
  absl::StatusOr<ProgramInputs> in = ParseJsonInputs(R"({"merkle_store": [
      {"merkle_tree": [
          "0x1400000000000000000000000000000000000000000000000000000000000000",
          "0x1500000000000000000000000000000000000000000000000000000000000000",
          "0x1600000000000000000000000000000000000000000000000000000000000000",
          "0x1700000000000000000000000000000000000000000000000000000000000000"]},
      {"sparse_merkle_tree": [
          [0, "0x1400000000000000000000000000000000000000000000000000000000000000"],
          [1, "0x1500000000000000000000000000000000000000000000000000000000000000"],
          [18446744073709551615,
           "0x1700000000000000000000000000000000000000000000000000000000000000"]]},
      {"partial_merkle_tree": [
          [[2, 0], "0x1400000000000000000000000000000000000000000000000000000000000000"],
          [[2, 1], "0x1500000000000000000000000000000000000000000000000000000000000000"],
          [[1, 1], "0x0b00000000000000000000000000000000000000000000000000000000000000"]]}
    ]})",
                                                     "a.json");
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_EQ(in->merkle_store.size(), 3u);

  const MerkleStoreInput& tree = in->merkle_store[0];
  EXPECT_EQ(tree.kind, MerkleStoreInput::Kind::kMerkleTree);
  EXPECT_TRUE(tree.indices.empty());
  EXPECT_THAT(tree.leaves, ElementsAre(MakeWord(0x14, 0, 0, 0), MakeWord(0x15, 0, 0, 0),
                                       MakeWord(0x16, 0, 0, 0), MakeWord(0x17, 0, 0, 0)));

  const MerkleStoreInput& smt = in->merkle_store[1];
  EXPECT_EQ(smt.kind, MerkleStoreInput::Kind::kSparseMerkleTree);
  EXPECT_THAT(smt.indices, ElementsAre(0u, 1u, 18446744073709551615u));
  EXPECT_THAT(smt.leaves, ElementsAre(MakeWord(0x14, 0, 0, 0), MakeWord(0x15, 0, 0, 0),
                                      MakeWord(0x17, 0, 0, 0)));

  const MerkleStoreInput& pmt = in->merkle_store[2];
  EXPECT_EQ(pmt.kind, MerkleStoreInput::Kind::kPartialMerkleTree);
  EXPECT_THAT(pmt.indices, ElementsAre(2u, 0u, 2u, 1u, 1u, 1u));
  EXPECT_THAT(pmt.leaves, ElementsAre(MakeWord(0x14, 0, 0, 0), MakeWord(0x15, 0, 0, 0),
                                      MakeWord(0x0b, 0, 0, 0)));
}

TEST(InputsTest, MerkleStoreRejectsInvalidSources) {
  const std::string w = absl::StrCat("\"", kWord1234, "\"");
  struct Case {
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {absl::StrCat(R"({"merkle_store": [{"merkle_tree": [)", w, ",", w, ",", w, "]}]}"),
       "a.json: merkle_store[0].merkle_tree: a Merkle tree needs a "
       "power-of-two number (>= 2) "
       "of leaves, got 3"},
      {R"({"merkle_store": [{"merkle_tree": [1, 2]}]})",
       "a.json: merkle_store[0].merkle_tree[0]: expected a hex word string, "
       "got number"},
      {R"({"merkle_store": [{"oak_tree": []}]})",
       "a.json: merkle_store[0]: unknown Merkle store source 'oak_tree' "
       "(expected merkle_tree, "
       "sparse_merkle_tree or partial_merkle_tree)"},
      {R"({"merkle_store": [{"merkle_tree": [], "sparse_merkle_tree": []}]})",
       "a.json: merkle_store[0]: expected an object with exactly one of the "
       "keys merkle_tree, "
       "sparse_merkle_tree or partial_merkle_tree"},
      {absl::StrCat(R"({"merkle_store": [{"sparse_merkle_tree": [[-1, )", w, "]]}]}"),
       "a.json: merkle_store[0].sparse_merkle_tree[0][0]: expected an unsigned "
       "integer, got -1"},
      {absl::StrCat(R"({"merkle_store": [{"sparse_merkle_tree": [[3, )", w, "], [3, ", w, "]]}]}"),
       "a.json: merkle_store[0].sparse_merkle_tree[1][0]: duplicate leaf "
       "position 3"},
      {R"({"merkle_store": [{"sparse_merkle_tree": [[3]]}]})",
       "a.json: merkle_store[0].sparse_merkle_tree[0]: expected [index, \"<hex "
       "word>\"]"},
      {absl::StrCat(R"({"merkle_store": [{"partial_merkle_tree": [[[65, 0], )", w, "]]}]}"),
       "a.json: merkle_store[0].partial_merkle_tree[0][0]: depth 65 exceeds "
       "64"},
      {absl::StrCat(R"({"merkle_store": [{"partial_merkle_tree": [[[2, 4], )", w, "]]}]}"),
       "a.json: merkle_store[0].partial_merkle_tree[0][0]: index 4 does not "
       "fit at depth 2"},
      {R"({"merkle_store": [{"partial_merkle_tree": [[[2, 1], "0x12"]]}]})",
       "a.json: merkle_store[0].partial_merkle_tree[0][1]: '0x12' is not a "
       "word: expected 64 "
       "hex digits (optionally after 0x), got 2"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ProgramInputs> in = ParseJsonInputs(c.text, "a.json");
    ASSERT_FALSE(in.ok()) << c.text;
    EXPECT_EQ(in.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_EQ(Message(in), c.message) << c.text;
  }
}

// -----------------------------------------------------------------------------
// ParseFeltArg

TEST(InputsTest, ParseFeltArgAcceptsDecimalAndHexBelowModulus) {
  struct Case {
    const char* text;
    uint64_t value;
  };
  const Case cases[] = {
      {"0", 0},
      {"1", 1},
      {"4294967296", uint64_t{1} << 32},
      {"18446744069414584320", kP - 1},
      {"0x0", 0},
      {"0xff", 255},
      {"0XFF", 255},
      {"0xFFFFFFFF00000000", kP - 1},
      {"007", 7},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Felt> felt = ParseFeltArg(c.text);
    ASSERT_TRUE(felt.ok()) << c.text << ": " << felt.status();
    EXPECT_EQ(felt->value(), c.value) << c.text;
  }
}

TEST(InputsTest, ParseFeltArgRejectsNonCanonicalAndMalformedText) {
  absl::StatusOr<Felt> at_p = ParseFeltArg("18446744069414584321");
  ASSERT_FALSE(at_p.ok());
  EXPECT_EQ(at_p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(at_p.status().message(), "value 18446744069414584321 is not a field element (>= p)");

  for (const char* text :
       {"", "0x", "-1", "+1", " 1", "1 ", "1a", "0x1g", "1.0", "0b101", "0xFFFFFFFF00000001",
        "0x1ffffffffffffffff", "18446744073709551616", "99999999999999999999999"}) {
    absl::StatusOr<Felt> felt = ParseFeltArg(text);
    EXPECT_FALSE(felt.ok()) << '"' << text << '"';
    EXPECT_EQ(felt.status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
}

}  // namespace
}  // namespace flamefleet::vm
