#include "vm/assembler/assembler.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/classic.h"
#include "vm/vm.h"

namespace flamefleet::vm {
namespace {

using ::testing::HasSubstr;

constexpr char kMathModule[] = R"(export.add3
  add add
end
)";

constexpr char kProgram[] = R"(use.mylib::util::math
begin
  push.1 push.2 push.3
  exec.math::add3
  swap drop
end
)";

AssemblerOptions VirtualLibrary() {
  AssemblerOptions options = testutil::ClassicOptions();
  options.libraries = {{"mylib", "virtual/mylib"}};
  options.virtual_files["virtual/mylib/util/math.masm"] = kMathModule;
  return options;
}

TEST(AssemblerTest, VirtualFilesServeLibraryModulesWithoutTheDisk) {
  Assembler assembler(VirtualLibrary());
  absl::StatusOr<Program> program = assembler.AssembleSource("main.masm", kProgram);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<RunResult> result = RunProgram(*program, ProgramInputs{}, ExecutionOptions{});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->stack.empty());
  EXPECT_EQ(result->stack[0].value(), 6u);
}

// A fleet job carries its kernel as text: the same program and kernel assemble and run as
// they do with a kernel file, and the kernel may import the options' libraries.
TEST(AssemblerTest, KernelGivenAsTextRunsLikeAKernelFile) {
  constexpr char kKernel[] = R"(use mylib::ops
pub proc triple_plus
  dup dup add add
  exec.ops::inc
end
)";
  constexpr char kMain[] = "begin\n  push.13\n  syscall.triple_plus\n  push.1 add swap drop\nend\n";
  AssemblerOptions options;
  options.libraries = {{"mylib", "virtual/mylib"}};
  options.virtual_files["virtual/mylib/mod.masm"] = "pub mod ops\n";
  options.virtual_files["virtual/mylib/ops.masm"] = "pub proc inc\n  add.1\nend\n";
  Assembler inline_kernel(options);
  const SourceText kernel[] = {{"kernel/k.masm", kKernel}};
  absl::StatusOr<Program> a = inline_kernel.AssembleSourceWithKernel("main.masm", kMain, kernel);
  ASSERT_TRUE(a.ok()) << a.status();
  options.virtual_files["k.masm"] = kKernel;
  options.kernel_path = "k.masm";
  absl::StatusOr<Program> b = Assembler(options).AssembleSource("main.masm", kMain);
  ASSERT_TRUE(b.ok()) << b.status();
  absl::StatusOr<RunResult> ra = RunProgram(*a, ProgramInputs{}, ExecutionOptions{});
  absl::StatusOr<RunResult> rb = RunProgram(*b, ProgramInputs{}, ExecutionOptions{});
  ASSERT_TRUE(ra.ok()) << ra.status();
  ASSERT_TRUE(rb.ok()) << rb.status();
  EXPECT_EQ(ra->stack[0].value(), 13u * 3 + 1 + 1);
  EXPECT_EQ(ra->cycles, rb->cycles);

  // Errors in the kernel name it by the name it was given.
  const SourceText bad_kernel[] = {{"kernel/k.masm", "pub proc triple_plus\n  bogus_op\nend\n"}};
  absl::StatusOr<Program> bad =
      inline_kernel.AssembleSourceWithKernel("main.masm", kMain, bad_kernel);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("kernel/k.masm:2:3"));
}

// A v0.25 kernel with submodules: `mod sys` / `pub mod io` beside kern/mod.masm are the
// modules $kernel::sys and $kernel::io (kern/sys.masm, kern/io/mod.masm), reached by a declared
// name or by an absolute `$kernel::` path. Only the root's exports are kernel procedures.
// Expected: 5 -> double 10 -> inc 11 -> twice (double, double) 44, in 33 cycles (masm_model
// v0.25 with kernel submodules loaded beside the kernel, as v0.25.7 read_modules_from_root does).
constexpr char kKernelRoot[] = R"(mod sys
pub mod io

pub proc entry
    exec.sys::double
    exec.$kernel::io::inc
end

pub proc twice
    exec.helper
    exec.helper
end

proc helper
    exec.sys::double
end
)";
constexpr char kKernelMain[] =
    "begin\n  push.5\n  syscall.entry\n  syscall.twice\n  swap drop\nend\n";

