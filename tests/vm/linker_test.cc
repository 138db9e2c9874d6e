// Tests of the assembler's Linker (vm/assembler/linker.h): module loading, name resolution,
// procedure ids and the linking questions the MAST builder asks.
#include "vm/assembler/linker.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/classic.h"
#include "vm/assembler/assembler.h"
#include "vm/assembler/program.h"
#include "vm/dialect.h"
#include "vm/dialects/v0_16/v0_16.h"
#include "vm/parser/ast.h"
#include "vm/parser/source_manager.h"

namespace flamefleet::vm {
namespace {

constexpr char kProgram[] = R"(use.lib::math
proc.helper
  push.1
end
begin
  exec.helper
  exec.math::add3
end
)";

constexpr char kMath[] = R"(export.add3
  add add
end
proc.private
  drop
end
export.twice
  exec.add3
end
export.::lib::math::add3->plus3
)";

constexpr char kOther[] = R"(export.plus
  add
end
)";

constexpr char kKernel[] = R"(export.kfoo
  push.2
end
proc.kprivate
  push.3
end
)";

class LinkerTest : public ::testing::Test {
 protected:
  LinkerTest() {
    options_.libraries = {{"lib", "lib"}, {"other", "other"}};
    options_.read_disk = false;
    options_.virtual_files["lib/math.masm"] = kMath;
    options_.virtual_files["other/ops.masm"] = kOther;
  }

  // Links `text` as the program; the linker keeps pointers into this fixture.
  absl::StatusOr<uint32_t> Link(const std::string& text) {
    sources_ = std::make_shared<SourceManager>();
    procedures_.clear();
    const uint32_t file = sources_->Add("main.masm", text);
    linker_ = std::make_unique<Linker>(options_, sources_, &procedures_);
    return linker_->LinkProgram(file);
  }

  ast::SourceLocation Loc() const { return ast::SourceLocation{0, 1, 1}; }

  // The module index of the program ($exec).
  size_t ProgramModule() const {
    for (size_t m = 0; m < linker_->num_modules(); ++m) {
      if (linker_->module(m).is_program) return m;
    }
    return ~size_t{0};
  }

  size_t ModuleByPath(const std::string& path) const {
    for (size_t m = 0; m < linker_->num_modules(); ++m) {
      if (linker_->module(m).path == path) return m;
    }
    return ~size_t{0};
  }

  AssemblerOptions options_ = testutil::ClassicOptions();
  std::shared_ptr<SourceManager> sources_;
  std::vector<ProcedureInfo> procedures_;
  std::unique_ptr<Linker> linker_;
};

TEST_F(LinkerTest, LinkProgramLoadsImportsAndNamesTheEntry) {
  absl::StatusOr<uint32_t> main_id = Link(kProgram);
  ASSERT_TRUE(main_id.ok()) << main_id.status();
  EXPECT_EQ(*main_id, 0u);
  ASSERT_EQ(procedures_.size(), 1u);
  EXPECT_EQ(procedures_[0].name, "$exec::$main");
  EXPECT_EQ(linker_->procedure(0).index, kEntryIndex);
  EXPECT_EQ(linker_->NumLocals(0), 0u);
  EXPECT_EQ(linker_->Body(0).size(), 2u);
  // The program and its import, loaded eagerly.
  ASSERT_EQ(linker_->num_modules(), 2u);
  EXPECT_NE(ModuleByPath("lib::math"), ~size_t{0});
  EXPECT_EQ(linker_->module(ModuleByPath("lib::math")).library, "lib");
}

TEST_F(LinkerTest, ResolveGivesIdsInReferenceOrder) {
  ASSERT_TRUE(Link(kProgram).ok());
  const size_t program = ProgramModule();
  absl::StatusOr<uint32_t> add3 = linker_->Resolve(program, "math::add3", Loc());
  absl::StatusOr<uint32_t> helper = linker_->Resolve(program, "helper", Loc());
  absl::StatusOr<uint32_t> quoted = linker_->Resolve(program, "\"helper\"", Loc());
  absl::StatusOr<uint32_t> absolute = linker_->Resolve(program, "::lib::math::add3", Loc());
  absl::StatusOr<uint32_t> reexport = linker_->Resolve(program, "math::plus3", Loc());
  ASSERT_TRUE(add3.ok() && helper.ok() && quoted.ok() && absolute.ok() && reexport.ok());
  EXPECT_EQ(*add3, 1u);
  EXPECT_EQ(*helper, 2u);
  EXPECT_EQ(*quoted, *helper);
  EXPECT_EQ(*absolute, *add3);
  EXPECT_EQ(*reexport, *add3);
  ASSERT_EQ(procedures_.size(), 3u);
  EXPECT_EQ(procedures_[1].name, "lib::math::add3");
  EXPECT_EQ(procedures_[2].name, "$exec::helper");
}

