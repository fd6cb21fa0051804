// AWS Signature V4 of Tessera's S3 requests, as libcurl computes them, against the
// examples AWS publishes for S3 ("Signature Calculations for the Authorization Header:
// Transferring Payload in a Single Chunk"): the same request, credentials and time must
// give the published signature. Requests go to a server on loopback that records them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "s3_client.hpp"
#include "scripted_http_server.hpp"

namespace tessera::s3 {
namespace {

// The request `request` to examplebucket as AWS's examples make it, seen on the wire.
RecordedRequest SignedRequest(const S3Request& request) {
  ScriptedHttpServer server([](const RecordedRequest&, int) { return HttpResponse(200, "", ""); });
  S3Settings settings;
  settings.endpoint = "http://s3.amazonaws.com";
  settings.region = "us-east-1";
  settings.credentials.access_key_id = "AKIAIOSFODNN7EXAMPLE";
  settings.credentials.secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  S3ClientOptions options;
  options.virtual_hosted = true;
  options.fixed_date = "20130524T000000Z";
  options.connect_to =
      "examplebucket.s3.amazonaws.com:80:127.0.0.1:" + std::to_string(server.port());
  options.max_attempts = 1;
  const S3Client client(settings, "examplebucket", options);
  const S3Response response = client.Perform(request);
  EXPECT_EQ(response.status, 200);
  const std::vector<RecordedRequest> seen = server.requests();
  return seen.empty() ? RecordedRequest{} : seen.front();
}

TEST(S3Signing, GetObjectWithRangeMatchesAwsExample) {
  S3Request request;
  request.key = "test.txt";
  request.range = "bytes=0-9";
  const RecordedRequest seen = SignedRequest(request);
  EXPECT_EQ(seen.RequestLine(), "GET /test.txt HTTP/1.1") << seen.head;
  EXPECT_EQ(seen.Header("host"), "examplebucket.s3.amazonaws.com") << seen.head;
  EXPECT_EQ(seen.Header("x-amz-date"), "20130524T000000Z") << seen.head;
  const std::string authorization = seen.Header("authorization");
  EXPECT_NE(authorization.find("Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
                               "aws4_request"),
            std::string::npos)
      << authorization;
  EXPECT_NE(authorization.find("SignedHeaders=host;range;x-amz-content-sha256;x-amz-date"),
            std::string::npos)
      << authorization;
  EXPECT_NE(authorization.find(
                "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"),
            std::string::npos)
      << authorization;
}

TEST(S3Signing, ListObjectsMatchesAwsExample) {
  S3Request request;
  request.query = "max-keys=2&prefix=J";
  const RecordedRequest seen = SignedRequest(request);
  EXPECT_EQ(seen.RequestLine(), "GET /?max-keys=2&prefix=J HTTP/1.1") << seen.head;
  const std::string authorization = seen.Header("authorization");
  EXPECT_NE(authorization.find("SignedHeaders=host;x-amz-content-sha256;x-amz-date"),
            std::string::npos)
      << authorization;
  EXPECT_NE(authorization.find(
                "Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"),
            std::string::npos)
      << authorization;
}

TEST(S3Signing, SecretNeverTravelsOrShows) {
  S3Request request;
  request.key = "a b/c+d.txt";  // encoded once, as S3 canonicalizes it
  const RecordedRequest seen = SignedRequest(request);
  EXPECT_EQ(seen.RequestLine(), "GET /a%20b/c%2Bd.txt HTTP/1.1") << seen.head;
  EXPECT_EQ(seen.head.find("wJalrXUtnFEMI"), std::string::npos) << seen.head;
}

// Keys travel byte for byte (CURLOPT_PATH_AS_IS): "p/../other/k", listed and then deleted
// by EraseAll, must not become a DELETE of "other/k".
TEST(S3Signing, DotSegmentsOfKeysTravelAsTheyAre) {
  S3Request request;
  request.method = "DELETE";
  request.key = "p/../other/./k";
  const RecordedRequest seen = SignedRequest(request);
  EXPECT_EQ(seen.RequestLine(), "DELETE /p/../other/./k HTTP/1.1") << seen.head;
}

}  // namespace
}  // namespace tessera::s3
