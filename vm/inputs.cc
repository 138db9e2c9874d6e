#include "vm/inputs.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "common/toml.h"
#include "vm/felt.h"

namespace flamefleet::vm {
namespace {

using Json = nlohmann::ordered_json;  // keeps advice_map keys in file order

// -----------------------------------------------------------------------------
// Format-independent value parsing. These return InvalidArgument with a bare
// reason; callers prefix the file and field.

absl::Status NotFeltError(absl::string_view as_written) {
  return absl::InvalidArgumentError(
      absl::StrCat("value ", as_written, " is not a field element (>= p)"));
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses decimal digits or 0x/0X + hex digits into a felt; no sign, no spaces,
// value < p.
absl::StatusOr<Felt> ParseFeltText(absl::string_view text) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const bool hex = text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  absl::string_view digits = hex ? text.substr(2) : text;
  if (digits.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text,
                     "' is not a number (expected decimal digits or 0x "
                     "followed by hex digits)"));
  }
  uint64_t value = 0;
  bool overflow = false;
  for (char c : digits) {
    const int d = hex ? HexDigitValue(c) : (c >= '0' && c <= '9' ? c - '0' : -1);
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", text,
                       "' is not a number (expected decimal digits or 0x "
                       "followed by hex digits)"));
    }
    // After an overflow keep checking that the rest are digits.
    const uint64_t base = hex ? 16 : 10;
    const auto digit = static_cast<uint64_t>(d);
    if (overflow || value > (kMax - digit) / base) {
      overflow = true;
    } else {
      value = value * base + digit;
    }
  }
  if (overflow || !Felt::IsCanonical(value)) return NotFeltError(text);
  return Felt(value);
}

// Reads a 64-digit hex word (optionally 0x-prefixed) the way MASM reads
// `push.0x<64 hex>`: element i comes from digits [16i, 16i+16), which are 8
// bytes in little-endian order.
absl::StatusOr<Word> ParseWordHex(absl::string_view text) {
  absl::string_view digits = text;
  if (absl::StartsWith(digits, "0x") || absl::StartsWith(digits, "0X")) {
    digits.remove_prefix(2);
  }
  if (digits.size() != 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", text, "' is not a word: expected 64 hex digits (optionally after 0x), got ",
        digits.size()));
  }
  Word word;
  for (size_t element = 0; element < 4; ++element) {
    uint64_t value = 0;
    for (size_t byte = 0; byte < 8; ++byte) {
      const size_t at = element * 16 + byte * 2;
      const int hi = HexDigitValue(digits[at]);
      const int lo = HexDigitValue(digits[at + 1]);
      if (hi < 0 || lo < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("'", text, "' is not a word: invalid hex digit '",
                         absl::string_view(&digits[hi < 0 ? at : at + 1], 1), "'"));
      }
      value |= static_cast<uint64_t>(hi * 16 + lo) << (8 * byte);
    }
    if (!Felt::IsCanonical(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("word element ", element, " (", value, ") is not a field element (>= p)"));
    }
    word[element] = Felt(value);
  }
  return word;
}

absl::Status TooManyStackValues(size_t count) {
  return absl::InvalidArgumentError(
      absl::StrCat(count, " values given, at most ", kMaxStackInputs, " are allowed"));
}

// Returns `status` with "<prefix>: " in front of its message and the same code.
absl::Status WithPrefix(const absl::Status& status, absl::string_view prefix) {
  return absl::Status(status.code(), absl::StrCat(prefix, ": ", status.message()));
}

// -----------------------------------------------------------------------------
// JSON

// Reads one JSON document; every error names the file and the field.
class JsonInputsReader {
 public:
  JsonInputsReader(absl::string_view path, JsonStackOrder stack_order)
      : path_(path), stack_order_(stack_order) {}

  absl::StatusOr<ProgramInputs> Read(absl::string_view text) const;

 private:
  absl::Status Error(absl::string_view field, absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": ", field, ": ", message));
  }
  absl::Status Wrap(const absl::Status& status, absl::string_view field) const {
    return WithPrefix(status, absl::StrCat(path_, ": ", field));
  }
  absl::Status SyntaxError(absl::string_view text) const;

  // Returns the array at `value`, or an error naming `field` if it is not one.
  absl::StatusOr<const Json::array_t*> Array(const Json& value, absl::string_view field) const;
  absl::StatusOr<Felt> ReadFelt(const Json& value, absl::string_view field) const;
  absl::StatusOr<Word> ReadWord(const Json& value, absl::string_view field) const;
  absl::StatusOr<uint64_t> ReadIndex(const Json& value, absl::string_view field) const;
  absl::StatusOr<std::vector<Felt>> ReadFelts(const Json& value, absl::string_view field) const;
  absl::StatusOr<MerkleStoreInput> ReadMerkleSource(const Json& value,
                                                    absl::string_view field) const;

  std::string path_;
  JsonStackOrder stack_order_;
};

