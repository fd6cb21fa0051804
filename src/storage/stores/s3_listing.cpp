#include "s3_listing.hpp"

#include <unordered_set>

#include "s3_url.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::s3 {

std::string ListObjectsQuery(const ListObjectsOptions& options) {
  std::string query;
  const auto add = [&query](const char* name, const std::string& value) {
    query += (query.empty() ? "" : "&") + std::string(name) + "=" + value;
  };
  if (!options.continuation_token.empty()) {
    add("continuation-token", UriEncode(options.continuation_token, /*keep_slash=*/false));
  }
  if (options.by_folder) add("delimiter", UriEncode("/", /*keep_slash=*/false));
  add("list-type", "2");
  if (options.max_keys) add("max-keys", std::to_string(*options.max_keys));
  if (!options.prefix.empty()) add("prefix", UriEncode(options.prefix, /*keep_slash=*/false));
  return query;
}

void ForEachListPage(const S3Client& client, const std::string& prefix, bool by_folder,
                     const std::function<void(const ListPage&)>& page_fn) {
  ListObjectsOptions options;
  options.prefix = prefix;
  options.by_folder = by_folder;
  std::unordered_set<std::string> tokens_seen;
  do {
    S3Request request;
    request.method = "GET";
    request.listed_prefix = prefix;
    request.query = ListObjectsQuery(options);
    const S3Response response = client.Perform(request);
    if (response.status != 200) ThrowResponseError(client, request, response);
    ListPage page;
    try {
      page = ParseListObjectsV2(response.text);
    } catch (const FormatError& error) {
      throw StorageError("S3 " + client.Describe(request) +
                         ": the listing could not be read: " + error.what());
    }
    page_fn(page);
    options.continuation_token = page.truncated ? page.next_continuation_token : std::string();
    if (!options.continuation_token.empty() &&
        !tokens_seen.insert(options.continuation_token).second) {
      throw StorageError("S3 " + client.Describe(request) + ": page " +
                         std::to_string(tokens_seen.size() + 1) +
                         " of the listing gave a continuation token an earlier page gave; the "
                         "server is repeating itself and the listing would never end");
    }
  } while (!options.continuation_token.empty());
}

}  // namespace tessera::s3
