#include "s3_url.hpp"

#include "tessera/core/errors.hpp"
#include "tessera/storage/store.hpp"

namespace tessera::s3 {
namespace {

[[noreturn]] void ThrowBadUrl(std::string_view url, const std::string& why) {
  throw InvalidArgument("invalid S3 location \"" + std::string(url) + "\": " + why +
                        "; write s3://BUCKET/PREFIX, e.g. s3://my-bucket/data/t2m.zarr");
}

// S3's bucket naming rules (3 to 63 lower-case letters, digits, '.' and '-', starting and
// ending with a letter or digit); the legacy upper-case and '_' names are accepted too.
bool IsValidBucket(std::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  for (const char c : bucket) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  return alnum(bucket.front()) && alnum(bucket.back());
}

}  // namespace

std::string S3Location::Url() const {
  return std::string(kScheme) + bucket + (prefix.empty() ? "" : "/" + prefix);
}

std::string S3Location::ObjectKey(std::string_view key) const { return JoinKey(prefix, key); }

bool IsS3Url(std::string_view path) { return path.starts_with(kScheme); }

S3Location ParseS3Url(std::string_view url) {
  if (!IsS3Url(url)) ThrowBadUrl(url, "it does not start with s3://");
  std::string_view rest = url.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  S3Location location;
  location.bucket = std::string(rest.substr(0, slash));
  if (location.bucket.empty()) ThrowBadUrl(url, "the bucket name is missing");
  if (!IsValidBucket(location.bucket)) {
    ThrowBadUrl(url, "\"" + location.bucket +
                         "\" is not a valid bucket name (3 to 63 letters, digits, '.' or '-')");
  }
  if (slash != std::string_view::npos) {
    std::string_view prefix = rest.substr(slash + 1);
    while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
    if (!prefix.empty()) {
      try {
        ValidateKey(prefix);
      } catch (const InvalidArgument& error) {
        ThrowBadUrl(url, std::string("its prefix is not a valid key (") + error.what() + ")");
      }
    }
    location.prefix = std::string(prefix);
  }
  return location;
}

std::string UriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
                            c == '~' || (keep_slash && c == '/');
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

}  // namespace tessera::s3
