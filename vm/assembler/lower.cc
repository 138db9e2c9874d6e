#include "vm/assembler/lower.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"
#include "vm/assembler/instruction_table.h"
#include "vm/assembler/internal/lower_helpers.h"
#include "vm/assembler/opcodes.h"
#include "vm/crypto/blake3.h"
#include "vm/executor/system_events.h"
#include "vm/parser/ast.h"

namespace flamefleet::vm {
namespace lowering {
namespace {

uint64_t MaxOf(ImmType type) {
  switch (type) {
    case ImmType::kFelt:
      return kModulus - 1;
    case ImmType::kU32:
      return kU32Max;
    case ImmType::kU16:
      return 0xFFFF;
    case ImmType::kU8:
      return 0xFF;
  }
  return 0;
}

absl::string_view TypeName(ImmType type) {
  switch (type) {
    case ImmType::kFelt:
      return "a field element";
    case ImmType::kU32:
      return "a u32 value";
    case ImmType::kU16:
      return "a u16 value";
    case ImmType::kU8:
      return "a u8 value";
  }
  return "?";
}

}  // namespace

absl::Status Lowering::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(message);
}

absl::StatusOr<ast::ConstantValue> Lowering::Resolve(const std::string& name) const {
  if (!ctx_.resolve_constant) {
    return absl::InvalidArgumentError(absl::StrCat("undefined constant '", name, "'"));
  }
  absl::StatusOr<ast::ConstantValue> value = ctx_.resolve_constant(name);
  if (absl::IsNotFound(value.status())) {
    return absl::InvalidArgumentError(absl::StrCat("undefined constant '", name, "'"));
  }
  return value;
}

absl::StatusOr<Imm> Lowering::Scalar(const ast::Immediate& imm, ImmType type) const {
  Imm result;
  switch (imm.kind) {
    case ast::Immediate::Kind::kLiteral:
      result = Imm{imm.value, true};
      break;
    case ast::Immediate::Kind::kConstant: {
      FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstantValue value, Resolve(imm.text));
      // An event("...") constant (v0.25) is its id wherever a felt is expected (upstream
      // const_eval.rs); u32 and smaller immediates take plain integers only.
      const bool event_as_felt =
          value.kind == ast::ConstantValue::Kind::kEvent && type == ImmType::kFelt;
      if (value.kind != ast::ConstantValue::Kind::kFelt && !event_as_felt) {
        return Error(absl::StrCat("invalid immediate for '", inst_.name, "': constant '", imm.text,
                                  "' is not ", TypeName(type)));
      }
      result = Imm{value.felt, false};
      break;
    }
    case ast::Immediate::Kind::kWord:
    case ast::Immediate::Kind::kString:
    case ast::Immediate::Kind::kEvent:
      return Error(
          absl::StrCat("invalid immediate for '", inst_.name, "': expected ", TypeName(type)));
  }
  if (result.value > MaxOf(type)) {
    return Error(absl::StrCat("invalid immediate for '", inst_.name, "': ", result.value,
                              " is not ", TypeName(type)));
  }
  return result;
}

absl::StatusOr<std::optional<Imm>> Lowering::OptionalImm(ImmType type) const {
  if (inst_.args.empty()) return std::optional<Imm>();
  if (inst_.args.size() > 1) return TooManyImmediates();
  FLAMEFLEET_ASSIGN_OR_RETURN(Imm imm, Scalar(inst_.args[0], type));
  return std::optional<Imm>(imm);
}

absl::StatusOr<Imm> Lowering::RequiredImm(ImmType type) const {
  if (inst_.args.empty()) {
    return Error(absl::StrCat("'", inst_.name, "' requires an immediate value"));
  }
  if (inst_.args.size() > 1) return TooManyImmediates();
  return Scalar(inst_.args[0], type);
}

absl::StatusOr<uint64_t> Lowering::StackIndex(uint64_t lo, uint64_t hi,
                                              std::optional<uint64_t> dflt) const {
  if (inst_.args.empty()) {
    if (dflt) return *dflt;
    return Error(absl::StrCat("'", inst_.name, "' requires an index"));
  }
  if (inst_.args.size() > 1) return TooManyImmediates();
  const ast::Immediate& imm = inst_.args[0];
  if (imm.kind != ast::Immediate::Kind::kLiteral) {
    return Error(absl::StrCat("'", inst_.name, "' requires a literal index"));
  }
  if (imm.value < lo || imm.value > hi) {
    return Error(absl::StrCat("invalid index for '", inst_.name, "': ", imm.value,
                              " is not in the range ", lo, "..=", hi));
  }
  return imm.value;
}

absl::Status Lowering::TooManyImmediates() const {
  return Error(absl::StrCat("too many immediate values for '", inst_.name, "'"));
}

absl::Status Lowering::NoImmediates() const {
  if (!inst_.args.empty()) {
    return Error(absl::StrCat("'", inst_.name, "' takes no immediate value"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> Lowering::ErrorCode() const {
  if (!inst_.error) return uint64_t{0};
  const ast::Immediate& err = *inst_.error;
  switch (err.kind) {
    case ast::Immediate::Kind::kString:
      return ErrorCodeFromMessage(err.text);
    case ast::Immediate::Kind::kConstant: {
      FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstantValue value, Resolve(err.text));
      if (value.kind != ast::ConstantValue::Kind::kString) {
        return Error(
            absl::StrCat("invalid error message: constant '", err.text, "' is not a string"));
      }
      return ErrorCodeFromMessage(value.text);
    }
    case ast::Immediate::Kind::kLiteral:
    case ast::Immediate::Kind::kWord:
    case ast::Immediate::Kind::kEvent:
      break;
  }
  return Error("invalid error message: expected a quoted string or a string constant");
}

absl::Status Lowering::UnknownInstruction() const {
  // Immediates are refused before the name, as the assembler always did.
  FLAMEFLEET_RETURN_IF_ERROR(NoImmediates());
  return Error(absl::StrCat("unknown instruction '", inst_.name, "'"));
}

absl::StatusOr<uint64_t> Lowering::EventId(SystemEventHandler handler) const {
  const std::optional<uint64_t> id = events().IdOf(handler);
  if (!id) {
    return absl::InternalError(
        absl::StrCat("'", inst_.name, "' needs a system event the dialect does not have"));
  }
  return *id;
}

}  // namespace lowering

absl::Status LowerInstruction(const InstructionTable& table, const ast::Instruction& inst,
                              const LowerContext& ctx, std::vector<LoweredOp>* out) {
  const InstructionRow* row = table.FindForInstruction(inst.name);
  if (row != nullptr && row->lower == nullptr) {
    return absl::InternalError(
        absl::StrCat("'", inst.name, "' produces a MAST node and is not lowered per instruction"));
  }
  // Only the assertion rows (Form::kErr) take `.err=`; this is checked before the name is.
  if (inst.error && (row == nullptr || row->form != Form::kErr)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", inst.name, "' does not take an error message"));
  }
  lowering::Lowering l(table, inst, ctx, out);
  if (row == nullptr) return l.UnknownInstruction();
  return row->lower(l);
}

uint64_t ErrorCodeFromMessage(absl::string_view message) {
  const std::array<uint8_t, 32> digest = Blake3(message);
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | digest[i];
  return v % lowering::kModulus;
}

}  // namespace flamefleet::vm
