// Program: an assembled MASM program in the linear form the executor runs.
//
// The assembler builds the dialect's MAST (basic blocks packed into op groups and batches, JOIN /
// SPLIT / LOOP / CALL nodes) and then linearises it into one flat array of `Instruction`s in
// which every element is either exactly one VM cycle (one trace row, including SPAN / RESPAN /
// END / JOIN rows and the padding NOOPs the decoder executes) or a zero-cycle pseudo operation
// that moves the program counter or the procedure frame stack. Running the array therefore
// reproduces the real VM's row sequence and `clk` values, and the frame stack tells which
// procedure owns each row.
//
// Layout of control flow in `code` (pc = index):
//
//   JOIN(a, b)      [JOIN] a... b... [END]
//   SPLIT(t, f)     [SPLIT aux=F] t... [END] [JUMP aux=X]  F: f... [END]  X:
//   LOOP(body)      [LOOP aux=S]  B: body... [REPEAT aux=B] [JUMP aux=X]  S: [END]  X:
//                   (REPEAT pops the flag: 1 = REPEAT row, jump to B; 0 = the loop's END row)
//   LOOP(body) whose row enters without popping (the dialect's MastRules::loop_op = LOOPDO):
//                   [LOOPDO]      B: body... [REPEAT aux=B]
//                   (the body always runs once; REPEAT as above, 0 = the loop's END row)
//   CALL(p)         [CALL] [GOSUB aux=entry(p) imm=p] [END imm=kEndOfCall]
//                   (CALL, SYSCALL and DYNCALL rows are the dialect's MastRules::call_op,
//                   syscall_op and dyncall_op)
//   DYN / DYNCALL   [DYN] [DYNENTER] [END]   [DYNCALL] [DYNENTER] [END imm=kEndOfCall]
//                   (the DYN row looks the memory word up in dyn_targets; DYNENTER enters
//                   that procedure like GOSUB, and its RETURN comes back to the END)
//   block           [SPAN] ops and padding NOOPs [RESPAN] ... [END]
//   exec of a procedure that is not inlined:  [GOSUB aux=entry(p) imm=p]
//   exec/call of a MAST-root literal (an EXTERNAL node): as above when some compiled procedure
//                   has that root, else [NOFOREST imm=i] (traps; unresolved_roots[i])
//   procedure / shared subtree body:          entry: ... [RETURN]
//   ops inlined from procedure p inside a block are bracketed by [ENTER aux=p] ... [LEAVE].
//
//   Instruction (16 bytes, trivially copyable):
//   +--------+-----+-----------+----------------------+
//   | opcode | pad | aux (u32) | imm (u64)            |
//   +--------+-----+-----------+----------------------+
//   imm: PUSH value (canonical felt), EMIT event id, error code of ASSERT / U32ASSERT2 /
//        MPVERIFY, END flags, GOSUB frame (procedure id or kNoFrame), ENTER flags.
//   aux: jump targets (SPLIT, LOOP, REPEAT, JUMP, GOSUB), procedure id (ENTER), source index
//        otherwise unused.
#ifndef FLAMEFLEET_VM_ASSEMBLER_PROGRAM_H_
#define FLAMEFLEET_VM_ASSEMBLER_PROGRAM_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "vm/assembler/opcodes.h"
#include "vm/felt.h"
#include "vm/parser/ast.h"
#include "vm/parser/source_manager.h"

namespace flamefleet::vm {

struct DialectSpec;  // vm/dialect.h

struct Instruction {
  Opcode opcode = Opcode::kNoop;
  uint8_t reserved[3] = {0, 0, 0};
  uint32_t aux = 0;
  uint64_t imm = 0;
};
static_assert(sizeof(Instruction) == 16);
static_assert(std::is_trivially_copyable_v<Instruction>);

// END flags (Instruction::imm of an END row).
inline constexpr uint64_t kEndPlain = 0;
inline constexpr uint64_t kEndOfCall = 1;  // END of CALL / SYSCALL: depth check, restore context
// GOSUB imm when the subroutine is not a procedure (a shared subtree, e.g. a repeat body).
inline constexpr uint64_t kNoFrame = ~uint64_t{0};
// ENTER flags (Instruction::imm of an ENTER row): a new execution of the inlined procedure, or
// the same one going on after its block's RESPAN row (the row is the block's, not the
// procedure's; CallStackObserver::OnResume).
inline constexpr uint64_t kEnterCall = 0;
inline constexpr uint64_t kEnterResume = 1;

// Where an instruction came from, for error messages.
struct SourceOp {
  ast::SourceLocation loc;
  std::string text;  // the MASM instruction, e.g. "u32assert2" or "if.true"
  // The mnemonic is text.substr(0, mnemonic_size) ("push" of "push.1", "exec" of "exec.foo"),
  // or all of `text` when 0 ("if.true", "while.true").
  uint32_t mnemonic_size = 0;

