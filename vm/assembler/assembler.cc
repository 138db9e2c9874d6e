#include "vm/assembler/assembler.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "vm/assembler/linearize.h"
#include "vm/assembler/linker.h"
#include "vm/assembler/mast.h"
#include "vm/assembler/mast_builder.h"
#include "vm/crypto/hasher.h"
#include "vm/dialect.h"
#include "vm/parser/parser.h"
#include "vm/parser/syntax_rules.h"

namespace flamefleet::vm {
namespace {

// Fills program->dyn_targets: DYN / DYNCALL may enter any compiled procedure by its root.
void CollectDynTargets(const MastBuilder& builder, Program* program) {
  for (uint32_t p = 0; p < program->procedures.size(); ++p) {
    if (!builder.compiled(p)) continue;
    DynTarget t;
    for (int i = 0; i < 4; ++i) t.digest[i] = program->procedures[p].mast_root[i].value();
    t.procedure = p;
    program->dyn_targets.push_back(t);
  }
  std::stable_sort(program->dyn_targets.begin(), program->dyn_targets.end());
  auto last =
      std::unique(program->dyn_targets.begin(), program->dyn_targets.end(),
                  [](const DynTarget& a, const DynTarget& b) { return a.digest == b.digest; });
  program->dyn_targets.erase(last, program->dyn_targets.end());
}

// Assembles the executable module in `file_id` of `sources`: links it (Linker), builds its
// MAST (MastBuilder) and linearises it.
// `kernel_file`, when set, is the kernel module in `sources` (else options.kernel_path is used).
// `kernel_submodules`: (path, file id in `sources`) of the kernel's submodules given as text.
absl::StatusOr<Program> Assemble(
    const AssemblerOptions& options, const AssembleLimits& limits,
    std::shared_ptr<SourceManager> sources, uint32_t file_id,
    std::optional<uint32_t> kernel_file = std::nullopt,
    const std::vector<std::pair<std::string, uint32_t>>& kernel_submodules = {}) {
  FLAMEFLEET_RETURN_IF_ERROR(CheckAssemblyDeadline(limits));
  Program program;
  program.source_ops.push_back(SourceOp{});  // index 0: unknown
  Linker linker(options, sources, &program.procedures);
  for (const auto& [path, id] : kernel_submodules) linker.AddKernelFile(path, id);
  FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t main_id, linker.LinkProgram(file_id, kernel_file));

  const DialectSpec& dialect = GetDialectSpec(options.dialect);
  program.dialect = &dialect;
  MastBuilder builder(linker, options, limits, *sources, *dialect.mast, *dialect.wire,
                      *dialect.hasher, &program);
  FLAMEFLEET_RETURN_IF_ERROR(
      builder.CompileProcedure(main_id, program.procedures[main_id].loc).status());
  program.entry_procedure = main_id;
  for (size_t m = 0; m < linker.num_modules(); ++m) {
    const LinkedModule& linked = linker.module(m);
    if (linked.ast.kind == ast::ModuleKind::kKernel && linked.path == kKernelNamespace) {
      // The kernel declares its exported procedures (the kernel ROM's rows); its submodules'
      // exports are not kernel procedures.
      for (const ast::Procedure& p : linked.ast.procedures) {
        if (p.exported) ++program.kernel_procedures;
      }
      program.kernel_procedures += static_cast<uint32_t>(linked.ast.reexports.size());
    }
    for (const ast::AdvMapEntry& e : linker.module(m).ast.adv_map) {
      std::vector<Felt> values;
      values.reserve(e.values.size());
      for (uint64_t v : e.values) values.push_back(Felt(v));
      program.advice_map.emplace_back(builder.AdvMapKey(e), std::move(values));
    }
  }
  builder.ResolveRootLiterals();
  const MastForest& forest = builder.forest();
  for (const MastNode& node : forest.nodes) {
    if (node.kind == MastKind::kTraces) continue;  // decorators, not nodes
    ++program.num_mast_nodes;
    if (node.kind != MastKind::kBlock) continue;
    for (const LoweredOp& op : node.ops) program.num_mast_ops += !IsPseudo(op.opcode);
  }
  std::vector<MastItem> roots(program.procedures.size());
  for (uint32_t i = 0; i < roots.size(); ++i) roots[i] = builder.root(i);
  if (builder.has_dyn()) CollectDynTargets(builder, &program);
  MastItem entry{builder.root(main_id).node, builder.forest().ExtendChain(0, main_id)};
  FLAMEFLEET_RETURN_IF_ERROR(Linearize(forest, roots, entry, &program));
  program.row_tally = BuildRowTally(program);
  program.sources = std::move(sources);
  return program;
}

}  // namespace

