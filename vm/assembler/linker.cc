#include "vm/assembler/linker.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "vm/dialect.h"
#include "vm/parser/const_eval.h"
#include "vm/parser/parser.h"
#include "vm/parser/syntax_rules.h"

namespace flamefleet::vm {
namespace {

constexpr int kMaxReexportHops = 64;

}  // namespace

absl::StatusOr<uint32_t> FindModuleFile(
    const std::string& dir, const std::string& rest, bool mod_file_layout,
    const std::function<absl::StatusOr<uint32_t>(const std::string&)>& load) {
  // A kernel file without a directory ("kernel.masm") has its submodules beside it.
  const std::string base =
      absl::StrCat(dir, dir.empty() ? "" : "/", absl::StrJoin(absl::StrSplit(rest, "::"), "/"));
  absl::StatusOr<uint32_t> file_id =
      rest.empty() ? absl::NotFoundError("") : load(absl::StrCat(base, ".masm"));
  if (file_id.ok() || !mod_file_layout) return file_id;
  absl::StatusOr<uint32_t> mod_id =
      load(rest.empty() ? absl::StrCat(dir, "/mod.masm") : absl::StrCat(base, "/mod.masm"));
  if (mod_id.ok()) return mod_id;
  if (rest.empty()) {
    // The namespace root: a library directory declares its modules in DIR/mod.masm.
    return absl::NotFoundError(absl::StrCat(mod_id.status().message(),
                                            " (a library's root module DIR/mod.masm declares its ",
                                            "modules: `pub mod NAME` for each DIR/NAME.masm)"));
  }
  return absl::NotFoundError(
      absl::StrCat(file_id.status().message(), "; ", mod_id.status().message()));
}

absl::StatusOr<uint32_t> LoadSourceFile(const AssemblerOptions& options, SourceManager& sources,
                                        const std::string& path) {
  if (auto it = options.virtual_files.find(path); it != options.virtual_files.end()) {
    return sources.Add(path, it->second);
  }
  if (!options.read_disk) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file (only in-memory files)"));
  }
  return sources.Load(path);
}

Linker::Linker(const AssemblerOptions& options, std::shared_ptr<SourceManager> sources,
               std::vector<ProcedureInfo>* procedures, const DialectSpec* dialect)
    : options_(options),
      dialect_(dialect != nullptr ? dialect : &GetDialectSpec(options.dialect)),
      sources_(std::move(sources)),
      infos_(procedures) {}

const DialectSpec& Linker::Spec() const { return *dialect_; }

absl::Status Linker::Error(const ast::SourceLocation& loc, absl::string_view message) const {
  return absl::InvalidArgumentError(sources_->Format(loc, message));
}

absl::StatusOr<uint32_t> Linker::LinkProgram(uint32_t file_id,
                                             std::optional<uint32_t> kernel_file) {
  FLAMEFLEET_ASSIGN_OR_RETURN(
      ast::Module module, ParseModule(*sources_, file_id, ast::ModuleKind::kExecutable, Spec()));
  if (!module.entry.has_value()) {
    return Error(ast::SourceLocation{file_id, 1, 1},
                 "an executable module needs a `begin ... end` block");
  }
  auto loaded = std::make_unique<LinkedModule>();
  loaded->path = "$exec";
  loaded->is_program = true;
  loaded->ast = std::move(module);
  if (!kernel_file.has_value() && !options_.kernel_path.empty()) {
    FLAMEFLEET_ASSIGN_OR_RETURN(kernel_file,
                                LoadSourceFile(options_, *sources_, options_.kernel_path));
  }
  if (kernel_file.has_value()) FLAMEFLEET_RETURN_IF_ERROR(LinkKernel(*kernel_file));
  FLAMEFLEET_ASSIGN_OR_RETURN(size_t index, Register(std::move(loaded)));
  return NewProcedure(index, kEntryIndex, "$exec::$main", modules_[index]->ast.entry_loc);
}

