// AWS Signature V4 of Tessera's S3 requests, as libcurl computes them, against the
// examples AWS publishes for S3 ("Signature Calculations for the Authorization Header:
// Transferring Payload in a Single Chunk"): the same request, credentials and time must
// give the published signature. Requests go to a listener on loopback that records them.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "s3_client.hpp"

namespace tessera::s3 {
namespace {

// Accepts one connection on 127.0.0.1, reads one request's head, answers 200 with an
// empty body, and keeps what it read.
class RecordingListener {
 public:
  RecordingListener() {
    socket_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    EXPECT_EQ(::bind(socket_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    socklen_t length = sizeof(address);
    ::getsockname(socket_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    EXPECT_EQ(::listen(socket_, 1), 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~RecordingListener() {
    if (thread_.joinable()) thread_.join();
    ::close(socket_);
  }
  int port() const { return port_; }
  // The request's head; waits for it.
  const std::string& request() {
    if (thread_.joinable()) thread_.join();
    return request_;
  }

 private:
  void Serve() {
    const int connection = ::accept(socket_, nullptr, nullptr);
    if (connection < 0) return;
    char buffer[4096];
    while (request_.find("\r\n\r\n") == std::string::npos) {
      const ssize_t got = ::read(connection, buffer, sizeof(buffer));
      if (got <= 0) break;
      request_.append(buffer, static_cast<std::size_t>(got));
    }
    const std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    ssize_t sent = ::write(connection, answer.data(), answer.size());
    static_cast<void>(sent);
    ::close(connection);
  }

  int socket_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::string request_;
};

// The value of header `name` (lower case) in a request head.
std::string Header(const std::string& head, const std::string& name) {
  std::size_t start = 0;
  while (start < head.size()) {
    const std::size_t end = head.find("\r\n", start);
    const std::string line = head.substr(start, end - start);
    std::string lower = line;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.starts_with(name + ":")) {
      std::size_t value = name.size() + 1;
      while (value < line.size() && line[value] == ' ') ++value;
      return line.substr(value);
    }
    if (end == std::string::npos) break;
    start = end + 2;
  }
  return "";
}

// The request `request` to examplebucket as AWS's examples make it, seen on the wire.
std::string SignedRequestHead(const S3Request& request) {
  RecordingListener listener;
  S3Settings settings;
  settings.endpoint = "http://s3.amazonaws.com";
  settings.region = "us-east-1";
  settings.credentials.access_key_id = "AKIAIOSFODNN7EXAMPLE";
  settings.credentials.secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  S3ClientOptions options;
  options.virtual_hosted = true;
  options.fixed_date = "20130524T000000Z";
  options.connect_to =
      "examplebucket.s3.amazonaws.com:80:127.0.0.1:" + std::to_string(listener.port());
  options.max_attempts = 1;
  const S3Client client(settings, "examplebucket", options);
  const S3Response response = client.Perform(request);
  EXPECT_EQ(response.status, 200);
  return listener.request();
}

TEST(S3Signing, GetObjectWithRangeMatchesAwsExample) {
  S3Request request;
  request.key = "test.txt";
  request.range = "bytes=0-9";
  const std::string head = SignedRequestHead(request);
  EXPECT_TRUE(head.starts_with("GET /test.txt HTTP/1.1\r\n")) << head;
  EXPECT_EQ(Header(head, "host"), "examplebucket.s3.amazonaws.com") << head;
  EXPECT_EQ(Header(head, "x-amz-date"), "20130524T000000Z") << head;
  const std::string authorization = Header(head, "authorization");
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
  const std::string head = SignedRequestHead(request);
  EXPECT_TRUE(head.starts_with("GET /?max-keys=2&prefix=J HTTP/1.1\r\n")) << head;
  const std::string authorization = Header(head, "authorization");
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
  const std::string head = SignedRequestHead(request);
  EXPECT_TRUE(head.starts_with("GET /a%20b/c%2Bd.txt HTTP/1.1\r\n")) << head;
  EXPECT_EQ(head.find("wJalrXUtnFEMI"), std::string::npos) << head;
}

}  // namespace
}  // namespace tessera::s3