  std::string_view mnemonic() const {
    return mnemonic_size == 0 ? std::string_view(text)
                              : std::string_view(text).substr(0, mnemonic_size);
  }
};

// How a row of Program::code counts in per-instruction statistics.
enum class RowRole : uint8_t {
  // A row of no single MASM instruction: SPAN, RESPAN and END of a basic block, the padding
  // NOOPs of its op groups, JOIN and its END, a GOSUB of an `exec`, pseudo operations without a
  // source, the NOOP of an empty body.
  kBlock,
  // The first row of one execution of source_ops[source_index[pc]]: the first operation of its
  // lowering, or the opening row of a construct (SPLIT of if.true, LOOP of while.true, CALL,
  // SYSCALL, DYN, DYNCALL).
  kStart,
  // A further row of that instruction (the rest of its lowering; a construct's END, REPEAT).
  kPart,
};

// A procedure known to the program. Ids index Program::procedures.
struct ProcedureInfo {
  std::string name;  // fully qualified: "$exec::$main", "$exec::foo", "std::math::u64::add"
  ast::SourceLocation loc;
  uint32_t entry_pc = 0;  // where its body starts when it is run as a subroutine (GOSUB)
  bool is_subroutine = false;
  Word mast_root{};  // digest of the procedure's MAST root node (the dialect's rules)
};

// An entry of the table DYN / DYNCALL look their target up in.
struct DynTarget {
  std::array<uint64_t, 4> digest;  // canonical felts of the MAST root, digest[0] first
  uint32_t procedure = 0;          // runs from procedures[procedure].entry_pc
  friend bool operator<(const DynTarget& a, const DynTarget& b) { return a.digest < b.digest; }
};

// The straight-line segments of Program::code and what one pass through each adds to the
// per-instruction and per-operation tables, so that a run's tables come from one count per
// segment (RowCounts::Tally) instead of one per row. A segment starts at pc 0, at every pc
// control can arrive at by a jump (a jump or branch target, a procedure's entry, a return
// address) and after every row control cannot fall through; inside it every row runs as often
// as its first.
struct RowTally {
  // Table keys: an instruction by mnemonic (index into `mnemonics`); kBlockBase + OpcodeIndex:
  // a row of no instruction, by operation; kOpBase + OpcodeIndex: a row of that operation.
  static constexpr uint32_t kBlockBase = uint32_t{1} << 30;
  static constexpr uint32_t kOpBase = uint32_t{1} << 31;
  struct Entry {
    uint32_t key = 0;
    uint32_t count = 0;   // executions per pass
    uint32_t cycles = 0;  // rows per pass
  };
  struct Segment {
    uint32_t head = 0;           // first pc
    uint32_t end = 0;            // one past the last pc
    uint32_t first_entry = 0;    // its entries run to the next segment's first_entry
    bool falls_through = false;  // its last row continues at `end`
  };
  std::vector<Segment> segments;  // by head, covering code
  std::vector<Entry> entries;
  std::vector<std::string> mnemonics;     // distinct instruction mnemonics
  std::vector<uint32_t> source_mnemonic;  // by Program::source_ops index
  std::vector<uint32_t> repeats;          // pcs of REPEAT rows (their last run is END)
};

// The hasher input states of the program's MAST nodes, for trace-shape accounting
// (vm/executor/trace_shape.h): every row that makes permutation requests (the start row of a
// JOIN, SPLIT, LOOP, CALL, SYSCALL, DYN or DYNCALL node, and the SPAN row of a basic block, which
// requests one per op batch) lists the states it requests, as dense ids of distinct 12-felt
// states. Built by Linearize when the program's dialect has TraceShapeRules; empty otherwise.
struct StaticHashStates {
  // By pc, code.size() + 1 entries: the states of row pc are ids[first[pc]] .. ids[first[pc+1]).
  std::vector<uint32_t> first;
  std::vector<uint32_t> ids;
  // By id: the state (canonical felts, state[0] first) in the dialect hasher's layout.
  std::vector<std::array<uint64_t, 12>> states;
};

struct Program {
  // The dialect the program was assembled under (never null once assembled): the executor
  // takes its system events and hasher from it.
  const DialectSpec* dialect = nullptr;
  std::vector<Instruction> code;
  // source_index[pc] indexes source_ops (0 = unknown).
  std::vector<uint32_t> source_index;
  // row_roles[pc]: how row pc counts per MASM instruction (parallel to code).
  std::vector<RowRole> row_roles;
  std::vector<SourceOp> source_ops;
  std::vector<ProcedureInfo> procedures;
  uint32_t entry_procedure = 0;  // id of $exec::$main
  // Every compiled procedure by MAST root, sorted by digest (the first procedure wins when two
  // have the same root). Filled only when the program contains DYN or DYNCALL.
  std::vector<DynTarget> dyn_targets;
  // MAST roots invoked by literal (`call.0x...`) that no compiled procedure has.
  std::vector<std::array<uint64_t, 4>> unresolved_roots;
  // Messages of `.err="..."` assertions, by error code.
  std::vector<std::pair<uint64_t, std::string>> error_messages;
  // Advice-map entries declared in the program's modules (adv_map.NAME(KEY)=[...]).
  std::vector<std::pair<Word, std::vector<Felt>>> advice_map;
  // The sources the program was assembled from (for rendering locations in errors).
  std::shared_ptr<const SourceManager> sources;

