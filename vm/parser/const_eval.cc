#include "vm/parser/const_eval.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "vm/felt.h"

namespace flamefleet::vm {
namespace {

using Op = ast::ConstExpr::Op;

absl::string_view OpText(Op op) {
  switch (op) {
    case Op::kAdd:
      return "+";
    case Op::kSub:
      return "-";
    case Op::kMul:
      return "*";
    case Op::kDiv:
      return "/";
    case Op::kIntDiv:
      return "//";
    default:
      return "?";
  }
}

// v0.16.4 ConstantExpr::try_fold: Felt arithmetic.
absl::StatusOr<uint64_t> FieldOp(Op op, Felt a, Felt b, ast::SourceLocation loc,
                                 ConstErrorFn error) {
  switch (op) {
    case Op::kAdd:
      return (a + b).value();
    case Op::kSub:
      return (a - b).value();
    case Op::kMul:
      return (a * b).value();
    case Op::kDiv:
      if (b.value() == 0) return error(loc, "division by zero");
      return (a * b.Inverse()).value();
    case Op::kIntDiv:
      if (b.value() == 0) return error(loc, "division by zero");
      return a.value() / b.value();
    default:
      return error(loc, "unsupported operator");
  }
}

// v0.25.7 const eval (ast/constants/eval.rs): IntValue::checked_{add,sub,mul,div} on the
// canonical integers, where u64 overflow, a negative difference and a result >= p all fail
// with ConstExprOverflow; `/` divides in the field (Felt / Felt).
absl::StatusOr<uint64_t> CheckedIntegerOp(Op op, Felt a, Felt b, ast::SourceLocation loc,
                                          ConstErrorFn error) {
  constexpr absl::string_view kOverflow =
      "invalid constant expression: value is larger than expected range";
  constexpr absl::string_view kDivisionByZero = "invalid constant expression: division by zero";
  const uint64_t x = a.value(), y = b.value();
  uint64_t out = 0;
  switch (op) {
    case Op::kAdd:
      if (__builtin_add_overflow(x, y, &out) || out >= Felt::kModulus) {
        return error(loc, kOverflow);
      }
      return out;
    case Op::kSub:
      if (y > x) return error(loc, kOverflow);
      return x - y;
    case Op::kMul:
      if (__builtin_mul_overflow(x, y, &out) || out >= Felt::kModulus) {
        return error(loc, kOverflow);
      }
      return out;
    case Op::kDiv:
      if (y == 0) return error(loc, kDivisionByZero);
      return (a * b.Inverse()).value();
    case Op::kIntDiv:
      if (y == 0) return error(loc, kDivisionByZero);
      return x / y;
    default:
      return error(loc, "unsupported operator");
  }
}

}  // namespace

absl::StatusOr<ast::ConstantValue> ApplyConstOp(Op op, absl::string_view op_text,
                                                ConstArithmetic arithmetic,
                                                const ast::ConstantValue& lhs,
                                                const ast::ConstantValue& rhs,
                                                ast::SourceLocation loc, ConstErrorFn error) {
  using Kind = ast::ConstantValue::Kind;
  if (lhs.kind != Kind::kFelt || rhs.kind != Kind::kFelt) {
    return error(
        loc, absl::StrCat("operator '", op_text, "' needs field elements, not words or strings"));
  }
  const Felt a(lhs.felt), b(rhs.felt);
  ast::ConstantValue out;
  switch (arithmetic) {
    case ConstArithmetic::kField: {
      FLAMEFLEET_ASSIGN_OR_RETURN(out.felt, FieldOp(op, a, b, loc, error));
      break;
    }
    case ConstArithmetic::kCheckedInteger: {
      FLAMEFLEET_ASSIGN_OR_RETURN(out.felt, CheckedIntegerOp(op, a, b, loc, error));
      break;
    }
  }
  return out;
}

absl::StatusOr<std::optional<ast::ConstantValue>> EvaluateConstExpr(const ast::ConstExpr& expr,
                                                                    ConstArithmetic arithmetic,
                                                                    ConstLookupFn lookup,
                                                                    ConstErrorFn error) {
  // Post-order walk with explicit stacks: `todo` holds (node, operands pushed?) and `values`
  // the results of finished nodes (nullopt: not known yet).
  std::vector<std::pair<const ast::ConstExpr*, bool>> todo;
  std::vector<std::optional<ast::ConstantValue>> values;
  todo.emplace_back(&expr, false);
  while (!todo.empty()) {
    auto [node, expanded] = todo.back();
    todo.pop_back();
    switch (node->op) {
      case Op::kValue:
        values.emplace_back(node->value);
        continue;
      case Op::kRef: {
        FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<ast::ConstantValue> v, lookup(*node));
        values.push_back(std::move(v));
        continue;
      }
      default:
        break;
    }
    if (node->operands.size() != 2) return error(node->loc, "malformed constant expression");
    if (!expanded) {
      todo.emplace_back(node, true);
      todo.emplace_back(&node->operands[1], false);
      todo.emplace_back(&node->operands[0], false);
      continue;
    }
    std::optional<ast::ConstantValue> rhs = std::move(values.back());
    values.pop_back();
    std::optional<ast::ConstantValue> lhs = std::move(values.back());
    values.pop_back();
    if (!lhs.has_value() || !rhs.has_value()) {
      values.emplace_back(std::nullopt);
      continue;
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(
        ast::ConstantValue out,
        ApplyConstOp(node->op, OpText(node->op), arithmetic, *lhs, *rhs, node->loc, error));
    values.emplace_back(std::move(out));
  }
  return std::move(values.back());
}

}  // namespace flamefleet::vm
