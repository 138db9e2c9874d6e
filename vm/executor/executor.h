// Executor: runs a linearised Program one VM cycle (trace row) per executed row, keeping the
// operand stack (with its depth-16 floor and unbounded overflow), per-context memory, the fmp
// register, the advice provider and the procedure frame stack.
//
// The hot loop is one switch over Instruction::opcode with pc, sp and clk in locals; nothing is
// allocated per cycle. A trap stops execution and is kept as a Trap; the vm.h boundary turns it
// into an absl::Status with the cycle, the instruction, its source location and the call stack.
//
//   Executor exec(program, inputs, AdviceProvider(*program.dialect->hasher), ExecutionOptions{},
//                 /*host=*/nullptr,
//                 &observer);
//   while (exec.state() == Executor::State::kPaused) exec.Step();   // or exec.Run();
//   std::vector<Felt> top = exec.StackTop(16);
#ifndef FLAMEFLEET_VM_EXECUTOR_EXECUTOR_H_
#define FLAMEFLEET_VM_EXECUTOR_EXECUTOR_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "vm/assembler/program.h"
#include "vm/crypto/hasher.h"
#include "vm/crypto/merkle_store.h"
#include "vm/executor/precompiles.h"
#include "vm/executor/system_events.h"
#include "vm/executor/trace_shape.h"
#include "vm/felt.h"

namespace flamefleet::vm {

// Receives procedure frame changes. Called outside the per-cycle path: only when a procedure
// is entered or left (including procedures whose ops were inlined into a caller's block).
// Rows from `clk` on belong to the new innermost frame.
class CallStackObserver {
 public:
  virtual ~CallStackObserver() = default;
  // `procedure` (a Program::procedures index) became the innermost frame at `clk`: a call.
  virtual void OnEnter(uint32_t procedure, uint64_t clk) = 0;
  // `procedure` became the innermost frame again at `clk`, going on with the same execution:
  // an inlined procedure after its block's RESPAN row (which belongs to the block, so the
  // frame was left for it). Not a call. Default: OnEnter.
  virtual void OnResume(uint32_t procedure, uint64_t clk) { OnEnter(procedure, clk); }
  // The innermost frame ended at `clk`.
  virtual void OnLeave(uint64_t clk) = 0;
};

// Zero-initialised counters indexed by pc whose memory is mapped on first touch: a run that
// touches a few pcs of a large program pays for those pages, not for the program's size.
// Move-only.
class PcCounters {
 public:
  PcCounters() = default;
  PcCounters(PcCounters&& other) noexcept { *this = std::move(other); }
  PcCounters& operator=(PcCounters&& other) noexcept;
  PcCounters(const PcCounters&) = delete;
  PcCounters& operator=(const PcCounters&) = delete;
  ~PcCounters() { Release(); }

  // Replaces the counters by `n` zeros.
  void Reset(size_t n);
  uint64_t* data() { return data_; }
  uint64_t operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }

 private:
  void Release();
  uint64_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_bytes_ = 0;  // 0: data_ came from calloc
};

// A run's per-instruction and per-operation tables (RowCounts::Tally).
struct InstructionTally {
  std::vector<uint64_t> count;                     // by RowTally::mnemonics index: executions
  std::vector<uint64_t> cycles;                    // ... rows
  std::array<uint64_t, kNumOpcodes> block_rows{};  // rows of no instruction, by OpcodeIndex
  std::array<uint64_t, kNumOpcodes> op_rows{};  // rows by operation (a loop's last REPEAT as END)
};

// How often each row of a program ran, counted cheaply: instead of a counter per cycle, the
// executor counts only where control arrives by a jump (SPLIT, LOOP, REPEAT, JUMP, GOSUB,
// RETURN, DYNENTER, including a jump to the next row) and where the run starts and last
// stopped (a pause and the resumption at its pc cancel out). Executions in the straight-line
// runs in between follow from those, so the hot loop pays one increment per taken branch or
// call, none per row; Tally sums them per segment of the program's RowTally, so reading the
// tables costs per segment, not per row.
struct RowCounts {
  PcCounters entries;     // by pc: arrivals by jump
  PcCounters loop_ends;   // by pc of a REPEAT: the runs that ended the loop (the loop's END row)
  uint32_t start_pc = 0;  // where the first Run/Step slice started (if started)
  bool started = false;
  uint32_t end_pc = 0;  // where the last slice stopped (pause, trap, finish) before running it
  bool stopped = false;

