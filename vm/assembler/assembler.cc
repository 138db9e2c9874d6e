#include "vm/assembler/assembler.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "vm/assembler/linearize.h"
#include "vm/assembler/lower.h"
#include "vm/assembler/mast.h"
#include "vm/crypto/hasher.h"
#include "vm/dialects/v0_16/v0_16.h"
#include "vm/parser/parser.h"

namespace flamefleet::vm {
namespace {

// Upper bounds that keep hostile programs (deeply nested repeats) from exhausting memory.
constexpr size_t kMaxBlockOps = size_t{1} << 24;
constexpr size_t kMaxNodes = size_t{1} << 22;
constexpr int kMaxReexportHops = 64;

constexpr size_t kEntryIndex = ~size_t{0};
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
    } else if (const auto* rep = std::get_if<ast::Repeat>(&node.op)) {
      size = SaturatingMul(rep->count, std::max<uint64_t>(ExpandedSize(rep->body), 1));
    }
    n = std::min(n + std::min(size, kSaturatedSize), kSaturatedSize);
  }
  return n;
}

// Registers the source at `path`: from options.virtual_files if it is there, else from disk.
absl::StatusOr<uint32_t> LoadFile(const AssemblerOptions& options, SourceManager& sources,
                                  const std::string& path) {
  if (auto it = options.virtual_files.find(path); it != options.virtual_files.end()) {
    return sources.Add(path, it->second);
  }
  if (!options.read_disk) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file (only in-memory files)"));
  }
  return sources.Load(path);
}

struct LoadedModule {
  std::string path;       // "$exec" or "std::math::u64"
  std::string library;    // the namespace of the library it belongs to; "" for the program
  bool is_program = false;
  ast::Module ast;
  absl::flat_hash_map<std::string, size_t> procedures;  // name -> index in ast.procedures
  absl::flat_hash_map<std::string, size_t> reexports;   // name -> index in ast.reexports
  absl::flat_hash_map<std::string, std::string> imports;  // alias -> module path
  absl::flat_hash_map<std::string, size_t> constants;   // name -> index in ast.constants
};

struct ProcedureState {
  size_t module = 0;
  size_t index = 0;  // into module.ast.procedures, or kEntryIndex for `begin ... end`
  enum class State : uint8_t { kNew, kCompiling, kDone } state = State::kNew;
  // The body's root: a node, plus the procedures entered first when the body is a single
  // `exec` of another procedure (then the real MAST root is that procedure's root node).
  MastItem root;
};

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

class Build {
 public:
  Build(const AssemblerOptions& options, const AssembleLimits& limits,
        std::shared_ptr<SourceManager> sources)
      : options_(options), limits_(limits), sources_(std::move(sources)) {
    program_.source_ops.push_back(SourceOp{});  // index 0: unknown
  }

