#include "tessera/core/dtype.hpp"

#include <array>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

struct DTypeName {
  std::string_view name;
  std::string_view short_name;  // numpy's kind+size code
  DType dtype;
};

constexpr std::array<DTypeName, 13> kNames = {{
    {"bool", "b1", bool_},
    {"int8", "i1", int8},
    {"int16", "i2", int16},
    {"int32", "i4", int32},
    {"int64", "i8", int64},
    {"uint8", "u1", uint8},
    {"uint16", "u2", uint16},
    {"uint32", "u4", uint32},
    {"uint64", "u8", uint64},
    {"float32", "f4", float32},
    {"float64", "f8", float64},
    {"complex64", "c8", complex64},
    {"complex128", "c16", complex128},
}};

}  // namespace

std::string_view DType::name() const {
  for (const DTypeName& entry : kNames) {
    if (entry.dtype == *this) return entry.name;
  }
  return "unknown";
}

DType DType::FromName(std::string_view name) {
  for (const DTypeName& entry : kNames) {
    if (entry.name == name || entry.short_name == name) return entry.dtype;
  }
  if (name == "bool_") return bool_;
  throw InvalidArgument("unknown dtype \"" + std::string(name) +
                        "\": expected one of bool, int8, int16, int32, int64, uint8, "
                        "uint16, uint32, uint64, float32, float64, complex64, complex128");
}

}  // namespace tessera
