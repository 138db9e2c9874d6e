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

}  // namespace

absl::StatusOr<ast::ConstantValue> ApplyConstOp(Op op, absl::string_view op_text,
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
  switch (op) {
    case Op::kAdd:
      out.felt = (a + b).value();
      break;
    case Op::kSub:
      out.felt = (a - b).value();
      break;
    case Op::kMul:
      out.felt = (a * b).value();
      break;
    case Op::kDiv:
      if (b.value() == 0) return error(loc, "division by zero");
      out.felt = (a * b.Inverse()).value();
      break;
    case Op::kIntDiv:
      if (b.value() == 0) return error(loc, "division by zero");
      out.felt = a.value() / b.value();
      break;
    default:
      return error(loc, "unsupported operator");
  }
  return out;
}

absl::StatusOr<std::optional<ast::ConstantValue>> EvaluateConstExpr(const ast::ConstExpr& expr,
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
    FLAMEFLEET_ASSIGN_OR_RETURN(ast::ConstantValue out, ApplyConstOp(node->op, OpText(node->op),
                                                                     *lhs, *rhs, node->loc, error));
    values.emplace_back(std::move(out));
  }
  return std::move(values.back());
}

}  // namespace flamefleet::vm
