// Listing a bucket with ListObjectsV2, page after page. Internal to src/storage/stores.
//
//   ForEachListPage(client, "t2m.zarr/", {}, [&](const ListPage& page) { ... });
//   ListObjectsOptions first;   // the first key under "t2m.zarr/" only
//   first.prefix = "t2m.zarr/";
//   first.max_keys = 1;
//   request.query = ListObjectsQuery(first);
//
// Thread-safe as S3Client is; each call keeps its own state.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "s3_client.hpp"
#include "s3_response.hpp"

namespace tessera::s3 {

struct ListObjectsOptions {
  std::string prefix;              // the keys' prefix in the bucket ("" = all)
  bool by_folder = false;          // delimiter '/': one level, deeper keys as prefixes
  std::optional<int> max_keys;     // keys per page (S3's default and most: 1000)
  std::string continuation_token;  // the page after the one that gave it
};

// The canonical query (names sorted, values UriEncode'd) of a ListObjectsV2 request.
std::string ListObjectsQuery(const ListObjectsOptions& options);

// Calls `page_fn` for each page of the listing of `prefix` (one level when `by_folder`),
// in order. Throws StorageError naming the listing when a page fails (ThrowResponseError),
// cannot be parsed, or names a continuation token the listing gave before (a server
// repeating itself would otherwise be listed forever).
void ForEachListPage(const S3Client& client, const std::string& prefix, bool by_folder,
                     const std::function<void(const ListPage&)>& page_fn);

}  // namespace tessera::s3
