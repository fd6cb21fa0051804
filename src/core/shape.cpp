#include "tessera/core/shape.hpp"

#include <charconv>
#include <system_error>

#include "tessera/core/errors.hpp"

namespace tessera {

Index CheckedMul(Index a, Index b) {
  Index result = 0;
  if (__builtin_mul_overflow(a, b, &result)) {
    throw InvalidArgument("size computation overflows: " + std::to_string(a) + " * " +
                          std::to_string(b) + " does not fit in 64 bits");
  }
  return result;
}

Index CheckedAdd(Index a, Index b) {
  Index result = 0;
  if (__builtin_add_overflow(a, b, &result)) {
    throw InvalidArgument("size computation overflows: " + std::to_string(a) + " + " +
                          std::to_string(b) + " does not fit in 64 bits");
  }
  return result;
}

Index ShapeSize(std::span<const Index> shape) {
  Index size = 1;
  for (Index extent : shape) size = CheckedMul(size, extent);
  return size;
}

std::string ShapeToString(std::span<const Index> shape) {
  std::string text = "(";
  for (std::size_t dim = 0; dim < shape.size(); ++dim) {
    if (dim > 0) text += ", ";
    text += std::to_string(shape[dim]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

Shape ParseShape(std::string_view text, std::string_view what) {
  Shape shape;
  if (text.empty()) return shape;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    Index value = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc() || end != item.data() + item.size()) {
      throw InvalidArgument(std::string(what) + ": expected comma-separated integers such as " +
                            "8760,181,360, found \"" + std::string(text) + "\"");
    }
    shape.push_back(value);
    if (comma == std::string_view::npos) return shape;
    rest.remove_prefix(comma + 1);
  }
}

Shape CStrides(std::span<const Index> shape) {
  Shape strides(shape.size(), 1);
  for (std::size_t dim = shape.size(); dim-- > 1;) {
    strides[dim - 1] = strides[dim] * shape[dim];
  }
  return strides;
}

Shape UnravelIndex(Index linear, std::span<const Index> shape) {
  Shape position(shape.size());
  for (std::size_t dim = shape.size(); dim-- > 0;) {
    position[dim] = linear % shape[dim];
    linear /= shape[dim];
  }
  return position;
}

}  // namespace tessera
