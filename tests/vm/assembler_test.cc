#include "vm/assembler/assembler.h"

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
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
  AssemblerOptions options;
  options.libraries = {{"mylib", "virtual/mylib"}};
  options.virtual_files["virtual/mylib/util/math.masm"] = kMathModule;
  return options;
}

TEST(AssemblerTest, VirtualFilesServeLibraryModulesWithoutTheDisk) {
  Assembler assembler(VirtualLibrary());
  absl::StatusOr<Program> program =
      assembler.AssembleSource("main.masm", kProgram);
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<RunResult> result =
      RunProgram(*program, ProgramInputs{}, ExecutionOptions{});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_FALSE(result->stack.empty());
  EXPECT_EQ(result->stack[0].value(), 6u);
}

TEST(AssemblerTest, VirtualFilesServeTheProgramFile) {
  AssemblerOptions options = VirtualLibrary();
  options.virtual_files["no/such/dir/main.masm"] = kProgram;
  Assembler assembler(std::move(options));
  absl::StatusOr<Program> program =
      assembler.AssembleFile("no/such/dir/main.masm");
  ASSERT_TRUE(program.ok()) << program.status();
}

TEST(AssemblerTest, ErrorsInVirtualFilesNameTheVirtualPath) {
  AssemblerOptions options = VirtualLibrary();
  options.virtual_files["virtual/mylib/util/math.masm"] =
      "export.add3\n  add bogus_op\nend\n";
  Assembler assembler(std::move(options));
  absl::Status status =
      assembler.AssembleSource("main.masm", kProgram).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("virtual/mylib/util/math.masm:2:"));
}

TEST(AssemblerTest, MissingVirtualModuleIsReportedAtTheUseLine) {
  AssemblerOptions options;
  options.libraries = {{"mylib", "virtual/mylib"}};
  Assembler assembler(std::move(options));
  absl::Status status =
      assembler.AssembleSource("main.masm", kProgram).status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("main.masm:1:"));
  EXPECT_THAT(status.message(), HasSubstr("mylib::util::math"));
}

}  // namespace
}  // namespace flamefleet::vm