absl::StatusOr<Program> Assembler::AssembleFile(const std::string& path,
                                                const AssembleLimits& limits) const {
  auto sources = std::make_shared<SourceManager>();
  FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t file_id, LoadSourceFile(options_, *sources, path));
  return Assemble(options_, limits, std::move(sources), file_id);
}

absl::StatusOr<Program> Assembler::AssembleSource(absl::string_view name, absl::string_view text,
                                                  const AssembleLimits& limits) const {
  auto sources = std::make_shared<SourceManager>();
  uint32_t file_id = sources->Add(std::string(name), std::string(text));
  return Assemble(options_, limits, std::move(sources), file_id);
}

absl::StatusOr<Program> Assembler::AssembleSourceWithKernel(absl::string_view name,
                                                            absl::string_view text,
                                                            absl::Span<const SourceText> kernel,
                                                            const AssembleLimits& limits) const {
  if (kernel.empty()) return absl::InvalidArgumentError("a kernel needs its kernel module");
  auto sources = std::make_shared<SourceManager>();
  uint32_t file_id = sources->Add(std::string(name), std::string(text));
  uint32_t kernel_id = sources->Add(kernel[0].path, kernel[0].text);
  std::vector<std::pair<std::string, uint32_t>> submodules;
  for (const SourceText& file : kernel.subspan(1)) {
    submodules.emplace_back(file.path, sources->Add(file.path, file.text));
  }
  return Assemble(options_, limits, std::move(sources), file_id, kernel_id, submodules);
}

absl::StatusOr<std::vector<SourceText>> Assembler::KernelFiles() const {
  if (options_.kernel_path.empty()) return absl::InvalidArgumentError("no kernel was given");
  const DialectSpec& dialect = GetDialectSpec(options_.dialect);
  SourceManager sources;
  FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t kernel_id,
                              LoadSourceFile(options_, sources, options_.kernel_path));
  std::vector<SourceText> files = {{sources.path(kernel_id), sources.text(kernel_id)}};
  if (!dialect.syntax->kernel_submodules) return files;
  const size_t slash = options_.kernel_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : options_.kernel_path.substr(0, slash);
  // Breadth first over the `mod` declarations (module path below $kernel, file id); parsed
  // only, so the libraries the kernel imports need not be at hand.
  std::vector<std::pair<std::string, uint32_t>> queue = {{"", kernel_id}};
  for (size_t next = 0; next < queue.size(); ++next) {
    const auto [path, id] = queue[next];
    FLAMEFLEET_ASSIGN_OR_RETURN(ast::Module module,
                                ParseModule(sources, id, ast::ModuleKind::kKernel, dialect));
    for (const ast::Submodule& sub : module.submodules) {
      const std::string child = path.empty() ? sub.name : absl::StrCat(path, "::", sub.name);
      if (queue.size() > kMaxKernelSubmodules) {
        return absl::ResourceExhaustedError(sources.Format(
            sub.loc,
            absl::StrCat("the kernel has more than ", kMaxKernelSubmodules, " submodules")));
      }
      absl::StatusOr<uint32_t> file = FindModuleFile(
          dir, child, dialect.syntax->mod_file_layout,
          [&](const std::string& p) { return LoadSourceFile(options_, sources, p); });
      if (!file.ok()) {
        return absl::InvalidArgumentError(
            sources.Format(sub.loc, absl::StrCat("module '", kKernelNamespace, "::", child,
                                                 "' not found: ", file.status().message())));
      }
      files.push_back({sources.path(*file), sources.text(*file)});
      queue.emplace_back(child, *file);
    }
  }
  return files;
}

}  // namespace flamefleet::vm
