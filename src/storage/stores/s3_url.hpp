// S3 locations and the URI encoding of S3 requests. Internal to src/storage/stores.
//
//   S3Location where = ParseS3Url("s3://era5/t2m.zarr");   // {bucket "era5", prefix "t2m.zarr"}
//   UriEncode("a b/c", /*keep_slash=*/true);               // "a%20b/c"
//
// ParseS3Url throws InvalidArgument naming the URL and what is wrong: no bucket, a bucket
// name S3 refuses, or a prefix ValidateKey refuses ("..", "//", ...). A trailing '/' is
// dropped; an empty prefix is the bucket's root.
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
  // The object key of `key` below the prefix.
  std::string ObjectKey(std::string_view key) const;
};

// True when `path` starts with "s3://".
bool IsS3Url(std::string_view path);

S3Location ParseS3Url(std::string_view url);

// RFC 3986 percent-encoding as SigV4 canonicalizes it: every byte but A-Z a-z 0-9 - _ . ~
// (and '/' when keep_slash) as %XX with upper-case hex digits.
std::string UriEncode(std::string_view text, bool keep_slash);

}  // namespace tessera::s3
