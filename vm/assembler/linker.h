// Linker: the dialect-free half of assembly. It loads the executable module, the kernel and
// every library module they import (`use.NS::path::mod` is DIR/path/mod.masm for a library
// `NS=DIR`; under the v0.25 layout rules a::b is DIR/a/b.masm or else DIR/a/b/mod.masm, the
// namespace root is DIR/mod.masm, and a module is reachable only through the `mod`
// declarations of its parents), resolves item imports (`use {x as y} from a::b`, procedures
// and constants, `pub use {..}` re-exports), `self::` paths and imported `repeat` counts, and
// resolves invocation targets (local, `alias::name`, absolute `::path::name`,
// quoted names, re-exports, kernel procedures for `syscall`) to procedure ids. Procedures get ids
// in the order they are first referenced; their names and locations go to the Program's
// procedure table. It also answers the questions of linking the MAST builder asks: whether a
// call crosses into a dynamically linked library, which compiled procedure a MAST-root literal
// names, what a module's constants are.
//
// Internal to the assembler (vm/assembler/assembler.cc drives it).
//
//   Linker linker(options, sources, &program.procedures);
//   FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t main_id, linker.LinkProgram(file_id));
//   FLAMEFLEET_ASSIGN_OR_RETURN(uint32_t callee, linker.Resolve(module, "math::add", loc));
//   const ast::Block& body = linker.Body(callee);
#ifndef FLAMEFLEET_VM_ASSEMBLER_LINKER_H_
#define FLAMEFLEET_VM_ASSEMBLER_LINKER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vm/assembler/assembler.h"
#include "vm/assembler/program.h"
#include "vm/dialect.h"
#include "vm/felt.h"
#include "vm/parser/ast.h"
#include "vm/parser/source_manager.h"

namespace flamefleet::vm {

// Registers the source at `path` in `sources`: from options.virtual_files if it is there, else
// from the disk (NotFound when options.read_disk is false or the file does not exist). Returns
// its file id.
absl::StatusOr<uint32_t> LoadSourceFile(const AssemblerOptions& options, SourceManager& sources,
                                        const std::string& path);

// Finds and registers, with `load`, the file of module `rest` ("a::b"; "" for the namespace
// root) of a library in `dir` ("" for the current directory): DIR/a/b.masm, else under
// `mod_file_layout` DIR/a/b/mod.masm (the root: DIR/mod.masm). NotFound naming what was tried.
absl::StatusOr<uint32_t> FindModuleFile(
    const std::string& dir, const std::string& rest, bool mod_file_layout,
    const std::function<absl::StatusOr<uint32_t>(const std::string&)>& load);

// A loaded module and its name tables.
struct LinkedModule {
  std::string path;     // "$exec", "$kernel" or "std::math::u64"
  std::string library;  // the namespace of the library it belongs to; "" for the program
  bool is_program = false;
  ast::Module ast;
  absl::flat_hash_map<std::string, size_t> procedures;    // name -> index in ast.procedures
  absl::flat_hash_map<std::string, size_t> reexports;     // name -> index in ast.reexports
  absl::flat_hash_map<std::string, std::string> imports;  // alias -> module path
  // alias -> (module path, item name) of `use {item as alias} from path`
  absl::flat_hash_map<std::string, std::pair<std::string, std::string>> item_imports;
  absl::flat_hash_map<std::string, size_t> constants;  // name -> index in ast.constants
  std::vector<uint8_t> constant_state;  // per constant: 1 while the linker evaluates it
};

// The kernel's namespace: the kernel module's path, and the prefix of its submodules'.
inline constexpr char kKernelNamespace[] = "$kernel";

// LinkedProcedure::index of the program's `begin ... end` block.
inline constexpr size_t kEntryIndex = ~size_t{0};

// Where a procedure is defined.
struct LinkedProcedure {
  size_t module = 0;  // index of its LinkedModule
  size_t index = 0;   // into the module's ast.procedures, or kEntryIndex
};

// Loads modules and resolves names for one assembly. Not thread-safe.
class Linker {
 public:
  // Creates a linker that reads files with `options` into `sources` and appends every
  // procedure it assigns an id to `procedures` (name and location; ids index it). `options`
  // and `procedures` must outlive the linker; `procedures` must not be null. `dialect`, if not
  // null, replaces the spec of options.dialect for parsing and layout (tests that pair an
  // instruction table with other syntax rules); it must outlive the linker.
  Linker(const AssemblerOptions& options, std::shared_ptr<SourceManager> sources,
         std::vector<ProcedureInfo>* procedures, const DialectSpec* dialect = nullptr);