TEST_F(LinkerTest, ResolveRefusesUndefinedPrivateAndUnimportedNames) {
  ASSERT_TRUE(Link(kProgram).ok());
  const size_t program = ProgramModule();
  absl::Status undefined = linker_->Resolve(program, "nope", Loc()).status();
  EXPECT_EQ(undefined.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(undefined.message(), "undefined procedure 'nope'")) << undefined;
  absl::Status priv = linker_->Resolve(program, "math::private", Loc()).status();
  EXPECT_TRUE(
      absl::StrContains(priv.message(), "procedure 'private' of module 'lib::math' is private"))
      << priv;
  absl::Status alias = linker_->Resolve(program, "nomod::foo", Loc()).status();
  EXPECT_TRUE(absl::StrContains(alias.message(), "undefined module 'nomod'")) << alias;
  absl::Status root = linker_->Resolve(program, "0x1234", Loc()).status();
  EXPECT_TRUE(absl::StrContains(root.message(), "a MAST root cannot be used here")) << root;
}

TEST_F(LinkerTest, MissingImportIsReportedAtTheUseLine) {
  absl::Status s = Link("use.nolib::x\nbegin\n  push.1\nend\n").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "main.masm:1:")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "no library for namespace 'nolib'")) << s;
}

TEST_F(LinkerTest, SyscallNeedsAKernelAndAnExportedKernelProcedure) {
  ASSERT_TRUE(Link(kProgram).ok());
  ast::Instruction syscall;
  syscall.name = "syscall";
  syscall.target = "kfoo";
  absl::Status none = linker_->CheckInvocation(ProgramModule(), syscall);
  EXPECT_TRUE(absl::StrContains(none.message(), "no kernel was provided")) << none;

  options_.kernel_path = "kernel.masm";
  options_.virtual_files["kernel.masm"] = kKernel;
  ASSERT_TRUE(Link(kProgram).ok());
  EXPECT_TRUE(linker_->CheckInvocation(ProgramModule(), syscall).ok());
  absl::StatusOr<uint32_t> kfoo = linker_->ResolveInvocation(ProgramModule(), syscall);
  ASSERT_TRUE(kfoo.ok()) << kfoo.status();
  EXPECT_EQ(procedures_[*kfoo].name, "$kernel::kfoo");
  syscall.target = "kprivate";
  absl::Status priv = linker_->ResolveInvocation(ProgramModule(), syscall).status();
  EXPECT_EQ(priv.code(), absl::StatusCode::kInvalidArgument);
  // A kernel procedure of the kernel module itself: local names resolve there.
  EXPECT_TRUE(absl::StrContains(priv.message(), "kprivate")) << priv;
  // `syscall` inside the kernel is refused.
  EXPECT_FALSE(linker_->CheckInvocation(ModuleByPath("$kernel"), syscall).ok());
}

TEST_F(LinkerTest, CallsIntoAnotherLibraryLinkDynamically) {
  ASSERT_TRUE(Link("use.lib::math\nuse.other::ops\nbegin\n  push.1\nend\n").ok());
  const size_t program = ProgramModule();
  const size_t math = ModuleByPath("lib::math");
  absl::StatusOr<uint32_t> add3 = linker_->Resolve(program, "math::add3", Loc());
  absl::StatusOr<uint32_t> twice = linker_->Resolve(math, "twice", Loc());
  absl::StatusOr<uint32_t> plus = linker_->Resolve(program, "ops::plus", Loc());
  ASSERT_TRUE(add3.ok() && twice.ok() && plus.ok());
  EXPECT_TRUE(linker_->LinksDynamically(program, *add3));  // program -> library
  EXPECT_FALSE(linker_->LinksDynamically(math, *add3));    // within one library
  EXPECT_TRUE(linker_->LinksDynamically(math, *plus));     // library -> another library
  EXPECT_FALSE(linker_->LinksDynamically(program, 0));     // the program's own procedure
}

