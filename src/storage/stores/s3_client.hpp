// S3Client: signed HTTP requests to one S3 bucket over libcurl, retried when the failure
// is transient. Internal to src/storage/stores (S3Store is its user).
//
//   S3Client client(settings, "era5", {});
//   S3Response head = client.Perform({.method = "HEAD", .key = "t2m.zarr/zarr.json"});
//
// Requests are signed by libcurl's CURLOPT_AWS_SIGV4 (provider aws:amz, the settings'
// region, service s3) with the settings' credentials; a session token goes in
// x-amz-security-token; anonymous when there are no credentials. That needs libcurl
// kMinLibcurlVersion or later, checked when a client is made. Endpoints other than AWS's
// are addressed path-style (ENDPOINT/BUCKET/KEY), AWS's virtual-hosted style when the
// bucket's name is a DNS label (IsDnsSafeBucket). Keys are sent as they are, only
// percent-encoded: libcurl never squashes "/../" or "/./" in them (CURLOPT_PATH_AS_IS).
//
// Perform retries, with exponential backoff and equal jitter (a wait drawn from
// [cap/2, cap], cap = base_delay * 2^(try - 1) up to max_delay), what a healthy service
// answers by trying again: HTTP 500, 502, 503, 504, 429 (SlowDown), 408, 400
// RequestTimeout, and connections that fail, time out, reset or end early. Once attempts
// run out it throws StorageError naming the request (method and s3:// URL), the last
// status or connection error and S3's error code, with advice that depends on which it
// was (an overloaded service, or an endpoint that cannot be reached). Other statuses are
// returned to the caller. Credentials never appear in any message.
//
// No exception crosses libcurl's C callbacks: one thrown inside them (a BodyTarget's, an
// allocation's) abandons the transfer and is rethrown by Perform once the curl handle is
// back in the pool, without retrying.
//
// Thread-safe: each request takes an idle curl handle from a pool (or makes one), so that
// as many requests are in flight as threads call Perform, and connections are reused; at
// most kMaxIdleHandles idle handles are kept.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "s3_config.hpp"

namespace tessera::s3 {

// The oldest libcurl that signs requests as S3 needs: 7.87.0 (CURL_VERSION_NUM form), the
// first whose CURLOPT_AWS_SIGV4 signs the caller's own headers (Range, If-Match) and takes
// the payload hash from a caller's x-amz-content-sha256 header (UNSIGNED-PAYLOAD for PUT).
inline constexpr unsigned kMinLibcurlVersion = 0x075700;
// Idle curl handles (each with its live connection) a client keeps for reuse.
inline constexpr std::size_t kMaxIdleHandles = 64;
// The most bytes of a body read without a BodyTarget (a listing page, an error document)
// or without a Content-Length: a listing page of 1000 keys of at most 1024 bytes each
// stays under 2 MiB.
inline constexpr std::size_t kMaxTextBody = std::size_t{64} << 20;

// Throws StorageError unless `version_num` (CURL_VERSION_NUM form, 0xXXYYZZ) is at least
// kMinLibcurlVersion, naming `version` (its text, "7.81.0"). S3Client's constructor checks
// the libcurl it runs with so.
void RequireLibcurlVersion(unsigned version_num, std::string_view version);

struct S3ClientOptions {
  int max_attempts = 8;                              // tries per request, the first included
  std::chrono::milliseconds base_delay{50};          // backoff before the second try
  std::chrono::milliseconds max_delay{4000};         // cap of one backoff
  std::chrono::milliseconds connect_timeout{10000};  // per connection attempt
  // A transfer slower than 1 byte/s for this long is abandoned (and retried).
  std::chrono::seconds stall_timeout{30};
  // Tests: a fixed x-amz-date ("20130524T000000Z"), and a CURLOPT_CONNECT_TO entry that
  // sends requests for the endpoint's host elsewhere ("host:80:127.0.0.1:8080").
  std::string fixed_date;
  std::string connect_to;
  // Virtual-hosted addressing (https://BUCKET.HOST/KEY) rather than path style
  // (ENDPOINT/BUCKET/KEY); unset: virtual-hosted on AWS, path style elsewhere (MinIO, Ceph
  // and moto answer both, path style without DNS names per bucket). Either way a bucket
  // whose name is no DNS label (IsDnsSafeBucket) is addressed path style.
  std::optional<bool> virtual_hosted;
};

struct S3Request {
  std::string_view method = "GET";  // GET, HEAD, PUT or DELETE
  std::string key;                  // the object's key in the bucket; "" = the bucket
  std::string query;                // canonical: names sorted, values UriEncode'd
  std::string range;                // a Range header value, "bytes=0-9"; "" = none
  std::string if_match;             // an If-Match ETag; "" = none
  std::span<const std::byte> body;  // PUT's
  std::string listed_prefix;        // a listing's prefix, for messages
};

struct S3Response {
  long status = 0;
  std::int64_t content_length = -1;  // of this response's body; -1 when not sent
  std::string content_range;         // "bytes 0-9/443"
  std::string etag;                  // as sent: "\"abc\"", or weak "W/\"abc\""
  std::string text;                  // the body, when not read into a BodyTarget
  bool refused = false;              // the BodyTarget declined the body (not read)
};

// True for HTTP's success statuses, 2xx.
inline bool IsSuccessStatus(long status) { return status >= 200 && status < 300; }

// Where a successful response's body goes: called once the status and the body's size are
// known, it returns exactly `size` bytes to write into, or an empty span to leave the
// body unread (S3Response::refused). A body without a Content-Length (chunked) is read
// as text first, up to kMaxTextBody bytes (a longer one is a StorageError, not retried),
// then handed over; an empty one is a 0-byte body. Called again after a retry only if the
// size changed. It may throw: Perform rethrows that exception, untried again.
using BodyTarget = std::function<std::span<std::byte>(long status, std::int64_t size)>;

class S3Client {
 public:
  // Throws StorageError when libcurl is older than kMinLibcurlVersion or cannot start.
  S3Client(S3Settings settings, std::string bucket, S3ClientOptions options);
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  // Performs `request` (see above). 2xx bodies go to `target` when given, otherwise (and
  // for other statuses) into S3Response::text.
  S3Response Perform(const S3Request& request, const BodyTarget* target = nullptr) const;

