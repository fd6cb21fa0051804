#include "s3_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "s3_response.hpp"
#include "s3_text.hpp"
#include "s3_url.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::s3 {
namespace {

constexpr std::string_view kEmptyPayloadHash =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
// What a write or header callback returns to abandon the transfer: any count but the one
// it was given does, and this one (libcurl 7.87.0's CURL_WRITEFUNC_ERROR) even when the
// call carries no bytes, where 0 would not.
constexpr std::size_t kAbortTransfer = 0xFFFFFFFF;

void InitializeCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
      throw StorageError("S3: libcurl could not be initialized (curl_global_init failed)");
    }
  });
}

std::string RunningLibcurlVersion() { return curl_version_info(CURLVERSION_NOW)->version; }

// A curl_easy_setopt result that must be CURLE_OK: a libcurl without the option
// (CURLE_UNKNOWN_OPTION) would otherwise send another request than the one meant, an
// unsigned one without CURLOPT_AWS_SIGV4.
void RequireOption(CURLcode code, const char* option) {
  if (code == CURLE_OK) return;
  throw StorageError("S3: libcurl " + RunningLibcurlVersion() + " refused " + option + " (" +
                     curl_easy_strerror(code) +
                     "); the S3 store needs a libcurl built with it (HTTP and AWS Signature V4), "
                     "7.87.0 or later");
}

bool IsTransientStatus(long status, const S3Response& response) {
  if (status == 500 || status == 502 || status == 503 || status == 504 || status == 429 ||
      status == 408) {
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

// True when header line `line` ("Content-Range: bytes 0-9/10\r\n") is header `name`
// (given in lower case).
bool HeaderIs(std::string_view line, std::string_view name) {
  if (line.size() <= name.size() || line[name.size()] != ':') return false;
  for (std::size_t at = 0; at < name.size(); ++at) {
    if (AsciiLower(line[at]) != name[at]) return false;
  }
  return true;
}

// The value of header line `line`, which is header `name`.
std::string HeaderValue(std::string_view line, std::string_view name) {
  return std::string(TrimBlank(line.substr(name.size() + 1)));
}

// The backoff before try `attempt + 1`, with equal jitter: a draw from [cap/2, cap] with
// cap = base_delay * 2^(attempt - 1), at most max_delay (half the wait is certain, so
// retries never bunch up at zero; the other half spreads them).
std::chrono::milliseconds Backoff(const S3ClientOptions& options, int attempt) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  // 2^20 times any base delay is past any max_delay: the shift stops there (no overflow).
  constexpr int kMaxDoublings = 20;
  const std::int64_t cap =
      std::min<std::int64_t>(options.max_delay.count(),
                             options.base_delay.count() << std::min(attempt - 1, kMaxDoublings));
  std::uniform_int_distribution<std::int64_t> jitter(cap / 2, std::max<std::int64_t>(cap, 1));
  return std::chrono::milliseconds(jitter(random));
}

// Why a body read as text stopped at kMaxTextBody: one for a BodyTarget (sent without a
// Content-Length), or a listing page or error document.
std::string TextTooLong(bool for_target) {
  const std::string cap = std::to_string(kMaxTextBody >> 20) + " MiB";
  if (for_target) {
    return "the response's body came without a Content-Length (chunked) and is longer than the " +
           cap + " read that way; the server must send a Content-Length for a value this large";
  }
  return "the response's body is longer than the " + cap +
         " a listing page or error document can be; is the endpoint an S3 service?";
}

}  // namespace

void RequireLibcurlVersion(unsigned version_num, std::string_view version) {
  if (version_num >= kMinLibcurlVersion) return;
  throw StorageError("S3: libcurl " + std::string(version) +
                     " is too old for the S3 store, which needs libcurl 7.87.0 or later (its "
                     "AWS Signature V4 must sign the Range, If-Match and x-amz-content-sha256 "
                     "headers); install a newer libcurl (libcurl4-openssl-dev) and rebuild");
}

// What one try of a request saw.
struct S3Client::Attempt {
  const S3Request* request = nullptr;
  const BodyTarget* target = nullptr;
  CURL* handle = nullptr;
  S3Response response;
  std::span<std::byte> destination;    // the BodyTarget's, kept over retries
  std::int64_t destination_size = -1;  // the size it was asked for
  std::size_t written = 0;
  bool started = false;        // the body's first call came
  bool into_target = false;    // the body goes into `destination` as it comes
  bool overflow = false;       // more body than its Content-Length announced
  bool text_too_long = false;  // a body read as text passed kMaxTextBody
  // Thrown inside a callback (a BodyTarget's, an allocation's): rethrown once the handle
  // is released, never retried.
  std::exception_ptr failure;
  std::size_t sent = 0;  // of the request's body
  CURLcode code = CURLE_OK;
  std::string curl_error;  // what broke the try; "" when it got a whole response