  // Statistics.
  uint32_t num_mast_nodes = 0;
  uint32_t num_basic_blocks = 0;  // basic blocks linearised (a shared block counts once per copy)
  // Operations in the basic-block nodes of the MAST forest (padding NOOPs excluded).
  uint64_t num_mast_ops = 0;
  // Built by the assembler (BuildRowTally) once `code` is final.
  RowTally row_tally;
  // Built by Linearize (see StaticHashStates).
  StaticHashStates hash_states;
  // Procedures the program's kernel declares (its exported procedures; 0 without a kernel):
  // the kernel ROM chiplet has one row per declared procedure, called or not.
  uint32_t kernel_procedures = 0;
};

// Returns the row tally of `program` (see RowTally). O(code size).
RowTally BuildRowTally(const Program& program);

// Whether control continues at pc + 1 after row `op` (every other row leaves by a jump: SPLIT,
// LOOP, REPEAT, JUMP, GOSUB, RETURN, DYNENTER, FINISH, NOFOREST). Keep in sync with Execute.
bool FallsThrough(Opcode op);

// Calls f(key, count, cycles) for what one execution of row `pc` adds to the tables (RowTally
// keys, instructions by tally.source_mnemonic): its operation (unless pseudo), and its
// instruction, or, for a row of none, its operation in the block table.
template <typename F>
void ForEachRowKey(const Program& program, const RowTally& tally, uint32_t pc, F&& f) {
  const Opcode op = program.code[pc].opcode;
  const bool pseudo = IsPseudo(op);
  const uint32_t index = static_cast<uint32_t>(OpcodeIndex(op));
  if (!pseudo) f(RowTally::kOpBase + index, 1, 1);
  const RowRole role = pc < program.row_roles.size() ? program.row_roles[pc] : RowRole::kBlock;
  const uint32_t src = pc < program.source_index.size() ? program.source_index[pc] : 0;
  const std::vector<uint32_t>& mnemonic = tally.source_mnemonic;
  if (role == RowRole::kBlock || src == 0 || src >= mnemonic.size()) {
    if (!pseudo) f(RowTally::kBlockBase + index, 1, 1);
    return;
  }
  const uint32_t starts = role == RowRole::kStart ? 1 : 0;
  if (starts != 0 || !pseudo) f(mnemonic[src], starts, pseudo ? 0 : 1);
}

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_ASSEMBLER_PROGRAM_H_