TEST_F(LinkerTest, RootLiteralsPreferTheProgramThenLibraries) {
  ASSERT_TRUE(Link(kProgram).ok());
  const size_t program = ProgramModule();
  absl::StatusOr<uint32_t> add3 = linker_->Resolve(program, "math::add3", Loc());
  absl::StatusOr<uint32_t> helper = linker_->Resolve(program, "helper", Loc());
  ASSERT_TRUE(add3.ok() && helper.ok());
  const Word shared{Felt(1), Felt(2), Felt(3), Felt(4)};
  const Word other{Felt(5), Felt(6), Felt(7), Felt(8)};
  std::vector<Word> roots(procedures_.size(), other);
  roots[*add3] = shared;
  roots[*helper] = shared;
  auto all = [&](uint32_t p) -> const Word* { return &roots[p]; };
  EXPECT_EQ(linker_->ResolveRootLiteral(shared, false, all), *helper);  // program first
  auto without_helper = [&](uint32_t p) -> const Word* {
    return p == *helper ? nullptr : &roots[p];  // helper not compiled
  };
  EXPECT_EQ(linker_->ResolveRootLiteral(shared, false, without_helper), *add3);
  EXPECT_FALSE(linker_->ResolveRootLiteral(Word{}, false, all).has_value());
  // A syscall literal only matches exported kernel procedures.
  EXPECT_FALSE(linker_->ResolveRootLiteral(shared, true, all).has_value());
}

TEST_F(LinkerTest, FindsConstantsAndAdviceMapEntries) {
  ASSERT_TRUE(Link("const.TEN=10\nadv_map.TABLE=[1,2]\nbegin\n  push.TEN\nend\n").ok());
  const size_t program = ProgramModule();
  const ast::ConstantValue* ten = linker_->FindConstant(program, "TEN");
  ASSERT_NE(ten, nullptr);
  EXPECT_EQ(linker_->FindConstant(program, "NINE"), nullptr);
  const ast::AdvMapEntry* table = linker_->FindAdvMapEntry(program, "TABLE");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->values, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(linker_->FindAdvMapEntry(program, "TEN"), nullptr);
}

// ------------------------------------------------------------------------------------------------
// The v0.25 module system. The spec is v0.25's with the v0.16 instruction table, so that these
// tests need only a few classic mnemonics and not the v0.25 rows.

const DialectSpec& V025WithClassicTable() {
  static const DialectSpec spec = [] {
    DialectSpec s = GetDialectSpec(Dialect::kV0_25);
    s.instructions = &v0_16::Instructions();
    return s;
  }();
  return spec;
}

constexpr char kCoreRoot[] = R"(pub mod math
mod hidden
)";
constexpr char kCoreMath[] = R"(pub mod u64
pub mod field
pub use {wrapping_add as add64} from core::math::u64
pub use {LIMBS as U64_LIMBS} from core::math::u64
)";
constexpr char kCoreU64[] = R"(pub const LIMBS = 2
const PRIVATE = 3
pub proc wrapping_add
  add
end
proc inner
  drop
end
pub proc twice
  exec.wrapping_add
  exec.self::leaf::go
end
)";

class V025LinkerTest : public LinkerTest {
 protected:
  V025LinkerTest() {
    options_.libraries = {{"core", "core"}};
    options_.virtual_files["core/mod.masm"] = kCoreRoot;
    options_.virtual_files["core/math/mod.masm"] = kCoreMath;
    options_.virtual_files["core/math/u64.masm"] = kCoreU64;
    // field lives in its own directory: core/math/field/mod.masm.
    options_.virtual_files["core/math/field/mod.masm"] = "pub proc mul\n  mul\nend\n";
    options_.virtual_files["core/math/undeclared.masm"] = "pub proc f\n  nop\nend\n";
    options_.virtual_files["core/hidden.masm"] = "pub proc h\n  nop\nend\n";
  }

