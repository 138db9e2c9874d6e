#include "vm/assembler/linearize.h"

#include <algorithm>
#include <array>
#include <deque>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "vm/dialect.h"

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
    if (program_->dialect != nullptr && program_->dialect->trace_shape != nullptr) {
      BuildHashStates(*program_->dialect->trace_shape);
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

  // Notes that row `pc` starts node `node` (its permutation requests: StaticHashStates).
  void Requests(uint32_t pc, uint32_t node) { request_rows_.emplace_back(pc, node); }

  using State = std::array<uint64_t, 12>;

  // The hasher input states node `node` requests, in request order, appended to `out`: a
  // control node's [first child, second child (or 0), capacity with its domain], a basic
  // block's batches chained through the capacity (the block digest's sponge).
  void NodeStates(uint32_t node, const TraceShapeRules& rules, std::vector<State>& out) const {
    const MastNode& n = forest_.nodes[node];
    const Hasher& hasher = forest_.hasher();
    const int rate = hasher.rate_start();
    const uint32_t cap = rules.capacity_start;
    const WireOpcodeTable& wire = forest_.wire();
    const MastRules& mast = forest_.rules();
    HasherState state{};
    auto control = [&](const Word& a, const Word& b, Opcode domain_op) {
      for (int i = 0; i < 4; ++i) {
        state[rate + i] = a[i];
        state[rate + 4 + i] = b[i];
      }
      state[cap + 1] = Felt(static_cast<uint64_t>(wire[OpcodeIndex(domain_op)]));
    };
    auto digest = [&](const MastItem& item) -> const Word& {
      return forest_.nodes[item.node].digest;
    };
    constexpr Word kZero{};
    switch (n.kind) {
      case MastKind::kBlock: {
        const std::vector<Felt> felts = BlockBatchFelts(n.ops, mast, wire);
        state[cap] = Felt(felts.size() % 8);
        for (size_t b = 0; b + 8 <= felts.size(); b += 8) {
          for (int i = 0; i < 8; ++i) state[rate + i] = felts[b + i];
          State s;
          for (int i = 0; i < kHasherStateWidth; ++i) s[i] = state[i].value();
          out.push_back(s);
          hasher.Permute(state);
        }
        return;
      }
      case MastKind::kJoin:
        control(digest(n.first), digest(n.second), Opcode::kJoin);
        break;
      case MastKind::kSplit:
        control(digest(n.first), digest(n.second), Opcode::kSplit);
        break;
      case MastKind::kLoop:
        control(digest(n.first), kZero, mast.loop_op);
        break;
      case MastKind::kCall:
        control(digest(n.first), kZero, mast.call_op);
        break;
      case MastKind::kSyscall:
        control(digest(n.first), kZero, mast.syscall_op);
        break;
      case MastKind::kDyn:
        control(kZero, kZero, Opcode::kDyn);
        break;
      case MastKind::kDynCall:
        control(kZero, kZero, mast.dyncall_op);
        break;
      case MastKind::kExternal:
      case MastKind::kTraces:
        return;  // no row, no request (kTraces: v0.16 decorators)
    }
    State s;
    for (int i = 0; i < kHasherStateWidth; ++i) s[i] = state[i].value();
    out.push_back(s);
  }

  // Fills program_->hash_states from the rows noted by Requests.
  void BuildHashStates(const TraceShapeRules& rules) {
    StaticHashStates& hs = program_->hash_states;
    const size_t n = program_->code.size();
    std::sort(request_rows_.begin(), request_rows_.end());
    absl::flat_hash_map<State, uint32_t> ids;
    absl::flat_hash_map<uint32_t, std::pair<uint32_t, uint32_t>> by_node;  // node -> ids range
    std::vector<State> states;
    hs.first.assign(n + 1, 0);
    size_t next = 0;
    for (size_t pc = 0; pc < n; ++pc) {
      hs.first[pc] = static_cast<uint32_t>(hs.ids.size());
      for (; next < request_rows_.size() && request_rows_[next].first == pc; ++next) {
        const uint32_t node = request_rows_[next].second;
        auto [it, inserted] = by_node.try_emplace(node);
        if (inserted) {
          states.clear();
          NodeStates(node, rules, states);
          const uint32_t begin = static_cast<uint32_t>(hs.ids.size());
          for (const State& st : states) {
            auto [id, fresh] = ids.try_emplace(st, static_cast<uint32_t>(hs.states.size()));
            if (fresh) hs.states.push_back(st);
            hs.ids.push_back(id->second);
          }
          it->second = {begin, static_cast<uint32_t>(hs.ids.size())};
        } else {
          for (uint32_t i = it->second.first; i < it->second.second; ++i) {
            hs.ids.push_back(hs.ids[i]);
          }
        }
      }
    }
    hs.first[n] = static_cast<uint32_t>(hs.ids.size());
  }

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

  absl::Status EmitBlock(uint32_t node) {
    const MastNode& n = forest_.nodes[node];
    ++program_->num_basic_blocks;
    rows_.clear();
    PackBlock(n.ops, forest_.rules(), &rows_);
    uint32_t src = n.origins.empty() ? 0 : n.origins[0].source;
    Requests(Emit(Opcode::kSpan, 0, 0, src), node);
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
        return EmitBlock(node);
      case MastKind::kJoin:
        Requests(Emit(Opcode::kJoin, 0, 0, n.source), node);
        FLAMEFLEET_RETURN_IF_ERROR(EmitItem(n.first));
        FLAMEFLEET_RETURN_IF_ERROR(EmitItem(n.second));
        Emit(Opcode::kEnd, 0, kEndPlain, n.source);
        return CheckSize();
      case MastKind::kSplit: {
        uint32_t split = Emit(Opcode::kSplit, 0, 0, n.source, Opening(n));
        Requests(split, node);
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
        Requests(loop, node);
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
        Requests(
            Emit(n.kind == MastKind::kCall ? forest_.rules().call_op : forest_.rules().syscall_op,
                 n.procedure == kNoProcedure ? 0 : n.procedure, 0, n.source, Opening(n)),
            node);
        FLAMEFLEET_RETURN_IF_ERROR(EmitItem(n.first));
        Emit(Opcode::kEnd, 0, kEndOfCall, n.source, Closing(n));
        return CheckSize();
      case MastKind::kDyn:
        Requests(Emit(Opcode::kDyn, 0, 0, n.source, Opening(n)), node);
        Emit(Opcode::kDynEnter, 0, 0, n.source, Closing(n));
        Emit(Opcode::kEnd, 0, kEndPlain, n.source, Closing(n));
        return CheckSize();
      case MastKind::kDynCall:
        Requests(Emit(forest_.rules().dyncall_op, 0, 0, n.source, Opening(n)), node);
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
  std::vector<std::pair<uint32_t, uint32_t>> request_rows_;  // (pc, node), see Requests
};

}  // namespace

absl::Status Linearize(const MastForest& forest, const std::vector<MastItem>& procedure_roots,
                       MastItem entry, Program* program) {
  Linearizer linearizer(forest, procedure_roots, program);
  return linearizer.Run(entry);
}

}  // namespace flamefleet::vm
