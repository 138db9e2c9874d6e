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
