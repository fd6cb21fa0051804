#include "s3_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "s3_response.hpp"
#include "s3_url.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::s3 {
namespace {

constexpr std::size_t kMaxTextBody = 64u << 20;  // a listing page or an error document
constexpr std::string_view kEmptyPayloadHash =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

void InitializeCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw StorageError("S3: libcurl could not be initialized (curl_global_init failed)");
    }
  });
}

bool IsTransientStatus(long status, const S3Response& response) {
  if (status == 500 || status == 502 || status == 503 || status == 504 || status == 429) {
    return true;
  }
  if (status == 400) {
    const auto error = ParseErrorResponse(response.text);
    return error && error->code == "RequestTimeout";
  }
  return false;
}

bool IsTransientCurlError(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY:
      return true;
    default:
      return false;
  }
}

std::string Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' ||
                           text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return std::string(text);
}

bool HeaderIs(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != name[i]) return false;
  }
  return true;
}

// The exponential backoff before try `attempt + 1`, with full jitter.
std::chrono::milliseconds Backoff(const S3ClientOptions& options, int attempt) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  const std::int64_t cap = std::min<std::int64_t>(
      options.max_delay.count(), options.base_delay.count() << std::min(attempt - 1, 20));
  std::uniform_int_distribution<std::int64_t> jitter(cap / 2, std::max<std::int64_t>(cap, 1));
  return std::chrono::milliseconds(jitter(random));
}

}  // namespace

// What one try of a request saw.
struct S3Client::Attempt {
  const S3Request* request = nullptr;
  const BodyTarget* target = nullptr;
  CURL* handle = nullptr;
  S3Response response;
  std::span<std::byte> destination;    // the BodyTarget's, kept over retries
  std::int64_t destination_size = -1;  // the size it was asked for
  std::size_t written = 0;
  bool into_target = false;
  bool started = false;
  bool overflow = false;
  std::size_t sent = 0;  // of the request's body
  CURLcode code = CURLE_OK;
  std::string curl_error;
};

namespace {

std::size_t OnHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto& attempt = *static_cast<S3Client::Attempt*>(user);
  const std::string_view line(data, size * count);
  if (line.starts_with("HTTP/")) {  // a new response (after 100 Continue): start over
    attempt.response.content_range.clear();
    attempt.response.etag.clear();
  } else if (HeaderIs(line, "content-range")) {
    attempt.response.content_range = Trim(line.substr(14));
  } else if (HeaderIs(line, "etag")) {
    attempt.response.etag = Trim(line.substr(5));
  }
  return size * count;
}

std::size_t OnBody(char* data, std::size_t size, std::size_t count, void* user) {
  auto& attempt = *static_cast<S3Client::Attempt*>(user);
  const std::size_t bytes = size * count;
  if (!attempt.started) {
    attempt.started = true;
    long status = 0;
    curl_easy_getinfo(attempt.handle, CURLINFO_RESPONSE_CODE, &status);
    curl_off_t length = -1;
    curl_easy_getinfo(attempt.handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    attempt.into_target = attempt.target != nullptr && status >= 200 && status < 300 && length >= 0;
    if (attempt.into_target) {
      if (attempt.destination_size != length) {
        attempt.destination = (*attempt.target)(status, length);
        attempt.destination_size = length;
      }
      if (attempt.destination.size() != static_cast<std::size_t>(length)) {
        attempt.response.refused = true;
        return 0;  // aborts the transfer: the caller does not want the body
      }
    }
  }
  if (attempt.into_target) {
    if (attempt.written + bytes > attempt.destination.size()) {
      attempt.overflow = true;
      return 0;
    }
    std::memcpy(attempt.destination.data() + attempt.written, data, bytes);
    attempt.written += bytes;
    return bytes;
  }
  if (attempt.response.text.size() + bytes > kMaxTextBody) {
    attempt.overflow = true;
    return 0;
  }
  attempt.response.text.append(data, bytes);
  return bytes;
}

std::size_t OnUpload(char* out, std::size_t size, std::size_t count, void* user) {
  auto& attempt = *static_cast<S3Client::Attempt*>(user);
  const std::span<const std::byte> body = attempt.request->body;
  const std::size_t n = std::min(size * count, body.size() - attempt.sent);
  std::memcpy(out, body.data() + attempt.sent, n);
  attempt.sent += n;
  return n;
}

int OnSeek(void* user, curl_off_t offset, int origin) {
  auto& attempt = *static_cast<S3Client::Attempt*>(user);
  if (origin != SEEK_SET || offset < 0 ||
      static_cast<std::size_t>(offset) > attempt.request->body.size()) {
    return CURL_SEEKFUNC_FAIL;
  }
  attempt.sent = static_cast<std::size_t>(offset);
  return CURL_SEEKFUNC_OK;
}

void FreeHeaders(curl_slist* list) { curl_slist_free_all(list); }

}  // namespace

