#include "tessera/storage/open_store.hpp"

#include <filesystem>

#include "s3_url.hpp"
#include "tessera/storage/directory_store.hpp"
#include "tessera/storage/s3_store.hpp"

namespace tessera {

bool IsObjectStoreLocation(std::string_view location) { return s3::IsS3Url(location); }

void CheckObjectStoreLocation(std::string_view location) {
  static_cast<void>(s3::ParseS3Url(location));
}

std::shared_ptr<Store> OpenStore(std::string_view location, OpenStoreOptions options) {
  if (IsObjectStoreLocation(location)) return S3Store::Open(location);
  return DirectoryStore::Open(std::filesystem::path(location), {.create = options.create});
}

}  // namespace tessera
