// Assembler: turns MASM modules into an executable Program.
//
// It loads the executable module and every module it imports (`use.NS::path::mod` is looked up
// as DIR/path/mod.masm for a library `NS=DIR`) and resolves invocation targets (the linker,
// vm/assembler/linker.h), lowers every instruction to native operations and builds the MAST by
// the dialect's MAST rules (vm/assembler/mast_builder.h: contiguous basic blocks merged, large
// procedure roots kept apart, balanced JOIN trees, `repeat` unrolled, empty bodies as [NOOP],
// procedures of libraries linked dynamically as EXTERNAL nodes like `miden run` does), and
// linearises it (vm/assembler/program.h), all by the rules of AssemblerOptions::dialect
// (vm/dialect.h; the default dialect is v0.25).
//
//   Assembler assembler(AssemblerOptions{.libraries = {{"std", "/path/stdlib/asm"}}});
//   absl::StatusOr<Program> program = assembler.AssembleFile("prog.masm");
#ifndef FLAMEFLEET_VM_ASSEMBLER_ASSEMBLER_H_
#define FLAMEFLEET_VM_ASSEMBLER_ASSEMBLER_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "vm/assembler/program.h"
#include "vm/dialect.h"

namespace flamefleet::vm {

struct AssemblerOptions {
  // The Miden dialect of every module assembled (vm/dialect.h); the Program keeps its spec.
  Dialect dialect = kDefaultDialect;
  // Library namespaces: (namespace, directory). `use.NS::a::b` reads DIR/a/b.masm.
  std::vector<std::pair<std::string, std::string>> libraries;
  // Debug mode like `miden run` (default): `breakpoint` costs one NOOP. Libraries are always
  // assembled in release mode.
  bool debug_mode = true;
  // In-memory source files: path -> MASM text, consulted before the disk whenever the assembler
  // would read a file (the program of AssembleFile and every library module, whose path is
  // "DIR/a/b.masm" for `use.NS::a::b` and a library (NS, DIR)). Lets a caller hold a whole
  // library set in memory, e.g. libraries = {{"std", "std"}} plus an entry
  // "std/math/u64.masm". Paths are matched exactly as built (no normalisation) and are the
  // file names shown in error locations.
  absl::flat_hash_map<std::string, std::string> virtual_files;
  // Whether a file missing from virtual_files is read from the disk (default). When false, a
  // missing file is NotFound and nothing is ever read from the disk: replaying an untrusted
  // snapshot must not reach the replaying machine's files.
  bool read_disk = true;
  // Kernel module file (`--kernel FILE`, empty: none). Its procedures are named
  // "$kernel::foo"; `syscall.foo` may only target an exported procedure of it. Read through
  // virtual_files like any other file.
  std::string kernel_path;
  // Static links, as v0.25.7's `Linkage::Static`: (caller, callee) library namespaces, the
  // caller "" for the program itself. Code of the caller invoking a procedure of the callee
  // copies it into the caller's MAST (no EXTERNAL node), and its root block merges with the
  // blocks around the call whatever its size (copied code is not a procedure root). Every other
  // call into another library is linked dynamically, as `miden run` links the core library.
  std::vector<std::pair<std::string, std::string>> static_links;
};

// Default of AssembleLimits::max_program_ops: 4,194,304 operations, far above every real
// program (the largest repeat of the conformance corpus and the stdlib is a few thousand).
inline constexpr uint64_t kDefaultMaxProgramOps = uint64_t{1} << 22;

// Limits of one assembly (per call: a cached Assembler serves jobs with different limits).
struct AssembleLimits {
  // Largest expanded size of the program's `repeat`s (`--max-program-ops`), computed before
  // anything is unrolled: an instruction counts 1, `if`/`while` 1 plus their bodies, a
  // `repeat.N` N times its body (so nested repeats multiply). Each repeat, and the sum over
  // all repeats, must stay within it; otherwise the assembly fails with ResourceExhausted at
  // the repeat's file:line:col, naming the size, the limit and the flag.
  uint64_t max_program_ops = kDefaultMaxProgramOps;
  // The assembly fails with DeadlineExceeded once this time has passed (checked every few
  // thousand MAST nodes and instructions, and at the start).
  absl::Time deadline = absl::InfiniteFuture();
};

// Most submodules of one kernel (Assembler::KernelFiles; a fleet job's JobSpec.kernel_modules).
inline constexpr size_t kMaxKernelSubmodules = 256;

// A MASM source file given as text: its path (which error locations show) and its contents.
struct SourceText {
  std::string path;
  std::string text;
};

class Assembler {
 public:
  explicit Assembler(AssemblerOptions options) : options_(std::move(options)) {}

  // Assembles the executable module in file `path`. Returns InvalidArgument with
  // "file:line:col: message" and the source line for every assembly error, NotFound when the
  // program or an imported module file does not exist, ResourceExhausted past a limit of
  // `limits` (or a built-in size bound), DeadlineExceeded after limits.deadline. Thread-safe.
  absl::StatusOr<Program> AssembleFile(const std::string& path,
                                       const AssembleLimits& limits = {}) const;

  // Assembles an executable module given as text; `name` is used in locations. Errors as for
  // AssembleFile.
  absl::StatusOr<Program> AssembleSource(absl::string_view name, absl::string_view text,
                                         const AssembleLimits& limits = {}) const;

  // As AssembleSource, with the kernel given as text (a fleet job's kernel) instead of
  // options.kernel_path: kernel[0] is the kernel module, the others its submodules, each
  // under the path the assembler would read it from (KernelFiles); the paths name them in
  // locations. The kernel may import the options' libraries like the program. Errors as for
  // AssembleFile; InvalidArgument for an empty `kernel`.
  absl::StatusOr<Program> AssembleSourceWithKernel(absl::string_view name, absl::string_view text,
                                                   absl::Span<const SourceText> kernel,
                                                   const AssembleLimits& limits = {}) const;

  // Returns the files of options.kernel_path's kernel as the assembler reads them: the kernel
  // module first, then (for a dialect with SyntaxRules::kernel_submodules) every submodule it
  // declares with `mod`, recursively, beside it (KDIR/a.masm or KDIR/a/mod.masm), in
  // breadth-first order. Parsed only (the libraries the kernel imports need not be at hand).
  // What a fleet job carries for `--kernel`. InvalidArgument (file:line:col) for a syntax error
  // or a declared submodule that does not exist, ResourceExhausted past kMaxKernelSubmodules,
  // NotFound for a missing kernel file, InvalidArgument when no kernel_path is set.
  // Thread-safe.
  absl::StatusOr<std::vector<SourceText>> KernelFiles() const;

  const AssemblerOptions& options() const { return options_; }

 private:
  AssemblerOptions options_;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_ASSEMBLER_ASSEMBLER_H_
