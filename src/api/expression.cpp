#include "tessera/api/expression.hpp"

#include <array>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "expression_parser.hpp"
#include "expression_scalars.hpp"
#include "tessera/api/creation.hpp"
#include "tessera/api/elementwise.hpp"
#include "tessera/api/reduction.hpp"

namespace tessera {
namespace {

using expression::FunctionInfo;
using expression::FunctionKind;
using expression::SyntaxNode;
using Inputs = std::map<std::string, Array, std::less<>>;

// What a sub-expression evaluates to: an array, or a number no array has met yet.
struct Value {
  std::optional<Array> array;
  Scalar scalar;
};

constexpr std::array<std::pair<std::string_view, double>, 4> kConstants{{
    {"pi", std::numbers::pi},
    {"e", std::numbers::e},
    {"nan", std::numeric_limits<double>::quiet_NaN()},
    {"inf", std::numeric_limits<double>::infinity()},
}};

// The dtype of an array made of two Python numbers (where(c, 1, 0.5)): complex128 if
// either is complex, float64 if either is a float, else int64 unless both are bool.
DType PythonDType(const Scalar& x, const Scalar& y) {
  if (x.kind() == ScalarKind::kComplex || y.kind() == ScalarKind::kComplex) return complex128;
  if (x.kind() == ScalarKind::kFloat || y.kind() == ScalarKind::kFloat) return float64;
  if (x.kind() == ScalarKind::kBool && y.kind() == ScalarKind::kBool) return bool_;
  return int64;
}

class Evaluator {
 public:
  Evaluator(std::string_view text, const Inputs& inputs) : text_(text), inputs_(inputs) {}

  Value Evaluate(const SyntaxNode& node) {
    switch (node.kind) {
      case SyntaxNode::Kind::kNumber:
        return Value{std::nullopt, node.number};
      case SyntaxNode::Kind::kName:
        return Name(node);
      case SyntaxNode::Kind::kNone:
        Fail(node.column, "None is only allowed as axis=None");
      case SyntaxNode::Kind::kTuple:
        Fail(node.column,
             "a tuple is only allowed as a reduction's axis, e.g. sum(x, axis=(0, 1))");
      case SyntaxNode::Kind::kUnary:
        return Unary(node, node.function, node.arguments[0]);
      case SyntaxNode::Kind::kBinary:
        return Binary(node, node.function, node.arguments[0], node.arguments[1]);
      case SyntaxNode::Kind::kCall:
        return Call(node);
    }
    Fail(node.column, "cannot evaluate this");
  }

  [[noreturn]] void Fail(int column, std::string reason) const {
    throw ExpressionError(text_, column, std::move(reason));
  }

 private:
  // Runs `build` (an Array-building call), turning tessera's InvalidArgument (shapes
  // that do not broadcast, a dtype a function refuses) into an error at `node`.
  template <class Build>
  Value Built(const SyntaxNode& node, Build&& build) const {
    try {
      return Value{build(), {}};
    } catch (const ExpressionError&) {
      throw;
    } catch (const InvalidArgument& error) {
      Fail(node.column,
           (node.kind == SyntaxNode::Kind::kCall ? node.text + "(): " : "'" + node.text + "': ") +
               error.what());
    }
  }

  template <class Fold>
  Value Folded(const SyntaxNode& node, Fold&& fold) const {
    try {
      return Value{std::nullopt, fold()};
    } catch (const InvalidArgument& error) {
      Fail(node.column, error.what());
    }
  }

  Value Name(const SyntaxNode& node) {
    if (const auto input = inputs_.find(node.text); input != inputs_.end()) {
      return Value{input->second, {}};
    }
    for (const auto& [name, value] : kConstants) {
      if (name == node.text) return Value{std::nullopt, value};
    }
    if (expression::FindFunction(node.text) != nullptr) {
      Fail(node.column, "\"" + node.text + "\" is a function; call it, e.g. " + node.text + "(x)");
    }
    std::vector<std::string_view> known;
    for (const auto& [name, array] : inputs_) known.push_back(name);
    std::string listed;
    for (const std::string_view name : known)
      listed += (listed.empty() ? "" : ", ") + std::string(name);
    for (const auto& [name, value] : kConstants) known.push_back(name);
    const std::string_view closest = expression::ClosestName(node.text, known);
    Fail(node.column,
         "unknown name \"" + node.text + "\"" +
             (closest.empty() ? "" : "; did you mean \"" + std::string(closest) + "\"?") +
             (listed.empty() ? " (there are no inputs)" : " (inputs: " + listed + ")"));
  }