// Receives the SAX events of a failed parse only to learn where and why it
// failed; nlohmann's non-throwing DOM parse (allow_exceptions=false) reports
// nothing but `discarded`.
class JsonErrorLocator : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return true; }
  bool boolean(bool /*val*/) override { return true; }
  bool number_integer(number_integer_t /*val*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*val*/) override { return true; }
  bool number_float(number_float_t /*val*/, const string_t& /*s*/) override { return true; }
  bool string(string_t& /*val*/) override { return true; }
  bool binary(binary_t& /*val*/) override { return true; }
  bool start_object(std::size_t /*elements*/) override { return true; }
  bool key(string_t& /*val*/) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t /*elements*/) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
    position_ = position;
    message_ = ex.what();
    return false;  // stop; nothing is thrown
  }

  std::size_t position() const { return position_; }
  const std::string& message() const { return message_; }

 private:
  std::size_t position_ = 0;
  std::string message_;
};

// Finds the first key that appears twice in one JSON object (nlohmann's DOM keeps the last
// silently), naming the object by its path ("advice_map", "merkle_store[0]", "" for the top).
class JsonDuplicateKeyFinder : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return Value(); }
  bool boolean(bool /*val*/) override { return Value(); }
  bool number_integer(number_integer_t /*val*/) override { return Value(); }
  bool number_unsigned(number_unsigned_t /*val*/) override { return Value(); }
  bool number_float(number_float_t /*val*/, const string_t& /*s*/) override { return Value(); }
  bool string(string_t& /*val*/) override { return Value(); }
  bool binary(binary_t& /*val*/) override { return Value(); }
  bool start_object(std::size_t /*elements*/) override {
    Open(true);
    return true;
  }
  bool key(string_t& val) override {
    Level& level = levels_.back();
    if (!level.keys.insert(val).second) {
      duplicate_ = val;
      field_ = Path(levels_.size() - 1);
      return false;
    }
    level.key = val;
    return true;
  }
  bool end_object() override { return Close(); }
  bool start_array(std::size_t /*elements*/) override {
    Open(false);
    return true;
  }
  bool end_array() override { return Close(); }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*ex*/) override {
    return false;
  }

  // The duplicated key, or nullopt; field() names the object that holds it.
  const std::optional<std::string>& duplicate() const { return duplicate_; }
  const std::string& field() const { return field_; }

 private:
  struct Level {
    bool object;
    std::set<std::string> keys;  // object: keys seen so far
    std::string key;             // object: the current member
    size_t index = 0;            // array: the current element
  };
  void Open(bool object) {
    if (!levels_.empty() && !levels_.back().object) ++levels_.back().index;
    levels_.push_back(Level{object, {}, {}, 0});
  }
  bool Close() {
    levels_.pop_back();
    return true;
  }
  bool Value() {
    if (!levels_.empty() && !levels_.back().object) ++levels_.back().index;
    return true;
  }
  // The path of levels_[0..n) as our error fields write it.
  std::string Path(size_t n) const {
    std::string out;
    for (size_t i = 1; i <= n && i < levels_.size(); ++i) {
      const Level& parent = levels_[i - 1];
      if (parent.object) {
        if (i == 1) {
          absl::StrAppend(&out, parent.key);
        } else {
          absl::StrAppend(&out, "[\"", parent.key, "\"]");
        }
      } else {
        absl::StrAppend(&out, "[", parent.index - 1, "]");
      }
    }
    return out;
  }

  std::vector<Level> levels_;
  std::optional<std::string> duplicate_;
  std::string field_;
};

