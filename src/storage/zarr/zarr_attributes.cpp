// .zattrs: xarray's dimension names and the array's other attributes.
#include <string>

#include "json_fields.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/zarr_metadata.hpp"

namespace tessera {
namespace {

using zarr_detail::Json;

// The attribute where xarray keeps an array's dimension names.
constexpr std::string_view kDimensionsKey = "_ARRAY_DIMENSIONS";

}  // namespace

ZarrAttributes ParseZarrAttributes(std::string_view json, std::string_view where) {
  Json document = zarr_detail::ParseDocument(json, where);
  ZarrAttributes attributes;
  if (const Json* names = zarr_detail::Find(document, kDimensionsKey); names != nullptr) {
    const std::string_view expected = "an array of dimension names (strings)";
    if (!names->is_array()) zarr_detail::Fail(where, kDimensionsKey, expected, *names);
    for (const Json& name : *names) {
      if (!name.is_string()) zarr_detail::Fail(where, kDimensionsKey, expected, *names);
      attributes.dimension_names.push_back(name.get<std::string>());
    }
    // An empty list (a 0-d array's) stays among the other attributes, so that it is
    // written back: xarray needs the key present even when it lists no dimension.
    if (!attributes.dimension_names.empty()) document.erase(std::string(kDimensionsKey));
  }
  attributes.other_json = document.dump();
  return attributes;
}

std::string ZarrAttributesToJson(const ZarrAttributes& attributes) {
  Json document = zarr_detail::ParseAttributesObject(attributes.other_json);
  if (!attributes.dimension_names.empty()) {
    document[std::string(kDimensionsKey)] = attributes.dimension_names;
  }
  return zarr_detail::DumpOrThrow(document, ".zattrs");
}

}  // namespace tessera