  // Returns how many times each pc ran (pseudo operations included; they cost no cycle). The
  // rows of non-pseudo pcs sum to the executor's clk(). O(program size): the reference Tally
  // is checked against.
  std::vector<uint64_t> Executions(const Program& program) const;
  // Returns the run's tables; O(segments run + rows of the segments where the run started or
  // stopped mid-way). Empty (all zero) if nothing was counted.
  InstructionTally Tally(const Program& program) const;
};

// The advice provider: non-deterministic inputs the program reads.
struct AdviceProvider {
  // Creates empty advice whose Merkle store hashes with `hasher`, which must be the hasher of
  // the program it is given to (*program.dialect->hasher; hashers live for the process).
  explicit AdviceProvider(const Hasher& hasher) : merkle_store(hasher) {}

  std::vector<Felt> stack;  // back() is popped next
  absl::flat_hash_map<Word, std::vector<Felt>> map;
  // Merkle trees read by mtree_get/mtree_set/mtree_verify/adv.push_mtnode and grown by
  // mtree_set and mtree_merge.
  MerkleStore merkle_store;

  // Pushes `values` so that values[0] is popped first.
  void PushFront(const std::vector<Felt>& values) {
    stack.insert(stack.end(), values.rbegin(), values.rend());
  }
};

class Executor;

// Handles `emit.N` events that are not system events (the VM handles those itself).
class Host {
 public:
  virtual ~Host() = default;
  // Called when the program emits `event_id` at `clk`. The host may read the stack through
  // `executor.StackTop()` and change `advice`. A non-OK status traps the program.
  virtual absl::Status OnEvent(uint64_t event_id, uint64_t clk, const Executor& executor,
                               AdviceProvider& advice) = 0;
  // Called when a v0.16 `trace.N` decorator runs, with N and the clk of the row that follows
  // it (decorators cost no cycle). Default: nothing.
  virtual void OnTrace(uint64_t trace_id, uint64_t clk) { (void)trace_id, (void)clk; }
  // Whether the host answers the precompile event `event_id` (keccak256, sha512, ECDSA, EdDSA,
  // AEAD; vm/executor/precompiles.h) itself, e.g. a replay whose log has the answer: then the
  // VM computes nothing and calls OnEvent. Default: the VM computes it.
  virtual bool AnswersPrecompile(uint64_t event_id) const {
    (void)event_id;
    return false;
  }
  // Called after the VM answered a precompile event itself, with the values it appended to
  // advice.stack (the last is popped first) and the request a prover would log (null for
  // AEAD): a recording host logs them. A non-OK status traps the program.
  virtual absl::Status OnPrecompileAnswered(uint64_t event_id, uint64_t clk,
                                            std::span<const Felt> pushed,
                                            const PrecompileRequest* request) {
    (void)event_id, (void)clk, (void)pushed, (void)request;
    return absl::OkStatus();
  }
};

// Default memory budget of one execution (ExecutionOptions::max_memory_bytes): 1 GiB.
inline constexpr uint64_t kDefaultMaxMemoryBytes = uint64_t{1} << 30;
// Default of ExecutionOptions::debug_print_max_items.
inline constexpr uint64_t kDefaultDebugPrintMaxItems = 65536;