  absl::StatusOr<Program> Run(uint32_t file_id) {
    FLAMEFLEET_RETURN_IF_ERROR(CheckDeadlineNow());
    FLAMEFLEET_ASSIGN_OR_RETURN(ast::Module module,
                                ParseModule(*sources_, file_id, ast::ModuleKind::kExecutable));
    if (!module.entry.has_value()) {
      return Error(ast::SourceLocation{file_id, 1, 1},
                   "an executable module needs a `begin ... end` block");
    }
    auto loaded = std::make_unique<LoadedModule>();
    loaded->path = "$exec";
    loaded->is_program = true;
    loaded->ast = std::move(module);
    if (!options_.kernel_path.empty()) {
      FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t kernel_file,
                                  LoadFile(options_, *sources_, options_.kernel_path));
      FLAMEFLEET_ASSIGN_OR_RETURN(ast::Module kernel,
                                  ParseModule(*sources_, kernel_file, ast::ModuleKind::kKernel));
      auto k = std::make_unique<LoadedModule>();
      k->path = "$kernel";
      k->library = "$kernel";  // a separate forest: invoked through EXTERNAL nodes
      k->ast = std::move(kernel);
      FLAMEFLEET_ASSIGN_OR_RETURN(kernel_module_, Register(std::move(k)));
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(size_t index, Register(std::move(loaded)));

    uint32_t main_id = NewProcedure(index, kEntryIndex, "$exec::$main",
                                    modules_[index]->ast.entry_loc);
    FLAMEFLEET_RETURN_IF_ERROR(CompileProcedure(main_id, modules_[index]->ast.entry_loc).status());
    program_.entry_procedure = main_id;
    for (const auto& m : modules_) {
      for (const ast::AdvMapEntry& e : m->ast.adv_map) {
        std::vector<Felt> values;
        values.reserve(e.values.size());
        for (uint64_t v : e.values) values.push_back(Felt(v));
        program_.advice_map.emplace_back(AdvMapKey(e), std::move(values));
      }
    }
    ResolveRootLiterals();
    program_.num_mast_nodes = static_cast<uint32_t>(forest_.nodes.size());
    std::vector<MastItem> roots(procedures_.size());
    for (size_t i = 0; i < procedures_.size(); ++i) roots[i] = procedures_[i].root;
    if (has_dyn_) {
      // DYN / DYNCALL may enter any compiled procedure by its root.
      for (uint32_t p = 0; p < procedures_.size(); ++p) {
        if (procedures_[p].state != ProcedureState::State::kDone) continue;
        DynTarget t;
        for (int i = 0; i < 4; ++i) t.digest[i] = program_.procedures[p].mast_root[i].value();
        t.procedure = p;
        program_.dyn_targets.push_back(t);
      }
      std::stable_sort(program_.dyn_targets.begin(), program_.dyn_targets.end());
      auto last = std::unique(program_.dyn_targets.begin(), program_.dyn_targets.end(),
                              [](const DynTarget& a, const DynTarget& b) {
                                return a.digest == b.digest;
                              });
      program_.dyn_targets.erase(last, program_.dyn_targets.end());
    }
    MastItem entry{procedures_[main_id].root.node, forest_.ExtendChain(0, main_id)};
    FLAMEFLEET_RETURN_IF_ERROR(Linearize(forest_, roots, entry, &program_));
    program_.sources = sources_;
    return std::move(program_);
  }

 private:
  absl::Status Error(const ast::SourceLocation& loc, absl::string_view message) const {
    return absl::InvalidArgumentError(sources_->Format(loc, message));
  }

  absl::StatusOr<size_t> Register(std::unique_ptr<LoadedModule> m) {
    const ast::Module& a = m->ast;
    for (size_t i = 0; i < a.procedures.size(); ++i) {
      const ast::Procedure& p = a.procedures[i];
      if (!m->procedures.emplace(p.name, i).second) {
        return Error(p.loc, absl::StrCat("duplicate procedure '", p.name, "'"));
      }
    }
    for (size_t i = 0; i < a.reexports.size(); ++i) {
      const ast::ReExport& r = a.reexports[i];
      if (m->procedures.contains(r.name) || !m->reexports.emplace(r.name, i).second) {
        return Error(r.loc, absl::StrCat("duplicate procedure '", r.name, "'"));
      }
    }
    for (size_t i = 0; i < a.constants.size(); ++i) {
      m->constants.emplace(a.constants[i].name, i);
    }
    for (const ast::Import& imp : a.imports) {
      if (!m->imports.emplace(imp.alias, imp.path).second) {
        return Error(imp.loc, absl::StrCat("duplicate import alias '", imp.alias, "'"));
      }
    }
    size_t index = modules_.size();
    module_by_path_.emplace(m->path, index);
    modules_.push_back(std::move(m));
    // Load imports eagerly so that missing modules are reported at the `use` line.
    for (const ast::Import& imp : modules_[index]->ast.imports) {
      FLAMEFLEET_ASSIGN_OR_RETURN(size_t unused, LoadModule(imp.path, imp.loc));
      (void)unused;
    }
    return index;
  }

  // Finds the library whose namespace is the longest prefix of `path`.
  const std::pair<std::string, std::string>* FindLibrary(absl::string_view path) const {
    const std::pair<std::string, std::string>* best = nullptr;
    for (const auto& lib : options_.libraries) {
      if (absl::StartsWith(path, absl::StrCat(lib.first, "::")) &&
          (best == nullptr || lib.first.size() > best->first.size())) {
        best = &lib;
      }
    }
    return best;
  }