  // Parses the executable module in `file_id`, the kernel of options.kernel_path (if any) and
  // every module they import, and returns the id of the entry procedure `$exec::$main`.
  // Returns InvalidArgument (file:line:col) for syntax errors, duplicate names and missing
  // modules, NotFound when the kernel file does not exist. `kernel_file`, when set, is the
  // kernel module (already in `sources`), used instead of options.kernel_path.
  absl::StatusOr<uint32_t> LinkProgram(uint32_t file_id,
                                       std::optional<uint32_t> kernel_file = std::nullopt);

  // Parses the kernel module in `kernel_file` (already in `sources`) and registers it as
  // `$kernel`; under SyntaxRules::kernel_submodules also every submodule it declares with
  // `mod`, recursively (v0.25.7 reads a kernel's module tree whole), found beside it: the
  // files registered with AddKernelFile first, then LoadSourceFile. LinkProgram calls it; at
  // most once per linker. Errors as for LinkProgram.
  absl::Status LinkKernel(uint32_t kernel_file);

  // Makes `file_id` (already in `sources`) the file of kernel submodule path `path` as the
  // linker would build it ("kern/sys.masm" beside the kernel "kern/mod.masm"), so that a
  // fleet job's kernel submodules are found without virtual_files. Before LinkProgram.
  void AddKernelFile(const std::string& path, uint32_t file_id) {
    kernel_files_.emplace(path, file_id);
  }

  // Resolves an invocation target written in module `from` (`foo`, `"foo"`, `alias::foo`,
  // `::ns::mod::foo`, through re-exports) to a procedure id, loading its module if needed.
  // Returns InvalidArgument at `loc` for undefined, private or unreachable procedures.
  absl::StatusOr<uint32_t> Resolve(size_t from, const std::string& target,
                                   const ast::SourceLocation& loc);

  // Checks that `inst` (exec, call or syscall) may appear in module `from`: no `syscall` in a
  // kernel (unless SyntaxRules::kernel_syscalls), and no `syscall` without a kernel. Returns
  // InvalidArgument at the instruction.
  absl::Status CheckInvocation(size_t from, const ast::Instruction& inst) const;

  // Resolves the named target of `inst` (exec, call or syscall, not a MAST-root literal) in
  // module `from`; a local `syscall` target is looked up in the kernel and must be an exported
  // kernel procedure. Errors as for Resolve.
  absl::StatusOr<uint32_t> ResolveInvocation(size_t from, const ast::Instruction& inst);

  // Returns the procedure that a MAST-root literal `root` names: among the procedures for which
  // `root_of` returns a root (compiled ones) equal to `root`, the program's own first, then
  // libraries', then the kernel's, lowest id first; for a `syscall` only exported kernel
  // procedures count. Returns nullopt if there is none.
  std::optional<uint32_t> ResolveRootLiteral(
      const Word& root, bool syscall, const std::function<const Word*(uint32_t)>& root_of) const;

  // Returns whether invoking `callee` from module `from` crosses into another library, which
  // is linked dynamically (an EXTERNAL node).
  bool LinksDynamically(size_t from, uint32_t callee) const;
  // Returns whether invoking `callee` from module `from` crosses into a statically linked
  // link (AssemblerOptions::static_links): the callee is copied in.
  bool LinksStatically(size_t from, uint32_t callee) const;

  // Returns the named constant `name` of module `module` (its own, or one it imports with
  // `use {NAME} from ...`, through `pub use` re-exports), or null.
  const ast::ConstantValue* FindConstant(size_t module, const std::string& name) const;
  // Returns the advice-map entry `name` of module `module`, or null.
  const ast::AdvMapEntry* FindAdvMapEntry(size_t module, const std::string& name) const;

  // Returns the body of procedure `id` (the `begin ... end` block for the entry).
  const ast::Block& Body(uint32_t id) const;
  // Returns the number of locals procedure `id` declares (0 for the entry).
  uint32_t NumLocals(uint32_t id) const;

  const LinkedProcedure& procedure(uint32_t id) const { return procedures_[id]; }
  size_t num_procedures() const { return procedures_.size(); }
  const LinkedModule& module(size_t index) const { return *modules_[index]; }
  size_t num_modules() const { return modules_.size(); }