// Returns an error naming the first member of `object` that is not in `allowed`.
absl::Status CheckJsonKeys(const Json::object_t& object,
                           std::initializer_list<absl::string_view> allowed,
                           absl::string_view where) {
  for (const auto& [key, value] : object) {
    if (std::find(allowed.begin(), allowed.end(), absl::string_view(key)) == allowed.end()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": unknown key \"", key,
                                                     "\" (expected one of ",
                                                     absl::StrJoin(allowed, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status JsonInputsReader::SyntaxError(absl::string_view text) const {
  JsonErrorLocator locator;
  Json::sax_parse(text.begin(), text.end(), &locator);
  // nlohmann's message looks like "[json.exception.parse_error.101] parse error
  // at line 1, column 5: syntax error ..."; keep the reason and put the
  // position in our own format.
  absl::string_view reason = locator.message();
  if (size_t bracket = reason.find("] "); bracket != absl::string_view::npos) {
    reason.remove_prefix(bracket + 2);
  }
  if (absl::StartsWith(reason, "parse error")) {
    if (size_t colon = reason.find(": "); colon != absl::string_view::npos) {
      reason.remove_prefix(colon + 2);
    }
  }
  if (reason.empty()) reason = "malformed JSON";
  // `position` counts the bytes read, so the offending byte is at position - 1.
  const size_t offset = locator.position() == 0 ? 0 : std::min(locator.position() - 1, text.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path_, ":", line, ":", offset - line_start + 1, ": ", reason));
}

absl::StatusOr<const Json::array_t*> JsonInputsReader::Array(const Json& value,
                                                             absl::string_view field) const {
  const auto* array = value.get_ptr<const Json::array_t*>();
  if (array == nullptr) {
    return Error(field, absl::StrCat("expected an array, got ", value.type_name()));
  }
  return array;
}

absl::StatusOr<Felt> JsonInputsReader::ReadFelt(const Json& value, absl::string_view field) const {
  if (const auto* text = value.get_ptr<const Json::string_t*>()) {
    absl::StatusOr<Felt> felt = ParseFeltText(*text);
    if (!felt.ok()) return Wrap(felt.status(), field);
    return felt;
  }
  if (const auto* u = value.get_ptr<const Json::number_unsigned_t*>()) {
    if (!Felt::IsCanonical(*u)) {
      return Wrap(NotFeltError(absl::StrCat(*u)), field);
    }
    return Felt(*u);
  }
  if (const auto* i = value.get_ptr<const Json::number_integer_t*>()) {
    return Error(field, absl::StrCat("value ", *i, " is negative"));
  }
  if (const auto* f = value.get_ptr<const Json::number_float_t*>()) {
    return Error(field, absl::StrCat("value ", *f,
                                     " is not an unsigned 64-bit integer (write large values as "
                                     "strings)"));
  }
  return Error(field, absl::StrCat("expected a string or an integer, got ", value.type_name()));
}

absl::StatusOr<Word> JsonInputsReader::ReadWord(const Json& value, absl::string_view field) const {
  const auto* text = value.get_ptr<const Json::string_t*>();
  if (text == nullptr) {
    return Error(field, absl::StrCat("expected a hex word string, got ", value.type_name()));
  }
  absl::StatusOr<Word> word = ParseWordHex(*text);
  if (!word.ok()) return Wrap(word.status(), field);
  return word;
}

absl::StatusOr<uint64_t> JsonInputsReader::ReadIndex(const Json& value,
                                                     absl::string_view field) const {
  if (const auto* u = value.get_ptr<const Json::number_unsigned_t*>()) {
    return *u;
  }
  return Error(field, absl::StrCat("expected an unsigned integer, got ",
                                   value.is_number() ? value.dump() : value.type_name()));
}

absl::StatusOr<std::vector<Felt>> JsonInputsReader::ReadFelts(const Json& value,
                                                              absl::string_view field) const {
  FLAMEFLEET_ASSIGN_OR_RETURN(const Json::array_t* array, Array(value, field));
  std::vector<Felt> felts;
  felts.reserve(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    FLAMEFLEET_ASSIGN_OR_RETURN(Felt felt, ReadFelt((*array)[i], absl::StrCat(field, "[", i, "]")));
    felts.push_back(felt);
  }
  return felts;
}

absl::StatusOr<MerkleStoreInput> JsonInputsReader::ReadMerkleSource(const Json& value,
                                                                    absl::string_view field) const {
  const auto* object = value.get_ptr<const Json::object_t*>();
  if (object == nullptr || object->size() != 1) {
    return Error(field,
                 "expected an object with exactly one of the keys merkle_tree, "
                 "sparse_merkle_tree or partial_merkle_tree");
  }
  const std::string& kind = object->begin()->first;
  const Json& body = object->begin()->second;
  const std::string body_field = absl::StrCat(field, ".", kind);
  MerkleStoreInput source;
  if (kind == "merkle_tree") {
    source.kind = MerkleStoreInput::Kind::kMerkleTree;
    FLAMEFLEET_ASSIGN_OR_RETURN(const Json::array_t* leaves, Array(body, body_field));
    for (size_t i = 0; i < leaves->size(); ++i) {
      FLAMEFLEET_ASSIGN_OR_RETURN(Word leaf,
                                  ReadWord((*leaves)[i], absl::StrCat(body_field, "[", i, "]")));
      source.leaves.push_back(leaf);
    }
    const size_t n = source.leaves.size();
    if (n < 2 || (n & (n - 1)) != 0) {
      return Error(body_field, absl::StrCat("a Merkle tree needs a power-of-two number "
                                            "(>= 2) of leaves, got ",
                                            n));
    }
  } else if (kind == "sparse_merkle_tree" || kind == "partial_merkle_tree") {
    const bool sparse = kind == "sparse_merkle_tree";
    source.kind = sparse ? MerkleStoreInput::Kind::kSparseMerkleTree
                         : MerkleStoreInput::Kind::kPartialMerkleTree;
    FLAMEFLEET_ASSIGN_OR_RETURN(const Json::array_t* entries, Array(body, body_field));
    std::set<std::pair<uint64_t, uint64_t>> seen;
    for (size_t i = 0; i < entries->size(); ++i) {
      const std::string entry_field = absl::StrCat(body_field, "[", i, "]");
      FLAMEFLEET_ASSIGN_OR_RETURN(const Json::array_t* entry, Array((*entries)[i], entry_field));
      if (entry->size() != 2) {
        return Error(entry_field, sparse ? "expected [index, \"<hex word>\"]"
                                         : "expected [[depth, index], \"<hex word>\"]");
      }
      const std::string key_field = absl::StrCat(entry_field, "[0]");
      uint64_t depth = 64;
      uint64_t index = 0;
      if (sparse) {
        FLAMEFLEET_ASSIGN_OR_RETURN(index, ReadIndex((*entry)[0], key_field));
      } else {
        FLAMEFLEET_ASSIGN_OR_RETURN(const Json::array_t* node, Array((*entry)[0], key_field));
        if (node->size() != 2) {
          return Error(key_field, "expected [depth, index]");
        }
        FLAMEFLEET_ASSIGN_OR_RETURN(depth, ReadIndex((*node)[0], absl::StrCat(key_field, "[0]")));
        FLAMEFLEET_ASSIGN_OR_RETURN(index, ReadIndex((*node)[1], absl::StrCat(key_field, "[1]")));
        if (depth > 64) {
          return Error(key_field, absl::StrCat("depth ", depth, " exceeds 64"));
        }
        if (depth < 64 && index >= (uint64_t{1} << depth)) {
          return Error(key_field, absl::StrCat("index ", index, " does not fit at depth ", depth));
        }
      }
      if (!seen.emplace(depth, index).second) {
        return Error(key_field, absl::StrCat("duplicate leaf position ",
                                             sparse ? absl::StrCat(index)
                                                    : absl::StrCat("(", depth, ", ", index, ")")));
      }
      FLAMEFLEET_ASSIGN_OR_RETURN(Word leaf,
                                  ReadWord((*entry)[1], absl::StrCat(entry_field, "[1]")));
      if (!sparse) source.indices.push_back(depth);
      source.indices.push_back(index);
      source.leaves.push_back(leaf);
    }
  } else {
    return Error(field, absl::StrCat("unknown Merkle store source '", kind,
                                     "' (expected merkle_tree, sparse_merkle_tree or "
                                     "partial_merkle_tree)"));
  }
  return source;
}

absl::StatusOr<ProgramInputs> JsonInputsReader::Read(absl::string_view text) const {
  const Json root = Json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                                /*allow_exceptions=*/false);
  if (root.is_discarded()) return SyntaxError(text);
  if (!root.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": expected a JSON object at the top level, got ", root.type_name()));
  }
  {
    JsonDuplicateKeyFinder finder;
    Json::sax_parse(text.begin(), text.end(), &finder);
    if (finder.duplicate().has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path_, ": ", finder.field().empty() ? "" : absl::StrCat(finder.field(), ": "),
          "duplicate key \"", *finder.duplicate(), "\""));
    }
  }
  FLAMEFLEET_RETURN_IF_ERROR(
      CheckJsonKeys(*root.get_ptr<const Json::object_t*>(),
                    {"operand_stack", "advice_stack", "advice_map", "merkle_store"}, path_));
  // Returns the member `key`, or nullptr when it is absent or null.
  auto member = [&root](const char* key) -> const Json* {
    auto it = root.find(key);
    return it == root.end() || it->is_null() ? nullptr : &*it;
  };

  ProgramInputs inputs;
  if (const Json* stack = member("operand_stack")) {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::vector<Felt> values, ReadFelts(*stack, "operand_stack"));
    if (values.size() > static_cast<size_t>(kMaxStackInputs)) {
      return Wrap(TooManyStackValues(values.size()), "operand_stack");
    }
    if (stack_order_ == JsonStackOrder::kLastOnTop) {
      inputs.stack.assign(values.rbegin(), values.rend());  // the last value ends on top
    } else {
      inputs.stack = std::move(values);  // the first value is the top
    }
  }
  if (const Json* stack = member("advice_stack")) {
    FLAMEFLEET_ASSIGN_OR_RETURN(inputs.advice_stack, ReadFelts(*stack, "advice_stack"));
  }
  if (const Json* map = member("advice_map")) {
    const auto* object = map->get_ptr<const Json::object_t*>();
    if (object == nullptr) {
      return Error("advice_map", absl::StrCat("expected an object, got ", map->type_name()));
    }
    for (const auto& [key, values] : *object) {
      const std::string field = absl::StrCat("advice_map[\"", key, "\"]");
      absl::StatusOr<Word> word = ParseWordHex(key);
      if (!word.ok()) return Wrap(word.status(), field);
      FLAMEFLEET_ASSIGN_OR_RETURN(std::vector<Felt> felts, ReadFelts(values, field));
      inputs.advice_map.emplace_back(*word, std::move(felts));
    }
  }
  if (const Json* store = member("merkle_store")) {
    FLAMEFLEET_ASSIGN_OR_RETURN(const Json::array_t* sources, Array(*store, "merkle_store"));
    for (size_t i = 0; i < sources->size(); ++i) {
      FLAMEFLEET_ASSIGN_OR_RETURN(
          MerkleStoreInput source,
          ReadMerkleSource((*sources)[i], absl::StrCat("merkle_store[", i, "]")));
      inputs.merkle_store.push_back(std::move(source));
    }
  }
  return inputs;
}

