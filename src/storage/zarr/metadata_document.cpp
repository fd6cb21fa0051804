#include "metadata_document.hpp"

#include "tessera/core/buffer.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::zarr_detail {

std::optional<std::string> ReadMetadataDocument(const Store& store, const std::string& key) {
  Buffer document;
  const std::optional<std::int64_t> size = store.GetInto(key, document, kMaxMetadataBytes);
  if (!size) return std::nullopt;
  if (*size > kMaxMetadataBytes) {
    throw FormatError(store.DescribeKey(key) + ": the document is " + std::to_string(*size) +
                      " bytes, more than the " + std::to_string(kMaxMetadataBytes) +
                      " bytes (16 MiB) Tessera reads for Zarr metadata; real metadata is a few "
                      "KB, so this file is corrupt or not Zarr metadata");
  }
  return std::string(reinterpret_cast<const char*>(document.data()),
                     static_cast<std::size_t>(document.size()));
}

}  // namespace tessera::zarr_detail