  absl::StatusOr<uint32_t> LinkV025(const std::string& text) {
    sources_ = std::make_shared<SourceManager>();
    procedures_.clear();
    const uint32_t file = sources_->Add("main.masm", text);
    linker_ = std::make_unique<Linker>(options_, sources_, &procedures_, &V025WithClassicTable());
    return linker_->LinkProgram(file);
  }

  // The first line of the error of linking `text` and resolving `target` from the program.
  std::string ResolveError(const std::string& text, const std::string& target) {
    absl::StatusOr<uint32_t> main_id = LinkV025(text);
    absl::Status status = main_id.status();
    if (main_id.ok()) status = linker_->Resolve(ProgramModule(), target, Loc()).status();
    EXPECT_FALSE(status.ok());
    const std::string message(status.message());
    return message.substr(0, message.find('\n'));
  }
};

TEST_F(V025LinkerTest, ModMasmLayoutAndNames) {
  ASSERT_TRUE(LinkV025("use core::math::u64\nuse core::math::field\nbegin\n  nop\nend\n").ok());
  const size_t program = ProgramModule();
  absl::StatusOr<uint32_t> add = linker_->Resolve(program, "u64::wrapping_add", Loc());
  absl::StatusOr<uint32_t> mul = linker_->Resolve(program, "field::mul", Loc());
  ASSERT_TRUE(add.ok()) << add.status();
  ASSERT_TRUE(mul.ok()) << mul.status();
  EXPECT_EQ(procedures_[*add].name, "core::math::u64::wrapping_add");
  EXPECT_EQ(procedures_[*mul].name, "core::math::field::mul");
  EXPECT_EQ(procedures_[0].name, "$exec::$main");
  // The parents were loaded to check the `mod` declarations.
  EXPECT_NE(ModuleByPath("core"), ~size_t{0});
  EXPECT_NE(ModuleByPath("core::math"), ~size_t{0});
}

TEST_F(V025LinkerTest, ItemImportsOfProceduresAndConstants) {
  ASSERT_TRUE(LinkV025("use {wrapping_add, twice as double, LIMBS} from core::math::u64\n"
                       "use {U64_LIMBS as N} from core::math\n"
                       "begin\n  exec.wrapping_add\nend\n")
                  .ok());
  const size_t program = ProgramModule();
  absl::StatusOr<uint32_t> add = linker_->Resolve(program, "wrapping_add", Loc());
  absl::StatusOr<uint32_t> twice = linker_->Resolve(program, "double", Loc());
  ASSERT_TRUE(add.ok()) << add.status();
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_EQ(procedures_[*add].name, "core::math::u64::wrapping_add");
  EXPECT_EQ(procedures_[*twice].name, "core::math::u64::twice");
  const ast::ConstantValue* limbs = linker_->FindConstant(program, "LIMBS");
  ASSERT_NE(limbs, nullptr);
  EXPECT_EQ(limbs->felt, 2u);
  // Through the `pub use {LIMBS as U64_LIMBS}` re-export of core::math.
  const ast::ConstantValue* n = linker_->FindConstant(program, "N");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->felt, 2u);
}

TEST_F(V025LinkerTest, ItemReExportsResolveToTheirTarget) {
  ASSERT_TRUE(LinkV025("use core::math\nbegin\n  nop\nend\n").ok());
  absl::StatusOr<uint32_t> add = linker_->Resolve(ProgramModule(), "math::add64", Loc());
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_EQ(procedures_[*add].name, "core::math::u64::wrapping_add");
}

TEST_F(V025LinkerTest, RepeatCountsFromImportedConstants) {
  ASSERT_TRUE(
      LinkV025("use {LIMBS} from core::math::u64\nbegin\n  repeat.LIMBS\n    nop\n  end\nend\n")
          .ok());
  const auto& r = std::get<ast::Repeat>(linker_->Body(0).front().op);
  EXPECT_EQ(r.count, 2u);
  EXPECT_TRUE(r.count_constant.empty());
  EXPECT_EQ(ResolveError("begin\n  repeat.NOPE\n    nop\n  end\nend\n", "x"),
            "main.masm:2:3: undefined constant 'NOPE'");
}