// -----------------------------------------------------------------------------
// TOML

absl::string_view TomlTypeName(toml::node_type type) {
  switch (type) {
    case toml::node_type::none:
      return "nothing";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
  }
  return "an unknown value";
}

// Reads one parsed TOML document; every error names the file, the node's
// line:column and the field.
class TomlInputsReader {
 public:
  explicit TomlInputsReader(absl::string_view path) : path_(path) {}

  absl::StatusOr<ProgramInputs> Read(const toml::table& root) const;

 private:
  std::string Where(const toml::node& node) const {
    const toml::source_position& begin = node.source().begin;
    if (!begin) return path_;
    return absl::StrCat(path_, ":", begin.line, ":", begin.column);
  }
  absl::Status Error(const toml::node& node, absl::string_view field,
                     absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(Where(node), ": ", field, ": ", message));
  }
  absl::Status WrongType(const toml::node& node, absl::string_view field,
                         absl::string_view expected) const {
    return Error(node, field,
                 absl::StrCat("expected ", expected, ", got ", TomlTypeName(node.type())));
  }

  // Returns an error at the first key of `table` that is not in `allowed`.
  absl::Status CheckKeys(const toml::table& table, std::initializer_list<absl::string_view> allowed,
                         absl::string_view field) const {
    for (const auto& [key, node] : table) {
      const absl::string_view name(key.str().data(), key.str().size());
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        std::string where = path_;
        if (const toml::source_position& begin = key.source().begin) {
          where = absl::StrCat(path_, ":", begin.line, ":", begin.column);
        }
        return absl::InvalidArgumentError(absl::StrCat(
            where, ": ", field.empty() ? "" : absl::StrCat(field, ": "), "unknown key '", name,
            "' (expected one of ", absl::StrJoin(allowed, ", "), ")"));
      }
    }
    return absl::OkStatus();
  }
  // Returns the table under `key` of `parent`, nullptr if absent, or an error
  // if not a table.
  absl::StatusOr<const toml::table*> Table(const toml::table& parent, const char* key,
                                           absl::string_view field) const;
  absl::StatusOr<Felt> ReadFelt(const toml::node& node, absl::string_view field) const;
  absl::StatusOr<std::vector<Felt>> ReadFelts(const toml::node& node,
                                              absl::string_view field) const;
  absl::StatusOr<uint32_t> ReadU32(const toml::node& node, absl::string_view field) const;

  std::string path_;
};

