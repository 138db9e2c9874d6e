#include "vm/assembler/mast_builder.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace flamefleet::vm {
namespace {

// Upper bounds that keep hostile programs (deeply nested repeats) from exhausting memory.
constexpr size_t kMaxBlockOps = size_t{1} << 24;
constexpr size_t kMaxNodes = size_t{1} << 22;

// Units of work (MAST nodes, instructions) between two deadline checks.
constexpr uint64_t kDeadlineCheckEvery = 4096;
// Expanded sizes saturate here (no overflow however deep repeats nest).
constexpr uint64_t kSaturatedSize = uint64_t{1} << 62;

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > kSaturatedSize / a) return kSaturatedSize;
  return std::min(a * b, kSaturatedSize);
}

// The size of `block` fully unrolled (see AssembleLimits::max_program_ops).
uint64_t ExpandedSize(const ast::Block& block) {
  uint64_t n = 0;
  for (const ast::Node& node : block) {
    uint64_t size = 1;
    if (const auto* ifelse = std::get_if<ast::IfElse>(&node.op)) {
      size = 1 + ExpandedSize(ifelse->on_true) + ExpandedSize(ifelse->on_false);
    } else if (const auto* loop = std::get_if<ast::While>(&node.op)) {
      size = 1 + ExpandedSize(loop->body);
    } else if (const auto* dowhile = std::get_if<ast::DoWhile>(&node.op)) {
      size = 1 + ExpandedSize(dowhile->body) + ExpandedSize(dowhile->condition);
    } else if (const auto* rep = std::get_if<ast::Repeat>(&node.op)) {
      size = SaturatingMul(rep->count, std::max<uint64_t>(ExpandedSize(rep->body), 1));
    }
    n = std::min(n + std::min(size, kSaturatedSize), kSaturatedSize);
  }
  return n;
}

std::string ImmediateText(const ast::Immediate& imm) {
  switch (imm.kind) {
    case ast::Immediate::Kind::kLiteral:
      return absl::StrCat(imm.value);
    case ast::Immediate::Kind::kWord:
      return absl::StrCat("[", absl::StrJoin(imm.word, ","), "]");
    case ast::Immediate::Kind::kConstant:
      return imm.text;
    case ast::Immediate::Kind::kString:
      return absl::StrCat("\"", imm.text, "\"");
    case ast::Immediate::Kind::kEvent:
      return absl::StrCat("event(\"", imm.text, "\")");
  }
  return "";
}

// Renders an instruction back to MASM-like text for error messages.
std::string InstructionText(const ast::Instruction& inst) {
  std::string text = inst.name;
  if (inst.name == "exp.u" && !inst.args.empty()) {
    return absl::StrCat("exp.u", ImmediateText(inst.args[0]));
  }
  if (!inst.target.empty()) {
    absl::StrAppend(&text, ".", inst.target);  // a MAST-root target also sits in args[0]
  } else {
    for (const ast::Immediate& a : inst.args) absl::StrAppend(&text, ".", ImmediateText(a));
  }
  if (inst.error.has_value()) absl::StrAppend(&text, ".err=", ImmediateText(*inst.error));
  return text;
}

}  // namespace

absl::Status CheckAssemblyDeadline(const AssembleLimits& limits) {
  if (limits.deadline != absl::InfiniteFuture() && absl::Now() >= limits.deadline) {
    return absl::DeadlineExceededError(
        "assembly stopped: the job's wall-clock deadline passed (program too large?)");
  }
  return absl::OkStatus();
}

MastBuilder::MastBuilder(Linker& linker, const AssemblerOptions& options,
                         const AssembleLimits& limits, const SourceManager& sources,
                         const MastRules& rules, const WireOpcodeTable& wire, const Hasher& hasher,
                         Program* program)
    : linker_(linker),
      options_(options),
      limits_(limits),
      sources_(sources),
      rules_(rules),
      program_(program),
      forest_(hasher, rules, wire) {}

absl::Status MastBuilder::Error(const ast::SourceLocation& loc, absl::string_view message) const {
  return absl::InvalidArgumentError(sources_.Format(loc, message));
}

MastBuilder::ProcedureState& MastBuilder::StateOf(uint32_t id) {
  if (procedures_.size() <= id) procedures_.resize(linker_.num_procedures());
  return procedures_[id];
}