  // The target's span for a body of `size` bytes; asked again only when the size changed.
  void AskTarget(long status, std::int64_t size) {
    if (destination_size == size) return;
    destination = (*target)(status, size);
    destination_size = size;
  }
};

class S3Client::HandleLease {
 public:
  explicit HandleLease(const S3Client& client)
      : client_(client), handle_(static_cast<CURL*>(client.AcquireHandle())) {}
  ~HandleLease() { client_.ReleaseHandle(handle_); }
  HandleLease(const HandleLease&) = delete;
  HandleLease& operator=(const HandleLease&) = delete;
  CURL* get() const { return handle_; }

 private:
  const S3Client& client_;
  CURL* handle_;
};

namespace {

using Attempt = S3Client::Attempt;

void OnHeaderLine(Attempt& attempt, std::string_view line) {
  if (line.starts_with("HTTP/")) {  // a new response (after 100 Continue): start over
    attempt.response.content_range.clear();
    attempt.response.etag.clear();
  } else if (HeaderIs(line, "content-range")) {
    attempt.response.content_range = HeaderValue(line, "content-range");
  } else if (HeaderIs(line, "etag")) {
    attempt.response.etag = HeaderValue(line, "etag");
  }
}

std::size_t OnBodyBytes(Attempt& attempt, const char* data, std::size_t bytes) {
  if (!attempt.started) {
    attempt.started = true;
    long status = 0;
    curl_easy_getinfo(attempt.handle, CURLINFO_RESPONSE_CODE, &status);
    curl_off_t length = -1;
    curl_easy_getinfo(attempt.handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
    // Without a Content-Length the body is read as text and handed over at its end.
    attempt.into_target = attempt.target != nullptr && IsSuccessStatus(status) && length >= 0;
    if (attempt.into_target) {
      attempt.AskTarget(status, length);
      if (attempt.destination.size() != static_cast<std::size_t>(length)) {
        attempt.response.refused = true;
        return kAbortTransfer;  // the caller does not want the body
      }
    }
  }
  if (attempt.into_target) {
    if (bytes > attempt.destination.size() - attempt.written) {
      attempt.overflow = true;
      return kAbortTransfer;
    }
    if (bytes > 0) std::memcpy(attempt.destination.data() + attempt.written, data, bytes);
    attempt.written += bytes;
    return bytes;
  }
  if (bytes > kMaxTextBody - attempt.response.text.size()) {
    attempt.text_too_long = true;
    return kAbortTransfer;
  }
  attempt.response.text.append(data, bytes);
  return bytes;
}

// libcurl's callbacks: each catches whatever its work throws (a C caller cannot unwind
// it), keeps it in attempt.failure and abandons the transfer.

std::size_t OnHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto& attempt = *static_cast<Attempt*>(user);
  try {
    OnHeaderLine(attempt, std::string_view(data, size * count));
    return size * count;
  } catch (...) {
    attempt.failure = std::current_exception();
    return kAbortTransfer;
  }
}

std::size_t OnBody(char* data, std::size_t size, std::size_t count, void* user) {
  auto& attempt = *static_cast<Attempt*>(user);
  try {
    return OnBodyBytes(attempt, data, size * count);
  } catch (...) {
    attempt.failure = std::current_exception();
    return kAbortTransfer;
  }
}

std::size_t OnUpload(char* out, std::size_t size, std::size_t count, void* user) {
  auto& attempt = *static_cast<Attempt*>(user);
  try {
    const std::span<const std::byte> body = attempt.request->body;
    const std::size_t bytes = std::min(size * count, body.size() - attempt.sent);
    if (bytes > 0) std::memcpy(out, body.data() + attempt.sent, bytes);
    attempt.sent += bytes;
    return bytes;
  } catch (...) {
    attempt.failure = std::current_exception();
    return CURL_READFUNC_ABORT;
  }
}

int OnSeek(void* user, curl_off_t offset, int origin) {
  auto& attempt = *static_cast<Attempt*>(user);
  try {
    if (origin != SEEK_SET || offset < 0 ||
        static_cast<std::size_t>(offset) > attempt.request->body.size()) {
      return CURL_SEEKFUNC_FAIL;
    }
    attempt.sent = static_cast<std::size_t>(offset);
    return CURL_SEEKFUNC_OK;
  } catch (...) {
    attempt.failure = std::current_exception();
    return CURL_SEEKFUNC_FAIL;
  }
}

void FreeHeaders(curl_slist* list) { curl_slist_free_all(list); }
using HeaderList = std::unique_ptr<curl_slist, decltype(&FreeHeaders)>;

// Appends `line` to `list`.
void AddHeader(HeaderList& list, const std::string& line) {
  curl_slist* grown = curl_slist_append(list.get(), line.c_str());
  if (grown == nullptr) throw StorageError("S3: out of memory building a request");
  static_cast<void>(list.release());  // `grown` now owns the old nodes
  list.reset(grown);
}

}  // namespace