  absl::StatusOr<size_t> LoadModule(const std::string& path, const ast::SourceLocation& loc) {
    if (auto it = module_by_path_.find(path); it != module_by_path_.end()) return it->second;
    const auto* lib = FindLibrary(path);
    if (lib == nullptr) {
      std::string ns(path.substr(0, path.find("::")));
      return Error(loc, absl::StrCat("module '", path, "' not found: no library for namespace '",
                                     ns, "' (use --lib ", ns, "=DIR)"));
    }
    std::string rest = path.substr(lib->first.size() + 2);
    std::string file = absl::StrCat(lib->second, "/", absl::StrJoin(absl::StrSplit(rest, "::"), "/"),
                                    ".masm");
    absl::StatusOr<uint32_t> file_id = LoadFile(options_, *sources_, file);
    if (!file_id.ok()) {
      return Error(loc, absl::StrCat("module '", path, "' not found: ", file_id.status().message()));
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(ast::Module module,
                                ParseModule(*sources_, *file_id, ast::ModuleKind::kLibrary));
    auto loaded = std::make_unique<LoadedModule>();
    loaded->path = path;
    loaded->library = lib->first;
    loaded->ast = std::move(module);
    return Register(std::move(loaded));
  }

  uint32_t NewProcedure(size_t module, size_t index, std::string name,
                        const ast::SourceLocation& loc) {
    uint32_t id = static_cast<uint32_t>(procedures_.size());
    ProcedureState state;
    state.module = module;
    state.index = index;
    procedures_.push_back(state);
    ProcedureInfo info;
    info.name = std::move(name);
    info.loc = loc;
    program_.procedures.push_back(std::move(info));
    procedure_ids_.emplace(std::make_pair(module, index), id);
    return id;
  }

  uint32_t ProcedureId(size_t module, size_t index) {
    auto it = procedure_ids_.find(std::make_pair(module, index));
    if (it != procedure_ids_.end()) return it->second;
    const LoadedModule& m = *modules_[module];
    const ast::Procedure& p = m.ast.procedures[index];
    return NewProcedure(module, index, absl::StrCat(m.path, "::", p.name), p.loc);
  }

  // Resolves an invocation target written in module `from` to a procedure id.
  absl::StatusOr<uint32_t> Resolve(size_t from, const std::string& target,
                                   const ast::SourceLocation& loc, int hops = 0) {
    if (hops > kMaxReexportHops) return Error(loc, "re-export chain too long (cycle?)");
    if (absl::StartsWith(target, "0x")) {
      return Error(loc, "a MAST root cannot be used here; name the procedure");
    }
    size_t module = from;
    std::string name = target;
    if (target.size() >= 2 && target.front() == '"' && target.back() == '"') {
      name = target.substr(1, target.size() - 2);  // a quoted local procedure name
    } else if (absl::StartsWith(target, "::") || absl::StrContains(target, "::")) {
      std::string path = absl::StartsWith(target, "::") ? target.substr(2) : target;
      size_t cut = path.rfind("::");
      if (cut == std::string::npos || cut == 0) {
        return Error(loc, absl::StrCat("invalid procedure path '", target, "'"));
      }
      std::string module_path = path.substr(0, cut);
      name = path.substr(cut + 2);
      if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
        name = name.substr(1, name.size() - 2);
      }
      if (!absl::StartsWith(target, "::")) {
        // alias::name (the alias is the first segment)
        const LoadedModule& m = *modules_[from];
        auto it = m.imports.find(module_path);
        if (it == m.imports.end()) {
          return Error(loc, absl::StrCat("undefined module '", module_path,
                                         "' (missing `use` import?)"));
        }
        module_path = it->second;
      }
      FLAMEFLEET_ASSIGN_OR_RETURN(module, LoadModule(module_path, loc));
    }
    const LoadedModule& m = *modules_[module];
    if (auto it = m.procedures.find(name); it != m.procedures.end()) {
      const ast::Procedure& p = m.ast.procedures[it->second];
      if (module != from && !p.exported) {
        return Error(loc, absl::StrCat("procedure '", name, "' of module '", m.path,
                                       "' is private"));
      }
      return ProcedureId(module, it->second);
    }
    if (auto it = m.reexports.find(name); it != m.reexports.end()) {
      const ast::ReExport& r = m.ast.reexports[it->second];
      return Resolve(module, r.target, loc, hops + 1);
    }
    if (module == from) {
      return Error(loc, absl::StrCat("undefined procedure '", name, "'"));
    }
    return Error(loc, absl::StrCat("undefined procedure '", name, "' in module '", m.path, "'"));
  }