bool MastBuilder::compiled(uint32_t id) const {
  return id < procedures_.size() && procedures_[id].state == State::kDone;
}

MastItem MastBuilder::root(uint32_t id) const {
  return id < procedures_.size() ? procedures_[id].root : MastItem{};
}

absl::StatusOr<MastItem> MastBuilder::CompileProcedure(uint32_t id,
                                                       const ast::SourceLocation& use) {
  ProcedureState& st = StateOf(id);
  if (st.state == State::kDone) return st.root;
  if (st.state == State::kCompiling) {
    return Error(use, absl::StrCat("procedure '", program_->procedures[id].name,
                                   "' is recursive (recursion is not allowed)"));
  }
  st.state = State::kCompiling;
  const BodyContext ctx = MakeContext(id);
  FLAMEFLEET_ASSIGN_OR_RETURN(MastItem item, CompileBody(linker_.Body(id), ctx, /*is_root=*/true));
  forest_.nodes[item.node].is_procedure_root = true;
  program_->procedures[id].mast_root = forest_.nodes[item.node].digest;
  ProcedureState& done = StateOf(id);  // compiling callees may have grown procedures_
  done.root = item;
  done.state = State::kDone;
  return item;
}

// Returns the context of procedure `id`'s body: lowering options, constants, and the
// prologue / epilogue of the dialect's locals model (and entry prologue).
MastBuilder::BodyContext MastBuilder::MakeContext(uint32_t id) {
  const size_t module_index = linker_.procedure(id).module;
  const LinkedModule& m = linker_.module(module_index);
  const bool is_entry = linker_.procedure(id).index == kEntryIndex;
  const uint32_t num_locals = linker_.NumLocals(id);

  BodyContext ctx;
  ctx.module = module_index;
  ctx.procedure = id;
  ctx.lower.num_locals = num_locals;
  ctx.lower.in_kernel = m.ast.kind == ast::ModuleKind::kKernel;
  ctx.lower.debug_mode = m.is_program && options_.debug_mode;
  ctx.lower.resolve_constant =
      [this, module_index](const std::string& name) -> absl::StatusOr<ast::ConstantValue> {
    if (const ast::ConstantValue* v = linker_.FindConstant(module_index, name)) return *v;
    if (const ast::AdvMapEntry* e = linker_.FindAdvMapEntry(module_index, name)) {
      ast::ConstantValue v;
      v.kind = ast::ConstantValue::Kind::kWord;
      const Word key = AdvMapKey(*e);
      for (int i = 0; i < 4; ++i) v.word[i] = key[i].value();
      return v;
    }
    return absl::NotFoundError(absl::StrCat("undefined constant '", name, "'"));
  };
  if (is_entry) {
    ctx.prologue.assign(rules_.entry_prologue.begin(), rules_.entry_prologue.end());
  }
  switch (rules_.locals_model) {
    case LocalsModel::kFmpRelative: {
      const uint32_t align = rules_.locals_alignment;
      const uint32_t rounded = (num_locals + align - 1) / align * align;
      if (rounded == 0) break;
      ctx.locals_source =
          AddSource(program_->procedures[id].loc, absl::StrCat("proc locals (", num_locals, ")"),
                    /*mnemonic_size=*/11);
      ctx.prologue.insert(ctx.prologue.end(), {{Opcode::kPush, rounded}, {Opcode::kFmpUpdate, 0}});
      ctx.epilogue = {{Opcode::kPush, Felt::kModulus - rounded}, {Opcode::kFmpUpdate, 0}};
      break;
    }
    case LocalsModel::kFmpInMemory: {
      const uint32_t align = rules_.locals_alignment;
      const uint32_t rounded = (num_locals + align - 1) / align * align;
      if (rounded == 0) break;
      ctx.locals_source =
          AddSource(program_->procedures[id].loc, absl::StrCat("proc locals (", num_locals, ")"),
                    /*mnemonic_size=*/11);
      // mem[fmp] <- mem[fmp] + delta: PUSH(delta) PUSH(fmp) MLOAD ADD PUSH(fmp) MSTORE DROP.
      const uint64_t fmp = rules_.fmp_address;
      auto adjust = [fmp](uint64_t delta) -> std::vector<LoweredOp> {
        return {{Opcode::kPush, delta}, {Opcode::kPush, fmp}, {Opcode::kMLoad, 0},
                {Opcode::kAdd, 0},      {Opcode::kPush, fmp}, {Opcode::kMStore, 0},
                {Opcode::kDrop, 0}};
      };
      const std::vector<LoweredOp> prologue = adjust(rounded);
      ctx.prologue.insert(ctx.prologue.end(), prologue.begin(), prologue.end());
      ctx.epilogue = adjust(Felt::kModulus - rounded);
      break;
    }
  }
  return ctx;
}

