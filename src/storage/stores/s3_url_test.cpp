// ParseS3Url, IsS3Url and the addressing and encoding helpers of s3_url.hpp; OpenStore's
// choice between an object store and a directory by the scheme.
#include "s3_url.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tessera/core/errors.hpp"
#include "tessera/storage/open_store.hpp"

namespace tessera::s3 {
namespace {

// The message of the InvalidArgument ParseS3Url throws for `url`; "" when it parses.
std::string UrlError(std::string_view url) {
  try {
    ParseS3Url(url);
  } catch (const InvalidArgument& error) {
    return error.what();
  }
  return "";
}

TEST(ParseS3Url, SplitsBucketAndPrefix) {
  const S3Location location = ParseS3Url("s3://era5/t2m.zarr/");
  EXPECT_EQ(location.bucket, "era5");
  EXPECT_EQ(location.prefix, "t2m.zarr");
  EXPECT_EQ(location.Url(), "s3://era5/t2m.zarr");
  EXPECT_EQ(ParseS3Url("s3://era5").prefix, "");
  EXPECT_EQ(ParseS3Url("s3://era5/a@b/c").prefix, "a@b/c");  // '@' in a key is a key's
}

TEST(ParseS3Url, RefusesUserInformationWithoutQuotingIt) {
  constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  for (const std::string& url : {std::string("s3://AKIAEXAMPLE:") + kSecret + "@bucket/x",
                                 std::string("s3://AKIAEXAMPLE:") + kSecret + "@bucket",
                                 std::string("s3://AKIAEXAMPLE:") + kSecret + "@bucket/x/y@z",
                                 std::string("S3://AKIAEXAMPLE@bucket")}) {
    const std::string message = UrlError(url);
    EXPECT_NE(message.find("user information"), std::string::npos) << message;
    EXPECT_EQ(message.find("AKIAEXAMPLE"), std::string::npos) << message;
    EXPECT_EQ(message.find("wJalrXUtnFEMI"), std::string::npos) << message;
    EXPECT_EQ(message.find("K7MDENG"), std::string::npos) << message;
  }
  EXPECT_NE(UrlError(std::string("s3://AKIAEXAMPLE:") + kSecret + "@bucket/x")
                .find("\"s3://...@bucket/x\""),
            std::string::npos);
}

TEST(ParseS3Url, RefusesMalformedLocationsSayingWhy) {
  EXPECT_NE(UrlError("s3://").find("the bucket name is missing"), std::string::npos);
  EXPECT_NE(UrlError("s3://ab/x").find("not a valid bucket name"), std::string::npos);
  EXPECT_NE(UrlError("s3://bucket/a//b").find("not a valid key"), std::string::npos);
  EXPECT_NE(UrlError("s3://bucket/../x").find("not a valid key"), std::string::npos);
  EXPECT_NE(UrlError("/data/x").find("does not start with s3://"), std::string::npos);
}

// "S3://b/x" names an object store (never a local directory "S3:"), spelt one way only.
TEST(ParseS3Url, TheSchemeIsCaseInsensitiveButSpeltLowerCase) {
  EXPECT_TRUE(IsS3Url("s3://b/x"));
  EXPECT_TRUE(IsS3Url("S3://b/x"));
  EXPECT_FALSE(IsS3Url("s3:/b/x"));
  EXPECT_FALSE(IsS3Url("s3"));
  EXPECT_FALSE(IsS3Url("./s3://x"));
  EXPECT_TRUE(IsObjectStoreLocation("S3://bucket/x"));
  EXPECT_NE(UrlError("S3://bucket/x").find("write it as s3://"), std::string::npos);
  const std::filesystem::path directory = "S3:";
  const bool existed = std::filesystem::exists(directory);
  EXPECT_THROW(OpenStore("S3://bucket/x", {}), InvalidArgument);
  EXPECT_EQ(std::filesystem::exists(directory), existed) << "OpenStore made a directory \"S3:\"";
}

TEST(IsDnsSafeBucket, OnlyLowerCaseLabels) {
  for (const char* safe : {"era5", "my-bucket", "a1-b2", "abc"}) {
    EXPECT_TRUE(IsDnsSafeBucket(safe)) << safe;
  }
  for (const char* unsafe : {"my.bucket", "My-Bucket", "my_bucket", "-ab", "ab-", ""}) {
    EXPECT_FALSE(IsDnsSafeBucket(unsafe)) << unsafe;
  }
  EXPECT_FALSE(IsDnsSafeBucket(std::string(64, 'a')));
}

TEST(UriEncode, EncodesAllButUnreservedBytesInUpperCaseHex) {
  EXPECT_EQ(UriEncode("a b/c+d~e_f.g-h", /*keep_slash=*/true), "a%20b/c%2Bd~e_f.g-h");
  EXPECT_EQ(UriEncode("a/b", /*keep_slash=*/false), "a%2Fb");
  EXPECT_EQ(UriEncode("\xC3\xA9\x01", /*keep_slash=*/false), "%C3%A9%01");
}

}  // namespace
}  // namespace tessera::s3