TEST_F(V025LinkerTest, SubmodulesMustBeDeclared) {
  EXPECT_EQ(ResolveError("use core::math::undeclared\nbegin\n  nop\nend\n", "x"),
            "main.masm:1:5: module 'core::math::undeclared' is not declared: its parent module "
            "'core::math' must declare it with `pub mod undeclared`");
}

TEST_F(V025LinkerTest, SelfPathsAndPrivateItems) {
  options_.virtual_files["core/math/u64.masm"] = absl::StrCat("pub mod leaf\n", kCoreU64);
  options_.virtual_files["core/math/u64/leaf.masm"] = "pub proc go\n  nop\nend\n";
  ASSERT_TRUE(LinkV025("use core::math::u64\nbegin\n  nop\nend\n").ok());
  const size_t u64 = ModuleByPath("core::math::u64");
  ASSERT_NE(u64, ~size_t{0});
  absl::StatusOr<uint32_t> go = linker_->Resolve(u64, "self::leaf::go", Loc());
  ASSERT_TRUE(go.ok()) << go.status();
  EXPECT_EQ(procedures_[*go].name, "core::math::u64::leaf::go");
  // An item import of a private procedure fails when the import is linked (v0.25.7), at the
  // item's name.
  EXPECT_EQ(ResolveError("use {inner} from core::math::u64\nbegin\n  nop\nend\n", "inner"),
            "main.masm:1:6: private symbol reference: procedure 'inner' of module "
            "'core::math::u64' is private (declare it `pub proc`)");
}

TEST_F(V025LinkerTest, DeclaredSubmodulesAreInScopeInTheirParent) {
  ASSERT_TRUE(LinkV025("use core::math\nbegin\n  nop\nend\n").ok());
  const size_t math = ModuleByPath("core::math");
  ASSERT_NE(math, ~size_t{0});
  absl::StatusOr<uint32_t> add = linker_->Resolve(math, "u64::wrapping_add", Loc());
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_EQ(procedures_[*add].name, "core::math::u64::wrapping_add");
  EXPECT_EQ(ResolveError("use core::math\nbegin\n  nop\nend\n", "math::u64::inner"),
            "main.masm:1:1: procedure 'inner' of module 'core::math::u64' is private");
}

TEST_F(V025LinkerTest, PrivateSubmodulesAreVisibleOnlyInTheirParentsSubtree) {
  EXPECT_EQ(ResolveError("use core::hidden\nbegin\n  nop\nend\n", "x"),
            "main.masm:1:5: module 'core::hidden' is private: 'core' declares `mod hidden` "
            "without `pub`");
  // Inside the parent's subtree it is visible.
  ASSERT_TRUE(LinkV025("use core::math\nbegin\n  nop\nend\n").ok());
  absl::StatusOr<uint32_t> h =
      linker_->Resolve(ModuleByPath("core::math"), "::core::hidden::h", Loc());
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(procedures_[*h].name, "core::hidden::h");
}

TEST_F(V025LinkerTest, KernelProceduresMaySyscall) {
  options_.kernel_path = "kernel.masm";
  options_.virtual_files["kernel.masm"] = "pub proc k\n  push.1\nend\n";
  ASSERT_TRUE(LinkV025("begin\n  syscall.k\nend\n").ok());
  const size_t kernel = ModuleByPath("$kernel");
  ASSERT_NE(kernel, ~size_t{0});
  ast::Instruction syscall;
  syscall.name = "syscall";
  syscall.target = "k";
  syscall.loc = Loc();
  EXPECT_TRUE(linker_->CheckInvocation(kernel, syscall).ok());
}

TEST_F(V025LinkerTest, MissingModuleNamesBothLayouts) {
  const std::string error = ResolveError("use core::nothing\nbegin\n  nop\nend\n", "x");
  EXPECT_THAT(error, ::testing::HasSubstr("module 'core::nothing' is not declared"));
}

// Constants naming another module's constant by path are evaluated by the linker (v0.25.7
// resolves them at link time, through import aliases, submodules or absolute paths).
TEST_F(V025LinkerTest, ConstantsReferToOtherModulesByPath) {
  ASSERT_TRUE(LinkV025("use core::math::u64\n"
                       "const A = u64::LIMBS * 10 + B\n"
                       "const B = ::core::math::u64::LIMBS\n"
                       "begin\n  push.A\nend\n")
                  .ok());
  const ast::ConstantValue* a = linker_->FindConstant(ProgramModule(), "A");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->felt, 22u);
}