 private:
  absl::Status Error(const ast::SourceLocation& loc, absl::string_view message) const;
  // The dialect being assembled (options_.dialect).
  const DialectSpec& Spec() const;
  absl::StatusOr<size_t> Register(std::unique_ptr<LinkedModule> m);
  const std::pair<std::string, std::string>* FindLibrary(absl::string_view path) const;
  absl::StatusOr<size_t> LoadModule(const std::string& path, const ast::SourceLocation& loc);
  // Registers the file at `path`: a file given to AddKernelFile, else LoadSourceFile.
  absl::StatusOr<uint32_t> LoadFile(const std::string& path);
  // Loads every submodule that module `index` declares with `mod`, and theirs.
  absl::Status LoadDeclaredSubmodules(size_t index, int depth);
  // Checks, under SyntaxRules::declared_submodules, that every parent of library module
  // `path` declares the next component with `mod` (loading the parents).
  absl::Status CheckDeclared(const std::string& path, absl::string_view ns,
                             const ast::SourceLocation& loc);
  // Checks, under SyntaxRules::declared_submodules, that module `from` may see library module
  // `path`: every private (`mod` without `pub`) module on its way down from the namespace root
  // is visible only inside its parent's subtree.
  absl::Status CheckVisible(size_t from, const std::string& path,
                            const ast::SourceLocation& loc) const;
  const ast::ConstantValue* FindConstant(size_t module, const std::string& name, int hops) const;
  // Checks module `index`'s imports under SyntaxRules::independent_imports.
  absl::Status CheckImports(size_t index) const;
  // Checks that item import `imp` of module `index` (from loaded module `path`) does not name
  // a private procedure or constant of that module (v0.25.7 fails such an import, used or not).
  absl::Status CheckItemImport(size_t index, const ast::Import& imp, const std::string& path) const;
  // Evaluates constant `index` of module `module` if the parser left it pending (it names
  // another module's constant), resolving its references in that module's scope.
  absl::Status EvaluateConstant(size_t module, size_t index, int depth);
  // Returns the value of the constant `name` (`N`, `alias::N`, `alias::sub::N`, `::a::b::N`)
  // as seen from module `from`, loading modules as needed. Errors at `loc`.
  absl::StatusOr<ast::ConstantValue> LookupConstant(size_t from, const std::string& name,
                                                    const ast::SourceLocation& loc, int depth);
  // Returns constant `name` of module `owner` as seen from module `from` (public unless the
  // same module; through `pub use {..}` re-exports).
  absl::StatusOr<ast::ConstantValue> ConstantOf(size_t owner, const std::string& name, size_t from,
                                                const std::string& written,
                                                const ast::SourceLocation& loc, int depth);
  // Fills the count of every `repeat.CONST` whose constant is imported.
  absl::Status ResolveRepeatCounts(size_t module, ast::Block& block, int depth);
  uint32_t NewProcedure(size_t module, size_t index, std::string name,
                        const ast::SourceLocation& loc);
  uint32_t ProcedureId(size_t module, size_t index);
  absl::StatusOr<uint32_t> Resolve(size_t from, const std::string& target,
                                   const ast::SourceLocation& loc, int hops);
  bool IsExportedKernelProcedure(uint32_t id) const;
  // Whether code of library `caller` ("" for the program) links library `callee` statically
  // (AssemblerOptions::static_links).
  bool IsStaticLink(absl::string_view caller, absl::string_view callee) const;

  static constexpr size_t kNoKernel = ~size_t{0};

  const AssemblerOptions& options_;
  const DialectSpec* dialect_;  // never null
  std::shared_ptr<SourceManager> sources_;
  std::vector<ProcedureInfo>* infos_;  // never null
  std::vector<std::unique_ptr<LinkedModule>> modules_;
  absl::flat_hash_map<std::string, size_t> module_by_path_;
  std::vector<LinkedProcedure> procedures_;
  absl::flat_hash_map<std::pair<size_t, size_t>, uint32_t> procedure_ids_;
  size_t kernel_module_ = kNoKernel;  // index in modules_ of the kernel, if any
  // ("$kernel", the kernel file's directory) under SyntaxRules::kernel_submodules, once a
  // kernel is loaded: the library that `$kernel::a::b` submodules are found in.
  std::optional<std::pair<std::string, std::string>> kernel_library_;
  absl::flat_hash_map<std::string, uint32_t> kernel_files_;  // AddKernelFile
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_ASSEMBLER_LINKER_H_
