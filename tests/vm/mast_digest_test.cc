// MAST roots (v0.16 digests) of assembled procedures. Expected values were produced by a
// reference model of the v0.16 assembler (one that reproduces the v0.16 library digests) and are
// written out here; the test does not depend on the model.
#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tests/testing/classic.h"
#include "vm/assembler/assembler.h"
#include "vm/assembler/mast.h"
#include "vm/assembler/program.h"

namespace flamefleet::vm {
namespace {

using Digest = std::array<uint64_t, 4>;

Digest RootOf(const Program& program, const std::string& name) {
  for (const ProcedureInfo& p : program.procedures) {
    if (p.name == name) {
      return {p.mast_root[0].value(), p.mast_root[1].value(), p.mast_root[2].value(),
              p.mast_root[3].value()};
    }
  }
  ADD_FAILURE() << "no procedure " << name;
  return {};
}

Program Assemble(const std::string& text) {
  Assembler assembler(testutil::ClassicOptions());
  absl::StatusOr<Program> program = assembler.AssembleSource("main.masm", text);
  EXPECT_TRUE(program.ok()) << program.status();
  return program.ok() ? *std::move(program) : Program{};
}

TEST(MastDigestTest, SingleBlock) {
  Program p = Assemble("begin\n push.1 push.2 add\nend\n");
  EXPECT_EQ(RootOf(p, "$exec::$main"), (Digest{10590713464951180479ULL, 12160189095910759890ULL,
                                               16887974655121798560ULL, 3324878740855725239ULL}));
}

TEST(MastDigestTest, LocalsLoopsCallsMultiBatchBlocksAndErrorCodes) {
  // bar is a 2-batch block with an EMIT immediate; main has SPLIT, LOOP, CALL, JOIN and an
  // error code (not hashed).
  Program p = Assemble(R"(
proc.foo.2
    loc_store.0 loc_load.0 mul.3
end
proc.bar
    repeat.20 push.7 add dup drop swap swap end
    emit.1234 push.0 drop
end
begin
    push.5 exec.foo push.1
    if.true
        call.bar
    else
        push.1 while.true push.0 end
    end
    exec.bar
    push.3 u32assert2.err="boom" drop
end
)");
  EXPECT_EQ(RootOf(p, "$exec::foo"), (Digest{17692059563853635997ULL, 13521143976298273205ULL,
                                             5524907486376737065ULL, 11175260612681448998ULL}));
  EXPECT_EQ(RootOf(p, "$exec::bar"), (Digest{1298063329462581689ULL, 10161093202884190274ULL,
                                             12017105693688532943ULL, 18239012197123816835ULL}));
  EXPECT_EQ(RootOf(p, "$exec::$main"), (Digest{17247118074296593610ULL, 10755374335593141659ULL,
                                               3895491531495175567ULL, 7232236221039275288ULL}));
}

TEST(MastDigestTest, ExecOnlyProcedureSharesItsCalleesRoot) {
  Program p = Assemble(R"(
proc.inner
    push.1 add
end
proc.outer
    exec.inner
end
begin
    push.1 if.false exec.outer else call.inner end
    push.10 dup.2 repeat.3 exec.inner end dropw
end
)");
  const Digest inner{16050081949729140296ULL, 17348959972848396070ULL, 7701503337001481919ULL,
                     17979956137801310292ULL};
  EXPECT_EQ(RootOf(p, "$exec::inner"), inner);
  EXPECT_EQ(RootOf(p, "$exec::outer"), inner);
  EXPECT_EQ(RootOf(p, "$exec::$main"), (Digest{17525755705193518265ULL, 14490400460582227531ULL,
                                               1178092134932265348ULL, 2613284800004365840ULL}));
}

TEST(MastDigestTest, ProcrefAndDynNodes) {
  Program p = Assemble(R"(
proc.target
    mul.7
end
begin
    procref.target
    mem_storew.100 dropw
    push.100 dynexec
    push.100 dyncall
    drop
end
)");
  const Digest target{13975833391190678484ULL, 906913048468217869ULL, 5956713561529196568ULL,
                      5568141610020945525ULL};
  EXPECT_EQ(RootOf(p, "$exec::target"), target);
  EXPECT_EQ(RootOf(p, "$exec::$main"), (Digest{10914855846842017020ULL, 13638581571904081024ULL,
                                               15732534013594511502ULL, 6604551034116902926ULL}));
  ASSERT_EQ(p.dyn_targets.size(), 2u);  // target and $main
  bool found = false;
  for (const DynTarget& t : p.dyn_targets) found |= t.digest == target;
  EXPECT_TRUE(found);
}

TEST(MastDigestTest, DynAloneIsTheDynConstant) {
  Program p = Assemble("begin\n dynexec\nend\n");
  // The constant digests of DYN and DYNCALL nodes (written out: they must not move).
  const Word dyn = {Felt(8115106948140260551ULL), Felt(13491227816952616836ULL),
                    Felt(15015806788322198710ULL), Felt(16575543461540527115ULL)};
  const Word dyncall = {Felt(8751004906421739448ULL), Felt(13469709002495534233ULL),
                        Felt(12584249374630430826ULL), Felt(7624899870831503004ULL)};
  EXPECT_EQ(p.procedures[p.entry_procedure].mast_root, dyn);
  Program q = Assemble("begin\n dyncall\nend\n");
  EXPECT_EQ(q.procedures[q.entry_procedure].mast_root, dyncall);
}

TEST(MastDigestTest, ExternalNodesOfLibraryCallsAndRootLiterals) {
  // A dynamically linked library's procedures and a MAST-root literal become EXTERNAL nodes
  // that carry the callee's digest: main's root depends on them (never merged into blocks).
  AssemblerOptions options = testutil::ClassicOptions();
  options.libraries = {{"xl", "xl"}};
  options.read_disk = false;
  options.virtual_files["xl/ops.masm"] = R"(
export.inc
    add.1
end
export.twice
    dup add
    push.1 if.true push.2 mul else push.3 end
end
)";
  options.virtual_files["main.masm"] = R"(
use.xl::ops
proc.local_one
    push.9 drop
end
begin
    push.1
    exec.ops::inc
    exec.ops::twice
    call.ops::inc
    exec.local_one
    exec.0x0100000000000000020000000000000003000000000000000400000000000000
end
)";
  absl::StatusOr<Program> p = Assembler(options).AssembleFile("main.masm");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(RootOf(*p, "xl::ops::inc"), (Digest{11848160635611330839ULL, 588277511402887074ULL,
                                                17855636077955410758ULL, 2937302364866844842ULL}));
  EXPECT_EQ(RootOf(*p, "xl::ops::twice"), (Digest{13470346064490803420ULL, 17360185376620396588ULL,
                                                  2782634541288104089ULL, 1727748223690461592ULL}));
  EXPECT_EQ(RootOf(*p, "$exec::$main"), (Digest{10789990283287504571ULL, 10014291421252847166ULL,
                                                11316618663097561547ULL, 1782737992782963993ULL}));
}

}  // namespace
}  // namespace flamefleet::vm