S3Client::S3Client(S3Settings settings, std::string bucket, S3ClientOptions options)
    : settings_(std::move(settings)), bucket_(std::move(bucket)), options_(std::move(options)) {
  InitializeCurlOnce();
  const curl_version_info_data* version = curl_version_info(CURLVERSION_NOW);
  RequireLibcurlVersion(version->version_num, version->version);
  const std::string endpoint = settings_.endpoint.empty()
                                   ? "https://s3." + settings_.region + ".amazonaws.com"
                                   : settings_.endpoint;
  const bool virtual_hosted =
      options_.virtual_hosted.value_or(settings_.endpoint.empty()) && IsDnsSafeBucket(bucket_);
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
  auto* curl = static_cast<CURL*>(handle);
  // Forgets every option (pointers to a finished try's buffers, headers and Attempt among
  // them) and keeps the live connection for the next request.
  curl_easy_reset(curl);
  {
    const std::lock_guard lock(mutex_);
    if (idle_.size() < kMaxIdleHandles) {
      idle_.push_back(handle);
      return;
    }
  }
  curl_easy_cleanup(curl);
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

void S3Client::Transfer(const S3Request& request, Attempt& attempt) const {
  HeaderList headers(nullptr, &FreeHeaders);
  const bool put = request.method == "PUT";
  AddHeader(headers, std::string("x-amz-content-sha256: ") +
                         (put ? std::string("UNSIGNED-PAYLOAD") : std::string(kEmptyPayloadHash)));
  if (!options_.fixed_date.empty()) AddHeader(headers, "x-amz-date: " + options_.fixed_date);
  if (!settings_.credentials.session_token.empty()) {
    AddHeader(headers, "x-amz-security-token: " + settings_.credentials.session_token);
  }
  if (!request.range.empty()) AddHeader(headers, "Range: " + request.range);
  if (!request.if_match.empty()) AddHeader(headers, "If-Match: " + request.if_match);
  // (No "Expect:" header to suppress 100-continue: libcurl would sign it unsent.)
  HeaderList connect_to(nullptr, &FreeHeaders);
  if (!options_.connect_to.empty()) AddHeader(connect_to, options_.connect_to);
  const std::string url = UrlOf(request);
  char error_buffer[CURL_ERROR_SIZE] = {};

  // Declared after what the handle points to, so it is reset before those go.
  const HandleLease lease(*this);
  CURL* const handle = lease.get();
  attempt.handle = handle;
  curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
  // Keys are sent as they are: "a/../b" must not become "b" (EraseAll deletes listed keys).
  RequireOption(curl_easy_setopt(handle, CURLOPT_PATH_AS_IS, 1L), "CURLOPT_PATH_AS_IS");
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
    RequireOption(curl_easy_setopt(handle, CURLOPT_AWS_SIGV4, sigv4_.c_str()), "CURLOPT_AWS_SIGV4");
    curl_easy_setopt(handle, CURLOPT_USERNAME, settings_.credentials.access_key_id.c_str());
    curl_easy_setopt(handle, CURLOPT_PASSWORD, settings_.credentials.secret_access_key.c_str());
  }
  if (connect_to != nullptr) curl_easy_setopt(handle, CURLOPT_CONNECT_TO, connect_to.get());
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
  if (attempt.code != CURLE_OK) {
    attempt.curl_error = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(attempt.code);
  }
  curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &attempt.response.status);
  curl_off_t length = -1;
  curl_easy_getinfo(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
  attempt.response.content_length = length;
  attempt.handle = nullptr;
}