struct ExecutionOptions {
  // Maximum number of cycles; a program that needs more traps with ResourceExhausted.
  uint64_t max_cycles = uint64_t{1} << 32;
  // Maximum operand stack depth (elements, all contexts together).
  uint64_t max_stack_depth = uint64_t{1} << 22;
  // Memory budget in bytes (`--max-memory`): VM memory pages (32 KiB and a 128-byte written-words
  // bitmap each, allocated on first write), the advice stack and map, the operand stack buffer and
  // the call stacks (frames, returns, contexts). It is charged where memory is allocated (a new
  // page, an advice push by an event, a stack buffer or call stack growth), never per cycle; a
  // program that needs more traps with ResourceExhausted (TrapKind::kMemoryLimit). Values a Host
  // inserts into the advice map are charged per entry only (the host's own values are its
  // business), and the Merkle store is not charged. 0 is treated as no memory at all (every run
  // traps).
  uint64_t max_memory_bytes = kDefaultMaxMemoryBytes;
  // Where the print debugging of the v0.25 core library writes (`--debug-print`): the events of
  // `miden::core::debug::print_stack`, `print_mem`, `print_mem_all`, `print_adv_stack`,
  // `print_adv_map` and `print_adv_map_item` write what miden-vm v0.25.7's DebugPrinter prints
  // (vm/executor/debug_print.h), and print_mem's range errors trap. Null (the default): those
  // events do nothing, as upstream's noop_debug_handlers. Not owned; must outlive the run.
  //
  // A sink here rather than a Host decorator: the prints read the current context's memory and
  // id, the whole operand stack and the advice map, which only the executor sees, and the
  // events are the dialect's library events, answered inside the VM (a Host never sees them,
  // so neither a recording nor a replay host logs them: a replay prints what the live run
  // did). It is read only on the EMIT of such an event, never per cycle.
  std::ostream* debug_print = nullptr;
  // At most this many items (stack elements, memory cells, advice map entries or values) per
  // print; the rest are counted in upstream's "(N more items)" line (a stack print reads
  // "... state in interval [0, N-1] ..." then). Upstream prints them all; print_mem's own
  // limit of 1024 addresses is upstream's and an error.
  uint64_t debug_print_max_items = kDefaultDebugPrintMaxItems;
};

enum class TrapKind : uint8_t {
  kNone,
  kAssertionFailed,
  kNotU32,
  kNotBinary,
  kDivideByZero,
  kMemoryAddress,
  kUnalignedWord,
  kCallDepth,
  kFmpOutOfBounds,
  kAdviceStackEmpty,
  kAdviceMapKeyNotFound,
  kMerkleStoreLookup,             // a root or node is not in the Merkle store, bad depth/index
  kMerklePathVerificationFailed,  // MPVERIFY/MRUPDATE: the node does not hash to the root
  kFriFoldingFailed,              // FRIE2F4: bad domain segment, inconsistent previous folding
  kCircuitEvaluationFailed,       // EVALCIRCUIT: bad layout or gate, or a non-zero result
  kEventFailed,
  kDynamicTargetNotFound,  // DYN / DYNCALL: the memory word is no procedure's MAST root
  kProcedureNotFound,      // an EXTERNAL node (MAST-root literal) that no forest resolves
  kCycleLimit,
  kStackOverflow,
  kMemoryLimit,  // ExecutionOptions::max_memory_bytes would be exceeded
  kOutputStackOverflow,
  kSyscallContext,  // CALLER outside a SYSCALL; CALL/SYSCALL/DYNCALL inside one
  kUnsupported,
};

struct Trap {
  TrapKind kind = TrapKind::kNone;
  std::string message;
  uint64_t clk = 0;  // cycle of the row that trapped
  uint32_t pc = 0;   // instruction that trapped
  uint64_t error_code = 0;
  std::vector<uint32_t> frames;  // procedure frames at the trap, outermost first
};

class Executor {
 public:
  enum class State : uint8_t { kPaused, kFinished, kTrapped };

  // Prepares to run `program` (kept by reference: it must outlive the executor) with the
  // initial operand stack `stack` (top first, at most 16 values) and `advice`. EMITs of the
  // system events of the program's dialect (program.dialect->events) run built-in handlers,
  // other ids go to `host`. `host` and `observer` may be null; if given they are kept and must
  // outlive the executor. Requires program.dialect (set by the Assembler).
  Executor(const Program& program, const std::vector<Felt>& stack, AdviceProvider advice,
           const ExecutionOptions& options, Host* host = nullptr,
           CallStackObserver* observer = nullptr);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Counts row executions into `counts` (kept; must outlive the executor) from now on; null
  // stops counting. Call before the first Run/Step: it resets `counts` to the program's size.
  // Without it the executor runs its uncounted loop (no cost at all).
  void CountRows(RowCounts* counts);
  // Reports every row that feeds a chiplet or the range checker to `recorder` (kept; must
  // outlive the executor; built for this program) from now on; null stops. Call before the
  // first Run/Step. Without it those rows only test that no recorder is set.
  // The recorder's memory bookkeeping counts against ExecutionOptions::max_memory_bytes' share
  // given by TraceShapeRecorder::set_max_tracked_words (set here: 32 bytes per word).
  void RecordTraceShape(TraceShapeRecorder* recorder);