  // Compiles procedure `id` (once). `use` is where it is invoked from, for errors.
  absl::StatusOr<MastItem> CompileProcedure(uint32_t id, const ast::SourceLocation& use) {
    ProcedureState& st = procedures_[id];
    if (st.state == ProcedureState::State::kDone) return st.root;
    if (st.state == ProcedureState::State::kCompiling) {
      return Error(use, absl::StrCat("procedure '", program_.procedures[id].name,
                                     "' is recursive (recursion is not allowed)"));
    }
    st.state = ProcedureState::State::kCompiling;
    const size_t module_index = st.module;
    const LoadedModule& m = *modules_[module_index];
    const bool is_entry = st.index == kEntryIndex;
    const ast::Block& body = is_entry ? *m.ast.entry : m.ast.procedures[st.index].body;
    uint32_t num_locals = is_entry ? 0 : m.ast.procedures[st.index].num_locals;

    BodyContext ctx;
    ctx.module = module_index;
    ctx.procedure = id;
    ctx.lower.num_locals = num_locals;
    ctx.lower.in_kernel = m.ast.kind == ast::ModuleKind::kKernel;
    ctx.lower.debug_mode = m.is_program && options_.debug_mode;
    ctx.lower.resolve_constant =
        [this, module_index](const std::string& name) -> absl::StatusOr<ast::ConstantValue> {
      const LoadedModule& mod = *modules_[module_index];
      auto it = mod.constants.find(name);
      if (it != mod.constants.end()) return mod.ast.constants[it->second].value;
      for (const ast::AdvMapEntry& e : mod.ast.adv_map) {
        if (e.name == name) {
          ast::ConstantValue v;
          v.kind = ast::ConstantValue::Kind::kWord;
          const Word key = AdvMapKey(e);
          for (int i = 0; i < 4; ++i) v.word[i] = key[i].value();
          return v;
        }
      }
      return absl::NotFoundError(absl::StrCat("undefined constant '", name, "'"));
    };
    uint32_t rounded = (num_locals + 3) / 4 * 4;
    if (rounded != 0) {
      uint32_t src = AddSource(program_.procedures[id].loc,
                               absl::StrCat("proc locals (", num_locals, ")"));
      ctx.prologue = {{Opcode::kPush, rounded}, {Opcode::kFmpUpdate, 0}};
      ctx.epilogue = {{Opcode::kPush, Felt::kModulus - rounded}, {Opcode::kFmpUpdate, 0}};
      ctx.locals_source = src;
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(MastItem item, CompileBody(body, ctx, /*is_root=*/true));
    forest_.nodes[item.node].is_procedure_root = true;
    program_.procedures[id].mast_root = forest_.nodes[item.node].digest;
    procedures_[id].root = item;
    procedures_[id].state = ProcedureState::State::kDone;
    return item;
  }

  struct BodyContext {
    size_t module = 0;
    uint32_t procedure = 0;
    LowerContext lower;
    std::vector<LoweredOp> prologue;
    std::vector<LoweredOp> epilogue;
    uint32_t locals_source = 0;
  };

  uint32_t AddSource(const ast::SourceLocation& loc, std::string text) {
    program_.source_ops.push_back(SourceOp{loc, std::move(text)});
    return static_cast<uint32_t>(program_.source_ops.size() - 1);
  }

  absl::Status CheckDeadlineNow() const {
    if (limits_.deadline != absl::InfiniteFuture() && absl::Now() >= limits_.deadline) {
      return absl::DeadlineExceededError(
          "assembly stopped: the job's wall-clock deadline passed (program too large?)");
    }
    return absl::OkStatus();
  }
  // Checks the deadline every kDeadlineCheckEvery calls.
  absl::Status CountWork() {
    if (++work_ % kDeadlineCheckEvery != 0) return absl::OkStatus();
    return CheckDeadlineNow();
  }

  absl::StatusOr<uint32_t> AddNode(MastNode node) {
    FLAMEFLEET_RETURN_IF_ERROR(CountWork());
    if (forest_.nodes.size() >= kMaxNodes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("program too large: more than ", kMaxNodes, " MAST nodes"));
    }
    return forest_.AddNode(std::move(node));
  }