uint32_t MastBuilder::AddSource(const ast::SourceLocation& loc, std::string text,
                                size_t mnemonic_size) {
  const auto size = static_cast<uint32_t>(std::min(mnemonic_size, text.size()));
  program_->source_ops.push_back(SourceOp{loc, std::move(text), size});
  return static_cast<uint32_t>(program_->source_ops.size() - 1);
}

// Checks the deadline every kDeadlineCheckEvery calls.
absl::Status MastBuilder::CountWork() {
  if (++work_ % kDeadlineCheckEvery != 0) return absl::OkStatus();
  return CheckAssemblyDeadline(limits_);
}

absl::StatusOr<uint32_t> MastBuilder::AddNode(MastNode node) {
  FLAMEFLEET_RETURN_IF_ERROR(CountWork());
  if (forest_.nodes.size() >= kMaxNodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("program too large: more than ", kMaxNodes, " MAST nodes"));
  }
  return forest_.AddNode(std::move(node));
}

absl::StatusOr<uint32_t> MastBuilder::MakeBlock(std::vector<LoweredOp> ops,
                                                std::vector<OpOrigin> origins) {
  MastNode node;
  node.kind = MastKind::kBlock;
  node.num_batches = PackBlock(ops, rules_, nullptr);
  node.ops = std::move(ops);
  node.origins = std::move(origins);
  return AddNode(std::move(node));
}

// Returns a block of `ops`, or a kTraces node when they are all decorators (no real op).
absl::StatusOr<uint32_t> MastBuilder::MakeBlockOrTraces(std::vector<LoweredOp> ops,
                                                        std::vector<OpOrigin> origins) {
  if (std::any_of(ops.begin(), ops.end(),
                  [](const LoweredOp& op) { return !IsPseudo(op.opcode); })) {
    return MakeBlock(std::move(ops), std::move(origins));
  }
  MastNode node;
  node.kind = MastKind::kTraces;
  node.ops = std::move(ops);
  node.origins = std::move(origins);
  return AddNode(std::move(node));
}

// Ends the open basic block of `parts` (if it has operations) and adds it to the items.
absl::Status MastBuilder::CloseBlock(BodyParts& parts) {
  if (parts.ops.empty()) return absl::OkStatus();
  FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t node,
                              MakeBlockOrTraces(std::move(parts.ops), std::move(parts.origins)));
  parts.items.push_back(MastItem{node, 0});
  parts.ops.clear();
  parts.origins.clear();
  return absl::OkStatus();
}

// Compiles a body (procedure body, entry, branch, loop or repeat body) into one node.
absl::StatusOr<MastItem> MastBuilder::CompileBody(const ast::Block& body, const BodyContext& ctx,
                                                  bool is_root) {
  return CompileBody(body, nullptr, ctx, is_root);
}

// Compiles `body` followed by `*more` (if not null) as one body: their items form one list, so
// contiguous blocks of the two merge (a do-while loop's body and condition).
absl::StatusOr<MastItem> MastBuilder::CompileBody(const ast::Block& body, const ast::Block* more,
                                                  const BodyContext& ctx, bool is_root) {
  BodyParts parts;
  if (is_root) {
    for (const LoweredOp& op : ctx.prologue) {
      parts.ops.push_back(op);
      // The prologue starts the `proc locals` pseudo instruction; the epilogue continues it.
      parts.origins.push_back(OpOrigin{0, ctx.locals_source, parts.ops.size() == 1});
    }
  }
  FLAMEFLEET_RETURN_IF_ERROR(CompileNodes(body, ctx, parts));
  if (more != nullptr) FLAMEFLEET_RETURN_IF_ERROR(CompileNodes(*more, ctx, parts));
  if (is_root) {
    for (const LoweredOp& op : ctx.epilogue) {
      parts.ops.push_back(op);
      parts.origins.push_back(OpOrigin{0, ctx.locals_source});
    }
  }
  FLAMEFLEET_RETURN_IF_ERROR(CloseBlock(parts));
  if (parts.items.empty()) {
    FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id,
                                MakeBlock({LoweredOp{Opcode::kNoop, 0}}, {OpOrigin{0, 0}}));
    return MastItem{id, 0};
  }
  return JoinItems(std::move(parts.items));
}