bool S3Client::PerformOnce(const S3Request& request, Attempt& attempt) const {
  attempt.response = S3Response{};
  attempt.written = 0;
  attempt.started = false;
  attempt.into_target = false;
  attempt.overflow = false;
  attempt.text_too_long = false;
  attempt.sent = 0;
  attempt.code = CURLE_OK;
  attempt.curl_error.clear();
  Transfer(request, attempt);  // the handle is back in the pool from here on

  if (attempt.failure) std::rethrow_exception(attempt.failure);
  if (attempt.code == CURLE_WRITE_ERROR && attempt.response.refused) {
    attempt.code = CURLE_OK;  // the caller's choice, not a failure
    attempt.curl_error.clear();
    return true;
  }
  const long status = attempt.response.status;
  const bool for_target =
      attempt.target != nullptr && IsSuccessStatus(status) && request.method != "HEAD";
  if (attempt.code == CURLE_WRITE_ERROR && attempt.text_too_long) {
    throw StorageError("S3 " + Describe(request) + ": " + TextTooLong(for_target));  // untried
  }
  if (attempt.code == CURLE_WRITE_ERROR && attempt.overflow) {
    attempt.curl_error = "the response's body was longer than it announced";
    return false;  // a broken response: retried
  }
  if (attempt.code != CURLE_OK) return false;
  if (for_target && !attempt.into_target) {
    // A body of unannounced length (chunked), or none at all (no call of OnBody): read
    // as text, handed over once; an empty one is a value of 0 bytes.
    const auto size = static_cast<std::int64_t>(attempt.response.text.size());
    attempt.AskTarget(status, size);
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
  return !IsTransientStatus(status, attempt.response);
}

S3Response S3Client::Perform(const S3Request& request, const BodyTarget* target) const {
  Attempt attempt;
  attempt.request = &request;
  attempt.target = target;
  const int attempts = std::max(options_.max_attempts, 1);
  const std::string endpoint = settings_.endpoint.empty() ? "AWS" : settings_.endpoint;
  for (int tried = 1;; ++tried) {
    if (PerformOnce(request, attempt)) return std::move(attempt.response);
    const bool transient =
        attempt.code == CURLE_OK || attempt.overflow || IsTransientCurlError(attempt.code);
    if (!transient) {
      throw StorageError("S3 " + Describe(request) + " failed: " + attempt.curl_error +
                         " (endpoint " + endpoint +
                         "); check the endpoint (AWS_ENDPOINT_URL) and the network");
    }
    if (tried >= attempts) break;
    std::this_thread::sleep_for(Backoff(options_, tried));
  }
  const std::string failed = "S3 " + Describe(request) + " failed after " +
                             std::to_string(attempts) + " attempts; the last: ";
  if (!attempt.curl_error.empty()) {
    // No whole answer came: the connection failed (DNS, refused, reset, timed out).
    throw StorageError(failed + attempt.curl_error + " (endpoint " + endpoint +
                       "); the connection failed: check the endpoint (AWS_ENDPOINT_URL) and "
                       "the network");
  }
  std::string last = "HTTP " + std::to_string(attempt.response.status);
  if (const auto error = ParseErrorResponse(attempt.response.text)) {
    last += " " + error->code + (error->message.empty() ? "" : " (" + error->message + ")");
  }
  throw StorageError(failed + last + " (endpoint " + endpoint +
                     "); the service is unavailable or overloaded: retry later");
}

bool IsNoSuchBucket(const S3Response& response) {
  const std::optional<ErrorResponse> error = ParseErrorResponse(response.text);
  return error && error->code == "NoSuchBucket";
}

void ThrowResponseError(const S3Client& client, const S3Request& request,
                        const S3Response& response) {
  const S3Settings& settings = client.settings();
  std::string what = "S3 " + client.Describe(request) + ": HTTP " + std::to_string(response.status);
  const std::optional<ErrorResponse> error = ParseErrorResponse(response.text);
  if (error) {
    what += " " + error->code + (error->message.empty() ? "" : " (" + error->message + ")");
  }
  const std::string code = error ? error->code : std::string();
  // A refused session token comes as 400 from some services (InvalidToken, ExpiredToken).
  const bool refused_token = code == "InvalidToken" || code == "ExpiredToken" ||
                             code == "TokenRefreshRequired";
  if (response.status == 403 || response.status == 401 || refused_token) {
    if (settings.credentials.empty()) {
      what +=
          "; access refused to an anonymous request (no credentials in the environment "
          "nor in " +
          (settings.profile.empty() ? std::string("an AWS profile")
                                    : "AWS profile \"" + settings.profile + "\"") +
          "): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, unless the "
          "bucket is public";
    } else {
      what += "; access refused: check the credentials" +
              (settings.credentials_source.empty() ? std::string()
                                                   : " from " + settings.credentials_source) +
              ", the region (" + settings.region + ") and the bucket's permissions";
    }
  } else if (code == "NoSuchBucket") {
    what += "; the bucket \"" + client.bucket() + "\" does not exist at " +
            (settings.endpoint.empty() ? std::string("AWS") : settings.endpoint) +
            ": create it or fix the URL";
  } else if (response.status == 301 || code == "PermanentRedirect" ||
             code == "AuthorizationHeaderMalformed") {
    what += "; the bucket lives in another region: set AWS_REGION to it";
  }
  throw StorageError(what);
}

}  // namespace tessera::s3
