#include "vm/assembler/linearize.h"

#include <algorithm>
#include <array>
#include <deque>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace flamefleet::vm {
namespace {

constexpr size_t kMaxCode = size_t{1} << 27;

class Linearizer {
 public:
  Linearizer(const MastForest& forest, const std::vector<MastItem>& roots, Program* program)
      : forest_(forest),
        roots_(roots),
        program_(program),
        refs_(forest.nodes.size(), 0),
        node_entry_(forest.nodes.size(), kUnset),
        proc_entry_(roots.size(), kUnset) {}

  absl::Status Run(MastItem entry) {
    CountRefs(entry);
    for (const DynTarget& t : program_->dyn_targets) CountProcedureRefs(t.procedure);
    FLAMEFLEET_RETURN_IF_ERROR(EmitItem(entry));
    Emit(Opcode::kFinish, 0, 0, 0);
    for (const DynTarget& t : program_->dyn_targets) {
      if (!proc_queued_.contains(t.procedure)) {
        proc_queued_.insert(t.procedure);
        pending_.push_back(Pending{true, t.procedure});
      }
    }
    // Subroutines: procedures and shared subtrees, each once.
    while (!pending_.empty()) {
      Pending p = pending_.front();
      pending_.pop_front();
      uint32_t pc = static_cast<uint32_t>(program_->code.size());
      if (p.is_procedure) {
        proc_entry_[p.id] = pc;
        program_->procedures[p.id].entry_pc = pc;
        program_->procedures[p.id].is_subroutine = true;
        FLAMEFLEET_RETURN_IF_ERROR(EmitItem(roots_[p.id]));
      } else {
        node_entry_[p.id] = pc;
        FLAMEFLEET_RETURN_IF_ERROR(EmitNode(p.id));
      }
      Emit(Opcode::kReturn, 0, 0, 0);
    }
    for (const Fixup& f : gosubs_) {
      uint32_t target = f.is_procedure ? proc_entry_[f.id] : node_entry_[f.id];
      program_->code[f.pc].aux = target;
    }
    if (program_->code.size() > kMaxCode) {
      return absl::ResourceExhaustedError("program too large to linearise");
    }
    return absl::OkStatus();
  }

 private:
  static constexpr uint32_t kUnset = ~uint32_t{0};

  struct Pending {
    bool is_procedure;
    uint32_t id;
  };
  struct Fixup {
    uint32_t pc;
    bool is_procedure;
    uint32_t id;
  };

  void CountProcedureRefs(uint32_t proc) {
    if (proc_seen_.size() < roots_.size()) proc_seen_.resize(roots_.size(), false);
    if (proc_seen_[proc]) return;
    proc_seen_[proc] = true;
    CountRefs(roots_[proc]);
  }

  void CountRefs(MastItem item) {
    if (item.chain != 0) {
      CountProcedureRefs(forest_.Outermost(item.chain));
      return;
    }
    if (refs_[item.node]++ > 0) return;
    CountNodeChildren(item.node);
  }

  void CountNodeChildren(uint32_t node) {
    const MastNode& n = forest_.nodes[node];
    switch (n.kind) {
      case MastKind::kJoin:
      case MastKind::kSplit:
        CountRefs(n.first);
        CountRefs(n.second);
        break;
      case MastKind::kLoop:
      case MastKind::kCall:
      case MastKind::kSyscall:
        CountRefs(n.first);
        break;
      case MastKind::kExternal:
        if (n.procedure != kNoProcedure) CountProcedureRefs(n.procedure);
        break;
      default:
        break;
    }
  }

  uint32_t Emit(Opcode op, uint32_t aux, uint64_t imm, uint32_t source,
                RowRole role = RowRole::kBlock) {
    // A construct that opens with two rows of one instruction (a loop wrapped in a SPLIT, as
    // some dialects compile while.true) starts it once.
    if (role == RowRole::kStart && !program_->code.empty() &&
        program_->row_roles.back() == RowRole::kStart && program_->source_index.back() == source &&
        IsControl(program_->code.back().opcode)) {
      role = RowRole::kPart;
    }
    Instruction in;
    in.opcode = op;
    in.aux = aux;
    in.imm = imm;
    program_->code.push_back(in);
    program_->source_index.push_back(source);
    program_->row_roles.push_back(role);
    return static_cast<uint32_t>(program_->code.size() - 1);
  }

  // Roles of a construct's rows: its opening row starts its instruction, the others continue
  // it; a construct without a source instruction is block overhead.
  static RowRole Opening(const MastNode& n) {
    return n.source == 0 ? RowRole::kBlock : RowRole::kStart;
  }
  static RowRole Closing(const MastNode& n) {
    return n.source == 0 ? RowRole::kBlock : RowRole::kPart;
  }

  uint32_t here() const { return static_cast<uint32_t>(program_->code.size()); }

  absl::Status CheckSize() const {
    if (program_->code.size() > kMaxCode) {
      return absl::ResourceExhaustedError(
          absl::StrCat("program too large: more than ", kMaxCode, " instructions"));
    }
    return absl::OkStatus();
  }