  // Runs until the program finishes or traps, or `max_cycles` more cycles have run.
  State Run(uint64_t max_cycles = ~uint64_t{0});
  // Runs exactly one cycle (plus the zero-cycle bookkeeping around it). After it, frames()
  // is the call stack of the cycle just executed. Once the last row has run, one more Step()
  // finishes the program without advancing clk.
  State Step();

  State state() const { return state_; }
  // Number of cycles executed so far (= the clk of the next row).
  uint64_t clk() const { return clk_; }
  // Returns up to `n` elements from the top of the operand stack, top first (zeros past the
  // depth-16 floor are included because they are part of the stack).
  std::vector<Felt> StackTop(size_t n = 16) const;
  // Current operand stack depth (>= 16) of the current context.
  uint64_t stack_depth() const;
  // Procedure frames (Program::procedures ids), outermost first.
  const std::vector<uint32_t>& frames() const { return frames_; }
  const Trap& trap() const { return trap_; }
  // The precompile requests of the precompile events the VM answered itself, in order.
  const std::vector<PrecompileRequest>& precompile_requests() const { return precompile_requests_; }
  // The LOGPRECOMPILE transcript state (VM-global, initially the zero word).
  const Word& precompile_transcript() const { return precompile_transcript_; }
  const AdviceProvider& advice() const { return advice_; }
  const Program& program() const { return program_; }
  // Bytes currently charged against ExecutionOptions::max_memory_bytes.
  uint64_t memory_used() const { return memory_used_; }
  // Index of the next instruction to run.
  uint32_t pc() const { return pc_; }
  // Index of the last row (cycle) executed; after Step() the row of that cycle.
  uint32_t last_row() const { return last_row_; }

 private:
  class Memory;
  struct Context;

  // The dispatch loop; kCount also counts jumps into *row_counts_ (a further instance, so the
  // plain loop stays as it was). Rows that feed the trace shape report to *trace_shape_ if set.
  template <bool kCount>
  State Execute(uint64_t stop_clk);
  // Runs the instance of Execute for the counters that are on.
  State Dispatch(uint64_t stop_clk);
  // RowCounts bookkeeping of the counted loop: an arrival at `pc` by a jump, a REPEAT at `pc`
  // that ended its loop, a slice that starts or stops at `pc`. Out of line: inlined, they cost
  // the counted loop registers on every row (measured: fib-like +35 %), not only on jumps.
  [[gnu::noinline]] void CountArrival(uint32_t pc) { ++row_counts_->entries.data()[pc]; }
  [[gnu::noinline]] void CountLoopEnd(uint32_t pc) { ++row_counts_->loop_ends.data()[pc]; }
  [[gnu::noinline]] void CountStart(uint32_t pc);
  [[gnu::noinline]] void CountStop(uint32_t pc);
  // false: stack overflow or memory budget (trap set at pc, clk).
  // The dispatch loop's view of the operand stack, as Rebase moves it.
  struct StackWindow {
    Felt* sp;
    Felt* bot;
    Felt* floor;
  };
  bool Rebase(StackWindow& w, uint32_t pc, uint64_t clk);
  // Charges `bytes` against the memory budget; false (nothing charged) when it would be
  // exceeded.
  bool ChargeMemory(uint64_t bytes) {
    if (bytes > options_.max_memory_bytes - std::min(memory_used_, options_.max_memory_bytes)) {
      return false;
    }
    memory_used_ += bytes;
    return true;
  }
  // Sets the kMemoryLimit trap: `what` needed `bytes` more.
  void SetMemoryTrap(const char* what, uint64_t bytes, uint32_t pc, uint64_t clk);
  // Doubles the capacity of a call stack vector, charging the budget. false: trap set.
  template <typename T>
  bool GrowCallStack(std::vector<T>& v, uint32_t pc, uint64_t clk);
  // Re-charges the advice stack and map after they changed (events). false: trap set.
  bool ChargeAdvice(uint32_t pc, uint64_t clk);
  uint64_t AdviceBytes() const;
  void SetTrap(TrapKind kind, std::string message, uint32_t pc, uint64_t clk, uint64_t code = 0);
  // An EMIT of event `id`: the dialect's built-in handler, or the host. `sp` and `bot` bound the
  // current context's operand stack, `memory` is its memory (memory_ is only written back when
  // a slice ends). false: trap set.
  bool HandleEvent(uint64_t id, Felt* sp, const Felt* bot, Memory* memory, uint32_t pc,
                   uint64_t clk);
  // A print event of the core library's debug module (HandleEvent) with
  // ExecutionOptions::debug_print set. false: trap set (a bad print_mem range).
  bool DebugPrint(const SystemEventRow& event, const Felt* sp, const Felt* bot, Memory* memory,
                  uint32_t pc, uint64_t clk);
  // MPVERIFY and MRUPDATE (out of the hot switch; they may allocate), words with element 0
  // deepest or, when `little_endian`, on top. false: trap set.
  bool MerkleVerify(Felt* sp, uint32_t pc, uint64_t clk, uint64_t error_code, bool little_endian);
  bool MerkleUpdate(Felt* sp, uint32_t pc, uint64_t clk, bool little_endian);
  // A precompile event (HandleEvent): answered by the host if it AnswersPrecompile, else
  // computed here. false: trap set.
  bool HandlePrecompile(Precompile which, uint64_t id, std::string_view name, Felt* sp,
                        Memory* memory, uint32_t pc, uint64_t clk);
  // LOGPRECOMPILE (out of the hot switch): folds the statement into precompile_transcript_.
  void LogPrecompile(Felt* sp);
  Memory* AcquireMemory();
  void ReleaseMemory(Memory* memory);