  Value Unary(const SyntaxNode& node, const std::string& function, const SyntaxNode& operand) {
    const Value x = Evaluate(operand);
    if (!x.array) return Folded(node, [&] { return expression::FoldUnary(function, x.scalar); });
    return Built(node, [&] { return elementwise(function, *x.array); });
  }

  Value Binary(const SyntaxNode& node, const std::string& function, const SyntaxNode& left,
               const SyntaxNode& right) {
    const Value x = Evaluate(left);
    const Value y = Evaluate(right);
    if (x.array && y.array)
      return Built(node, [&] { return elementwise(function, *x.array, *y.array); });
    if (x.array) return Built(node, [&] { return elementwise(function, *x.array, y.scalar); });
    if (y.array) return Built(node, [&] { return elementwise(function, x.scalar, *y.array); });
    return Folded(node, [&] { return expression::FoldBinary(function, x.scalar, y.scalar); });
  }

  Value Call(const SyntaxNode& node) {
    const FunctionInfo* info = expression::FindFunction(node.function);
    const std::vector<SyntaxNode>& arguments = node.arguments;
    switch (info->kind) {
      case FunctionKind::kUnary:
        return Unary(node, node.function, arguments[0]);
      case FunctionKind::kBinary:
        return Binary(node, node.function, arguments[0], arguments[1]);
      case FunctionKind::kWhere:
        return Where(node);
      case FunctionKind::kAsType: {
        const Array x = ArrayArgument(node, arguments[0]);
        const DType dtype = DTypeArgument(arguments[1]);
        return Built(node, [&] { return astype(x, dtype); });
      }
      case FunctionKind::kReduction:
      case FunctionKind::kArgReduction:
        return Reduction(node, *info);
    }
    Fail(node.column, "cannot evaluate this call");
  }

  Array ArrayArgument(const SyntaxNode& call, const SyntaxNode& argument) {
    Value value = Evaluate(argument);
    if (!value.array) {
      Fail(argument.column, call.text +
                                "() needs an array here (an expression using an "
                                "input), not the number " +
                                value.scalar.ToString());
    }
    return *value.array;
  }

  DType DTypeArgument(const SyntaxNode& argument) const {
    if (argument.kind == SyntaxNode::Kind::kName) {
      try {
        return DType::FromName(argument.text);
      } catch (const InvalidArgument&) {
        // falls through to the message below
      }
    }
    Fail(argument.column,
         "expected a dtype name: bool, int8, int16, int32, int64, uint8, "
         "uint16, uint32, uint64, float32 or float64");
  }

  Value Where(const SyntaxNode& node) {
    Value condition = Evaluate(node.arguments[0]);
    Value x = Evaluate(node.arguments[1]);
    Value y = Evaluate(node.arguments[2]);
    if (!condition.array) {
      const std::optional<Array>& like = x.array ? x.array : y.array;
      if (!like) return expression::Truthy(condition.scalar) ? x : y;
      condition.array = full(like->shape(), expression::Truthy(condition.scalar), bool_,
                             like->chunks(), like->spec());
    }
    const Array& cond = *condition.array;
    return Built(node, [&] {
      if (x.array && y.array) return where(cond, *x.array, *y.array);
      if (x.array) return where(cond, *x.array, y.scalar);
      if (y.array) return where(cond, x.scalar, *y.array);
      const Array filled =
          full(cond.shape(), x.scalar, PythonDType(x.scalar, y.scalar), cond.chunks(), cond.spec());
      return where(cond, filled, y.scalar);
    });
  }

  // An integer argument (not a bool, not a float).
  int IntegerArgument(const SyntaxNode& argument, std::string_view what) {
    const Value value = Evaluate(argument);
    if (value.array || value.scalar.kind() != ScalarKind::kInt) {
      Fail(argument.column, std::string(what) + " must be an integer");
    }
    const auto integer = value.scalar.As<std::int64_t>();
    constexpr std::int64_t kLargestAxis = 1 << 20;  // far beyond any array's ndim
    if (integer > kLargestAxis || integer < -kLargestAxis) {
      Fail(argument.column, std::string(what) + " " + std::to_string(integer) + " is out of range");
    }
    return static_cast<int>(integer);
  }

