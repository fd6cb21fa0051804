#include "tessera/storage/s3_store.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "s3_client.hpp"
#include "s3_config.hpp"
#include "s3_deletes.hpp"
#include "s3_listing.hpp"
#include "s3_response.hpp"
#include "s3_url.hpp"
#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

using s3::BodyTarget;
using s3::S3Client;
using s3::S3Request;
using s3::S3Response;

constexpr std::int64_t kMaxOffset = std::numeric_limits<std::int64_t>::max();

// What a HEAD of an object says.
struct ObjectHead {
  std::int64_t size = 0;
  std::string etag;  // as sent; "" when none
};

// The object's size and ETag; nullopt when it is absent. Throws StorageError for a failed
// HEAD, and for a 200 without a Content-Length (no size is no 0 bytes).
std::optional<ObjectHead> HeadObject(const S3Client& client, const std::string& object_key) {
  S3Request request;
  request.method = "HEAD";
  request.key = object_key;
  const S3Response response = client.Perform(request);
  if (response.status == 404) return std::nullopt;
  if (response.status != 200) s3::ThrowResponseError(client, request, response);
  if (response.content_length < 0) {
    throw StorageError("S3 " + client.Describe(request) +
                       ": HTTP 200 without a Content-Length, so the value's size is unknown; "
                       "an S3 service always sends one: check the endpoint (AWS_ENDPOINT_URL)");
  }
  return ObjectHead{response.content_length, response.etag};
}

// A strong ETag names one version. A weak one (W/"...") says only that two versions are
// alike, and If-Match never matches it (RFC 9110 13.1.1 compares strongly), so a read
// pinned by it would always fail.
bool IsStrongEtag(const std::string& etag) { return !etag.empty() && !etag.starts_with("W/"); }

// The whole size from a Content-Range header, "bytes 0-9/443" or "bytes */443".
std::optional<std::int64_t> RangeTotal(const std::string& content_range) {
  const std::size_t slash = content_range.rfind('/');
  if (slash == std::string::npos || slash + 1 >= content_range.size()) return std::nullopt;
  std::int64_t total = 0;
  for (std::size_t at = slash + 1; at < content_range.size(); ++at) {
    const char c = content_range[at];
    if (c < '0' || c > '9' || total > kMaxOffset / 10 - 9) return std::nullopt;
    total = total * 10 + (c - '0');
  }
  return total;
}

// The Range header of `length` > 0 bytes from `start`: "bytes=START-LAST".
// REQUIRES: 0 <= start <= kMaxOffset - length.
std::string RangeHeader(std::int64_t start, std::int64_t length) {
  return "bytes=" + std::to_string(start) + "-" + std::to_string(start + length - 1);
}

[[noreturn]] void ThrowValueChanged(const S3Client& client, const S3Request& request,
                                    const std::string& how) {
  throw StorageError("S3 " + client.Describe(request) +
                     ": the value changed or was removed while being read (" + how +
                     "); another program is writing the store: read again once it is done");
}

// One ranged GET of `request` (its Range naming out.size() bytes) into `out`; the caller
// reads the status. Throws StorageError when the server ignored the Range (HTTP 200: the
// whole value would come, memory nobody projected); the body is then left unread.
S3Response GetRange(const S3Client& client, const S3Request& request, std::span<std::byte> out) {
  const auto length = static_cast<std::int64_t>(out.size());
  const BodyTarget target = [&](long status, std::int64_t size) -> std::span<std::byte> {
    if (status == 206 && size == length) return out;
    return {};
  };
  S3Response response = client.Perform(request, &target);
  if (response.status == 200) {
    throw StorageError(
        "S3 " + client.Describe(request) + ": the server ignored the Range header (" +
        request.range + ") and answered HTTP 200 with the whole value" +
        (response.content_length >= 0 ? " (" + std::to_string(response.content_length) + " bytes)"
                                      : std::string()) +
        "; shards are read by byte ranges, so the S3 store needs a service that answers them "
        "(HTTP 206 Partial Content)");
  }
  return response;
}

// Throws StorageError when a 206 `response` brought other than `length` bytes.
void CheckRangeBody(const S3Client& client, const S3Request& request, const S3Response& response,
                    std::int64_t length) {
  if (response.status == 206 && !response.refused) return;
  throw StorageError("S3 " + client.Describe(request) + ": the server sent " +
                     std::to_string(response.content_length) + " bytes (Content-Range \"" +
                     response.content_range + "\") for a range of " + std::to_string(length));
}

// A value pinned by its strong ETag: each read is a ranged GET of that version only.
class S3OpenedValue final : public OpenedValue {
 public:
  S3OpenedValue(std::shared_ptr<const S3Client> client, std::string object_key, ObjectHead head)
      : client_(std::move(client)), object_key_(std::move(object_key)), head_(std::move(head)) {}

