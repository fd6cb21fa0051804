#include "s3_url.hpp"

#include "s3_text.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/storage/store.hpp"

namespace tessera::s3 {
namespace {

constexpr std::string_view kUrlHelp = "write s3://BUCKET/PREFIX, e.g. s3://my-bucket/data/t2m.zarr";

[[noreturn]] void ThrowBadUrl(std::string_view url, const std::string& why) {
  throw InvalidArgument("invalid S3 location \"" + std::string(url) + "\": " + why + "; " +
                        std::string(kUrlHelp));
}

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// S3's bucket naming rules (3 to 63 lower-case letters, digits, '.' and '-', starting and
// ending with a letter or digit); the legacy upper-case and '_' names are accepted too.
bool IsValidBucket(std::string_view bucket) {
  if (bucket.size() < 3 || bucket.size() > 63) return false;
  for (const char c : bucket) {
    if (!IsAlnum(c) && c != '.' && c != '-' && c != '_') return false;
  }
  return IsAlnum(bucket.front()) && IsAlnum(bucket.back());
}

}  // namespace

std::string S3Location::Url() const {
  return std::string(kScheme) + bucket + (prefix.empty() ? "" : "/" + prefix);
}

bool IsS3Url(std::string_view path) {
  return path.size() >= kScheme.size() && AsciiLower(path.substr(0, kScheme.size())) == kScheme;
}

S3Location ParseS3Url(std::string_view url) {
  if (!IsS3Url(url)) ThrowBadUrl(url, "it does not start with s3://");
  std::string_view rest = url.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  const std::size_t last_at = url.rfind('@');
  if (!IsValidBucket(authority) && last_at != std::string_view::npos) {
    // "s3://KEY:SECRET@bucket/x" (a secret may hold '/', so the '@' can lie past the
    // first '/'): what precedes the last '@' may be a secret, so only what follows is
    // quoted.
    throw InvalidArgument("invalid S3 location \"s3://...@" + std::string(url.substr(last_at + 1)) +
                          "\": user information (\"NAME:SECRET@\") is not allowed in an S3 "
                          "location; give credentials through AWS_ACCESS_KEY_ID and "
                          "AWS_SECRET_ACCESS_KEY or an AWS profile, and " +
                          std::string(kUrlHelp));
  }
  if (!url.starts_with(kScheme)) {
    ThrowBadUrl(url, "the scheme is not lower case; write it as s3://");
  }
  S3Location location;
  location.bucket = std::string(authority);
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

bool IsDnsSafeBucket(std::string_view bucket) {
  // A DNS label holds at most 63 bytes, as a bucket name does.
  constexpr std::size_t kMaxLabel = 63;
  if (bucket.empty() || bucket.size() > kMaxLabel) return false;
  for (const char c : bucket) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return IsLowerAlnum(bucket.front()) && IsLowerAlnum(bucket.back());
}

std::string UriEncode(std::string_view text, bool keep_slash) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const bool unreserved =
        IsAlnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/');
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      AppendHexByte(out, static_cast<unsigned char>(c));
    }
  }
  return out;
}

}  // namespace tessera::s3