  // axis=: an int, a tuple of ints, or None (every axis).
  Axes AxesArgument(const SyntaxNode& call, const SyntaxNode& argument) {
    if (argument.kind == SyntaxNode::Kind::kNone) return Axes();
    if (argument.kind == SyntaxNode::Kind::kTuple) {
      std::vector<int> axes;
      for (const SyntaxNode& item : argument.arguments)
        axes.push_back(IntegerArgument(item, "axis"));
      return Axes(std::move(axes));
    }
    const Value value = Evaluate(argument);
    if (value.array || value.scalar.kind() != ScalarKind::kInt) {
      std::string reason = "axis must be an integer, a tuple of integers or None";
      if (call.function == "max" || call.function == "min") {
        reason +=
            "; for the elementwise " + std::string(call.function == "max" ? "maximum" : "minimum") +
            " of two arrays use " + (call.function == "max" ? "maximum" : "minimum") + "(x, y)";
      }
      Fail(argument.column, reason);
    }
    return Axes(IntegerArgument(argument, "axis"));
  }

  bool BoolArgument(const SyntaxNode& argument, std::string_view what) {
    const Value value = Evaluate(argument);
    if (value.array || value.scalar.kind() == ScalarKind::kFloat) {
      Fail(argument.column, std::string(what) + " must be True or False");
    }
    return expression::Truthy(value.scalar);
  }

  double NumberArgument(const SyntaxNode& argument, std::string_view what) {
    const Value value = Evaluate(argument);
    if (value.array) Fail(argument.column, std::string(what) + " must be a number, not an array");
    return value.scalar.As<double>();
  }

  Value Reduction(const SyntaxNode& node, const FunctionInfo& info) {
    const Array x = ArrayArgument(node, node.arguments[0]);
    Axes axes;
    std::optional<int> axis;  // argmin, argmax
    bool keepdims = false;
    double correction = 0;
    std::optional<DType> dtype;
    for (std::size_t index = 1; index < node.arguments.size(); ++index) {
      const SyntaxNode& argument = node.arguments[index];
      if (argument.keyword == "axis") {
        if (info.kind == FunctionKind::kArgReduction) {
          if (argument.kind == SyntaxNode::Kind::kTuple) {
            Fail(argument.column, node.text +
                                      "() takes one axis: axis must be an integer or "
                                      "None, not a tuple");
          }
          if (argument.kind != SyntaxNode::Kind::kNone) axis = IntegerArgument(argument, "axis");
        } else {
          axes = AxesArgument(node, argument);
        }
      } else if (argument.keyword == "keepdims") {
        keepdims = BoolArgument(argument, "keepdims");
      } else if (argument.keyword == "dtype") {
        dtype = DTypeArgument(argument);
      } else {
        correction = NumberArgument(argument, argument.keyword);
      }
    }
    const std::string& name = node.function;
    return Built(node, [&] {
      if (name == "sum") return sum(x, axes, keepdims, dtype);
      if (name == "prod") return prod(x, axes, keepdims, dtype);
      if (name == "mean") return mean(x, axes, keepdims, dtype);
      if (name == "var") return var(x, axes, keepdims, correction, dtype);
      if (name == "std") return tessera::std(x, axes, keepdims, correction, dtype);
      if (name == "min") return min(x, axes, keepdims);
      if (name == "max") return max(x, axes, keepdims);
      if (name == "all") return all(x, axes, keepdims);
      if (name == "any") return any(x, axes, keepdims);
      if (name == "argmin") return argmin(x, axis, keepdims);
      if (name == "argmax") return argmax(x, axis, keepdims);
      return count_nonzero(x, axes, keepdims);
    });
  }

  std::string_view text_;
  const Inputs& inputs_;
};

// The column where `node`'s text starts: its leftmost token.
int StartColumn(const SyntaxNode& node) {
  if (node.kind == SyntaxNode::Kind::kBinary) return StartColumn(node.arguments[0]);
  return node.column;
}

}  // namespace

bool is_expression_name(std::string_view name) { return expression::IsIdentifier(name); }

ExpressionResult evaluate_expression(std::string_view expression, const Inputs& inputs) {
  for (const auto& [name, array] : inputs) {
    if (!is_expression_name(name)) {
      throw InvalidArgument("input name \"" + name +
                            "\" cannot appear in an expression: a name is letters, digits and "
                            "_, not starting with a digit, and not one of and, or, not, True, "
                            "False, None");
    }
  }
  const expression::ParsedExpression parsed = expression::ParseExpression(expression);
  Evaluator evaluator(expression, inputs);
  const Value value = evaluator.Evaluate(parsed.root);
  if (!value.array) {
    evaluator.Fail(StartColumn(parsed.root),
                   "the expression uses no input array, so there is nothing to compute chunk by "
                   "chunk (its value is " +
                       value.scalar.ToString() + "); use at least one input");
  }
  return ExpressionResult{parsed.target, *value.array};
}

}  // namespace tessera