  std::int64_t size() const override { return head_.size; }
  void ReadAt(std::int64_t start, std::span<std::byte> out) const override {
    if (out.empty()) return;
    const auto length = static_cast<std::int64_t>(out.size());
    S3Request request;
    request.key = object_key_;
    request.range = RangeHeader(start, length);
    request.if_match = head_.etag;
    const S3Response response = GetRange(*client_, request, out);
    if (response.status == 412 || response.status == 404) {
      ThrowValueChanged(*client_, request, "HTTP " + std::to_string(response.status));
    }
    if (response.status != 206) s3::ThrowResponseError(*client_, request, response);
    CheckRangeBody(*client_, request, response, length);
  }

 private:
  std::shared_ptr<const S3Client> client_;
  std::string object_key_;
  ObjectHead head_;
};

}  // namespace

std::shared_ptr<S3Store> S3Store::Open(std::string_view url, Options options) {
  const s3::S3Location location = s3::ParseS3Url(url);
  s3::S3ClientOptions client_options;
  client_options.max_attempts = options.max_attempts;
  client_options.base_delay = options.base_delay;
  auto client = std::make_shared<const S3Client>(s3::ResolveS3Settings(s3::ProcessEnvironment()),
                                                 location.bucket, client_options);
  auto store = std::make_shared<S3Store>(std::move(client), location.prefix);
  if (options.check_access) {
    s3::ListObjectsOptions first_key;
    first_key.prefix = store->prefix_;
    first_key.max_keys = 1;
    S3Request request;
    request.listed_prefix = store->prefix_;
    request.query = s3::ListObjectsQuery(first_key);
    const S3Response response = store->client_->Perform(request);
    if (response.status != 200) s3::ThrowResponseError(*store->client_, request, response);
  }
  return store;
}

S3Store::S3Store(std::shared_ptr<const S3Client> client, std::string prefix)
    : client_(std::move(client)),
      prefix_(prefix.empty() ? std::string() : prefix + "/"),
      url_(s3::S3Location{client_->bucket(), prefix}.Url()) {}

S3Store::~S3Store() = default;

std::string S3Store::ObjectKey(std::string_view key) const {
  ValidateKey(key);
  return prefix_ + std::string(key);
}

std::int64_t S3Store::requests_sent() const { return client_->requests_sent(); }

std::optional<Buffer> S3Store::Get(std::string_view key) const {
  std::optional<Buffer> value;
  const auto size = ReadBounded(key, kMaxOffset, [&value](std::int64_t bytes) {
    value.emplace(bytes);
    return value->span();
  });
  if (!size) return std::nullopt;
  return value;
}

std::optional<std::int64_t> S3Store::ReadBounded(std::string_view key, std::int64_t max_size,
                                                 const Destination& destination) const {
  S3Request request;
  request.key = ObjectKey(key);
  std::int64_t seen = -1;
  const BodyTarget target = [&](long /*status*/, std::int64_t size) -> std::span<std::byte> {
    seen = size;
    if (size > max_size) return {};
    return destination(size);
  };
  const S3Response response = client_->Perform(request, &target);
  if (response.status == 404 && !s3::IsNoSuchBucket(response)) return std::nullopt;
  if (response.status != 200) s3::ThrowResponseError(*client_, request, response);
  return seen;
}

std::optional<std::int64_t> S3Store::ReadRange(std::string_view key, std::int64_t offset,
                                               std::span<std::byte> out) const {
  const auto length = static_cast<std::int64_t>(out.size());
  S3Request request;
  request.key = ObjectKey(key);
  // A Range names a first and last byte ("bytes=4-7") or a suffix ("bytes=-4"). An empty
  // range, a negative offset that stops short of the end, or one past the largest offset
  // has no such name: the size comes first (HEAD), then the range of that one version.
  const bool plain_range =
      length > 0 &&
      (offset >= 0 ? offset <= kMaxOffset - length
                   : offset != std::numeric_limits<std::int64_t>::min() && -offset == length);
  std::optional<std::int64_t> head_size;
  if (!plain_range) {
    const std::optional<ObjectHead> head = HeadObject(*client_, request.key);
    if (!head) return std::nullopt;
    // Throws, naming the sizes, when the range does not lie inside the value.
    const std::int64_t start = RangeStart(offset, length, head->size, DescribeKey(key));
    if (length == 0) return head->size;
    offset = start;
    head_size = head->size;
    // The GET must read the version the HEAD sized: pinned by its ETag where it has a
    // strong one, else checked by the total size the GET reports.
    if (IsStrongEtag(head->etag)) request.if_match = head->etag;
  }
  request.range = offset < 0 ? "bytes=" + std::to_string(offset) : RangeHeader(offset, length);
  const S3Response response = GetRange(*client_, request, out);
  if (response.status == 404 && !s3::IsNoSuchBucket(response)) {
    if (head_size) ThrowValueChanged(*client_, request, "removed after its HEAD");
    return std::nullopt;
  }
  if (response.status == 412) ThrowValueChanged(*client_, request, "its ETag changed: HTTP 412");
  if (response.status != 206 && response.status != 416) {
    s3::ThrowResponseError(*client_, request, response);
  }
  if (head_size && response.status == 416) {
    ThrowValueChanged(*client_, request, "it shrank after its HEAD: HTTP 416");
  }
  std::optional<std::int64_t> total = RangeTotal(response.content_range);
  // A 416 need not say the size (S3 puts it in its XML, moto nowhere): asked for.
  if (!total && response.status == 416) total = SizeOf(key);
  if (!total) {
    throw StorageError("S3 " + client_->Describe(request) + ": HTTP " +
                       std::to_string(response.status) + " without a readable Content-Range (\"" +
                       response.content_range + "\")");
  }
  if (head_size && *total != *head_size) {
    ThrowValueChanged(*client_, request,
                      "its HEAD said " + std::to_string(*head_size) + " bytes, its GET " +
                          std::to_string(*total));
  }
  // Throws, naming the sizes, when the range does not lie inside the value.
  RangeStart(offset, length, *total, DescribeKey(key));
  CheckRangeBody(*client_, request, response, length);
  return total;
}

