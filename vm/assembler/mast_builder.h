// MastBuilder: the rule-driven half of assembly. It turns procedure bodies into MAST nodes:
// instructions are lowered to native operations and collected into basic blocks, `if`/`while`
// become SPLIT/LOOP nodes (the dialect's loop shape; `do ... while` a LOOP), `repeat` is unrolled,
// exec/call/syscall/dynexec/dyncall/procref become the nodes or operations they stand for,
// contiguous blocks are merged and a body's nodes are joined into a balanced JOIN tree. Every
// dialect-specific choice comes from the MastRules (packing, merging, loop shape, locals, entry
// prologue, DYN digests), the wire opcode table and the Hasher it is given; names are resolved
// through the Linker.
//
// Internal to the assembler (vm/assembler/assembler.cc drives it).
//
//   MastBuilder builder(linker, options, limits, *sources, rules, wire, hasher, &program);
//   FLAMEFLEET_ASSIGN_OR_RETURN(MastItem root, builder.CompileProcedure(main_id, loc));
//   builder.ResolveRootLiterals();
//   FLAMEFLEET_RETURN_IF_ERROR(Linearize(builder.forest(), roots, entry, &program));
#ifndef FLAMEFLEET_VM_ASSEMBLER_MAST_BUILDER_H_
#define FLAMEFLEET_VM_ASSEMBLER_MAST_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vm/assembler/assembler.h"
#include "vm/assembler/linker.h"
#include "vm/assembler/lower.h"
#include "vm/assembler/mast.h"
#include "vm/assembler/mast_rules.h"
#include "vm/assembler/opcodes.h"
#include "vm/assembler/program.h"
#include "vm/crypto/hasher.h"
#include "vm/parser/ast.h"
#include "vm/parser/source_manager.h"

namespace flamefleet::vm {

// Returns DeadlineExceeded once `limits.deadline` has passed, OK before.
absl::Status CheckAssemblyDeadline(const AssembleLimits& limits);

// Builds the MAST forest of one assembly. Not thread-safe.
class MastBuilder {
 public:
  // Creates a builder that resolves names through `linker` and writes source ops, error
  // messages and procedure MAST roots into `program` (whose procedure table the linker fills).
  // Every reference argument must outlive the builder; `program` must not be null.
  MastBuilder(Linker& linker, const AssemblerOptions& options, const AssembleLimits& limits,
              const SourceManager& sources, const MastRules& rules, const WireOpcodeTable& wire,
              const Hasher& hasher, Program* program);

  // Compiles procedure `id` once (later calls return the same root) and every procedure it
  // invokes; `use` is where it is invoked from, for errors. Returns the body's root item.
  // Returns InvalidArgument (file:line:col) for assembly errors, including recursion,
  // ResourceExhausted past a size limit, DeadlineExceeded after limits.deadline.
  absl::StatusOr<MastItem> CompileProcedure(uint32_t id, const ast::SourceLocation& use);

  // Points every MAST-root literal's EXTERNAL node at the compiled procedure with that root (see
  // Linker::ResolveRootLiteral); unmatched literals trap when reached, as on the VM. CALL and
  // SYSCALL nodes over such a literal name the resolved procedure. Call after every procedure
  // is compiled.
  void ResolveRootLiterals();

  // Returns the advice-map key of an entry: explicit, or the hasher's hash of its values.
  Word AdvMapKey(const ast::AdvMapEntry& e) const;

  // Returns whether procedure `id` has been compiled.
  bool compiled(uint32_t id) const;
  // Returns the root item of procedure `id`, or {} if it has not been compiled.
  MastItem root(uint32_t id) const;
  // Returns whether the program contains DYN or DYNCALL.
  bool has_dyn() const { return has_dyn_; }
  MastForest& forest() { return forest_; }
  const MastForest& forest() const { return forest_; }