  absl::StatusOr<uint32_t> MakeBlock(std::vector<LoweredOp> ops, std::vector<OpOrigin> origins) {
    MastNode node;
    node.kind = MastKind::kBlock;
    node.num_batches = PackBlock(ops, rules_, nullptr);
    node.ops = std::move(ops);
    node.origins = std::move(origins);
    return AddNode(std::move(node));
  }

  // Compiles a body (procedure body, entry, branch, loop or repeat body) into one node.
  absl::StatusOr<MastItem> CompileBody(const ast::Block& body, const BodyContext& ctx,
                                       bool is_root) {
    std::vector<MastItem> items;
    std::vector<LoweredOp> ops;
    std::vector<OpOrigin> origins;
    if (is_root) {
      for (const LoweredOp& op : ctx.prologue) {
        ops.push_back(op);
        origins.push_back(OpOrigin{0, ctx.locals_source});
      }
    }
    auto close_block = [&]() -> absl::Status {
      if (ops.empty()) return absl::OkStatus();
      FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t node, MakeBlock(std::move(ops), std::move(origins)));
      items.push_back(MastItem{node, 0});
      ops.clear();
      origins.clear();
      return absl::OkStatus();
    };

    for (const ast::Node& n : body) {
      FLAMEFLEET_RETURN_IF_ERROR(CountWork());
      if (const auto* inst = std::get_if<ast::Instruction>(&n.op)) {
        const std::string& name = inst->name;
        if (name == "exec" || name == "call" || name == "syscall") {
          FLAMEFLEET_ASSIGN_OR_RETURN(MastItem callee, Invoke(ctx, *inst));
          FLAMEFLEET_RETURN_IF_ERROR(close_block());
          if (name == "exec") {
            items.push_back(callee);
          } else {
            if (ctx.lower.in_kernel) {
              return Error(inst->loc, absl::StrCat("`", name, "` is not allowed in a kernel module"));
            }
            MastNode call;
            call.kind = name == "syscall" ? MastKind::kSyscall : MastKind::kCall;
            call.first = callee;
            // The callee (for `caller`): an EXTERNAL node's procedure or the chain's head.
            call.procedure = forest_.nodes[callee.node].kind == MastKind::kExternal
                                 ? forest_.nodes[callee.node].procedure
                                 : forest_.Outermost(callee.chain);
            call.source = AddSource(inst->loc, InstructionText(*inst));
            FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(call)));
            items.push_back(MastItem{id, 0});
          }
          continue;
        }
        if (name == "dynexec" || name == "dyncall") {
          FLAMEFLEET_RETURN_IF_ERROR(close_block());
          MastNode dyn;
          dyn.kind = name == "dynexec" ? MastKind::kDyn : MastKind::kDynCall;
          dyn.source = AddSource(inst->loc, InstructionText(*inst));
          FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(dyn)));
          items.push_back(MastItem{id, 0});
          has_dyn_ = true;
          continue;
        }
        if (name == "procref") {
          // PUSH(r0) .. PUSH(r3) of the target's MAST root, r3 on top (always PUSH).
          FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t target, Resolve(ctx.module, inst->target, inst->loc));
          FLAMEFLEET_ASSIGN_OR_RETURN(MastItem root, CompileProcedure(target, inst->loc));
          const Word& digest = forest_.nodes[root.node].digest;
          uint32_t src = AddSource(inst->loc, InstructionText(*inst));
          for (const Felt& e : digest) {
            ops.push_back(LoweredOp{Opcode::kPush, e.value()});
            origins.push_back(OpOrigin{0, src});
          }
          continue;
        }
        size_t before = ops.size();
        absl::Status s = LowerInstruction(*inst, ctx.lower, &ops);
        if (!s.ok()) {
          if (s.code() == absl::StatusCode::kInvalidArgument ||
              s.code() == absl::StatusCode::kNotFound) {
            return Error(inst->loc, s.message());
          }
          return s;
        }
        if (ops.size() > kMaxBlockOps) {
          return Error(inst->loc, "basic block too large (program too large)");
        }
        if (ops.size() > before) {
          uint32_t src = AddSource(inst->loc, InstructionText(*inst));
          origins.resize(ops.size(), OpOrigin{0, src});
        }
        RecordErrorMessage(*inst, ctx);
        continue;
      }
      FLAMEFLEET_RETURN_IF_ERROR(close_block());
      if (const auto* ifelse = std::get_if<ast::IfElse>(&n.op)) {
        FLAMEFLEET_ASSIGN_OR_RETURN(MastItem t, CompileBody(ifelse->on_true, ctx, false));
        FLAMEFLEET_ASSIGN_OR_RETURN(MastItem f, CompileBody(ifelse->on_false, ctx, false));
        MastNode split;
        split.kind = MastKind::kSplit;
        split.first = t;
        split.second = f;
        split.source = AddSource(ifelse->loc, "if.true");
        FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(split)));
        items.push_back(MastItem{id, 0});
      } else if (const auto* loop = std::get_if<ast::While>(&n.op)) {
        FLAMEFLEET_ASSIGN_OR_RETURN(MastItem b, CompileBody(loop->body, ctx, false));
        MastNode node;
        node.kind = MastKind::kLoop;
        node.first = b;
        node.source = AddSource(loop->loc, "while.true");
        FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(node)));
        items.push_back(MastItem{id, 0});
      } else if (const auto* rep = std::get_if<ast::Repeat>(&n.op)) {
        if (rep->count == 0) return Error(rep->loc, "repeat count must be at least 1");
        // Refuse before unrolling anything (nested repeats multiply).
        const uint64_t expanded =
            SaturatingMul(rep->count, std::max<uint64_t>(ExpandedSize(rep->body), 1));
        repeat_ops_ = std::min(repeat_ops_ + expanded, kSaturatedSize);
        if (expanded > limits_.max_program_ops || repeat_ops_ > limits_.max_program_ops) {
          return absl::ResourceExhaustedError(sources_->Format(
              rep->loc,
              absl::StrCat(
                  "repeat.", rep->count, " expands to ",
                  expanded >= kSaturatedSize ? "more than 2^62" : GroupThousands(expanded),
                  " operations",
                  expanded > limits_.max_program_ops
                      ? ""
                      : absl::StrCat(" (", GroupThousands(repeat_ops_), " for all repeats so far)"),
                  ", over the limit of ", GroupThousands(limits_.max_program_ops),
                  " operations (--max-program-ops)")));
        }
        FLAMEFLEET_ASSIGN_OR_RETURN(MastItem b, CompileBody(rep->body, ctx, false));
        if (items.size() + rep->count > kMaxNodes) {
          return Error(rep->loc, "repeat makes the program too large");
        }
        if (forest_.nodes[b.node].kind == MastKind::kBlock &&
            forest_.nodes[b.node].ops.size() * rep->count > kMaxBlockOps) {
          return Error(rep->loc, "repeat makes the program too large");
        }
        items.insert(items.end(), rep->count, b);
      }
    }
    if (is_root) {
      for (const LoweredOp& op : ctx.epilogue) {
        ops.push_back(op);
        origins.push_back(OpOrigin{0, ctx.locals_source});
      }
    }
    FLAMEFLEET_RETURN_IF_ERROR(close_block());
    if (items.empty()) {
      FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, MakeBlock({LoweredOp{Opcode::kNoop, 0}},
                                                         {OpOrigin{0, 0}}));
      return MastItem{id, 0};
    }
    return JoinItems(std::move(items));
  }

  // Remembers the text of an `.err=` message so that traps can print it.
  void RecordErrorMessage(const ast::Instruction& inst, const BodyContext& ctx) {
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
    for (const auto& [c, m] : program_.error_messages) {
      if (c == code) return;
    }
    program_.error_messages.emplace_back(code, std::move(text));
  }

  // Resolves and compiles the target of exec/call/syscall; returns the item to insert.
  absl::StatusOr<MastItem> Invoke(const BodyContext& ctx, const ast::Instruction& inst) {
    const bool syscall = inst.name == "syscall";
    if (syscall && ctx.lower.in_kernel) {
      return Error(inst.loc, "`syscall` is not allowed in a kernel module");
    }
    if (syscall && kernel_module_ == kNoKernel) {
      return Error(inst.loc, "syscall used but no kernel was provided (--kernel)");
    }
    if (!inst.args.empty() && inst.args[0].kind == ast::Immediate::Kind::kWord) {
      // A MAST-root literal: an EXTERNAL node, resolved once every procedure is compiled.
      MastNode ext;
      ext.kind = MastKind::kExternal;
      for (int i = 0; i < 4; ++i) ext.digest[i] = Felt(inst.args[0].word[i]);
      ext.source = AddSource(inst.loc, InstructionText(inst));
      FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(ext)));
      root_literals_.push_back(RootLiteral{id, syscall});
      return MastItem{id, 0};
    }
    const bool local = !absl::StrContains(inst.target, "::");
    FLAMEFLEET_ASSIGN_OR_RETURN(
        uint32_t callee,
        Resolve(syscall && local ? kernel_module_ : ctx.module, inst.target, inst.loc));
    if (syscall) {
      const ProcedureState& st = procedures_[callee];
      if (st.module != kernel_module_ || st.index == kEntryIndex ||
          !modules_[st.module]->ast.procedures[st.index].exported) {
        return Error(inst.loc, absl::StrCat("syscall target '", program_.procedures[callee].name,
                                            "' is not an exported kernel procedure"));
      }
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(MastItem root, CompileProcedure(callee, inst.loc));
    uint32_t chain = forest_.ConcatChain(forest_.ExtendChain(0, callee), root.chain);
    const LoadedModule& caller_module = *modules_[ctx.module];
    const LoadedModule& callee_module = *modules_[procedures_[callee].module];
    bool dynamic = !callee_module.library.empty() &&
                   callee_module.library != caller_module.library;
    if (dynamic) {
      // Dynamically linked library procedure: an EXTERNAL node, never merged.
      MastNode ext;
      ext.kind = MastKind::kExternal;
      ext.procedure = callee;
      ext.digest = forest_.nodes[root.node].digest;
      FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, AddNode(std::move(ext)));
      return MastItem{id, forest_.ExtendChain(0, callee)};
    }
    return MastItem{root.node, chain};
  }

  // The advice-map key of an entry: explicit, or the hasher's hash of its values.
  Word AdvMapKey(const ast::AdvMapEntry& e) const {
    Word key;
    if (e.key.has_value()) {
      for (int i = 0; i < 4; ++i) key[i] = Felt((*e.key)[i]);
      return key;
    }
    std::vector<Felt> values;
    values.reserve(e.values.size());
    for (uint64_t v : e.values) values.push_back(Felt(v));
    return hasher_.HashElements(values);
  }

  // Points every MAST-root literal's EXTERNAL node at the compiled procedure with that root
  // (the program's own procedures first, then libraries, then the kernel, as the VM searches
  // its forests); unmatched literals trap when reached, as on the VM. A `syscall` literal must
  // match an exported kernel procedure.
  void ResolveRootLiterals() {
    if (root_literals_.empty()) return;
    auto rank = [&](uint32_t p) {
      const LoadedModule& m = *modules_[procedures_[p].module];
      if (m.library.empty()) return 0;
      return procedures_[p].module == kernel_module_ ? 2 : 1;
    };
    for (const RootLiteral& lit : root_literals_) {
      MastNode& ext = forest_.nodes[lit.node];
      uint32_t best = kNoProcedure;
      for (uint32_t p = 0; p < procedures_.size(); ++p) {
        if (procedures_[p].state != ProcedureState::State::kDone) continue;
        if (program_.procedures[p].mast_root != ext.digest) continue;
        if (lit.syscall) {
          const ProcedureState& st = procedures_[p];
          if (st.module != kernel_module_ || st.index == kEntryIndex ||
              !modules_[st.module]->ast.procedures[st.index].exported) {
            continue;
          }
        }
        if (best == kNoProcedure || rank(p) < rank(best)) best = p;
      }
      ext.procedure = best;
    }
    // CALL / SYSCALL nodes over a literal name the resolved procedure (for `caller`).
    for (MastNode& n : forest_.nodes) {
      if ((n.kind == MastKind::kCall || n.kind == MastKind::kSyscall) &&
          n.procedure == kNoProcedure && forest_.nodes[n.first.node].kind == MastKind::kExternal) {
        n.procedure = forest_.nodes[n.first.node].procedure;
      }
    }
  }

  // Merges runs of contiguous basic blocks and builds the balanced JOIN tree.
  absl::StatusOr<MastItem> JoinItems(std::vector<MastItem> items) {
    std::vector<MastItem> merged;
    size_t i = 0;
    while (i < items.size()) {
      if (forest_.nodes[items[i].node].kind != MastKind::kBlock) {
        merged.push_back(items[i++]);
        continue;
      }
      size_t j = i;
      while (j < items.size() && forest_.nodes[items[j].node].kind == MastKind::kBlock) ++j;
      if (j - i == 1) {
        merged.push_back(items[i]);
        i = j;
        continue;
      }
      std::vector<LoweredOp> ops;
      std::vector<OpOrigin> origins;
      auto flush = [&]() -> absl::Status {
        if (ops.empty()) return absl::OkStatus();
        FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t id, MakeBlock(std::move(ops), std::move(origins)));
        merged.push_back(MastItem{id, 0});
        ops.clear();
        origins.clear();
        return absl::OkStatus();
      };
      for (; i < j; ++i) {
        const MastNode& block = forest_.nodes[items[i].node];
        if (block.is_procedure_root && block.num_batches >= rules_.keep_apart_batches) {
          FLAMEFLEET_RETURN_IF_ERROR(flush());
          merged.push_back(items[i]);
          continue;
        }
        if (ops.size() + block.ops.size() > kMaxBlockOps) {
          return absl::ResourceExhaustedError("program too large: basic block over 2^24 ops");
        }
        uint32_t prefix = items[i].chain;
        ops.insert(ops.end(), block.ops.begin(), block.ops.end());
        for (const OpOrigin& o : block.origins) {
          origins.push_back(OpOrigin{prefix == 0 ? o.chain : forest_.ConcatChain(prefix, o.chain),
                                     o.source});
        }
      }
      FLAMEFLEET_RETURN_IF_ERROR(flush());
    }
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
    return merged[0];
  }

  const AssemblerOptions& options_;
  const AssembleLimits& limits_;
  uint64_t work_ = 0;        // units of work done, for the deadline checks
  uint64_t repeat_ops_ = 0;  // expanded sizes of the repeats compiled so far
  std::shared_ptr<SourceManager> sources_;
  std::vector<std::unique_ptr<LoadedModule>> modules_;
  absl::flat_hash_map<std::string, size_t> module_by_path_;
  std::vector<ProcedureState> procedures_;
  absl::flat_hash_map<std::pair<size_t, size_t>, uint32_t> procedure_ids_;
  // TODO(#13): DialectSpec supplies the hasher, the MAST rules and the wire opcode table.
  const Hasher& hasher_ = DefaultHasher();
  const MastRules& rules_ = v0_16::MastRules();
  MastForest forest_{hasher_, rules_, v0_16::WireOpcodes()};
  Program program_;
  bool has_dyn_ = false;  // the program contains DYN or DYNCALL
  struct RootLiteral {
    uint32_t node;  // the EXTERNAL node
    bool syscall;
  };
  std::vector<RootLiteral> root_literals_;
  static constexpr size_t kNoKernel = ~size_t{0};
  size_t kernel_module_ = kNoKernel;  // index in modules_ of the kernel, if any
};

}  // namespace

absl::StatusOr<Program> Assembler::AssembleFile(const std::string& path,
                                                const AssembleLimits& limits) const {
  auto sources = std::make_shared<SourceManager>();
  FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t file_id, LoadFile(options_, *sources, path));
  Build build(options_, limits, sources);
  return build.Run(file_id);
}

absl::StatusOr<Program> Assembler::AssembleSource(absl::string_view name,
                                                  absl::string_view text,
                                                  const AssembleLimits& limits) const {
  auto sources = std::make_shared<SourceManager>();
  uint32_t file_id = sources->Add(std::string(name), std::string(text));
  Build build(options_, limits, sources);
  return build.Run(file_id);
}

}  // namespace flamefleet::vm