TEST_F(V025LinkerTest, ConstantPathErrors) {
  EXPECT_THAT(ResolveError("use core::math::u64\nconst A = u64::PRIVATE\nbegin\n  nop\nend\n", "x"),
              ::testing::HasSubstr("main.masm:2:11: constant 'u64::PRIVATE' is private"));
  EXPECT_THAT(ResolveError("use core::math::u64\nconst A = u64::NONE\nbegin\n  nop\nend\n", "x"),
              ::testing::HasSubstr("main.masm:2:11: undefined constant 'u64::NONE'"));
  EXPECT_THAT(ResolveError("const A = nowhere::X\nbegin\n  nop\nend\n", "x"),
              ::testing::HasSubstr("main.masm:1:11: invalid relative item path 'nowhere::X'"));
}

// v0.25.7 resolves every import at link time: an item import of a private constant or
// procedure fails even if nothing uses it, at the item's name (not its alias).
TEST_F(V025LinkerTest, ItemImportsOfPrivateItemsFail) {
  EXPECT_EQ(ResolveError("use {PRIVATE} from core::math::u64\nbegin\n  push.PRIVATE\nend\n", "x"),
            "main.masm:1:6: private symbol reference: constant 'PRIVATE' of module "
            "'core::math::u64' is private (declare it `pub const`)");
  EXPECT_EQ(ResolveError("use {LIMBS, inner as x} from core::math::u64\nbegin\n  nop\nend\n", "x"),
            "main.masm:1:13: private symbol reference: procedure 'inner' of module "
            "'core::math::u64' is private (declare it `pub proc`)");
  // Public items are fine.
  EXPECT_TRUE(LinkV025("use {LIMBS, twice} from core::math::u64\nbegin\n  nop\nend\n").ok());
}

// v0.25.7 parses a library module with its expected path, and a `namespace` declaration must
// name exactly that path (with or without the leading `::`).
TEST_F(V025LinkerTest, NamespaceDeclarationsMustMatchTheModulePath) {
  options_.virtual_files["core/math/u64.masm"] =
      absl::StrCat("namespace ::core::math::u64\n", kCoreU64);
  EXPECT_TRUE(LinkV025("use core::math::u64\nbegin\n  nop\nend\n").ok());
  options_.virtual_files["core/math/u64.masm"] =
      absl::StrCat("namespace core::math::u64\n", kCoreU64);
  EXPECT_TRUE(LinkV025("use core::math::u64\nbegin\n  nop\nend\n").ok());
  options_.virtual_files["core/math/u64.masm"] = absl::StrCat("namespace core::u64\n", kCoreU64);
  EXPECT_EQ(ResolveError("use core::math::u64\nbegin\n  nop\nend\n", "x"),
            "core/math/u64.masm:1:11: conflicting module namespace specification: expected "
            "'::core::math::u64', but got '::core::u64'");
  // A kernel is `$kernel`.
  options_.kernel_path = "kernel.masm";
  options_.virtual_files["kernel.masm"] = "namespace k\npub proc k\n  push.1\nend\n";
  EXPECT_EQ(ResolveError("begin\n  syscall.k\nend\n", "x"),
            "kernel.masm:1:11: conflicting module namespace specification: expected "
            "'::$kernel', but got '::k'");
  // A program is parsed without an expected path: its declaration is not checked.
  options_.kernel_path.clear();
  EXPECT_TRUE(LinkV025("namespace anything\nbegin\n  nop\nend\n").ok());
}

TEST_F(V025LinkerTest, ImportsAreResolvedIndependently) {
  EXPECT_THAT(
      ResolveError("use core::math\nuse math::u64\nbegin\n  nop\nend\n", "x"),
      ::testing::HasSubstr("main.masm:2:5: import target 'math::u64' cannot be resolved through "
                           "import 'math'"));
  // The original global path is fine.
  EXPECT_TRUE(LinkV025("use core::math\nuse core::math::u64\nbegin\n  nop\nend\n").ok());
}

}  // namespace
}  // namespace flamefleet::vm
