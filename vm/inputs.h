// Program inputs: the initial operand stack, the advice provider's contents and run options, read
// from the two file formats used around the Miden VM.
//
//  * the miden-vm CLI's JSON `.inputs` file:
//      {"operand_stack": ["1", "2"],        // the LAST element ends on top of the stack
//       "advice_stack": ["10", "20"],       // the first element is popped first
//       "advice_map": {"0x<64 hex>": [1, 2, 3]},
//       "merkle_store": [{"merkle_tree": ["0x<64 hex>", ...]},
//                        {"sparse_merkle_tree": [[index, "0x<64 hex>"], ...]},
//                        {"partial_merkle_tree": [[[depth, index], "0x<64 hex>"], ...]}]}
//    Felts may be decimal or 0x-hex strings, or JSON integers. An unknown key (a typo such as
//    "operand_stackk") or a key repeated within one object, at any level, is an error naming
//    the key.
//  * the miden-debug TOML inputs file:
//      [inputs]
//      stack = [1, 2, 0x3]                  # the FIRST (leftmost) value is the top of the stack
//      [inputs.advice]
//      stack = [1, 2]                       # the first value is popped first
//      [[inputs.advice.map]]
//      digest = "0x<64 hex>"
//      values = [1, 2, 3]
//      [options]
//      max_cycles = 100000
//    Felts are TOML integers. An unknown key or table at any level (top, [inputs],
//    [inputs.advice], each [[inputs.advice.map]], [options]) is an error naming the key and its
//    line:column; TOML itself rejects duplicates.
//
// A 64-digit hex word is read as MASM reads `push.0x<64 hex>`: four 16-digit chunks, element 0
// first, each chunk being 8 bytes in little-endian order; every element must be < p. Both formats
// produce the same ProgramInputs, whose stack is always listed top first.
//
//   absl::StatusOr<ProgramInputs> inputs = LoadInputs("fib.inputs");
//   if (!inputs.ok()) return inputs.status();
//   for (Felt f : inputs->stack) { ... }  // stack[0] is the top
//
// All functions are pure and thread-safe; none of them throws.
#ifndef FLAMEFLEET_VM_INPUTS_H_
#define FLAMEFLEET_VM_INPUTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vm/dialect.h"
#include "vm/felt.h"

namespace flamefleet::vm {

// The most operand-stack values a program may be started with.
inline constexpr int kMaxStackInputs = 16;

// One Merkle-store source from a JSON .inputs file, kept as data (MakeAdvice in vm/vm.h builds
// the trees with the program's hasher). Validation done here: words are canonical, a
// merkle_tree has a
// power-of-two number (>= 2) of leaves, sparse indices are distinct, and a partial tree's
// (depth, index) pairs satisfy depth <= 64, index < 2^depth and are distinct.
struct MerkleStoreInput {
  enum class Kind { kMerkleTree, kSparseMerkleTree, kPartialMerkleTree };
  Kind kind = Kind::kMerkleTree;
  // kMerkleTree: empty. kSparseMerkleTree: indices[i] is the leaf index of leaves[i] (a depth-64
  // tree). kPartialMerkleTree: indices[2*i] is the depth and indices[2*i+1] the index of leaves[i].
  std::vector<uint64_t> indices;
  std::vector<Word> leaves;

  friend bool operator==(const MerkleStoreInput&, const MerkleStoreInput&) = default;
};

// Everything an inputs file can give a run.
struct ProgramInputs {
  // Initial operand stack, TOP FIRST (stack[0] is the top); at most kMaxStackInputs values.
  std::vector<Felt> stack;
  // Initial advice stack; advice_stack[0] is popped first.
  std::vector<Felt> advice_stack;
  // Advice map entries in file order; on a duplicate key the later entry wins.
  std::vector<std::pair<Word, std::vector<Felt>>> advice_map;
  // Merkle-store sources (JSON only; the TOML format has none).
  std::vector<MerkleStoreInput> merkle_store;
  // TOML [options] max_cycles (a u32 upstream); unset when absent and always unset for JSON.
  std::optional<uint64_t> max_cycles;

  friend bool operator==(const ProgramInputs&, const ProgramInputs&) = default;
};

// Parses the miden-vm JSON `.inputs` format in `text`. Every key is optional and a JSON `null`
// counts as absent (upstream requires `operand_stack`; we do not). `path_for_errors` only names the
// file in messages. Returns InvalidArgument, with the file, position or field and the reason
// ("in.json: operand_stack[3]: value 18446744069414584321 is not a field element (>= p)"), for
// malformed JSON, a wrong type, a value >= p, a bad hex word, more than 16 stack values, an unknown
// key or a duplicate key. `stack_order` says how `operand_stack` lists the stack: the dialect's
// DialectSpec::json_stack_order (the default, last on top, is v0.16's: production callers always
// pass their dialect's order).
absl::StatusOr<ProgramInputs> ParseJsonInputs(
    absl::string_view text, absl::string_view path_for_errors,
    JsonStackOrder stack_order = JsonStackOrder::kLastOnTop);

// Parses the miden-debug TOML inputs format in `text`. Felts must be non-negative TOML integers
// below p; `max_cycles` must fit in a u32; `expected_cycles` is accepted and ignored. Returns
// InvalidArgument naming the file, the line:column where known and the field
// ("in.toml:4:9: inputs.stack[1]: value -1 is negative") on any error, including an unknown key
// ("in.toml:2:1: inputs: unknown key 'stak' ...").
absl::StatusOr<ProgramInputs> ParseTomlInputs(absl::string_view text,
                                              absl::string_view path_for_errors);

// Reads the file at `path` and parses it: a name ending in `.toml` (any case) as TOML, anything
// else as JSON. Returns NotFound if the file does not exist, InvalidArgument if it cannot be read
// or does not parse. `stack_order` applies to JSON files (see ParseJsonInputs).
absl::StatusOr<ProgramInputs> LoadInputs(const std::string& path,
                                         JsonStackOrder stack_order = JsonStackOrder::kLastOnTop);

// Parses a felt given on a command line: decimal digits or `0x`/`0X` followed by hex digits, with
// no sign or spaces; the value must be < p. Returns InvalidArgument otherwise.
absl::StatusOr<Felt> ParseFeltArg(absl::string_view text);

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_INPUTS_H_