S3Client::S3Client(S3Settings settings, std::string bucket, S3ClientOptions options)
    : settings_(std::move(settings)), bucket_(std::move(bucket)), options_(std::move(options)) {
  InitializeCurlOnce();
  const std::string endpoint = settings_.endpoint.empty()
                                   ? "https://s3." + settings_.region + ".amazonaws.com"
                                   : settings_.endpoint;
  // Virtual-hosted on AWS unless the bucket's name has dots (TLS names then fail).
  const bool virtual_hosted = options_.virtual_hosted.value_or(
      settings_.endpoint.empty() && bucket_.find('.') == std::string::npos);
  if (virtual_hosted) {
    const std::size_t host = endpoint.find("://") + 3;
    base_url_ = endpoint.substr(0, host) + bucket_ + "." + endpoint.substr(host) + "/";
  } else {
    base_url_ = endpoint + "/" + bucket_ + "/";
  }
  sigv4_ = "aws:amz:" + settings_.region + ":s3";
}

S3Client::~S3Client() {
  for (void* handle : idle_) curl_easy_cleanup(static_cast<CURL*>(handle));
}

void* S3Client::AcquireHandle() const {
  {
    const std::lock_guard lock(mutex_);
    ++requests_;
    if (!idle_.empty()) {
      void* handle = idle_.back();
      idle_.pop_back();
      return handle;
    }
  }
  CURL* handle = curl_easy_init();
  if (handle == nullptr) throw StorageError("S3: libcurl could not make a request handle");
  return handle;
}

void S3Client::ReleaseHandle(void* handle) const {
  constexpr std::size_t kMaxIdle = 64;
  const std::lock_guard lock(mutex_);
  if (idle_.size() < kMaxIdle) {
    idle_.push_back(handle);
  } else {
    curl_easy_cleanup(static_cast<CURL*>(handle));
  }
}

std::int64_t S3Client::requests_sent() const {
  const std::lock_guard lock(mutex_);
  return requests_;
}

std::string S3Client::UrlOf(const S3Request& request) const {
  std::string url = base_url_ + UriEncode(request.key, /*keep_slash=*/true);
  if (!request.query.empty()) url += "?" + request.query;
  return url;
}

std::string S3Client::Describe(const S3Request& request) const {
  if (request.key.empty() && request.method == "GET") {
    return "LIST " + std::string(kScheme) + bucket_ + "/" + request.listed_prefix;
  }
  return std::string(request.method) + " " + std::string(kScheme) + bucket_ +
         (request.key.empty() ? "" : "/" + request.key);
}

