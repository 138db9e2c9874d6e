#include "vm/assembler/assembler.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
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
  absl::StatusOr<Program> a =
      inline_kernel.AssembleSourceWithKernel("main.masm", kMain, "kernel/k.masm", kKernel);
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
  absl::StatusOr<Program> bad = inline_kernel.AssembleSourceWithKernel(
      "main.masm", kMain, "kernel/k.masm", "pub proc triple_plus\n  bogus_op\nend\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("kernel/k.masm:2:3"));
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
