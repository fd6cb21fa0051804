#include "tessera/api/elementwise.hpp"

#include <type_traits>
#include <utility>

#include "tessera/plan/internal/elementwise_table.hpp"
#include "tessera/plan/internal/node.hpp"

namespace tessera {

using planner::MakeAsType;
using planner::MakeBinary;
using planner::MakeBinaryWithScalar;
using planner::MakeBroadcast;
using planner::MakeConstant;
using planner::MakeUnary;
using planner::MakeWhere;

std::vector<std::string_view> elementwise_function_names(int arity) {
  std::vector<std::string_view> names;
  for (const kernels::ElementwiseOp& op : kernels::ElementwiseOps()) {
    if (op.arity == arity) names.push_back(op.name);
  }
  return names;
}

namespace {

// What an op's type rules say about its dtypes, as sentences for its documentation.
std::string DTypesText(const kernels::ElementwiseOp& op) {
  using kernels::ComplexRule;
  using kernels::TypeRule;
  std::string text;
  switch (op.rule) {
    case TypeRule::kPromoteNumbers:
      text = "Takes numeric dtypes, not bool.";
      break;
    case TypeRule::kFloat:
      text = "Integer and bool arrays compute in floating point.";
      break;
    case TypeRule::kTrueDivide:
      text = "Integer and bool arrays give float64.";
      break;
    case TypeRule::kBoolResult:
      text = "Gives bool.";
      break;
    case TypeRule::kBitwise:
      text = "Takes bool and integer dtypes.";
      break;
    case TypeRule::kShift:
      text = "Takes integer dtypes.";
      break;
    case TypeRule::kPromote:
    case TypeRule::kBoolAsInt8:
      text = "Takes every dtype.";
      break;
  }
  switch (op.complex_rule) {
    case ComplexRule::kRealOnly:
      if (kernels::TakesFloats(op.rule)) text += " Not defined for complex dtypes.";
      break;
    case ComplexRule::kComplex:
      text += " Takes complex dtypes.";
      break;
    case ComplexRule::kComplexToReal:
      text += " Complex arrays give the real dtype of their parts.";
      break;
  }
  return text;
}

}  // namespace

std::string elementwise_function_doc(std::string_view function) {
  const kernels::ElementwiseOp* op = kernels::FindElementwiseOp(function);
  if (op == nullptr) {
    throw InvalidArgument("no elementwise function is called \"" + std::string(function) + "\"");
  }
  const std::string lazy = op->arity == 1 ? " Lazy: the result is a new array."
                                          : " x1 and x2 are arrays or Python numbers (weak "
                                            "scalars), broadcast; lazy: the result is a new "
                                            "array.";
  return std::string(op->doc) + " " + DTypesText(*op) + lazy;
}

Array elementwise(std::string_view function, const Array& x) {
  return Array(MakeUnary(function, x.node()), x.spec());
}
Array elementwise(std::string_view function, const Array& x, const Array& y) {
  return Array(MakeBinary(function, x.node(), y.node()), x.spec());
}
Array elementwise(std::string_view function, const Array& x, const Scalar& y) {
  return Array(MakeBinaryWithScalar(function, x.node(), y, /*scalar_first=*/false), x.spec());
}
Array elementwise(std::string_view function, const Scalar& x, const Array& y) {
  return Array(MakeBinaryWithScalar(function, y.node(), x, /*scalar_first=*/true), y.spec());
}

// One function per row of elementwise_ops.def (three for a binary op: a scalar may
// stand on either side). Each row must have its declaration in elementwise.hpp: the
// static_asserts fail to compile where one is missing or has another signature;
// elementwise_table_test.cpp checks the other way, that each declaration has its row.
using UnaryFunction = Array (*)(const Array&);
using BinaryFunction = Array (*)(const Array&, const Array&);
using ScalarSecond = Array (*)(const Array&, const Scalar&);
using ScalarFirst = Array (*)(const Scalar&, const Array&);
#define TESSERA_UNARY_OP(name, Kernel, aliases, rule, complex, doc)                         \
  static_assert(                                                                            \
      std::is_same_v<decltype(static_cast<UnaryFunction>(&tessera::name)), UnaryFunction>); \
  Array name(const Array& x) { return elementwise(#name, x); }
#define TESSERA_BINARY_OP(name, Kernel, aliases, rule, complex, doc)                              \
  static_assert(                                                                                  \
      std::is_same_v<decltype(static_cast<BinaryFunction>(&tessera::name)), BinaryFunction>);     \
  static_assert(                                                                                  \
      std::is_same_v<decltype(static_cast<ScalarSecond>(&tessera::name)), ScalarSecond>);         \
  static_assert(std::is_same_v<decltype(static_cast<ScalarFirst>(&tessera::name)), ScalarFirst>); \
  Array name(const Array& x, const Array& y) { return elementwise(#name, x, y); }                 \
  Array name(const Array& x, const Scalar& y) { return elementwise(#name, x, y); }                \
  Array name(const Scalar& x, const Array& y) { return elementwise(#name, x, y); }
#include "tessera/plan/internal/elementwise_ops.def"

Array where(const Array& condition, const Array& x, const Array& y) {
  return Array(MakeWhere(condition.node(), x.node(), y.node()), condition.spec());
}
Array where(const Array& condition, const Array& x, const Scalar& y) {
  return where(condition, x,
               Array(MakeConstant({}, y, ResultTypeWithScalar(x.dtype(), y.kind()), {}), x.spec()));
}
Array where(const Array& condition, const Scalar& x, const Array& y) {
  return where(condition,
               Array(MakeConstant({}, x, ResultTypeWithScalar(y.dtype(), x.kind()), {}), y.spec()),
               y);
}
Array astype(const Array& x, DType dtype) { return x.astype(dtype); }
Array Array::astype(DType dtype) const {
  if (dtype == node_->dtype()) return *this;
  return Array(MakeAsType(node_, dtype), spec_);
}
Array broadcast_to(const Array& x, Shape shape) {
  return Array(MakeBroadcast(x.node(), std::move(shape)), x.spec());
}

#define TESSERA_DEFINE_OPERATOR(op, name)                                                \
  Array operator op(const Array& x, const Array& y) { return elementwise(name, x, y); }  \
  Array operator op(const Array& x, const Scalar& y) { return elementwise(name, x, y); } \
  Array operator op(const Scalar& x, const Array& y) { return elementwise(name, x, y); }
TESSERA_DEFINE_OPERATOR(+, "add")
TESSERA_DEFINE_OPERATOR(-, "subtract")
TESSERA_DEFINE_OPERATOR(*, "multiply")
TESSERA_DEFINE_OPERATOR(/, "divide")
TESSERA_DEFINE_OPERATOR(%, "remainder")
TESSERA_DEFINE_OPERATOR(==, "equal")
TESSERA_DEFINE_OPERATOR(!=, "not_equal")
TESSERA_DEFINE_OPERATOR(<, "less")
TESSERA_DEFINE_OPERATOR(<=, "less_equal")
TESSERA_DEFINE_OPERATOR(>, "greater")
TESSERA_DEFINE_OPERATOR(>=, "greater_equal")
TESSERA_DEFINE_OPERATOR(&, "bitwise_and")
TESSERA_DEFINE_OPERATOR(|, "bitwise_or")
TESSERA_DEFINE_OPERATOR(^, "bitwise_xor")
TESSERA_DEFINE_OPERATOR(<<, "bitwise_left_shift")
TESSERA_DEFINE_OPERATOR(>>, "bitwise_right_shift")
#undef TESSERA_DEFINE_OPERATOR

Array operator-(const Array& x) { return negative(x); }
Array operator+(const Array& x) { return positive(x); }
Array operator~(const Array& x) { return bitwise_invert(x); }
Array operator!(const Array& x) { return logical_not(x); }

}  // namespace tessera