bool S3Client::PerformOnce(const S3Request& request, Attempt& attempt) const {
  auto* handle = static_cast<CURL*>(AcquireHandle());
  attempt.handle = handle;
  attempt.response = S3Response{};
  attempt.written = 0;
  attempt.started = false;
  attempt.into_target = false;
  attempt.overflow = false;
  attempt.sent = 0;
  char error_buffer[CURL_ERROR_SIZE] = {};

  std::unique_ptr<curl_slist, decltype(&FreeHeaders)> headers(nullptr, &FreeHeaders);
  const auto add_header = [&headers](const std::string& line) {
    curl_slist* grown = curl_slist_append(headers.get(), line.c_str());
    if (grown == nullptr) throw StorageError("S3: out of memory building a request");
    headers.release();
    headers.reset(grown);
  };
  const bool put = request.method == "PUT";
  add_header(std::string("x-amz-content-sha256: ") +
             (put ? std::string("UNSIGNED-PAYLOAD") : std::string(kEmptyPayloadHash)));
  if (!options_.fixed_date.empty()) add_header("x-amz-date: " + options_.fixed_date);
  if (!settings_.credentials.session_token.empty()) {
    add_header("x-amz-security-token: " + settings_.credentials.session_token);
  }
  if (!request.range.empty()) add_header("Range: " + request.range);
  if (!request.if_match.empty()) add_header("If-Match: " + request.if_match);
  // (No "Expect:" header to suppress 100-continue: libcurl would sign it unsent.)

  std::unique_ptr<curl_slist, decltype(&FreeHeaders)> connect_to(nullptr, &FreeHeaders);
  curl_easy_reset(handle);
  const std::string url = UrlOf(request);
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(handle, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(options_.stall_timeout.count()));
  curl_easy_setopt(handle, CURLOPT_TCP_KEEPALIVE, 1L);
  // A large PUT asks "Expect: 100-continue"; a server that never answers it (moto) costs
  // this wait once per PUT, where S3 answers at once.
  curl_easy_setopt(handle, CURLOPT_EXPECT_100_TIMEOUT_MS, 100L);
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &attempt);
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &attempt);
  if (!settings_.credentials.empty()) {
    curl_easy_setopt(handle, CURLOPT_AWS_SIGV4, sigv4_.c_str());
    curl_easy_setopt(handle, CURLOPT_USERNAME, settings_.credentials.access_key_id.c_str());
    curl_easy_setopt(handle, CURLOPT_PASSWORD, settings_.credentials.secret_access_key.c_str());
  }
  if (!options_.connect_to.empty()) {
    connect_to.reset(curl_slist_append(nullptr, options_.connect_to.c_str()));
    curl_easy_setopt(handle, CURLOPT_CONNECT_TO, connect_to.get());
  }
  if (request.method == "HEAD") {
    curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
  } else if (put) {
    curl_easy_setopt(handle, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(handle, CURLOPT_INFILESIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
    curl_easy_setopt(handle, CURLOPT_READFUNCTION, &OnUpload);
    curl_easy_setopt(handle, CURLOPT_READDATA, &attempt);
    curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, &OnSeek);
    curl_easy_setopt(handle, CURLOPT_SEEKDATA, &attempt);
  } else if (request.method != "GET") {
    curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, std::string(request.method).c_str());
  }
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());

  attempt.code = curl_easy_perform(handle);
  attempt.curl_error = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(attempt.code);
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &attempt.response.status);
  curl_off_t length = -1;
  curl_easy_getinfo(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  attempt.response.content_length = length;
  curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(handle, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(handle, CURLOPT_CONNECT_TO, nullptr);
  ReleaseHandle(handle);

  if (attempt.code == CURLE_WRITE_ERROR && attempt.response.refused) {
    attempt.code = CURLE_OK;  // the caller's choice, not a failure
    return true;
  }
  if (attempt.code == CURLE_WRITE_ERROR && attempt.overflow) {
    attempt.curl_error = "the response's body was longer than it announced";
    return false;  // a broken response: retried
  }
  if (attempt.code != CURLE_OK) return false;
  const long status = attempt.response.status;
  if (!attempt.started && attempt.target != nullptr && status >= 200 && status < 300 &&
      length == 0) {
    // An empty body calls no write callback: its target is asked for 0 bytes here.
    attempt.started = true;
    attempt.into_target = true;
    if (attempt.destination_size != 0) {
      attempt.destination = (*attempt.target)(status, 0);
      attempt.destination_size = 0;
    }
  }
  if (!attempt.into_target && attempt.target != nullptr && status >= 200 && status < 300 &&
      attempt.started) {
    // A body of unannounced length (chunked) was gathered as text: copied over once.
    const auto size = static_cast<std::int64_t>(attempt.response.text.size());
    if (attempt.destination_size != size) {
      attempt.destination = (*attempt.target)(status, size);
      attempt.destination_size = size;
    }
    if (attempt.destination.size() != attempt.response.text.size()) {
      attempt.response.refused = true;
    } else if (size > 0) {
      std::memcpy(attempt.destination.data(), attempt.response.text.data(),
                  attempt.response.text.size());
    }
    attempt.response.text.clear();
    return true;
  }
  if (attempt.into_target && attempt.written != attempt.destination.size()) {
    attempt.curl_error = "the response's body ended early";
    return false;
  }
  return !IsTransientStatus(attempt.response.status, attempt.response);
}

S3Response S3Client::Perform(const S3Request& request, const BodyTarget* target) const {
  Attempt attempt;
  attempt.request = &request;
  attempt.target = target;
  const int attempts = std::max(options_.max_attempts, 1);
  for (int tried = 1;; ++tried) {
    if (PerformOnce(request, attempt)) return std::move(attempt.response);
    const bool transient = attempt.code == CURLE_OK || IsTransientCurlError(attempt.code) ||
                           attempt.overflow || attempt.code == CURLE_WRITE_ERROR;
    if (!transient) {
      throw StorageError("S3 " + Describe(request) + " failed: " + attempt.curl_error +
                         " (endpoint " + (settings_.endpoint.empty() ? "AWS" : settings_.endpoint) +
                         "); check the endpoint (AWS_ENDPOINT_URL) and the network");
    }
    if (tried >= attempts) break;
    std::this_thread::sleep_for(Backoff(options_, tried));
  }
  std::string last;
  if (attempt.code == CURLE_OK) {
    last = "HTTP " + std::to_string(attempt.response.status);
    if (const auto error = ParseErrorResponse(attempt.response.text)) {
      last += " " + error->code + (error->message.empty() ? "" : " (" + error->message + ")");
    }
  } else {
    last = attempt.curl_error;
  }
  throw StorageError("S3 " + Describe(request) + " failed after " + std::to_string(attempts) +
                     " attempts; the last: " + last + " (endpoint " +
                     (settings_.endpoint.empty() ? "AWS" : settings_.endpoint) +
                     "); the service is unavailable or overloaded: retry later");
}

void ThrowResponseError(const S3Client& client, const S3Request& request,
                        const S3Response& response) {
  std::string what = "S3 " + client.Describe(request) + ": HTTP " + std::to_string(response.status);
  const std::optional<ErrorResponse> error = ParseErrorResponse(response.text);
  if (error)
    what += " " + error->code + (error->message.empty() ? "" : " (" + error->message + ")");
  const std::string code = error ? error->code : std::string();
  if (response.status == 403 || response.status == 401) {
    what +=
        "; access refused: check the credentials (AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY, or the profile \"" +
        (client.settings().profile.empty() ? std::string("default") : client.settings().profile) +
        "\" of ~/.aws/credentials), the region (" + client.settings().region +
        ") and the bucket's permissions";
  } else if (code == "NoSuchBucket") {
    what += "; the bucket \"" + client.bucket() + "\" does not exist at " +
            (client.settings().endpoint.empty() ? std::string("AWS") : client.settings().endpoint) +
            ": create it or fix the URL";
  } else if (response.status == 301 || code == "PermanentRedirect" ||
             code == "AuthorizationHeaderMalformed") {
    what += "; the bucket lives in another region: set AWS_REGION to it";
  }
  throw StorageError(what);
}

}  // namespace tessera::s3