absl::StatusOr<const toml::table*> TomlInputsReader::Table(const toml::table& parent,
                                                           const char* key,
                                                           absl::string_view field) const {
  const toml::node* node = parent.get(key);
  if (node == nullptr) return nullptr;
  const toml::table* table = node->as_table();
  if (table == nullptr) return WrongType(*node, field, "a table");
  return table;
}

absl::StatusOr<Felt> TomlInputsReader::ReadFelt(const toml::node& node,
                                                absl::string_view field) const {
  const toml::value<int64_t>* integer = node.as_integer();
  if (integer == nullptr) return WrongType(node, field, "an integer");
  const int64_t value = integer->get();
  if (value < 0) {
    return Error(node, field, absl::StrCat("value ", value, " is negative"));
  }
  // TOML integers are signed 64-bit, so this cannot fail today; it keeps the
  // contract explicit.
  if (!Felt::IsCanonical(static_cast<uint64_t>(value))) {
    return WithPrefix(NotFeltError(absl::StrCat(value)), absl::StrCat(Where(node), ": ", field));
  }
  return Felt(static_cast<uint64_t>(value));
}

absl::StatusOr<std::vector<Felt>> TomlInputsReader::ReadFelts(const toml::node& node,
                                                              absl::string_view field) const {
  const toml::array* array = node.as_array();
  if (array == nullptr) return WrongType(node, field, "an array of integers");
  std::vector<Felt> felts;
  felts.reserve(array->size());
  for (size_t i = 0; i < array->size(); ++i) {
    FLAMEFLEET_ASSIGN_OR_RETURN(Felt felt,
                                ReadFelt(*array->get(i), absl::StrCat(field, "[", i, "]")));
    felts.push_back(felt);
  }
  return felts;
}