  // GOSUB into procedure `proc` (pushing its frame), emitting its subroutine later.
  void EmitGosub(uint32_t proc) {
    uint32_t pc = Emit(Opcode::kGosub, kUnset, proc, 0);
    gosubs_.push_back(Fixup{pc, true, proc});
    if (!proc_queued_.contains(proc)) {
      proc_queued_.insert(proc);
      pending_.push_back(Pending{true, proc});
    }
  }

  // Emits a TRACE for each decorator of kTraces node `traces` (kNoTraces: none).
  void EmitTraces(uint32_t traces) {
    if (traces == kNoTraces) return;
    const MastNode& n = forest_.nodes[traces];
    for (size_t k = 0; k < n.ops.size(); ++k) {
      Emit(Opcode::kTrace, 0, n.ops[k].imm, n.origins[k].source, RowRole::kStart);
    }
  }

  absl::Status EmitItem(MastItem item) {
    EmitTraces(item.before);
    FLAMEFLEET_RETURN_IF_ERROR(EmitItemRows(item));
    EmitTraces(item.after);
    return absl::OkStatus();
  }

  absl::Status EmitItemRows(MastItem item) {
    if (item.chain != 0) {
      // Enter the outermost procedure; its subroutine enters the rest of the chain.
      EmitGosub(forest_.Outermost(item.chain));
      return absl::OkStatus();
    }
    const MastNode& n = forest_.nodes[item.node];
    if (n.kind != MastKind::kBlock && refs_[item.node] > 1) {
      uint32_t pc = Emit(Opcode::kGosub, kUnset, kNoFrame, 0);
      gosubs_.push_back(Fixup{pc, false, item.node});
      if (!node_queued_.contains(item.node)) {
        node_queued_.insert(item.node);
        pending_.push_back(Pending{false, item.node});
      }
      return absl::OkStatus();
    }
    return EmitNode(item.node);
  }

  // Returns the ancestor of `chain` (itself included) of depth at most `depth`.
  uint32_t Ancestor(uint32_t chain, uint32_t depth) const {
    while (forest_.chains[chain].depth > depth) chain = forest_.chains[chain].parent;
    return chain;
  }

  // Returns the longest chain both `a` and `b` start with.
  uint32_t Common(uint32_t a, uint32_t b) const {
    const auto& chains = forest_.chains;
    while (chains[a].depth > chains[b].depth) a = chains[a].parent;
    while (chains[b].depth > chains[a].depth) b = chains[b].parent;
    while (a != b) {
      a = chains[a].parent;
      b = chains[b].parent;
    }
    return a;
  }

  // Emits LEAVE/ENTER pseudo ops to move the inline frame chain from `from` to `to`. The frames
  // both have in common stay, down to depth `keep` (deeper ones are left and entered again: new
  // inlined executions). Frames entered at depth <= `resume` continue an execution suspended by
  // the block's RESPAN row (ENTER imm = kEnterResume: not a new call).
  void Transition(uint32_t from, uint32_t to, uint32_t keep = kNoReenter, uint32_t resume = 0) {
    const auto& chains = forest_.chains;
    const uint32_t base = Ancestor(Common(from, to), keep);
    path_.clear();
    for (uint32_t c = to; c != base; c = chains[c].parent) path_.push_back(c);
    for (uint32_t i = chains[base].depth; i < chains[from].depth; ++i) {
      Emit(Opcode::kLeaveProc, 0, 0, 0);
    }
    for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
      Emit(Opcode::kEnterProc, chains[*it].procedure,
           chains[*it].depth <= resume ? kEnterResume : kEnterCall, 0);
    }
  }

  absl::Status EmitBlock(const MastNode& n) {
    ++program_->num_basic_blocks;
    rows_.clear();
    PackBlock(n.ops, forest_.rules(), &rows_);
    uint32_t src = n.origins.empty() ? 0 : n.origins[0].source;
    Emit(Opcode::kSpan, 0, 0, src);
    uint32_t chain = 0;
    uint32_t suspended = 0;  // the chain left at the last RESPAN, until the next op
    for (int32_t r : rows_) {
      if (r >= 0 && IsPseudo(n.ops[r].opcode)) {
        // A TRACE decorator: no row, no frame change.
        Emit(n.ops[r].opcode, 0, n.ops[r].imm, n.origins[r].source, RowRole::kStart);
      } else if (r >= 0) {
        const OpOrigin& o = n.origins[r];
        const uint32_t resume =
            std::min(forest_.chains[Common(suspended, o.chain)].depth, o.reenter);
        Transition(chain, o.chain, o.reenter, resume);
        chain = o.chain;
        suspended = 0;
        src = o.source;
        Emit(n.ops[r].opcode, 0, n.ops[r].imm, src,
             src == 0 ? RowRole::kBlock : (o.starts ? RowRole::kStart : RowRole::kPart));
      } else if (r == kRowPadNoop) {
        Emit(Opcode::kNoop, 0, 0, src);
      } else {
        // The RESPAN row is the block's own; the inlined executions it interrupts go on after it.
        Transition(chain, 0);
        if (chain != 0) suspended = chain;
        chain = 0;
        Emit(Opcode::kRespan, 0, 0, src);
      }
    }
    Transition(chain, 0);
    Emit(Opcode::kEnd, 0, kEndPlain, src);
    return CheckSize();
  }