  const Program& program_;
  // The system events of the program's dialect: EMIT looks its id up here (only EMIT rows pay
  // for it) and runs the built-in handler, or passes the event to the host.
  const SystemEventTable& events_;
  // The hasher of the out-of-line hash users (Merkle ops, hash events); HPERM is RPO-only and
  // calls the RPO permutation directly. It is program.dialect->hasher.
  const Hasher& hasher_;
  // Added to the clock of a DYN / DYNCALL row whose target is unknown (MastRules).
  const uint64_t dyn_miss_clk_offset_;
  ExecutionOptions options_;
  Host* host_;
  CallStackObserver* observer_;
  RowCounts* row_counts_ = nullptr;
  TraceShapeRecorder* trace_shape_ = nullptr;
  AdviceProvider advice_;

  std::vector<Felt> buffer_;
  size_t sp_ = 0, bot_ = 0, floor_ = 0;  // indices into buffer_
  uint32_t pc_ = 0;
  uint32_t last_row_ = 0;
  uint64_t clk_ = 0;
  uint64_t fmp_ = 0;
  State state_ = State::kPaused;
  Trap trap_;

  std::vector<uint32_t> frames_;
  uint32_t dyn_procedure_ = 0;  // the procedure the last DYN/DYNCALL row looked up
  struct Return {
    uint32_t pc;
    bool had_frame;
  };
  std::vector<Return> returns_;
  std::vector<Context> contexts_;
  bool in_syscall_ = false;  // the current context was entered by SYSCALL
  Word creator_{};           // MAST root of the CALL/DYNCALL callee that created the context
  // The current context's id as miden-vm numbers them: 0 for the root (and a SYSCALL), the
  // clk of the CALL / DYNCALL row + 1 for the context it creates. Read by the debug prints;
  // set at CALL rows and their ENDs only (like in_syscall_), never per cycle.
  uint64_t ctx_ = 0;
  // The precompile transcript state of LOGPRECOMPILE: VM-global (shared by all contexts),
  // initially the zero word.
  Word precompile_transcript_{};
  // The precompile requests of the events the VM answered, in order (a prover's log; cycles
  // never depend on them). Their calldata is charged to the memory budget.
  std::vector<PrecompileRequest> precompile_requests_;
  std::vector<std::unique_ptr<Memory>> memories_;  // [0] = root context
  std::vector<Memory*> free_memories_;
  Memory* memory_ = nullptr;
  uint64_t memory_used_ = 0;        // bytes charged against options_.max_memory_bytes
  uint64_t advice_charged_ = 0;     // the part of memory_used_ charged for the advice provider
  uint64_t advice_map_values_ = 0;  // values in advice_.map inserted by the VM or the inputs
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_EXECUTOR_EXECUTOR_H_