  // "GET s3://bucket/key" (a listing: "LIST s3://bucket/prefix"), for messages.
  std::string Describe(const S3Request& request) const;
  const std::string& bucket() const { return bucket_; }
  const S3Settings& settings() const { return settings_; }
  // The URL `request` is sent to: "http://host:port/bucket/key?query".
  std::string UrlOf(const S3Request& request) const;
  // The number of requests sent, retries included (statistics and tests).
  std::int64_t requests_sent() const;

  // One try of a request (s3_client.cpp): what libcurl's callbacks fill in.
  struct Attempt;

 private:
  // A curl handle taken from the pool for one try, given back (reset) when destroyed.
  class HandleLease;

  void* AcquireHandle() const;
  void ReleaseHandle(void* handle) const;
  // Sends one try of `request`; fills `attempt` with what came back. Throws only what
  // building the request throws; the callbacks' exceptions wait in attempt.failure.
  void Transfer(const S3Request& request, Attempt& attempt) const;
  // One try: true when it is final (its response is the answer), false to retry.
  bool PerformOnce(const S3Request& request, Attempt& attempt) const;

  S3Settings settings_;
  std::string bucket_;
  S3ClientOptions options_;
  std::string base_url_;  // up to the key: "http://host:port/bucket/"
  std::string sigv4_;     // "aws:amz:REGION:s3"
  mutable std::mutex mutex_;
  mutable std::vector<void*> idle_;    // GUARDED_BY(mutex_): CURL easy handles
  mutable std::int64_t requests_ = 0;  // GUARDED_BY(mutex_)
};

// True when `response` is S3's NoSuchBucket error (a 404 that is no absent key).
bool IsNoSuchBucket(const S3Response& response);

// Throws StorageError for `response`, a final one that is not what the caller needed:
// "GET s3://b/k: HTTP 403 (AccessDenied: ...)", with advice for 401/403 (naming where the
// credentials came from, never the keys), 404 bucket and region errors.
[[noreturn]] void ThrowResponseError(const S3Client& client, const S3Request& request,
                                     const S3Response& response);

}  // namespace tessera::s3