// Returns the block [NOOP] of the skip branch of SPLIT-wrapped loops, one node shared by the
// whole forest (as the VM deduplicates it).
absl::StatusOr<uint32_t> MastBuilder::NoopBlock() {
  if (noop_block_ != kNoNode) return noop_block_;
  FLAMEFLEET_ASSIGN_OR_RETURN(noop_block_,
                              MakeBlock({LoweredOp{Opcode::kNoop, 0}}, {OpOrigin{0, 0}}));
  return noop_block_;
}

// Appends the items and operations of `body`'s nodes to `parts`.
absl::Status MastBuilder::CompileNodes(const ast::Block& body, const BodyContext& ctx,
                                       BodyParts& parts) {
  for (const ast::Node& n : body) {
    FLAMEFLEET_RETURN_IF_ERROR(CountWork());
    if (const auto* inst = std::get_if<ast::Instruction>(&n.op)) {
      FLAMEFLEET_RETURN_IF_ERROR(CompileInstruction(*inst, ctx, parts));
      continue;
    }
    FLAMEFLEET_RETURN_IF_ERROR(CloseBlock(parts));
    if (const auto* ifelse = std::get_if<ast::IfElse>(&n.op)) {
      FLAMEFLEET_ASSIGN_OR_RETURN(MastItem item, CompileIfElse(*ifelse, ctx));
      parts.items.push_back(item);
    } else if (const auto* loop = std::get_if<ast::While>(&n.op)) {
      FLAMEFLEET_ASSIGN_OR_RETURN(MastItem item, CompileWhile(*loop, ctx));
      parts.items.push_back(item);
    } else if (const auto* dowhile = std::get_if<ast::DoWhile>(&n.op)) {
      FLAMEFLEET_ASSIGN_OR_RETURN(MastItem item, CompileDoWhile(*dowhile, ctx));
      parts.items.push_back(item);
    } else if (const auto* rep = std::get_if<ast::Repeat>(&n.op)) {
      FLAMEFLEET_RETURN_IF_ERROR(CompileRepeat(*rep, ctx, parts));
    }
  }
  return absl::OkStatus();
}

// Compiles one instruction: into the open block, or as a node of its own.
absl::Status MastBuilder::CompileInstruction(const ast::Instruction& inst, const BodyContext& ctx,
                                             BodyParts& parts) {
  const std::string& name = inst.name;
  if (name == "exec" || name == "call" || name == "syscall") {
    return CompileInvocation(inst, ctx, parts);
  }
  if (name == "dynexec" || name == "dyncall") {
    FLAMEFLEET_RETURN_IF_ERROR(CloseBlock(parts));
    MastNode dyn;
    dyn.kind = name == "dynexec" ? MastKind::kDyn : MastKind::kDynCall;
    dyn.source = AddSource(inst.loc, InstructionText(inst), inst.name.size());
    FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(dyn)));
    parts.items.push_back(MastItem{id, 0});
    has_dyn_ = true;
    return absl::OkStatus();
  }
  if (name == "procref") return CompileProcRef(inst, ctx, parts);
  size_t before = parts.ops.size();
  absl::Status s =
      LowerInstruction(*GetDialectSpec(options_.dialect).instructions, inst, ctx.lower, &parts.ops);
  if (!s.ok()) {
    if (s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kNotFound) {
      return Error(inst.loc, s.message());
    }
    return s;
  }
  if (parts.ops.size() > kMaxBlockOps) {
    return Error(inst.loc, "basic block too large (program too large)");
  }
  if (parts.ops.size() > before) {
    uint32_t src = AddSource(inst.loc, InstructionText(inst), inst.name.size());
    parts.origins.resize(parts.ops.size(), OpOrigin{0, src});
    parts.origins[before].starts = true;
  }
  RecordErrorMessage(inst, ctx);
  return absl::OkStatus();
}