 private:
  // What the compilation of one procedure body needs to know.
  struct BodyContext {
    size_t module = 0;
    uint32_t procedure = 0;
    LowerContext lower;
    std::vector<LoweredOp> prologue;
    std::vector<LoweredOp> epilogue;
    uint32_t locals_source = 0;
  };
  // The nodes of a body so far and its open basic block.
  struct BodyParts {
    std::vector<MastItem> items;
    std::vector<LoweredOp> ops;
    std::vector<OpOrigin> origins;
  };
  enum class State : uint8_t { kNew, kCompiling, kDone };
  struct ProcedureState {
    State state = State::kNew;
    // The body's root: a node, plus the procedures entered first when the body is a single
    // `exec` of another procedure (then the real MAST root is that procedure's root node).
    MastItem root;
  };
  struct RootLiteral {
    uint32_t node;  // the EXTERNAL node
    bool syscall;
  };

  absl::Status Error(const ast::SourceLocation& loc, absl::string_view message) const;
  ProcedureState& StateOf(uint32_t id);
  BodyContext MakeContext(uint32_t id);
  // Adds a source op; its mnemonic is text's first `mnemonic_size` characters (0: all of it).
  uint32_t AddSource(const ast::SourceLocation& loc, std::string text, size_t mnemonic_size = 0);
  absl::Status CountWork();
  absl::StatusOr<uint32_t> AddNode(MastNode node);
  absl::StatusOr<uint32_t> MakeBlock(std::vector<LoweredOp> ops, std::vector<OpOrigin> origins);
  absl::StatusOr<uint32_t> MakeBlockOrTraces(std::vector<LoweredOp> ops,
                                             std::vector<OpOrigin> origins);
  absl::Status CloseBlock(BodyParts& parts);
  absl::StatusOr<MastItem> CompileBody(const ast::Block& body, const BodyContext& ctx,
                                       bool is_root);
  absl::StatusOr<MastItem> CompileBody(const ast::Block& body, const ast::Block* more,
                                       const BodyContext& ctx, bool is_root);
  absl::Status CompileNodes(const ast::Block& body, const BodyContext& ctx, BodyParts& parts);
  absl::StatusOr<uint32_t> NoopBlock();
  absl::Status CompileInstruction(const ast::Instruction& inst, const BodyContext& ctx,
                                  BodyParts& parts);
  absl::Status CompileInvocation(const ast::Instruction& inst, const BodyContext& ctx,
                                 BodyParts& parts);
  absl::Status CompileProcRef(const ast::Instruction& inst, const BodyContext& ctx,
                              BodyParts& parts);
  absl::StatusOr<MastItem> CompileIfElse(const ast::IfElse& ifelse, const BodyContext& ctx);
  absl::StatusOr<MastItem> CompileWhile(const ast::While& loop, const BodyContext& ctx);
  absl::StatusOr<MastItem> CompileDoWhile(const ast::DoWhile& loop, const BodyContext& ctx);
  absl::Status CompileRepeat(const ast::Repeat& rep, const BodyContext& ctx, BodyParts& parts);
  absl::StatusOr<MastItem> Invoke(const BodyContext& ctx, const ast::Instruction& inst);
  void RecordErrorMessage(const ast::Instruction& inst, const BodyContext& ctx);
  absl::StatusOr<std::vector<MastItem>> MergeBlocks(std::vector<MastItem> items);
  absl::StatusOr<uint32_t> ConcatTraces(uint32_t a, uint32_t b);
  absl::StatusOr<std::vector<MastItem>> AttachTraces(std::vector<MastItem> items,
                                                     uint32_t* trailing);
  absl::StatusOr<MastItem> JoinItems(std::vector<MastItem> items);

  Linker& linker_;
  const AssemblerOptions& options_;
  const AssembleLimits& limits_;
  const SourceManager& sources_;
  const MastRules& rules_;
  Program* program_;  // never null
  MastForest forest_;
  uint64_t work_ = 0;                       // units of work done, for the deadline checks
  uint64_t repeat_ops_ = 0;                 // expanded sizes of the repeats compiled so far
  std::vector<ProcedureState> procedures_;  // by procedure id; grows with the linker's table
  bool has_dyn_ = false;
  static constexpr uint32_t kNoNode = ~uint32_t{0};
  uint32_t noop_block_ = kNoNode;  // the shared [NOOP] block, once made
  std::vector<RootLiteral> root_literals_;
};

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_ASSEMBLER_MAST_BUILDER_H_