absl::StatusOr<uint32_t> TomlInputsReader::ReadU32(const toml::node& node,
                                                   absl::string_view field) const {
  const toml::value<int64_t>* integer = node.as_integer();
  if (integer == nullptr) return WrongType(node, field, "an integer");
  const int64_t value = integer->get();
  if (value < 0 || value > int64_t{std::numeric_limits<uint32_t>::max()}) {
    return Error(node, field, absl::StrCat("value ", value, " does not fit in a u32"));
  }
  return static_cast<uint32_t>(value);
}

absl::StatusOr<ProgramInputs> TomlInputsReader::Read(const toml::table& root) const {
  ProgramInputs inputs;
  FLAMEFLEET_RETURN_IF_ERROR(CheckKeys(root, {"inputs", "options"}, ""));
  FLAMEFLEET_ASSIGN_OR_RETURN(const toml::table* inputs_table, Table(root, "inputs", "inputs"));
  if (inputs_table != nullptr) {
    FLAMEFLEET_RETURN_IF_ERROR(CheckKeys(*inputs_table, {"stack", "advice"}, "inputs"));
    if (const toml::node* stack = inputs_table->get("stack")) {
      // Leftmost value = top of the stack, which is already our order.
      FLAMEFLEET_ASSIGN_OR_RETURN(inputs.stack, ReadFelts(*stack, "inputs.stack"));
      if (inputs.stack.size() > static_cast<size_t>(kMaxStackInputs)) {
        return WithPrefix(TooManyStackValues(inputs.stack.size()),
                          absl::StrCat(Where(*stack), ": inputs.stack"));
      }
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(const toml::table* advice,
                                Table(*inputs_table, "advice", "inputs.advice"));
    if (advice != nullptr) {
      FLAMEFLEET_RETURN_IF_ERROR(CheckKeys(*advice, {"stack", "map"}, "inputs.advice"));
      if (const toml::node* stack = advice->get("stack")) {
        FLAMEFLEET_ASSIGN_OR_RETURN(inputs.advice_stack, ReadFelts(*stack, "inputs.advice.stack"));
      }
      if (const toml::node* map_node = advice->get("map")) {
        const toml::array* map = map_node->as_array();
        if (map == nullptr) {
          return WrongType(*map_node, "inputs.advice.map", "an array of tables");
        }
        absl::flat_hash_set<Word> digests;
        for (size_t i = 0; i < map->size(); ++i) {
          const std::string field = absl::StrCat("inputs.advice.map[", i, "]");
          const toml::node& entry_node = *map->get(i);
          const toml::table* entry = entry_node.as_table();
          if (entry == nullptr) return WrongType(entry_node, field, "a table");
          FLAMEFLEET_RETURN_IF_ERROR(CheckKeys(*entry, {"digest", "values"}, field));
          const toml::node* digest = entry->get("digest");
          if (digest == nullptr) {
            return Error(entry_node, field, "missing key 'digest'");
          }
          const toml::node* values = entry->get("values");
          if (values == nullptr) {
            return Error(entry_node, field, "missing key 'values'");
          }
          const std::string digest_field = absl::StrCat(field, ".digest");
          const toml::value<std::string>* digest_text = digest->as_string();
          if (digest_text == nullptr) {
            return WrongType(*digest, digest_field, "a string");
          }
          absl::StatusOr<Word> key = ParseWordHex(digest_text->get());
          if (!key.ok()) {
            return WithPrefix(key.status(), absl::StrCat(Where(*digest), ": ", digest_field));
          }
          if (!digests.insert(*key).second) {
            return Error(*digest, digest_field,
                         absl::StrCat("duplicate digest ", digest_text->get()));
          }
          FLAMEFLEET_ASSIGN_OR_RETURN(std::vector<Felt> felts,
                                      ReadFelts(*values, absl::StrCat(field, ".values")));
          inputs.advice_map.emplace_back(*key, std::move(felts));
        }
      }
    }
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(const toml::table* options, Table(root, "options", "options"));
  if (options != nullptr) {
    FLAMEFLEET_RETURN_IF_ERROR(CheckKeys(*options, {"max_cycles", "expected_cycles"}, "options"));
    if (const toml::node* max_cycles = options->get("max_cycles")) {
      FLAMEFLEET_ASSIGN_OR_RETURN(inputs.max_cycles, ReadU32(*max_cycles, "options.max_cycles"));
    }
    if (const toml::node* expected = options->get("expected_cycles")) {
      // Only a tracing hint upstream; checked for type, otherwise unused.
      FLAMEFLEET_RETURN_IF_ERROR(ReadU32(*expected, "options.expected_cycles").status());
    }
  }
  return inputs;
}

// Closes a FILE* when it goes out of scope.
struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

}  // namespace

absl::StatusOr<ProgramInputs> ParseJsonInputs(absl::string_view text,
                                              absl::string_view path_for_errors,
                                              JsonStackOrder stack_order) {
  return JsonInputsReader(path_for_errors, stack_order).Read(text);
}

absl::StatusOr<ProgramInputs> ParseTomlInputs(absl::string_view text,
                                              absl::string_view path_for_errors) {
  toml::parse_result result =
      toml::parse(std::string_view(text.data(), text.size()),
                  std::string_view(path_for_errors.data(), path_for_errors.size()));
  if (!result) {
    const toml::parse_error& error = result.error();
    const toml::source_position& begin = error.source().begin;
    const std::string_view description = error.description();
    std::string where(path_for_errors);
    if (begin) absl::StrAppend(&where, ":", begin.line, ":", begin.column);
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", absl::string_view(description.data(), description.size())));
  }
  return TomlInputsReader(path_for_errors).Read(result.table());
}

absl::StatusOr<ProgramInputs> LoadInputs(const std::string& path, JsonStackOrder stack_order) {
  errno = 0;
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) {
    const int error = errno;
    const std::string message =
        absl::StrCat(path, ": cannot open: ", std::generic_category().message(error));
    return error == ENOENT ? absl::NotFoundError(message) : absl::InvalidArgumentError(message);
  }
  std::string text;
  char buffer[1 << 14];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) {
    text.append(buffer, n);
  }
  if (std::ferror(file.get())) {
    const int error = errno;
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot read: ", std::generic_category().message(error)));
  }
  if (absl::EndsWithIgnoreCase(path, ".toml")) {
    return ParseTomlInputs(text, path);
  }
  return ParseJsonInputs(text, path, stack_order);
}

absl::StatusOr<Felt> ParseFeltArg(absl::string_view text) { return ParseFeltText(text); }

}  // namespace flamefleet::vm