// exec (the callee's root item, merged like any other), call and syscall (a CALL / SYSCALL
// node over the callee).
absl::Status MastBuilder::CompileInvocation(const ast::Instruction& inst, const BodyContext& ctx,
                                            BodyParts& parts) {
  const std::string& name = inst.name;
  FLAMEFLEET_ASSIGN_OR_RETURN(MastItem callee, Invoke(ctx, inst));
  FLAMEFLEET_RETURN_IF_ERROR(CloseBlock(parts));
  if (name == "exec") {
    parts.items.push_back(callee);
    return absl::OkStatus();
  }
  if (ctx.lower.in_kernel) {
    return Error(inst.loc, absl::StrCat("`", name, "` is not allowed in a kernel module"));
  }
  MastNode call;
  call.kind = name == "syscall" ? MastKind::kSyscall : MastKind::kCall;
  call.first = callee;
  // The callee (for `caller`): an EXTERNAL node's procedure or the chain's head.
  call.procedure = forest_.nodes[callee.node].kind == MastKind::kExternal
                       ? forest_.nodes[callee.node].procedure
                       : forest_.Outermost(callee.chain);
  call.source = AddSource(inst.loc, InstructionText(inst), inst.name.size());
  FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(call)));
  parts.items.push_back(MastItem{id, 0});
  return absl::OkStatus();
}

// procref: one PUSH per element of the target's MAST root (always PUSH), in the order of
// MastRules::procref_element0_on_top.
absl::Status MastBuilder::CompileProcRef(const ast::Instruction& inst, const BodyContext& ctx,
                                         BodyParts& parts) {
  FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t target, linker_.Resolve(ctx.module, inst.target, inst.loc));
  FLAMEFLEET_ASSIGN_OR_RETURN(MastItem root, CompileProcedure(target, inst.loc));
  const Word& digest = forest_.nodes[root.node].digest;
  uint32_t src = AddSource(inst.loc, InstructionText(inst), inst.name.size());
  for (int i = 0; i < 4; ++i) {
    const Felt& e = digest[rules_.procref_element0_on_top ? 3 - i : i];
    parts.ops.push_back(LoweredOp{Opcode::kPush, e.value()});
    parts.origins.push_back(OpOrigin{0, src, i == 0});
  }
  return absl::OkStatus();
}

absl::StatusOr<MastItem> MastBuilder::CompileIfElse(const ast::IfElse& ifelse,
                                                    const BodyContext& ctx) {
  FLAMEFLEET_ASSIGN_OR_RETURN(MastItem t, CompileBody(ifelse.on_true, ctx, false));
  FLAMEFLEET_ASSIGN_OR_RETURN(MastItem f, CompileBody(ifelse.on_false, ctx, false));
  MastNode split;
  split.kind = MastKind::kSplit;
  split.first = t;
  split.second = f;
  split.source = AddSource(ifelse.loc, "if.true");
  FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(split)));
  return MastItem{id, 0};
}

absl::StatusOr<MastItem> MastBuilder::CompileWhile(const ast::While& loop, const BodyContext& ctx) {
  FLAMEFLEET_ASSIGN_OR_RETURN(MastItem b, CompileBody(loop.body, ctx, false));
  const uint32_t source = AddSource(loop.loc, "while.true");
  MastNode node;
  node.kind = MastKind::kLoop;
  node.first = b;
  node.source = source;
  FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(node)));
  switch (rules_.loop_shape) {
    case LoopShape::kWhile:
      return MastItem{id, 0};
    case LoopShape::kSplitLoop: {
      // SPLIT(LOOP(body), [NOOP]): the SPLIT pops the first condition.
      MastNode split;
      split.kind = MastKind::kSplit;
      split.first = MastItem{id, 0};
      FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t noop, NoopBlock());
      split.second = MastItem{noop, 0};
      split.source = source;
      FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t split_id, AddNode(std::move(split)));
      return MastItem{split_id, 0};
    }
  }
  return absl::InternalError("unknown loop shape");
}