AssemblerOptions KernelWithSubmodules() {
  AssemblerOptions options;
  options.dialect = Dialect::kV0_25;
  options.read_disk = false;
  options.virtual_files["kern/mod.masm"] = kKernelRoot;
  options.virtual_files["kern/sys.masm"] = "pub proc double\n    dup add\nend\n";
  options.virtual_files["kern/io/mod.masm"] = "pub proc inc\n    add.1\nend\n";
  options.kernel_path = "kern/mod.masm";
  return options;
}

TEST(AssemblerTest, KernelSubmodulesAreFoundBesideTheKernel) {
  Assembler assembler(KernelWithSubmodules());
  absl::StatusOr<Program> program = assembler.AssembleSource("main.masm", kKernelMain);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(program->kernel_procedures, 2u);  // entry and twice; not double or inc
  absl::StatusOr<RunResult> result = RunProgram(*program, ProgramInputs{}, ExecutionOptions{});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->stack[0].value(), 44u);
  EXPECT_EQ(result->cycles, 33u);

  // What a fleet job carries: the kernel, then its declared submodules, as they are read.
  absl::StatusOr<std::vector<SourceText>> files = assembler.KernelFiles();
  ASSERT_TRUE(files.ok()) << files.status();
  std::vector<std::string> paths;
  for (const SourceText& f : *files) paths.push_back(f.path);
  EXPECT_THAT(paths, ::testing::ElementsAre("kern/mod.masm", "kern/sys.masm", "kern/io/mod.masm"));

  // Given as text (no virtual files, no disk) they assemble to the same run.
  AssemblerOptions bare;
  bare.dialect = Dialect::kV0_25;
  bare.read_disk = false;
  absl::StatusOr<Program> from_text =
      Assembler(bare).AssembleSourceWithKernel("main.masm", kKernelMain, *files);
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  absl::StatusOr<RunResult> again = RunProgram(*from_text, ProgramInputs{}, ExecutionOptions{});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->stack[0].value(), 44u);
  EXPECT_EQ(again->cycles, 33u);
}

TEST(AssemblerTest, KernelSubmoduleErrorsNameTheirPlace) {
  auto assemble = [](absl::string_view file, std::string text) {
    AssemblerOptions options = KernelWithSubmodules();
    options.virtual_files[std::string(file)] = std::move(text);
    return Assembler(options).AssembleSource("main.masm", kKernelMain).status();
  };
  // A declared submodule that is not there: at its `mod` line, naming both candidates.
  absl::Status missing = assemble("kern/mod.masm", absl::StrCat("mod gone\n", kKernelRoot));
  EXPECT_THAT(missing.message(), HasSubstr("kern/mod.masm:1:"));
  EXPECT_THAT(missing.message(), HasSubstr("module '$kernel::gone' not found"));
  // A submodule may not exec a kernel procedure: only `syscall` reaches those.
  absl::Status exec_root =
      assemble("kern/sys.masm", "pub proc double\n    exec.$kernel::entry\nend\n");
  EXPECT_THAT(exec_root.message(), HasSubstr("kern/sys.masm:2:"));
  EXPECT_THAT(exec_root.message(),
              HasSubstr("kernel procedure '::$kernel::entry' can only be invoked via syscall"));
  // A submodule's procedure is not a syscall target; a private (`mod`) submodule is not even
  // visible from the program.
  AssemblerOptions options = KernelWithSubmodules();
  absl::Status syscall_sub =
      Assembler(options)
          .AssembleSource("main.masm", "begin syscall.$kernel::io::inc end\n")
          .status();
  EXPECT_THAT(syscall_sub.message(),
              HasSubstr("syscall target '$kernel::io::inc' is not an exported kernel procedure"));
  absl::Status private_sub =
      Assembler(options)
          .AssembleSource("main.masm", "begin syscall.$kernel::sys::double end\n")
          .status();
  EXPECT_THAT(private_sub.message(), HasSubstr("main.masm:1:7: module '$kernel::sys' is private"));
  // A file beside the kernel that no `mod` declares is not a module of it.
  absl::Status undeclared = assemble(
      "kern/mod.masm",
      "pub proc entry\n    exec.$kernel::sys::double\nend\npub proc twice\n    nop\nend\n");
  EXPECT_THAT(undeclared.message(), HasSubstr("must declare it with `pub mod sys`"));
}

