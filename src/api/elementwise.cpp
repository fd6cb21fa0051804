#include "tessera/api/elementwise.hpp"

#include <utility>

namespace tessera {

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

#define TESSERA_DEFINE_UNARY(name) \
  Array name(const Array& x) { return elementwise(#name, x); }
TESSERA_DEFINE_UNARY(negative)
TESSERA_DEFINE_UNARY(positive)
TESSERA_DEFINE_UNARY(abs)
TESSERA_DEFINE_UNARY(sign)
TESSERA_DEFINE_UNARY(square)
TESSERA_DEFINE_UNARY(sqrt)
TESSERA_DEFINE_UNARY(exp)
TESSERA_DEFINE_UNARY(expm1)
TESSERA_DEFINE_UNARY(log)
TESSERA_DEFINE_UNARY(log1p)
TESSERA_DEFINE_UNARY(log2)
TESSERA_DEFINE_UNARY(log10)
TESSERA_DEFINE_UNARY(sin)
TESSERA_DEFINE_UNARY(cos)
TESSERA_DEFINE_UNARY(tan)
TESSERA_DEFINE_UNARY(asin)
TESSERA_DEFINE_UNARY(acos)
TESSERA_DEFINE_UNARY(atan)
TESSERA_DEFINE_UNARY(sinh)
TESSERA_DEFINE_UNARY(cosh)
TESSERA_DEFINE_UNARY(tanh)
TESSERA_DEFINE_UNARY(asinh)
TESSERA_DEFINE_UNARY(acosh)
TESSERA_DEFINE_UNARY(atanh)
TESSERA_DEFINE_UNARY(floor)
TESSERA_DEFINE_UNARY(ceil)
TESSERA_DEFINE_UNARY(trunc)
TESSERA_DEFINE_UNARY(round)
TESSERA_DEFINE_UNARY(isnan)
TESSERA_DEFINE_UNARY(isinf)
TESSERA_DEFINE_UNARY(isfinite)
TESSERA_DEFINE_UNARY(logical_not)
TESSERA_DEFINE_UNARY(bitwise_invert)
#undef TESSERA_DEFINE_UNARY

#define TESSERA_DEFINE_BINARY(name)                                                \
  Array name(const Array& x, const Array& y) { return elementwise(#name, x, y); }  \
  Array name(const Array& x, const Scalar& y) { return elementwise(#name, x, y); } \
  Array name(const Scalar& x, const Array& y) { return elementwise(#name, x, y); }
TESSERA_DEFINE_BINARY(add)
TESSERA_DEFINE_BINARY(subtract)
TESSERA_DEFINE_BINARY(multiply)
TESSERA_DEFINE_BINARY(divide)
TESSERA_DEFINE_BINARY(floor_divide)
TESSERA_DEFINE_BINARY(remainder)
TESSERA_DEFINE_BINARY(pow)
TESSERA_DEFINE_BINARY(maximum)
TESSERA_DEFINE_BINARY(minimum)
TESSERA_DEFINE_BINARY(atan2)
TESSERA_DEFINE_BINARY(hypot)
TESSERA_DEFINE_BINARY(logaddexp)
TESSERA_DEFINE_BINARY(copysign)
TESSERA_DEFINE_BINARY(equal)
TESSERA_DEFINE_BINARY(not_equal)
TESSERA_DEFINE_BINARY(less)
TESSERA_DEFINE_BINARY(less_equal)
TESSERA_DEFINE_BINARY(greater)
TESSERA_DEFINE_BINARY(greater_equal)
TESSERA_DEFINE_BINARY(logical_and)
TESSERA_DEFINE_BINARY(logical_or)
TESSERA_DEFINE_BINARY(logical_xor)
TESSERA_DEFINE_BINARY(bitwise_and)
TESSERA_DEFINE_BINARY(bitwise_or)
TESSERA_DEFINE_BINARY(bitwise_xor)
TESSERA_DEFINE_BINARY(bitwise_left_shift)
TESSERA_DEFINE_BINARY(bitwise_right_shift)
#undef TESSERA_DEFINE_BINARY

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