// do BODY while COND end: LOOP(BODY ++ COND), one body, under LoopShape::kSplitLoop.
absl::StatusOr<MastItem> MastBuilder::CompileDoWhile(const ast::DoWhile& loop,
                                                     const BodyContext& ctx) {
  switch (rules_.loop_shape) {
    case LoopShape::kWhile:
      return Error(loop.loc,
                   "`do ... while` loops are not part of this dialect (they need Miden VM "
                   "v0.24 or later: --dialect v0.25)");
    case LoopShape::kSplitLoop:
      break;
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(MastItem b, CompileBody(loop.body, &loop.condition, ctx, false));
  MastNode node;
  node.kind = MastKind::kLoop;
  node.first = b;
  node.source = AddSource(loop.loc, "do.while");
  FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(node)));
  return MastItem{id, 0};
}

// repeat.N: the body's item N times (after the size checks, before anything is unrolled).
absl::Status MastBuilder::CompileRepeat(const ast::Repeat& rep, const BodyContext& ctx,
                                        BodyParts& parts) {
  if (rep.count == 0) return Error(rep.loc, "repeat count must be at least 1");
  // Refuse before unrolling anything (nested repeats multiply).
  const uint64_t expanded = SaturatingMul(rep.count, std::max<uint64_t>(ExpandedSize(rep.body), 1));
  repeat_ops_ = std::min(repeat_ops_ + expanded, kSaturatedSize);
  if (expanded > limits_.max_program_ops || repeat_ops_ > limits_.max_program_ops) {
    return absl::ResourceExhaustedError(sources_.Format(
        rep.loc,
        absl::StrCat(
            "repeat.", rep.count, " expands to ",
            expanded >= kSaturatedSize ? "more than 2^62" : GroupThousands(expanded), " operations",
            expanded > limits_.max_program_ops
                ? ""
                : absl::StrCat(" (", GroupThousands(repeat_ops_), " for all repeats so far)"),
            ", over the limit of ", GroupThousands(limits_.max_program_ops),
            " operations (--max-program-ops)")));
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(MastItem b, CompileBody(rep.body, ctx, false));
  if (parts.items.size() + rep.count > kMaxNodes) {
    return Error(rep.loc, "repeat makes the program too large");
  }
  if (forest_.nodes[b.node].kind == MastKind::kBlock &&
      forest_.nodes[b.node].ops.size() * rep.count > kMaxBlockOps) {
    return Error(rep.loc, "repeat makes the program too large");
  }
  parts.items.insert(parts.items.end(), rep.count, b);
  return absl::OkStatus();
}

// Remembers the text of an `.err=` message so that traps can print it.
void MastBuilder::RecordErrorMessage(const ast::Instruction& inst, const BodyContext& ctx) {
  if (!inst.error.has_value()) return;
  std::string text;
  if (inst.error->kind == ast::Immediate::Kind::kString) {
    text = inst.error->text;
  } else if (inst.error->kind == ast::Immediate::Kind::kConstant) {
    absl::StatusOr<ast::ConstantValue> v = ctx.lower.resolve_constant(inst.error->text);
    if (!v.ok() || v->kind != ast::ConstantValue::Kind::kString) return;
    text = v->text;
  } else {
    return;
  }
  uint64_t code = ErrorCodeFromMessage(text);
  for (const auto& [c, m] : program_->error_messages) {
    if (c == code) return;
  }
  program_->error_messages.emplace_back(code, std::move(text));
}

// Resolves and compiles the target of exec/call/syscall; returns the item to insert.
absl::StatusOr<MastItem> MastBuilder::Invoke(const BodyContext& ctx, const ast::Instruction& inst) {
  FLAMEFLEET_RETURN_IF_ERROR(linker_.CheckInvocation(ctx.module, inst));
  if (!inst.args.empty() && inst.args[0].kind == ast::Immediate::Kind::kWord) {
    // A MAST-root literal: an EXTERNAL node, resolved once every procedure is compiled.
    MastNode ext;
    ext.kind = MastKind::kExternal;
    for (int i = 0; i < 4; ++i) ext.digest[i] = Felt(inst.args[0].word[i]);
    ext.source = AddSource(inst.loc, InstructionText(inst), inst.name.size());
    FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(ext)));
    root_literals_.push_back(RootLiteral{id, inst.name == "syscall"});
    return MastItem{id, 0};
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t callee, linker_.ResolveInvocation(ctx.module, inst));
  FLAMEFLEET_ASSIGN_OR_RETURN(MastItem root, CompileProcedure(callee, inst.loc));
  uint32_t chain = forest_.ConcatChain(forest_.ExtendChain(0, callee), root.chain);
  if (linker_.LinksDynamically(ctx.module, callee)) {
    // Dynamically linked library procedure: an EXTERNAL node, never merged.
    MastNode ext;
    ext.kind = MastKind::kExternal;
    ext.procedure = callee;
    ext.digest = forest_.nodes[root.node].digest;
    FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(ext)));
    return MastItem{id, forest_.ExtendChain(0, callee)};
  }
  MastItem item{root.node, chain};
  item.static_copy = linker_.LinksStatically(ctx.module, callee);
  return item;
}