  absl::Status EmitNode(uint32_t node) {
    const MastNode& n = forest_.nodes[node];
    switch (n.kind) {
      case MastKind::kBlock:
        return EmitBlock(n);
      case MastKind::kJoin:
        Emit(Opcode::kJoin, 0, 0, n.source);
        FLAMEFLEET_RETURN_IF_ERROR(EmitItem(n.first));
        FLAMEFLEET_RETURN_IF_ERROR(EmitItem(n.second));
        Emit(Opcode::kEnd, 0, kEndPlain, n.source);
        return CheckSize();
      case MastKind::kSplit: {
        uint32_t split = Emit(Opcode::kSplit, 0, 0, n.source, Opening(n));
        FLAMEFLEET_RETURN_IF_ERROR(EmitItem(n.first));
        Emit(Opcode::kEnd, 0, kEndPlain, n.source, Closing(n));
        uint32_t jump = Emit(Opcode::kJump, 0, 0, n.source, Closing(n));
        program_->code[split].aux = here();
        FLAMEFLEET_RETURN_IF_ERROR(EmitItem(n.second));
        Emit(Opcode::kEnd, 0, kEndPlain, n.source, Closing(n));
        program_->code[jump].aux = here();
        return CheckSize();
      }
      case MastKind::kLoop: {
        const Opcode loop_op = forest_.rules().loop_op;
        uint32_t loop = Emit(loop_op, 0, 0, n.source, Opening(n));
        uint32_t body = here();
        FLAMEFLEET_RETURN_IF_ERROR(EmitItem(n.first));
        Emit(Opcode::kRepeat, body, 0, n.source, Closing(n));
        if (loop_op == Opcode::kLoopDo) return CheckSize();  // always entered: no skip path
        uint32_t jump = Emit(Opcode::kJump, 0, 0, n.source, Closing(n));
        program_->code[loop].aux = here();
        Emit(Opcode::kEnd, 0, kEndPlain, n.source, Closing(n));
        program_->code[jump].aux = here();
        return CheckSize();
      }
      case MastKind::kCall:
      case MastKind::kSyscall:
        // aux: the callee procedure (its MAST root is what `caller` reports in the context).
        Emit(n.kind == MastKind::kCall ? forest_.rules().call_op : forest_.rules().syscall_op,
             n.procedure == kNoProcedure ? 0 : n.procedure, 0, n.source, Opening(n));
        FLAMEFLEET_RETURN_IF_ERROR(EmitItem(n.first));
        Emit(Opcode::kEnd, 0, kEndOfCall, n.source, Closing(n));
        return CheckSize();
      case MastKind::kDyn:
        Emit(Opcode::kDyn, 0, 0, n.source, Opening(n));
        Emit(Opcode::kDynEnter, 0, 0, n.source, Closing(n));
        Emit(Opcode::kEnd, 0, kEndPlain, n.source, Closing(n));
        return CheckSize();
      case MastKind::kDynCall:
        Emit(forest_.rules().dyncall_op, 0, 0, n.source, Opening(n));
        Emit(Opcode::kDynEnter, 0, 0, n.source, Closing(n));
        Emit(Opcode::kEnd, 0, kEndOfCall, n.source, Closing(n));
        return CheckSize();
      case MastKind::kTraces:
        return absl::InternalError("decorators left outside a block (MastBuilder::AttachTraces)");
      case MastKind::kExternal: {
        // A MAST-root literal (library EXTERNALs are entered through their item's chain).
        if (n.procedure == kNoProcedure) {
          std::array<uint64_t, 4> root;
          for (int i = 0; i < 4; ++i) root[i] = n.digest[i].value();
          Emit(Opcode::kNoForest, 0, program_->unresolved_roots.size(), n.source, Opening(n));
          program_->unresolved_roots.push_back(root);
          return CheckSize();
        }
        EmitGosub(n.procedure);
        return absl::OkStatus();
      }
    }
    return absl::InternalError("unknown MAST node kind");
  }

  const MastForest& forest_;
  const std::vector<MastItem>& roots_;
  Program* program_;
  std::vector<uint32_t> refs_;
  std::vector<bool> proc_seen_;
  std::vector<uint32_t> node_entry_;
  std::vector<uint32_t> proc_entry_;
  std::deque<Pending> pending_;
  std::vector<Fixup> gosubs_;
  absl::flat_hash_set<uint32_t> proc_queued_;
  absl::flat_hash_set<uint32_t> node_queued_;
  std::vector<int32_t> rows_;
  std::vector<uint32_t> path_;
};

}  // namespace

absl::Status Linearize(const MastForest& forest, const std::vector<MastItem>& procedure_roots,
                       MastItem entry, Program* program) {
  Linearizer linearizer(forest, procedure_roots, program);
  return linearizer.Run(entry);
}

}  // namespace flamefleet::vm
