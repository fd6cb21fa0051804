// A .zarray's fill_value as JSON: parsed against the array's dtype, and written as
// zarr-python writes it ("NaN", "Infinity", integers for integer dtypes, booleans for
// bool). EncodeFillElement, the element itself, is public (zarr_metadata.hpp).
//
//   FillValue fill = ParseFillValue(document["fill_value"], int16, "<i2", where);
//   document["fill_value"] = FillValueToJson(fill, int16);
//
// Internal to src/storage/zarr. Pure functions: thread-safe.
#pragma once

#include <string_view>

#include "json_fields.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera::zarr_detail {

// The fill value `value` for `dtype` (named `typestr` in messages); FormatError naming
// `where` and key "fill_value" when the dtype cannot hold it.
FillValue ParseFillValue(const Json& value, DType dtype, std::string_view typestr,
                         std::string_view where);

// `fill` as zarr-python writes it for `dtype`. For every fill EncodeFillElement accepts,
// ParseFillValue reads the result back as the same element.
Json FillValueToJson(const FillValue& fill, DType dtype);

}  // namespace tessera::zarr_detail