Word MastBuilder::AdvMapKey(const ast::AdvMapEntry& e) const {
  Word key;
  if (e.key.has_value()) {
    for (int i = 0; i < 4; ++i) key[i] = Felt((*e.key)[i]);
    return key;
  }
  std::vector<Felt> values;
  values.reserve(e.values.size());
  for (uint64_t v : e.values) values.push_back(Felt(v));
  return forest_.hasher().HashElements(values);
}

void MastBuilder::ResolveRootLiterals() {
  if (root_literals_.empty()) return;
  auto root_of = [this](uint32_t p) -> const Word* {
    return compiled(p) ? &program_->procedures[p].mast_root : nullptr;
  };
  for (const RootLiteral& lit : root_literals_) {
    MastNode& ext = forest_.nodes[lit.node];
    ext.procedure =
        linker_.ResolveRootLiteral(ext.digest, lit.syscall, root_of).value_or(kNoProcedure);
  }
  // CALL / SYSCALL nodes over a literal name the resolved procedure (for `caller`).
  for (MastNode& n : forest_.nodes) {
    if ((n.kind == MastKind::kCall || n.kind == MastKind::kSyscall) &&
        n.procedure == kNoProcedure && forest_.nodes[n.first.node].kind == MastKind::kExternal) {
      n.procedure = forest_.nodes[n.first.node].procedure;
    }
  }
}

// Combines runs of contiguous basic blocks as the dialect's BlockMerge rule says.
absl::StatusOr<std::vector<MastItem>> MastBuilder::MergeBlocks(std::vector<MastItem> items) {
  switch (rules_.block_merge) {
    case BlockMerge::kNone:
      return items;
    case BlockMerge::kContiguous:
      break;
  }
  // Blocks and the decorators between them merge into one block.
  auto mergeable = [this](const MastItem& item) {
    const MastKind kind = forest_.nodes[item.node].kind;
    return kind == MastKind::kBlock || kind == MastKind::kTraces;
  };
  std::vector<MastItem> merged;
  size_t i = 0;
  while (i < items.size()) {
    if (!mergeable(items[i])) {
      merged.push_back(items[i++]);
      continue;
    }
    size_t j = i;
    while (j < items.size() && mergeable(items[j])) ++j;
    if (j - i == 1) {
      merged.push_back(items[i]);
      i = j;
      continue;
    }
    std::vector<LoweredOp> ops;
    std::vector<OpOrigin> origins;
    auto flush = [&]() -> absl::Status {
      if (ops.empty()) return absl::OkStatus();
      FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id,
                                  MakeBlockOrTraces(std::move(ops), std::move(origins)));
      merged.push_back(MastItem{id, 0});
      ops.clear();
      origins.clear();
      return absl::OkStatus();
    };
    // Appends the ops of `node` (a block or decorators) as reached through chain `prefix`.
    auto append = [&](uint32_t node, uint32_t prefix) -> absl::Status {
      const MastNode& block = forest_.nodes[node];
      if (ops.size() + block.ops.size() > kMaxBlockOps) {
        return absl::ResourceExhaustedError("program too large: basic block over 2^24 ops");
      }
      const uint32_t prefix_depth = forest_.chains[prefix].depth;
      ops.insert(ops.end(), block.ops.begin(), block.ops.end());
      for (size_t k = 0; k < block.origins.size(); ++k) {
        const OpOrigin& o = block.origins[k];
        OpOrigin merged_origin{prefix == 0 ? o.chain : forest_.ConcatChain(prefix, o.chain),
                               o.source, o.starts};
        if (o.reenter != kNoReenter) merged_origin.reenter = prefix_depth + o.reenter;
        // The item's procedures are entered anew at its first op.
        if (k == 0 && prefix != 0) merged_origin.reenter = 0;
        origins.push_back(merged_origin);
      }
      return absl::OkStatus();
    };
    for (; i < j; ++i) {
      const MastNode& block = forest_.nodes[items[i].node];
      if (block.kind == MastKind::kBlock && block.is_procedure_root && !items[i].static_copy &&
          block.num_batches >= rules_.keep_apart_batches) {
        FLAMEFLEET_RETURN_IF_ERROR(flush());
        merged.push_back(items[i]);
        continue;
      }
      if (items[i].before != kNoTraces) FLAMEFLEET_RETURN_IF_ERROR(append(items[i].before, 0));
      FLAMEFLEET_RETURN_IF_ERROR(append(items[i].node, items[i].chain));
      if (items[i].after != kNoTraces) FLAMEFLEET_RETURN_IF_ERROR(append(items[i].after, 0));
    }
    FLAMEFLEET_RETURN_IF_ERROR(flush());
  }
  return merged;
}