absl::Status Linker::LinkKernel(uint32_t kernel_file) {
  if (kernel_module_ != kNoKernel) return absl::InternalError("the kernel is already linked");
  FLAMEFLEET_ASSIGN_OR_RETURN(
      ast::Module kernel, ParseModule(*sources_, kernel_file, ast::ModuleKind::kKernel, Spec()));
  auto k = std::make_unique<LinkedModule>();
  k->path = kKernelNamespace;
  k->library = kKernelNamespace;  // a separate forest: invoked through EXTERNAL nodes
  k->ast = std::move(kernel);
  if (Spec().syntax->kernel_submodules) {
    const std::string& file = sources_->path(kernel_file);
    const size_t slash = file.rfind('/');
    kernel_library_.emplace(kKernelNamespace,
                            slash == std::string::npos ? "" : file.substr(0, slash));
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(kernel_module_, Register(std::move(k)));
  if (Spec().syntax->kernel_submodules) {
    FLAMEFLEET_RETURN_IF_ERROR(LoadDeclaredSubmodules(kernel_module_, 0));
  }
  return absl::OkStatus();
}

absl::Status Linker::LoadDeclaredSubmodules(size_t index, int depth) {
  if (depth > kMaxNestingDepth) {
    return Error(modules_[index]->ast.submodules.front().loc, "kernel submodules nest too deep");
  }
  // Copied: loading registers modules, which may move the vector of modules.
  const std::vector<ast::Submodule> submodules = modules_[index]->ast.submodules;
  const std::string path = modules_[index]->path;
  for (const ast::Submodule& sub : submodules) {
    const std::string child = absl::StrCat(path, "::", sub.name);
    const bool fresh = !module_by_path_.contains(child);
    FLAMEFLEET_ASSIGN_OR_RETURN(size_t loaded, LoadModule(child, sub.loc));
    if (fresh) FLAMEFLEET_RETURN_IF_ERROR(LoadDeclaredSubmodules(loaded, depth + 1));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> Linker::LoadFile(const std::string& path) {
  if (auto it = kernel_files_.find(path); it != kernel_files_.end()) return it->second;
  return LoadSourceFile(options_, *sources_, path);
}

absl::StatusOr<size_t> Linker::Register(std::unique_ptr<LinkedModule> m) {
  const ast::Module& a = m->ast;
  // v0.25.7 sema: a library or kernel module is parsed with its expected path, and a
  // `namespace` declaration must name exactly that path. (A program is parsed without one, so
  // its declaration is not checked.)
  if (!a.declared_namespace.empty() && !m->is_program && a.declared_namespace != m->path) {
    return Error(a.namespace_loc,
                 absl::StrCat("conflicting module namespace specification: expected '::", m->path,
                              "', but got '::", a.declared_namespace, "'"));
  }
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
  m->constant_state.assign(a.constants.size(), 0);
  std::vector<std::pair<std::string, ast::SourceLocation>> to_load;
  std::vector<std::pair<const ast::Import*, std::string>> item_imports;
  for (const ast::Import& imp : a.imports) {
    const bool is_program = m->is_program;
    std::string path =
        absl::StartsWith(imp.path, "self::") && !is_program
            ? absl::StrCat(m->path, imp.path.substr(4))  // self::x -> <this module>::x
            : imp.path;
    const bool fresh =
        imp.item.empty()
            ? m->imports.emplace(imp.alias, path).second
            : m->item_imports.emplace(imp.alias, std::make_pair(path, imp.item)).second;
    if (!fresh ||
        (imp.item.empty() ? m->item_imports.contains(imp.alias) : m->imports.contains(imp.alias))) {
      return Error(imp.loc, absl::StrCat("duplicate import alias '", imp.alias, "'"));
    }
    if (!imp.item.empty()) item_imports.emplace_back(&imp, path);
    to_load.emplace_back(std::move(path), imp.loc);
  }
  size_t index = modules_.size();
  module_by_path_.emplace(m->path, index);
  modules_.push_back(std::move(m));
  FLAMEFLEET_RETURN_IF_ERROR(CheckImports(index));
  // Load imports eagerly so that missing modules are reported at the `use` line.
  for (const auto& [path, loc] : to_load) {
    FLAMEFLEET_ASSIGN_OR_RETURN(size_t unused, LoadModule(path, loc));
    (void)unused;
    FLAMEFLEET_RETURN_IF_ERROR(CheckVisible(index, path, loc));
  }
  for (const auto& [imp, path] : item_imports) {
    FLAMEFLEET_RETURN_IF_ERROR(CheckItemImport(index, *imp, path));
  }
  for (size_t i = 0; i < modules_[index]->ast.constants.size(); ++i) {
    FLAMEFLEET_RETURN_IF_ERROR(EvaluateConstant(index, i, 0));
  }
  for (ast::Procedure& p : modules_[index]->ast.procedures) {
    FLAMEFLEET_RETURN_IF_ERROR(ResolveRepeatCounts(index, p.body, 0));
  }
  if (modules_[index]->ast.entry.has_value()) {
    FLAMEFLEET_RETURN_IF_ERROR(ResolveRepeatCounts(index, *modules_[index]->ast.entry, 0));
  }
  return index;
}

absl::Status Linker::ResolveRepeatCounts(size_t module, ast::Block& block, int depth) {
  if (depth > 2 * kMaxNestingDepth) return absl::OkStatus();  // the parser bounds nesting
  for (ast::Node& node : block) {
    if (auto* r = std::get_if<ast::Repeat>(&node.op)) {
      if (!r->count_constant.empty()) {
        const ast::ConstantValue* v = FindConstant(module, r->count_constant);
        if (v == nullptr) {
          return Error(r->loc, absl::StrCat("undefined constant '", r->count_constant, "'"));
        }
        const uint64_t max = Spec().syntax->max_repeat_count;
        if (v->kind != ast::ConstantValue::Kind::kFelt || v->felt == 0 || v->felt > max) {
          return Error(r->loc,
                       absl::StrCat("repeat count ", v->felt, " is out of range (1..", max, ")"));
        }
        r->count = static_cast<uint32_t>(v->felt);
        r->count_constant.clear();
      }
      FLAMEFLEET_RETURN_IF_ERROR(ResolveRepeatCounts(module, r->body, depth + 1));
    } else if (auto* i = std::get_if<ast::IfElse>(&node.op)) {
      FLAMEFLEET_RETURN_IF_ERROR(ResolveRepeatCounts(module, i->on_true, depth + 1));
      FLAMEFLEET_RETURN_IF_ERROR(ResolveRepeatCounts(module, i->on_false, depth + 1));
    } else if (auto* w = std::get_if<ast::While>(&node.op)) {
      FLAMEFLEET_RETURN_IF_ERROR(ResolveRepeatCounts(module, w->body, depth + 1));
    } else if (auto* d = std::get_if<ast::DoWhile>(&node.op)) {
      FLAMEFLEET_RETURN_IF_ERROR(ResolveRepeatCounts(module, d->body, depth + 1));
      FLAMEFLEET_RETURN_IF_ERROR(ResolveRepeatCounts(module, d->condition, depth + 1));
    }
  }
  return absl::OkStatus();
}

// Finds the library whose namespace is the longest prefix of `path` (or, under the mod.masm
// layout, `path` itself: the namespace root).
const std::pair<std::string, std::string>* Linker::FindLibrary(absl::string_view path) const {
  if (kernel_library_.has_value() && absl::StartsWith(path, absl::StrCat(kKernelNamespace, "::"))) {
    return &*kernel_library_;
  }
  const std::pair<std::string, std::string>* best = nullptr;
  for (const auto& lib : options_.libraries) {
    if ((absl::StartsWith(path, absl::StrCat(lib.first, "::")) ||
         (Spec().syntax->mod_file_layout && path == lib.first)) &&
        (best == nullptr || lib.first.size() > best->first.size())) {
      best = &lib;
    }
  }
  return best;
}

absl::StatusOr<size_t> Linker::LoadModule(const std::string& path, const ast::SourceLocation& loc) {
  if (auto it = module_by_path_.find(path); it != module_by_path_.end()) return it->second;
  const auto* lib = FindLibrary(path);
  if (lib == nullptr) {
    std::string ns(path.substr(0, path.find("::")));
    if (ns == kKernelNamespace) {
      return Error(loc, absl::StrCat("module '", path, "' not found: ",
                                     kernel_module_ == kNoKernel
                                         ? "no kernel was provided (--kernel)"
                                         : "this dialect's kernel is a single module"));
    }
    return Error(loc, absl::StrCat("module '", path, "' not found: no library for namespace '", ns,
                                   "' (use --lib ", ns, "=DIR)"));
  }
  const SyntaxRules& rules = *Spec().syntax;
  if (rules.declared_submodules) {
    FLAMEFLEET_RETURN_IF_ERROR(CheckDeclared(path, lib->first, loc));
    // The parents' loading may have loaded this module (a parent importing its child).
    if (auto it = module_by_path_.find(path); it != module_by_path_.end()) return it->second;
  }
  std::string rest = path.size() > lib->first.size() ? path.substr(lib->first.size() + 2) : "";
  absl::StatusOr<uint32_t> file_id =
      FindModuleFile(lib->second, rest, rules.mod_file_layout,
                     [this](const std::string& file) { return LoadFile(file); });
  if (!file_id.ok()) {
    return Error(loc, absl::StrCat("module '", path, "' not found: ", file_id.status().message()));
  }
  // The kernel's submodules are kernel modules (v0.25.7 links every module of a kernel package
  // as one): `caller` works there and `call` does not.
  const ast::ModuleKind kind =
      lib->first == kKernelNamespace ? ast::ModuleKind::kKernel : ast::ModuleKind::kLibrary;
  FLAMEFLEET_ASSIGN_OR_RETURN(ast::Module module, ParseModule(*sources_, *file_id, kind, Spec()));
  auto loaded = std::make_unique<LinkedModule>();
  loaded->path = path;
  loaded->library = lib->first;
  loaded->ast = std::move(module);
  return Register(std::move(loaded));
}

absl::Status Linker::CheckVisible(size_t from, const std::string& path,
                                  const ast::SourceLocation& loc) const {
  if (!Spec().syntax->declared_submodules) return absl::OkStatus();
  const auto* lib = FindLibrary(path);
  if (lib == nullptr) return absl::OkStatus();
  const std::string& requester = modules_[from]->path;
  std::string child = path;
  while (child.size() > lib->first.size()) {
    const size_t cut = child.rfind("::");
    const std::string parent = child.substr(0, cut);
    const std::string name = child.substr(cut + 2);
    auto it = module_by_path_.find(parent);
    if (it == module_by_path_.end()) break;
    for (const ast::Submodule& sub : modules_[it->second]->ast.submodules) {
      if (sub.name == name && !sub.is_public && requester != parent &&
          !absl::StartsWith(requester, absl::StrCat(parent, "::"))) {
        return Error(loc, absl::StrCat("module '", path, "' is private: '", parent,
                                       "' declares `mod ", name, "` without `pub`"));
      }
    }
    child = parent;
  }
  return absl::OkStatus();
}

absl::Status Linker::CheckDeclared(const std::string& path, absl::string_view ns,
                                   const ast::SourceLocation& loc) {
  if (path.size() <= ns.size()) return absl::OkStatus();  // the namespace root
  const size_t cut = path.rfind("::");
  const std::string parent = path.substr(0, cut);
  const std::string child = path.substr(cut + 2);
  FLAMEFLEET_ASSIGN_OR_RETURN(size_t parent_index, LoadModule(parent, loc));
  for (const ast::Submodule& sub : modules_[parent_index]->ast.submodules) {
    if (sub.name == child) return absl::OkStatus();
  }
  return Error(loc, absl::StrCat("module '", path, "' is not declared: its parent module '", parent,
                                 "' must declare it with `pub mod ", child, "`"));
}

uint32_t Linker::NewProcedure(size_t module, size_t index, std::string name,
                              const ast::SourceLocation& loc) {
  uint32_t id = static_cast<uint32_t>(procedures_.size());
  procedures_.push_back(LinkedProcedure{module, index});
  ProcedureInfo info;
  info.name = std::move(name);
  info.loc = loc;
  infos_->push_back(std::move(info));
  procedure_ids_.emplace(std::make_pair(module, index), id);
  return id;
}

uint32_t Linker::ProcedureId(size_t module, size_t index) {
  auto it = procedure_ids_.find(std::make_pair(module, index));
  if (it != procedure_ids_.end()) return it->second;
  const LinkedModule& m = *modules_[module];
  const ast::Procedure& p = m.ast.procedures[index];
  return NewProcedure(module, index, absl::StrCat(m.path, "::", p.name), p.loc);
}

absl::StatusOr<uint32_t> Linker::Resolve(size_t from, const std::string& target,
                                         const ast::SourceLocation& loc) {
  return Resolve(from, target, loc, /*hops=*/0);
}

absl::StatusOr<uint32_t> Linker::Resolve(size_t from, const std::string& target,
                                         const ast::SourceLocation& loc, int hops) {
  if (hops > kMaxReexportHops) return Error(loc, "re-export chain too long (cycle?)");
  if (absl::StartsWith(target, "0x")) {
    return Error(loc, "a MAST root cannot be used here; name the procedure");
  }
  size_t module = from;
  std::string name = target;
  if (absl::StartsWith(target, "self::") && !modules_[from]->is_program) {
    // self::child::name: a path relative to this module
    return Resolve(from, absl::StrCat("::", modules_[from]->path, target.substr(4)), loc, hops);
  }
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
    if (!absl::StartsWith(target, "::") && absl::StartsWith(target, kKernelNamespace) &&
        target.size() > sizeof(kKernelNamespace) && target[sizeof(kKernelNamespace) - 1] == ':') {
      // $kernel::name, $kernel::child::name: an absolute path into the kernel's namespace
      return Resolve(from, absl::StrCat("::", target), loc, hops + 1);
    }
    if (!absl::StartsWith(target, "::")) {
      // alias::name (the alias is the first segment)
      const LinkedModule& m = *modules_[from];
      auto it = m.imports.find(module_path);
      if (it == m.imports.end() && Spec().syntax->mod_file_layout &&
          module_path.find("::") != std::string::npos) {
        // alias::child::name: a submodule of an imported module
        const size_t first = module_path.find("::");
        it = m.imports.find(module_path.substr(0, first));
        if (it != m.imports.end()) {
          module_path = absl::StrCat(it->second, module_path.substr(first));
          return Resolve(from, absl::StrCat("::", module_path, "::", name), loc, hops + 1);
        }
      }
      if (it == m.imports.end() && Spec().syntax->mod_file_layout && !m.is_program) {
        // child::name or child::grandchild::name: a submodule this module declares (`mod`)
        const std::string first = module_path.substr(0, module_path.find("::"));
        for (const ast::Submodule& sub : m.ast.submodules) {
          if (sub.name != first) continue;
          return Resolve(from, absl::StrCat("::", m.path, "::", module_path, "::", name), loc,
                         hops + 1);
        }
      }
      if (it == m.imports.end()) {
        return Error(loc,
                     absl::StrCat("undefined module '", module_path, "' (missing `use` import?)"));
      }
      module_path = it->second;
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(module, LoadModule(module_path, loc));
    FLAMEFLEET_RETURN_IF_ERROR(CheckVisible(from, module_path, loc));
  }
  const LinkedModule& m = *modules_[module];
  if (auto it = m.procedures.find(name); it != m.procedures.end()) {
    const ast::Procedure& p = m.ast.procedures[it->second];
    if (module != from && !p.exported) {
      return Error(loc, absl::StrCat("procedure '", name, "' of module '", m.path, "' is private"));
    }
    return ProcedureId(module, it->second);
  }
  if (auto it = m.reexports.find(name); it != m.reexports.end()) {
    const ast::ReExport& r = m.ast.reexports[it->second];
    return Resolve(module, r.target, loc, hops + 1);
  }
  if (module == from) {
    if (auto it = m.item_imports.find(name); it != m.item_imports.end()) {
      const auto& [item_module, item] = it->second;
      return Resolve(from, absl::StrCat("::", item_module, "::", item), loc, hops + 1);
    }
  }
  if (module == from) {
    return Error(loc, absl::StrCat("undefined procedure '", name, "'"));
  }
  return Error(loc, absl::StrCat("undefined procedure '", name, "' in module '", m.path, "'"));
}

absl::Status Linker::CheckInvocation(size_t from, const ast::Instruction& inst) const {
  if (inst.name != "syscall") return absl::OkStatus();
  if (modules_[from]->ast.kind == ast::ModuleKind::kKernel && !Spec().syntax->kernel_syscalls) {
    return Error(inst.loc, "`syscall` is not allowed in a kernel module");
  }
  if (kernel_module_ == kNoKernel) {
    return Error(inst.loc, "syscall used but no kernel was provided (--kernel)");
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> Linker::ResolveInvocation(size_t from, const ast::Instruction& inst) {
  const bool syscall = inst.name == "syscall";
  const bool local = !absl::StrContains(inst.target, "::");
  FLAMEFLEET_ASSIGN_OR_RETURN(
      uint32_t callee, Resolve(syscall && local ? kernel_module_ : from, inst.target, inst.loc));
  if (syscall && !IsExportedKernelProcedure(callee)) {
    return Error(inst.loc, absl::StrCat("syscall target '", (*infos_)[callee].name,
                                        "' is not an exported kernel procedure"));
  }
  // v0.25.7: only the kernel's root module may exec its own procedures; everywhere else
  // (the program, libraries, the kernel's submodules) they are reached by `syscall` alone.
  if (!syscall && Spec().syntax->kernel_submodules && from != kernel_module_ &&
      procedures_[callee].module == kernel_module_) {
    return Error(inst.loc, absl::StrCat("kernel procedure '::", (*infos_)[callee].name,
                                        "' can only be invoked via syscall"));
  }
  return callee;
}

bool Linker::IsExportedKernelProcedure(uint32_t id) const {
  const LinkedProcedure& p = procedures_[id];
  return p.module == kernel_module_ && p.index != kEntryIndex &&
         modules_[p.module]->ast.procedures[p.index].exported;
}

std::optional<uint32_t> Linker::ResolveRootLiteral(
    const Word& root, bool syscall, const std::function<const Word*(uint32_t)>& root_of) const {
  // The order in which the VM searches its forests: the program, libraries, the kernel.
  auto rank = [&](uint32_t p) {
    const LinkedModule& m = *modules_[procedures_[p].module];
    if (m.library.empty()) return 0;
    return m.library == kKernelNamespace ? 2 : 1;
  };
  std::optional<uint32_t> best;
  for (uint32_t p = 0; p < procedures_.size(); ++p) {
    const Word* r = root_of(p);
    if (r == nullptr || *r != root) continue;
    if (syscall && !IsExportedKernelProcedure(p)) continue;
    if (!best.has_value() || rank(p) < rank(*best)) best = p;
  }
  return best;
}

bool Linker::LinksDynamically(size_t from, uint32_t callee) const {
  const LinkedModule& caller_module = *modules_[from];
  const LinkedModule& callee_module = *modules_[procedures_[callee].module];
  return !callee_module.library.empty() && callee_module.library != caller_module.library &&
         !IsStaticLink(caller_module.library, callee_module.library);
}

bool Linker::LinksStatically(size_t from, uint32_t callee) const {
  const LinkedModule& caller_module = *modules_[from];
  const LinkedModule& callee_module = *modules_[procedures_[callee].module];
  return !callee_module.library.empty() && callee_module.library != caller_module.library &&
         IsStaticLink(caller_module.library, callee_module.library);
}

bool Linker::IsStaticLink(absl::string_view caller, absl::string_view callee) const {
  for (const auto& [from, to] : options_.static_links) {
    if (from == caller && to == callee) return true;
  }
  return false;
}

const ast::ConstantValue* Linker::FindConstant(size_t module, const std::string& name) const {
  return FindConstant(module, name, /*hops=*/0);
}

const ast::ConstantValue* Linker::FindConstant(size_t module, const std::string& name,
                                               int hops) const {
  if (hops > kMaxReexportHops) return nullptr;
  const LinkedModule& m = *modules_[module];
  if (auto it = m.constants.find(name); it != m.constants.end()) {
    return &m.ast.constants[it->second].value;
  }
  // use {NAME} from a::b, and pub use {NAME} from a::b (target "::a::b::NAME")
  std::string target;
  if (auto it = m.item_imports.find(name); it != m.item_imports.end()) {
    target = absl::StrCat(it->second.first, "::", it->second.second);
  } else if (auto re = m.reexports.find(name); re != m.reexports.end()) {
    const std::string& t = m.ast.reexports[re->second].target;
    if (!absl::StartsWith(t, "::")) return nullptr;
    target = t.substr(2);
  } else {
    return nullptr;
  }
  const size_t cut = target.rfind("::");
  if (cut == std::string::npos) return nullptr;
  auto mod = module_by_path_.find(target.substr(0, cut));
  if (mod == module_by_path_.end()) return nullptr;
  return FindConstant(mod->second, target.substr(cut + 2), hops + 1);
}

absl::Status Linker::CheckImports(size_t index) const {
  if (!Spec().syntax->independent_imports) return absl::OkStatus();
  const LinkedModule& m = *modules_[index];
  for (const ast::Import& imp : m.ast.imports) {
    const std::string first = imp.path.substr(0, imp.path.find("::"));
    if (!imp.absolute && first != "self") {
      for (const ast::Import& other : m.ast.imports) {
        if (other.alias == first && other.alias != imp.alias) {
          return Error(imp.loc, absl::StrCat("import target '", imp.path,
                                             "' cannot be resolved through import '", first,
                                             "' (imports are resolved independently; use the "
                                             "original global path instead of another import "
                                             "alias)"));
        }
      }
    }
    if (!imp.item.empty() || m.is_program) continue;
    const std::string path =
        absl::StartsWith(imp.path, "self::") ? absl::StrCat(m.path, imp.path.substr(4)) : imp.path;
    if (path == m.path) {
      return Error(imp.loc, absl::StrCat("self-referential import of module '", path,
                                         "' (a module cannot import itself)"));
    }
    const size_t cut = path.rfind("::");
    if (cut != std::string::npos && path.substr(0, cut) == m.path) {
      const std::string child = path.substr(cut + 2);
      for (const ast::Submodule& sub : m.ast.submodules) {
        if (sub.name == child) {
          return Error(imp.loc, absl::StrCat("cannot import submodule '", path,
                                             "' declared in the same module (reference it "
                                             "with a submodule-qualified path instead)"));
        }
      }
    }
  }
  return absl::OkStatus();
}

// v0.25.7 resolves every import when it links (linker/namespaces.rs resolve_imports), used or
// not, and an item import naming a private procedure or constant of another module fails there
// ("private symbol reference"), at the item's name. Items flamefleet does not model (types) and
// undefined names are left to the uses.
absl::Status Linker::CheckItemImport(size_t index, const ast::Import& imp,
                                     const std::string& path) const {
  const auto owner = module_by_path_.find(path);
  if (owner == module_by_path_.end() || owner->second == index) return absl::OkStatus();
  const LinkedModule& m = *modules_[owner->second];
  absl::string_view kind;
  if (auto it = m.procedures.find(imp.item);
      it != m.procedures.end() && !m.ast.procedures[it->second].exported) {
    kind = "procedure";
  } else if (auto c = m.constants.find(imp.item);
             c != m.constants.end() && !m.ast.constants[c->second].is_public) {
    kind = "constant";
  } else {
    return absl::OkStatus();
  }
  return Error(imp.item_loc, absl::StrCat("private symbol reference: ", kind, " '", imp.item,
                                          "' of module '", m.path, "' is private (declare it `pub ",
                                          kind == "procedure" ? "proc" : "const", "`)"));
}

absl::Status Linker::EvaluateConstant(size_t module, size_t index, int depth) {
  LinkedModule& m = *modules_[module];
  ast::Constant& c = m.ast.constants[index];
  if (!c.pending.has_value()) return absl::OkStatus();
  if (m.constant_state[index] == 1) {
    return Error(c.loc,
                 absl::StrCat("constant evaluation terminated due to infinite recursion: '", c.name,
                              "' depends on itself (dependencies between constants must "
                              "form an acyclic graph)"));
  }
  if (depth > kMaxReexportHops) {
    return Error(c.loc, absl::StrCat("constant '", c.name, "' refers to constants too deeply (",
                                     "the limit is ", kMaxReexportHops, " levels)"));
  }
  m.constant_state[index] = 1;
  auto lookup =
      [&](const ast::ConstExpr& ref) -> absl::StatusOr<std::optional<ast::ConstantValue>> {
    FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstantValue v,
                                LookupConstant(module, ref.name, ref.loc, depth + 1));
    return std::optional<ast::ConstantValue>(std::move(v));
  };
  auto error = [this](ast::SourceLocation loc, absl::string_view message) {
    return Error(loc, message);
  };
  absl::StatusOr<std::optional<ast::ConstantValue>> v = EvaluateConstExpr(
      *m.ast.constants[index].pending, Spec().syntax->const_arithmetic, lookup, error);
  m.constant_state[index] = 0;
  if (!v.ok()) return v.status();
  ast::Constant& done = m.ast.constants[index];
  if (!v->has_value()) return Error(done.loc, absl::StrCat("undefined constant '", done.name, "'"));
  done.value = **v;
  done.pending.reset();
  return absl::OkStatus();
}

absl::StatusOr<ast::ConstantValue> Linker::LookupConstant(size_t from, const std::string& name,
                                                          const ast::SourceLocation& loc,
                                                          int depth) {
  const LinkedModule& m = *modules_[from];
  const size_t cut = name.rfind("::");
  if (cut == std::string::npos) {
    if (auto it = m.constants.find(name); it != m.constants.end()) {
      FLAMEFLEET_RETURN_IF_ERROR(EvaluateConstant(from, it->second, depth));
      return modules_[from]->ast.constants[it->second].value;
    }
    if (auto it = m.item_imports.find(name); it != m.item_imports.end()) {
      const auto [path, item] = it->second;
      FLAMEFLEET_ASSIGN_OR_RETURN(size_t owner, LoadModule(path, loc));
      return ConstantOf(owner, item, from, name, loc, depth);
    }
    return Error(loc, absl::StrCat("undefined constant '", name, "'"));
  }
  // A path: absolute, or qualified by an import alias or a submodule of this module.
  std::string module_path;
  if (absl::StartsWith(name, "::")) {
    module_path = name.substr(2, cut - 2);
  } else {
    const std::string qualifier = name.substr(0, cut);
    const std::string first = qualifier.substr(0, qualifier.find("::"));
    const std::string rest = qualifier.substr(first.size());  // "" or "::sub..."
    if (auto it = m.imports.find(first); it != m.imports.end()) {
      module_path = it->second + rest;
    } else if (std::any_of(m.ast.submodules.begin(), m.ast.submodules.end(),
                           [&](const ast::Submodule& s) { return s.name == first; }) &&
               !m.is_program) {
      module_path = absl::StrCat(m.path, "::", qualifier);
    } else {
      return Error(loc, absl::StrCat("invalid relative item path '", name,
                                     "' (item paths must be absolute, local, or qualified by an "
                                     "import or submodule in the current module)"));
    }
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(size_t owner, LoadModule(module_path, loc));
  FLAMEFLEET_RETURN_IF_ERROR(CheckVisible(from, module_path, loc));
  return ConstantOf(owner, name.substr(cut + 2), from, name, loc, depth);
}

absl::StatusOr<ast::ConstantValue> Linker::ConstantOf(size_t owner, const std::string& name,
                                                      size_t from, const std::string& written,
                                                      const ast::SourceLocation& loc, int depth) {
  if (depth > kMaxReexportHops) {
    return Error(loc, absl::StrCat("constant '", written, "' is re-exported too many times"));
  }
  const LinkedModule& m = *modules_[owner];
  if (auto it = m.constants.find(name); it != m.constants.end()) {
    if (owner != from && !m.ast.constants[it->second].is_public) {
      return Error(loc, absl::StrCat("constant '", written, "' is private: module '", m.path,
                                     "' must declare it `pub const`"));
    }
    FLAMEFLEET_RETURN_IF_ERROR(EvaluateConstant(owner, it->second, depth + 1));
    return modules_[owner]->ast.constants[it->second].value;
  }
  if (auto re = m.reexports.find(name); re != m.reexports.end()) {
    const std::string target = m.ast.reexports[re->second].target;
    if (absl::StartsWith(target, "::")) return LookupConstant(owner, target, loc, depth + 1);
  }
  return Error(loc, absl::StrCat("undefined constant '", written, "' (is it exported from '",
                                 m.path, "'?)"));
}

const ast::AdvMapEntry* Linker::FindAdvMapEntry(size_t module, const std::string& name) const {
  for (const ast::AdvMapEntry& e : modules_[module]->ast.adv_map) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

const ast::Block& Linker::Body(uint32_t id) const {
  const LinkedProcedure& p = procedures_[id];
  const LinkedModule& m = *modules_[p.module];
  return p.index == kEntryIndex ? *m.ast.entry : m.ast.procedures[p.index].body;
}

uint32_t Linker::NumLocals(uint32_t id) const {
  const LinkedProcedure& p = procedures_[id];
  return p.index == kEntryIndex ? 0 : modules_[p.module]->ast.procedures[p.index].num_locals;
}

}  // namespace flamefleet::vm
