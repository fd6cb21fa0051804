// S3Store: a Store on an S3-compatible object store (AWS S3, MinIO, Ceph, ...), one object
// per key under a prefix of a bucket.
//
//   auto store = tessera::S3Store::Open("s3://era5/t2m.zarr");   // settings from the environment
//   store->Get("zarr.json");
//
// Where to connect and as whom come from the standard AWS environment: AWS_ENDPOINT_URL
// (or AWS_ENDPOINT_URL_S3; default AWS itself), AWS_REGION / AWS_DEFAULT_REGION,
// AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN), else the AWS_PROFILE
// profile of ~/.aws/credentials and ~/.aws/config; no credentials = anonymous requests.
// Needs libcurl 7.87.0 or later at run time (Open throws StorageError otherwise).
//
// Each Set is one PUT of the whole value, so readers see the old or the new value, never
// a torn one. ReadRange is a ranged GET; a range HTTP cannot name (empty, or a negative
// offset that stops short of the end) is a HEAD then a GET pinned to the HEAD's version
// (If-Match on a strong ETag, and the sizes compared). A server that ignores Range (HTTP
// 200 to a ranged GET) is a StorageError, never a download of the whole value.
// OpenForReads pins a value by its strong ETag (If-Match), so a shard's index and its
// chunks come from one version; a value with a weak ETag (W/"...") or none is not pinned
// (nullptr: each read on its own). List and ListWithSizes page through ListObjectsV2
// with continuation tokens (the sizes come with the listing). EraseKeys and EraseAll send
// their DELETEs in parallel. Requests are signed with AWS Signature V4 and run
// concurrently: each takes a libcurl handle from a pool (its connection reused; up to 64
// idle ones kept), so as many are in flight as threads call in. They are retried with
// backoff and jitter on 5xx, 429, 408, timeouts and reset connections; a request that
// keeps failing throws StorageError naming the bucket, the key and the status. No message
// names a credential. Thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/storage/store.hpp"

namespace tessera {

namespace s3 {
class S3Client;
}

class S3Store final : public Store {
 public:
  struct Options {
    // Check at Open that the bucket exists and the credentials are accepted (one listing
    // request): a wrong bucket, endpoint or key fails there, with advice, not mid-run.
    bool check_access = true;
    int max_attempts = 8;                      // tries per request, the first included
    std::chrono::milliseconds base_delay{50};  // first backoff; doubles, capped at 4 s
  };

  // Opens "s3://bucket/prefix" (the scheme in lower case). Throws InvalidArgument for a
  // malformed URL (user information in it included, never quoted) or environment,
  // StorageError when the bucket cannot be reached or libcurl is too old.
  static std::shared_ptr<S3Store> Open(std::string_view url, Options options);
  static std::shared_ptr<S3Store> Open(std::string_view url) { return Open(url, Options{}); }

  std::optional<Buffer> Get(std::string_view key) const override;
  std::optional<std::int64_t> ReadBounded(std::string_view key, std::int64_t max_size,
                                          const Destination& destination) const override;
  std::optional<std::int64_t> ReadRange(std::string_view key, std::int64_t offset,
                                        std::span<std::byte> out) const override;
  std::unique_ptr<OpenedValue> OpenForReads(std::string_view key) const override;
  using Store::Set;
  void Set(std::string_view key, std::span<const std::byte> value) override;
  bool Erase(std::string_view key) override;
  // DELETEs in parallel, with no HEAD first: the count includes absent keys (S3 answers
  // their DELETE with success), except where the server answers 404.
  std::int64_t EraseKeys(std::span<const std::string> keys) override;
  std::vector<std::string> List(std::string_view prefix) const override;
  // One listing request per 1000 keys; the sizes are the listing's.
  std::vector<ListedKey> ListWithSizes(std::string_view prefix) const override;
  std::vector<std::string> ListFolder(std::string_view folder) const override;
  std::optional<std::int64_t> SizeOf(std::string_view key) const override;
  std::string Describe() const override { return url_; }
  // "s3://bucket/prefix": another process opens the same store from it (with its own
  // environment's endpoint and credentials).
  std::optional<std::string> Location() const override { return url_; }

  // Removes every object under the prefix (a work directory's intermediates), keys that
  // are no valid Store keys included; returns how many. Lists every key first, then
  // deletes them all in parallel, as EraseKeys does.
  std::int64_t EraseAll();
  // Requests sent so far, retries included.
  std::int64_t requests_sent() const;

  S3Store(std::shared_ptr<const s3::S3Client> client, std::string prefix);
  ~S3Store() override;

 private:
  std::string ObjectKey(std::string_view key) const;

  std::shared_ptr<const s3::S3Client> client_;
  std::string prefix_;  // the keys' prefix in the bucket, "" or ending in '/'
  std::string url_;
};

}  // namespace tessera
