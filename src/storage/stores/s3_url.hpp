// S3 locations and the URI encoding of S3 requests. Internal to src/storage/stores.
//
//   S3Location where = ParseS3Url("s3://era5/t2m.zarr");   // {bucket "era5", prefix "t2m.zarr"}
//   UriEncode("a b/c", /*keep_slash=*/true);               // "a%20b/c"
//
// ParseS3Url throws InvalidArgument naming the URL and what is wrong: no bucket, a bucket
// name S3 refuses, or a prefix ValidateKey refuses ("..", "//", ...). A trailing '/' is
// dropped; an empty prefix is the bucket's root. Stateless; safe to call from any thread.
#pragma once

#include <string>
#include <string_view>

namespace tessera::s3 {

inline constexpr std::string_view kScheme = "s3://";

struct S3Location {
  std::string bucket;
  std::string prefix;  // no leading or trailing '/'; "" = the bucket's root

  // "s3://bucket/prefix" (or "s3://bucket").
  std::string Url() const;
};

// True when `path` starts with "s3://" in any case ("S3://" too): such a path names an
// object store, never a local directory. ParseS3Url then accepts only the lower-case
// spelling, so that every layer compares one spelling of a location.
bool IsS3Url(std::string_view path);

// Also refuses user information ("s3://KEY:SECRET@bucket/x"; credentials come from the
// environment, never the URL): a URL holding '@' whose text up to the first '/' after
// "s3://" is no bucket name (a secret may hold '/') is refused quoting only what follows
// its last '@'.
S3Location ParseS3Url(std::string_view url);

// True when virtual-hosted addressing (https://BUCKET.HOST/KEY) can name `bucket`: a DNS
// label of lower-case letters, digits and '-' that starts and ends with a letter or digit.
// Dots would break the TLS name check (*.s3.amazonaws.com covers one label), and legacy
// names with upper case or '_' are no host names.
bool IsDnsSafeBucket(std::string_view bucket);

// RFC 3986 percent-encoding as SigV4 canonicalizes it: every byte but A-Z a-z 0-9 - _ . ~
// (and '/' when keep_slash) as %XX with upper-case hex digits.
std::string UriEncode(std::string_view text, bool keep_slash);

}  // namespace tessera::s3