// Returns the decorators of kTraces nodes `a` then `b` as one (either may be kNoTraces).
absl::StatusOr<uint32_t> MastBuilder::ConcatTraces(uint32_t a, uint32_t b) {
  if (a == kNoTraces) return b;
  if (b == kNoTraces) return a;
  MastNode node;
  node.kind = MastKind::kTraces;
  for (uint32_t id : {a, b}) {
    const MastNode& n = forest_.nodes[id];
    node.ops.insert(node.ops.end(), n.ops.begin(), n.ops.end());
    node.origins.insert(node.origins.end(), n.origins.begin(), n.origins.end());
  }
  return AddNode(std::move(node));
}

// Hangs the decorators that no block took (kTraces items) on the next item (`before`, as v0.16
// puts them before a control node's entry); those at the end go to `*trailing`. A body of
// decorators only is an error, as in v0.16.
absl::StatusOr<std::vector<MastItem>> MastBuilder::AttachTraces(std::vector<MastItem> items,
                                                                uint32_t* trailing) {
  std::vector<MastItem> out;
  uint32_t pending = kNoTraces;
  for (const MastItem& item : items) {
    if (forest_.nodes[item.node].kind != MastKind::kTraces) {
      out.push_back(item);
      FLAMEFLEET_ASSIGN_OR_RETURN(out.back().before, ConcatTraces(pending, item.before));
      pending = kNoTraces;
      continue;
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(pending, ConcatTraces(pending, item.node));
  }
  if (pending != kNoTraces && out.empty()) {
    const MastNode& n = forest_.nodes[pending];
    return Error(program_->source_ops[n.origins[0].source].loc,
                 "body must contain at least one instruction if it has decorators");
  }
  *trailing = pending;
  return out;
}

// Merges contiguous basic blocks and builds the balanced JOIN tree. Decorators at the end of
// the body run after the whole body (v0.16's after-exit decorators).
absl::StatusOr<MastItem> MastBuilder::JoinItems(std::vector<MastItem> items) {
  FLAMEFLEET_ASSIGN_OR_RETURN(std::vector<MastItem> blocks, MergeBlocks(std::move(items)));
  uint32_t trailing = kNoTraces;
  FLAMEFLEET_ASSIGN_OR_RETURN(std::vector<MastItem> merged,
                              AttachTraces(std::move(blocks), &trailing));
  while (merged.size() > 1) {
    std::vector<MastItem> next;
    size_t pairs = merged.size() / 2;
    for (size_t k = 0; k < pairs; ++k) {
      MastNode join;
      join.kind = MastKind::kJoin;
      join.first = merged[2 * k];
      join.second = merged[2 * k + 1];
      FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(join)));
      next.push_back(MastItem{id, 0});
    }
    if (merged.size() % 2 == 1) next.push_back(merged.back());
    merged = std::move(next);
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(merged[0].after, ConcatTraces(merged[0].after, trailing));
  return merged[0];
}

}  // namespace flamefleet::vm
