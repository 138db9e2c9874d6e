// Constant evaluation shared by the parser and the linker: v0.25 constants may name constants
// defined later in their module or in other modules, so the parser keeps such expressions as
// `ast::ConstExpr` trees and they are evaluated once every name they use can be looked up.
//
//   auto lookup = [&](const ast::ConstExpr& ref) -> absl::StatusOr<std::optional<ConstantValue>> {
//     ...  // the referenced constant's value, nullopt (not known yet) or an error
//   };
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::optional<ast::ConstantValue> v,
//                               EvaluateConstExpr(expr, rules.const_arithmetic, lookup, error));
#ifndef FLAMEFLEET_VM_PARSER_CONST_EVAL_H_
#define FLAMEFLEET_VM_PARSER_CONST_EVAL_H_

#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "vm/parser/ast.h"
#include "vm/parser/syntax_rules.h"

namespace flamefleet::vm {

// Formats an error at a source location (SourceManager::Format) as InvalidArgument.
using ConstErrorFn = absl::FunctionRef<absl::Status(ast::SourceLocation, absl::string_view)>;
// Returns the value of the constant a kRef node names, nullopt when it cannot be known yet, or
// an error (undefined, private, cyclic).
using ConstLookupFn =
    absl::FunctionRef<absl::StatusOr<std::optional<ast::ConstantValue>>(const ast::ConstExpr&)>;

// Applies binary operator `op` (kAdd ... kIntDiv) to two known values under `arithmetic` (see
// ConstArithmetic: field arithmetic, or checked integers with `/` by the field inverse; `//` is
// integer division in both). Returns InvalidArgument (via `error`, at `loc`) for non-felt
// operands, a division by zero, or (checked integers) a result below 0 or >= p; `op_text` names
// the operator in the message.
absl::StatusOr<ast::ConstantValue> ApplyConstOp(ast::ConstExpr::Op op, absl::string_view op_text,
                                                ConstArithmetic arithmetic,
                                                const ast::ConstantValue& lhs,
                                                const ast::ConstantValue& rhs,
                                                ast::SourceLocation loc, ConstErrorFn error);

// Evaluates `expr` without recursion on its depth (so any expression the parser built is safe),
// calling `lookup` for each reference and ApplyConstOp (under `arithmetic`) for each operator.
// Returns the value, nullopt if some reference is not known yet, or the first error.
absl::StatusOr<std::optional<ast::ConstantValue>> EvaluateConstExpr(const ast::ConstExpr& expr,
                                                                    ConstArithmetic arithmetic,
                                                                    ConstLookupFn lookup,
                                                                    ConstErrorFn error);

}  // namespace flamefleet::vm

#endif  // FLAMEFLEET_VM_PARSER_CONST_EVAL_H_