std::unique_ptr<OpenedValue> S3Store::OpenForReads(std::string_view key) const {
  std::string object_key = ObjectKey(key);
  std::optional<ObjectHead> head = HeadObject(*client_, object_key);
  // Without a strong ETag there is nothing to pin by: each read is then one of its own.
  if (!head || !IsStrongEtag(head->etag)) return nullptr;
  return std::make_unique<S3OpenedValue>(client_, std::move(object_key), std::move(*head));
}

void S3Store::Set(std::string_view key, std::span<const std::byte> value) {
  S3Request request;
  request.method = "PUT";
  request.key = ObjectKey(key);
  request.body = value;
  const S3Response response = client_->Perform(request);
  if (response.status != 200 && response.status != 201 && response.status != 204) {
    s3::ThrowResponseError(*client_, request, response);
  }
}

bool S3Store::Erase(std::string_view key) {
  if (!SizeOf(key)) return false;  // S3 answers a DELETE of nothing with success
  S3Request request;
  request.method = "DELETE";
  request.key = ObjectKey(key);
  const S3Response response = client_->Perform(request);
  if (response.status == 404 && !s3::IsNoSuchBucket(response)) return false;
  if (response.status != 204 && response.status != 200) {
    s3::ThrowResponseError(*client_, request, response);
  }
  return true;
}

std::int64_t S3Store::EraseKeys(std::span<const std::string> keys) {
  std::vector<std::string> object_keys;
  object_keys.reserve(keys.size());
  for (const std::string& key : keys) object_keys.push_back(ObjectKey(key));  // all checked first
  return s3::DeleteObjects(*client_, object_keys);
}

std::vector<std::string> S3Store::List(std::string_view prefix) const {
  std::vector<std::string> keys;
  for (ListedKey& listed : ListWithSizes(prefix)) keys.push_back(std::move(listed.key));
  return keys;
}

std::vector<ListedKey> S3Store::ListWithSizes(std::string_view prefix) const {
  std::vector<ListedKey> listed;
  s3::ForEachListPage(*client_, prefix_ + std::string(prefix), /*by_folder=*/false,
                      [&](const s3::ListPage& page) {
                        for (const s3::ListedObject& object : page.objects) {
                          if (!object.key.starts_with(prefix_)) continue;
                          std::string key = object.key.substr(prefix_.size());
                          try {
                            ValidateKey(key);  // "dir/" markers and the like are no keys
                          } catch (const InvalidArgument&) {
                            continue;
                          }
                          listed.push_back({std::move(key), object.size});
                        }
                      });
  std::sort(listed.begin(), listed.end(),
            [](const ListedKey& a, const ListedKey& b) { return a.key < b.key; });
  return listed;
}

std::vector<std::string> S3Store::ListFolder(std::string_view folder) const {
  const std::string object_prefix = folder.empty() ? prefix_ : ObjectKey(folder) + "/";
  std::vector<std::string> names;
  const auto add = [&](std::string_view full) {
    if (!full.starts_with(object_prefix)) return;
    std::string_view name = full.substr(object_prefix.size());
    if (!name.empty() && name.back() == '/') name.remove_suffix(1);
    if (name.empty() || name.find('/') != std::string_view::npos) return;
    names.emplace_back(name);
  };
  s3::ForEachListPage(*client_, object_prefix, /*by_folder=*/true, [&](const s3::ListPage& page) {
    for (const s3::ListedObject& object : page.objects) add(object.key);
    for (const std::string& common : page.common_prefixes) add(common);
  });
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::optional<std::int64_t> S3Store::SizeOf(std::string_view key) const {
  const std::optional<ObjectHead> head = HeadObject(*client_, ObjectKey(key));
  if (!head) return std::nullopt;
  return head->size;
}

std::int64_t S3Store::EraseAll() {
  if (prefix_.empty()) {
    throw InvalidArgument("S3: refusing to erase every object of the bucket " + url_ +
                          "; name a prefix below it");
  }
  // Every key is listed first, then all are deleted, kParallelDeletes at a time.
  std::vector<std::string> object_keys;
  s3::ForEachListPage(*client_, prefix_, /*by_folder=*/false, [&](const s3::ListPage& page) {
    for (const s3::ListedObject& object : page.objects) object_keys.push_back(object.key);
  });
  return s3::DeleteObjects(*client_, object_keys);
}

}  // namespace tessera
