// Zarr v2 type strings (numpy's array-protocol typestr, "<f8", "|b1", ">i4"): the list
// Tessera supports, for messages. ZarrTypestr and ParseZarrTypestr themselves are
// public (tessera/storage/zarr_metadata.hpp) and defined in zarr_dtype.cpp.
//
// Internal to src/storage/zarr.
#pragma once

#include <string_view>

namespace tessera::zarr_detail {

// Every type string ParseZarrTypestr accepts, as one line for messages.
inline constexpr std::string_view kSupportedZarrTypestrs =
    "|b1, |i1, |u1, <i2, <i4, <i8, <u2, <u4, <u8, <f2 (held as float32), <f4, <f8, <c8, <c16 "
    "and the big-endian >i2, >i4, >i8, >u2, >u4, >u8, >f2, >f4, >f8, >c8, >c16";

}  // namespace tessera::zarr_detail