// v0.25.7 Linkage::Static: a statically linked library's procedures are copied into the program
// and merge with the blocks around each call, even a procedure of >= 32 batches that the program
// would keep apart as its own root; dynamically (the default) each call is an EXTERNAL node.
// Expected (masm_model v0.25): dynamic 2466 cycles; static 2448, the cycles of the same
// instructions written inline in one block.
TEST(AssemblerTest, StaticallyLinkedLibrariesAreCopiedAndMerged) {
  AssemblerOptions options;
  options.dialect = Dialect::kV0_25;
  options.read_disk = false;
  options.libraries = {{"slib", "slib"}};
  options.virtual_files["slib/mod.masm"] = "pub mod m\n";
  options.virtual_files["slib/m.masm"] =
      "pub proc f\n    push.1 add\nend\n\npub proc big\n    repeat.2400\n        nop\n    "
      "end\nend\n";
  static constexpr char kMain[] =
      "use slib::m\nbegin\n    push.5\n    exec.m::f\n    exec.m::big\n    exec.m::f\n"
      "    swap drop\nend\n";
  auto run = [](const AssemblerOptions& o) -> RunResult {
    absl::StatusOr<Program> program = Assembler(o).AssembleSource("main.masm", kMain);
    EXPECT_TRUE(program.ok()) << program.status();
    if (!program.ok()) return {};
    absl::StatusOr<RunResult> result = RunProgram(*program, ProgramInputs{}, ExecutionOptions{});
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult{};
  };
  const RunResult dynamic = run(options);
  options.static_links = {{"", "slib"}};
  const RunResult copied = run(options);
  ASSERT_FALSE(dynamic.stack.empty());
  ASSERT_FALSE(copied.stack.empty());
  EXPECT_EQ(dynamic.stack[0].value(), 7u);
  EXPECT_EQ(copied.stack[0].value(), 7u);
  EXPECT_EQ(dynamic.cycles, 2466u);
  EXPECT_EQ(copied.cycles, 2448u);
}

TEST(AssemblerTest, VirtualFilesServeTheProgramFile) {
  AssemblerOptions options = VirtualLibrary();
  options.virtual_files["no/such/dir/main.masm"] = kProgram;
  Assembler assembler(std::move(options));
  absl::StatusOr<Program> program = assembler.AssembleFile("no/such/dir/main.masm");
  ASSERT_TRUE(program.ok()) << program.status();
}

TEST(AssemblerTest, ErrorsInVirtualFilesNameTheVirtualPath) {
  AssemblerOptions options = VirtualLibrary();
  options.virtual_files["virtual/mylib/util/math.masm"] = "export.add3\n  add bogus_op\nend\n";
  Assembler assembler(std::move(options));
  absl::Status status = assembler.AssembleSource("main.masm", kProgram).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("virtual/mylib/util/math.masm:2:"));
}

TEST(AssemblerTest, MissingVirtualModuleIsReportedAtTheUseLine) {
  AssemblerOptions options = testutil::ClassicOptions();
  options.libraries = {{"mylib", "virtual/mylib"}};
  Assembler assembler(std::move(options));
  absl::Status status = assembler.AssembleSource("main.masm", kProgram).status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("main.masm:1:"));
  EXPECT_THAT(status.message(), HasSubstr("mylib::util::math"));
}

TEST(AssemblerTest, ReadDiskFalseNeverReadsLibraryFilesFromTheDisk) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "assembler_read_disk";
  std::filesystem::create_directories(dir / "util");
  std::ofstream(dir / "util" / "math.masm") << kMathModule;
  AssemblerOptions options = testutil::ClassicOptions();
  options.libraries = {{"mylib", dir.string()}};
  EXPECT_TRUE(Assembler(options).AssembleSource("main.masm", kProgram).ok());
  options.read_disk = false;
  absl::Status status = Assembler(options).AssembleSource("main.masm", kProgram).status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("only in-memory files"));
  options.virtual_files[(dir / "util" / "math.masm").string()] = kMathModule;
  EXPECT_TRUE(Assembler(options).AssembleSource("main.masm", kProgram).ok());
}

TEST(AssemblerTest, ProgramSourcesListTheEntryThenExactlyTheLoadedModules) {
  AssemblerOptions options = VirtualLibrary();
  options.virtual_files["virtual/mylib/util/unused.masm"] = kMathModule;
  absl::StatusOr<Program> program = Assembler(options).AssembleSource("main.masm", kProgram);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_NE(program->sources, nullptr);
  ASSERT_EQ(program->sources->size(), 2u);
  EXPECT_EQ(program->sources->path(0), "main.masm");
  EXPECT_EQ(program->sources->path(1), "virtual/mylib/util/math.masm");
  EXPECT_EQ(program->sources->text(1), kMathModule);
}

}  // namespace
}  // namespace flamefleet::vm
