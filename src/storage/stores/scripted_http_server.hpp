// ScriptedHttpServer: an HTTP/1.1 server on 127.0.0.1 for tests of the S3 client, which
// answers each request with the raw bytes a test's handler returns, so a test can send
// what no well-behaved server would (a HEAD without Content-Length, a 200 to a ranged
// GET, a chunked body, a listing that repeats itself) and see what the client sent.
//
//   ScriptedHttpServer server([](const RecordedRequest& request, int index) {
//     return std::string("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
//   });
//   settings.endpoint = server.endpoint();        // "http://127.0.0.1:PORT"
//   ...
//   server.requests()[0].Header("if-match");      // what the client sent
//   auto client = ScriptedS3Client(server, 2);    // an S3Client of bucket "bucket" there
//
// Each connection carries one request: its head is read to the blank line, then a body of
// its Content-Length; the handler's answer is written (a client that hangs up midway
// ends it) and the connection closed. One thread serves connections one after another,
// from construction until destruction. Test code only; header-only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "s3_client.hpp"

namespace tessera::s3 {

// One request as the server read it.
struct RecordedRequest {
  std::string head;  // the request line and the headers, up to the blank line
  std::string body;

  // "GET /bucket/key HTTP/1.1".
  std::string RequestLine() const { return head.substr(0, head.find("\r\n")); }
  // The value of header `name` (any case), trimmed; "" when absent.
  std::string Header(std::string_view name) const {
    std::size_t start = head.find("\r\n");
    while (start != std::string::npos && start + 2 < head.size()) {
      start += 2;
      const std::size_t end = std::min(head.find("\r\n", start), head.size());
      const std::string_view line = std::string_view(head).substr(start, end - start);
      if (line.size() > name.size() && line[name.size()] == ':' &&
          EqualsIgnoringCase(line.substr(0, name.size()), name)) {
        std::string_view value = line.substr(name.size() + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        return std::string(value);
      }
      start = end;
    }
    return "";
  }

 private:
  static bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    for (std::size_t at = 0; at < a.size(); ++at) {
      if (lower(a[at]) != lower(b[at])) return false;
    }
    return a.size() == b.size();
  }
};

class ScriptedHttpServer {
 public:
  // The raw response to request number `index` (0 for the first).
  using Handler = std::function<std::string(const RecordedRequest& request, int index)>;

  explicit ScriptedHttpServer(Handler handler) : handler_(std::move(handler)) {
    socket_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;  // the kernel picks a free port
    socklen_t length = sizeof(address);
    if (socket_ < 0 || ::bind(socket_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::getsockname(socket_, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
        ::listen(socket_, SOMAXCONN) != 0) {
      if (socket_ >= 0) ::close(socket_);
      throw std::runtime_error("ScriptedHttpServer: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedHttpServer() {
    stopping_ = true;
    ::shutdown(socket_, SHUT_RDWR);  // wakes the accept() the thread waits in
    thread_.join();
    ::close(socket_);
  }
  ScriptedHttpServer(const ScriptedHttpServer&) = delete;
  ScriptedHttpServer& operator=(const ScriptedHttpServer&) = delete;

  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<RecordedRequest> requests() const {
    const std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void Serve() {
    while (!stopping_) {
      const int connection = ::accept(socket_, nullptr, nullptr);
      if (connection < 0) continue;  // shut down (stopping_), or a connection gone already
      RecordedRequest request;
      if (Read(connection, request)) {
        int index = 0;
        {
          const std::lock_guard lock(mutex_);
          index = static_cast<int>(requests_.size());
          requests_.push_back(request);
        }
        Write(connection, handler_(request, index));
      }
      ::close(connection);
    }
  }

  // Reads one request; false when the client hung up first.
  static bool Read(int connection, RecordedRequest& request) {
    std::string data;
    char buffer[16384];
    std::size_t head_end = std::string::npos;
    std::size_t body_size = 0;
    while (true) {
      if (head_end == std::string::npos) {
        head_end = data.find("\r\n\r\n");
        if (head_end != std::string::npos) {
          request.head = data.substr(0, head_end);
          const std::string length = request.Header("content-length");
          body_size = length.empty() ? 0 : std::stoul(length);
        }
      }
      if (head_end != std::string::npos && data.size() >= head_end + 4 + body_size) {
        request.body = data.substr(head_end + 4, body_size);
        return true;
      }
      const ssize_t got = ::recv(connection, buffer, sizeof(buffer), 0);
      if (got <= 0) return false;
      data.append(buffer, static_cast<std::size_t>(got));
    }
  }

  static void Write(int connection, std::string_view answer) {
    while (!answer.empty()) {
      // MSG_NOSIGNAL: a client that hung up gives EPIPE, not a SIGPIPE killing the test.
      const ssize_t sent = ::send(connection, answer.data(), answer.size(), MSG_NOSIGNAL);
      if (sent <= 0) return;
      answer.remove_prefix(static_cast<std::size_t>(sent));
    }
  }

  Handler handler_;
  int socket_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<RecordedRequest> requests_;  // GUARDED_BY(mutex_)
};

// A raw HTTP/1.1 response with a Content-Length (unless `headers` set the framing itself,
// "Transfer-Encoding: chunked\r\n") and Connection: close; `headers` end each line in
// "\r\n".
inline std::string HttpResponse(int status, const std::string& headers, const std::string& body,
                                bool content_length = true) {
  return "HTTP/1.1 " + std::to_string(status) + " Scripted\r\n" + headers +
         (content_length ? "Content-Length: " + std::to_string(body.size()) + "\r\n" : "") +
         "Connection: close\r\n\r\n" + body;
}

// Credentials of the clients ScriptedS3Client makes: tests check messages never show them.
inline constexpr const char* kScriptedKeyId = "AKIATESSERASCRIPTED1";
inline constexpr const char* kScriptedSecret = "sCrIpTeDsEcReT/K7MDENG/bPxRfiCYEXAMPLE";

// A client of bucket "bucket" at `server`, signing with the scripted credentials ("from"
// the environment), trying each request `max_attempts` times with backoffs of ~1 ms.
inline std::shared_ptr<const S3Client> ScriptedS3Client(const ScriptedHttpServer& server,
                                                        int max_attempts = 1) {
  S3Settings settings;
  settings.endpoint = server.endpoint();
  settings.credentials.access_key_id = kScriptedKeyId;
  settings.credentials.secret_access_key = kScriptedSecret;
  settings.credentials_source = "the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)";
  S3ClientOptions options;
  options.max_attempts = max_attempts;
  options.base_delay = std::chrono::milliseconds(1);
  options.max_delay = std::chrono::milliseconds(2);
  return std::make_shared<const S3Client>(std::move(settings), "bucket", std::move(options));
}

}  // namespace tessera::s3
