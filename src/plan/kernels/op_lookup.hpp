// Elementwise ops by their array API names ("add", "exp", ...), as the api layer and
// the expression parser of `tessera calc` name them.
#pragma once

#include <string_view>

#include "elementwise_kernels.hpp"

namespace tessera::kernels {

// Throw InvalidArgument naming the unknown op and listing the known ones.
UnaryOp UnaryOpFromName(std::string_view name);
BinaryOp BinaryOpFromName(std::string_view name);
bool IsUnaryOpName(std::string_view name);
bool IsBinaryOpName(std::string_view name);

}  // namespace tessera::kernels
