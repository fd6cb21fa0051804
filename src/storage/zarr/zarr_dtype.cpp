// Zarr v2 type strings <-> Tessera dtypes and byte orders.
#include "zarr_dtype.hpp"

#include <optional>
#include <string>

#include "tessera/core/errors.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera {

std::string ZarrTypestr(DType dtype, ByteOrder byte_order) {
  char order = byte_order == ByteOrder::kBig ? '>' : '<';
  if (dtype.itemsize() == 1) order = '|';
  char kind = 'f';
  switch (dtype.kind()) {
    case DTypeKind::kBool:
      kind = 'b';
      break;
    case DTypeKind::kSignedInt:
      kind = 'i';
      break;
    case DTypeKind::kUnsignedInt:
      kind = 'u';
      break;
    case DTypeKind::kComplex:
      kind = 'c';
      break;
    case DTypeKind::kFloat:
      break;
  }
  return std::string{order, kind} + std::to_string(dtype.itemsize());
}

std::pair<DType, ByteOrder> ParseZarrTypestr(std::string_view typestr) {
  auto unsupported = [&]() -> InvalidArgument {
    return InvalidArgument("unsupported Zarr dtype \"" + std::string(typestr) +
                           "\"; supported: " + std::string(zarr_detail::kSupportedZarrTypestrs));
  };
  if (typestr.size() != 3 && typestr.size() != 4) throw unsupported();
  const char order = typestr[0];
  if (order != '<' && order != '>' && order != '|') throw unsupported();
  std::optional<DType> dtype;
  const std::string_view code = typestr.substr(1);
  if (code == "b1") dtype = bool_;
  if (code == "i1") dtype = int8;
  if (code == "i2") dtype = int16;
  if (code == "i4") dtype = int32;
  if (code == "i8") dtype = int64;
  if (code == "u1") dtype = uint8;
  if (code == "u2") dtype = uint16;
  if (code == "u4") dtype = uint32;
  if (code == "u8") dtype = uint64;
  if (code == "f4") dtype = float32;
  if (code == "f8") dtype = float64;
  if (code == "c8") dtype = complex64;
  if (code == "c16") dtype = complex128;
  if (!dtype) throw unsupported();
  // numpy writes '|' ("not applicable") for single bytes; '<' and '>' mean the same there.
  if (dtype->itemsize() == 1) return {*dtype, ByteOrder::kLittle};
  if (order == '|') throw unsupported();
  return {*dtype, order == '>' ? ByteOrder::kBig : ByteOrder::kLittle};
}

}  // namespace tessera
