// S3Client against a scripted server on loopback (scripted_http_server.hpp): what is
// retried and what ends the retries, bodies of every framing into a BodyTarget, a
// target's exception passing through libcurl's callbacks, the addressing of buckets, the
// libcurl version check, and messages that say what failed without naming a credential.
#include "s3_client.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "scripted_http_server.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::s3 {
namespace {

S3Request GetOf(const std::string& key) {
  S3Request request;
  request.key = key;
  return request;
}

// The message of the StorageError `perform` throws; "" (a failure) when it throws none.
template <class Perform>
std::string StorageErrorOf(Perform perform) {
  try {
    perform();
  } catch (const StorageError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no StorageError";
  return "";
}

void ExpectNoCredentialIn(const std::string& message) {
  EXPECT_EQ(message.find(kScriptedKeyId), std::string::npos) << message;
  EXPECT_EQ(message.find(kScriptedSecret), std::string::npos) << message;
}

// A port on 127.0.0.1 that nothing listens on (the kernel's pick, closed again).
int UnusedPort() {
  const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(::bind(probe, reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ::close(probe);
  return ntohs(address.sin_port);
}

struct DestinationFull : std::runtime_error {
  DestinationFull() : std::runtime_error("the destination is full") {}
};

TEST(S3Client, Retries408AndOtherTransientStatuses) {
  ScriptedHttpServer server([](const RecordedRequest&, int index) {
    static constexpr int kStatuses[] = {408, 503, 429};
    return index < 3 ? HttpResponse(kStatuses[index], "", "") : HttpResponse(200, "", "done");
  });
  const auto client = ScriptedS3Client(server, /*max_attempts=*/4);
  const S3Response response = client->Perform(GetOf("k"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.text, "done");
  EXPECT_EQ(client->requests_sent(), 4);
}

TEST(S3Client, AnOverloadedServiceSaysToRetryLater) {
  ScriptedHttpServer server([](const RecordedRequest&, int) {
    return HttpResponse(503, "", "<Error><Code>SlowDown</Code><Message>Slow</Message></Error>");
  });
  const auto client = ScriptedS3Client(server, /*max_attempts=*/2);
  const std::string message = StorageErrorOf([&] { client->Perform(GetOf("k")); });
  EXPECT_NE(message.find("GET s3://bucket/k failed after 2 attempts"), std::string::npos)
      << message;
  EXPECT_NE(message.find("HTTP 503 SlowDown (Slow)"), std::string::npos) << message;
  EXPECT_NE(message.find("unavailable or overloaded"), std::string::npos) << message;
  ExpectNoCredentialIn(message);
}

TEST(S3Client, AnUnreachableEndpointSaysTheConnectionFailed) {
  S3Settings settings;
  settings.endpoint = "http://127.0.0.1:" + std::to_string(UnusedPort());
  S3ClientOptions options;
  options.max_attempts = 2;
  options.base_delay = std::chrono::milliseconds(1);
  const S3Client client(settings, "bucket", options);
  const std::string message = StorageErrorOf([&] { client.Perform(GetOf("k")); });
  EXPECT_NE(message.find("after 2 attempts"), std::string::npos) << message;
  EXPECT_NE(message.find("the connection failed: check the endpoint"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("overloaded"), std::string::npos) << message;
}

// A BodyTarget's exception (a caller's Destination allocating, say) is thrown inside
// libcurl's write callback: it must come out of Perform as itself, with nothing retried,
// leaked (ASan) or left broken in the handle pool.
TEST(S3Client, ATargetsExceptionPropagatesUntried) {
  ScriptedHttpServer server(
      [](const RecordedRequest&, int) { return HttpResponse(200, "", "0123456789"); });
  const auto client = ScriptedS3Client(server, /*max_attempts=*/3);
  const BodyTarget full = [](long, std::int64_t) -> std::span<std::byte> {
    throw DestinationFull();
  };
  EXPECT_THROW(client->Perform(GetOf("k"), &full), DestinationFull);
  EXPECT_EQ(client->requests_sent(), 1);
  const BodyTarget no_memory = [](long, std::int64_t) -> std::span<std::byte> {
    throw std::bad_alloc();
  };
  EXPECT_THROW(client->Perform(GetOf("k"), &no_memory), std::bad_alloc);
  EXPECT_EQ(client->requests_sent(), 2);
  // The pooled handle serves the next request as a fresh one.
  EXPECT_EQ(client->Perform(GetOf("k")).text, "0123456789");
}

// Without a Content-Length the target is called after the transfer, outside libcurl.
TEST(S3Client, ATargetsExceptionForAChunkedBodyPropagatesUntried) {
  ScriptedHttpServer server([](const RecordedRequest&, int) {
    return HttpResponse(200, "Transfer-Encoding: chunked\r\n", "3\r\nabc\r\n0\r\n\r\n",
                        /*content_length=*/false);
  });
  const auto client = ScriptedS3Client(server, /*max_attempts=*/3);
  const BodyTarget full = [](long, std::int64_t) -> std::span<std::byte> {
    throw DestinationFull();
  };
  EXPECT_THROW(client->Perform(GetOf("k"), &full), DestinationFull);
  EXPECT_EQ(client->requests_sent(), 1);
}

TEST(S3Client, ChunkedBodiesReachTheTargetEmptyOnesAsZeroBytes) {
  for (const std::string& value : {std::string("hello"), std::string()}) {
    SCOPED_TRACE("value of " + std::to_string(value.size()) + " bytes");
    ScriptedHttpServer server([&value](const RecordedRequest&, int) {
      const std::string chunks =
          (value.empty() ? "" : "5\r\n" + value + "\r\n") + std::string("0\r\n\r\n");
      return HttpResponse(200, "Transfer-Encoding: chunked\r\n", chunks, /*content_length=*/false);
    });
    const auto client = ScriptedS3Client(server);
    std::string received = "untouched";
    std::int64_t asked = -1;
    const BodyTarget target = [&](long status, std::int64_t size) {
      EXPECT_EQ(status, 200);
      asked = size;
      received.assign(static_cast<std::size_t>(size), '\0');
      return std::as_writable_bytes(std::span<char>(received.data(), received.size()));
    };
    const S3Response response = client->Perform(GetOf("k"), &target);
    EXPECT_FALSE(response.refused);
    EXPECT_EQ(asked, static_cast<std::int64_t>(value.size()));
    EXPECT_EQ(received, value);
  }
}

TEST(S3Client, AChunkedBodyLongerThanTheTextCapFailsUntried) {
  const std::size_t size = kMaxTextBody + 1;
  std::string chunked;
  {
    char length[32];
    std::snprintf(length, sizeof(length), "%zx\r\n", size);
    chunked = length + std::string(size, 'x') + "\r\n0\r\n\r\n";
  }
  ScriptedHttpServer server([&chunked](const RecordedRequest&, int) {
    return HttpResponse(200, "Transfer-Encoding: chunked\r\n", chunked, /*content_length=*/false);
  });
  const auto client = ScriptedS3Client(server, /*max_attempts=*/3);
  bool asked = false;
  const BodyTarget target = [&](long, std::int64_t) -> std::span<std::byte> {
    asked = true;
    return {};
  };
  const std::string message = StorageErrorOf([&] { client->Perform(GetOf("big"), &target); });
  EXPECT_NE(message.find("GET s3://bucket/big"), std::string::npos) << message;
  EXPECT_NE(message.find("without a Content-Length"), std::string::npos) << message;
  EXPECT_EQ(message.find("longer than it announced"), std::string::npos) << message;
  EXPECT_FALSE(asked);
  EXPECT_EQ(client->requests_sent(), 1);
}

TEST(S3Client, VirtualHostedAddressingOnlyForDnsSafeBuckets) {
  S3Settings aws;  // endpoint "": AWS, virtual-hosted where the bucket's name allows
  const auto url = [](const S3Settings& settings, const std::string& bucket,
                      std::optional<bool> virtual_hosted) {
    S3ClientOptions options;
    options.virtual_hosted = virtual_hosted;
    return S3Client(settings, bucket, options).UrlOf(GetOf("k"));
  };
  EXPECT_EQ(url(aws, "my-bucket", std::nullopt), "https://my-bucket.s3.us-east-1.amazonaws.com/k");
  EXPECT_EQ(url(aws, "my.bucket", std::nullopt), "https://s3.us-east-1.amazonaws.com/my.bucket/k");
  EXPECT_EQ(url(aws, "My_Bucket", std::nullopt), "https://s3.us-east-1.amazonaws.com/My_Bucket/k");
  EXPECT_EQ(url(aws, "Upper", std::nullopt), "https://s3.us-east-1.amazonaws.com/Upper/k");
  S3Settings minio;
  minio.endpoint = "http://minio:9000";
  EXPECT_EQ(url(minio, "data", std::nullopt), "http://minio:9000/data/k");
  EXPECT_EQ(url(minio, "data", true), "http://data.minio:9000/k");
  EXPECT_EQ(url(minio, "da.ta", true), "http://minio:9000/da.ta/k");
}

TEST(S3Client, RefusesALibcurlOlderThan7_87) {
  try {
    RequireLibcurlVersion(0x075100, "7.81.0");
    FAIL() << "accepted libcurl 7.81.0";
  } catch (const StorageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("libcurl 7.81.0 is too old"), std::string::npos) << message;
    EXPECT_NE(message.find("7.87.0 or later"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(RequireLibcurlVersion(0x075700, "7.87.0"));
  EXPECT_NO_THROW(RequireLibcurlVersion(0x080500, "8.5.0"));
}

TEST(S3Client, RefusedAccessSaysWhereTheCredentialsCameFrom) {
  ScriptedHttpServer server([](const RecordedRequest&, int) {
    return HttpResponse(403, "", "<Error><Code>AccessDenied</Code></Error>");
  });
  const auto environment_keys = ScriptedS3Client(server);
  const S3Request request = GetOf("k");
  const S3Response response = environment_keys->Perform(request);
  const std::string from_environment =
      StorageErrorOf([&] { ThrowResponseError(*environment_keys, request, response); });
  EXPECT_NE(from_environment.find("HTTP 403 AccessDenied"), std::string::npos) << from_environment;
  EXPECT_NE(from_environment.find("check the credentials from the environment"), std::string::npos)
      << from_environment;
  EXPECT_EQ(from_environment.find("profile"), std::string::npos) << from_environment;
  ExpectNoCredentialIn(from_environment);

  S3Settings profile = environment_keys->settings();
  profile.profile = "dev";
  profile.credentials_source =
      "profile \"dev\" of the AWS credentials file /home/me/.aws/credentials";
  const S3Client from_profile(profile, "bucket", {});
  const std::string profile_message =
      StorageErrorOf([&] { ThrowResponseError(from_profile, request, response); });
  EXPECT_NE(profile_message.find("from profile \"dev\" of the AWS credentials file "
                                 "/home/me/.aws/credentials"),
            std::string::npos)
      << profile_message;
  ExpectNoCredentialIn(profile_message);

  S3Settings anonymous;
  anonymous.profile = "default";
  const S3Client nobody(anonymous, "bucket", {});
  const std::string anonymous_message =
      StorageErrorOf([&] { ThrowResponseError(nobody, request, response); });
  EXPECT_NE(anonymous_message.find("anonymous request"), std::string::npos) << anonymous_message;
}

}  // namespace
}  // namespace tessera::s3
