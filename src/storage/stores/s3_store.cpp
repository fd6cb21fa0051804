#include "tessera/storage/s3_store.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "s3_client.hpp"
#include "s3_config.hpp"
#include "s3_response.hpp"
#include "s3_url.hpp"
#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

using s3::BodyTarget;
using s3::S3Client;
using s3::S3Request;
using s3::S3Response;

bool IsNoSuchBucket(const S3Response& response) {
  const auto error = s3::ParseErrorResponse(response.text);
  return error && error->code == "NoSuchBucket";
}

// The whole size from a Content-Range header, "bytes 0-9/443" or "bytes */443".
std::optional<std::int64_t> RangeTotal(const std::string& content_range) {
  const std::size_t slash = content_range.rfind('/');
  if (slash == std::string::npos || slash + 1 >= content_range.size()) return std::nullopt;
  std::int64_t total = 0;
  for (std::size_t i = slash + 1; i < content_range.size(); ++i) {
    const char c = content_range[i];
    if (c < '0' || c > '9' || total > std::numeric_limits<std::int64_t>::max() / 10 - 9) {
      return std::nullopt;
    }
    total = total * 10 + (c - '0');
  }
  return total;
}

// One page after another of ListObjectsV2 under `object_prefix`.
void ForEachListPage(const S3Client& client, const std::string& object_prefix, bool by_folder,
                     const std::function<void(const s3::ListPage&)>& page_fn) {
  std::string token;
  do {
    S3Request request;
    request.method = "GET";
    request.listed_prefix = object_prefix;
    request.query =
        (token.empty() ? "" : "continuation-token=" + s3::UriEncode(token, false) + "&") +
        (by_folder ? "delimiter=%2F&" : "") + "list-type=2" +
        (object_prefix.empty() ? "" : "&prefix=" + s3::UriEncode(object_prefix, false));
    const S3Response response = client.Perform(request);
    if (response.status != 200) s3::ThrowResponseError(client, request, response);
    s3::ListPage page;
    try {
      page = s3::ParseListObjectsV2(response.text);
    } catch (const FormatError& error) {
      throw StorageError("S3 " + client.Describe(request) +
                         ": the listing could not be read: " + error.what());
    }
    page_fn(page);
    token = page.truncated ? page.next_continuation_token : std::string();
  } while (!token.empty());
}

// A value pinned by its ETag: each read is a ranged GET of that version only.
class S3OpenedValue final : public OpenedValue {
 public:
  S3OpenedValue(std::shared_ptr<const S3Client> client, std::string object_key, std::string etag,
                std::int64_t size)
      : client_(std::move(client)),
        object_key_(std::move(object_key)),
        etag_(std::move(etag)),
        size_(size) {}

  std::int64_t size() const override { return size_; }
  void ReadAt(std::int64_t start, std::span<std::byte> out) const override {
    if (out.empty()) return;
    S3Request request;
    request.key = object_key_;
    request.range = "bytes=" + std::to_string(start) + "-" +
                    std::to_string(start + static_cast<std::int64_t>(out.size()) - 1);
    request.if_match = etag_;
    const BodyTarget target = [&](long status, std::int64_t size) -> std::span<std::byte> {
      if (status == 206 && size == static_cast<std::int64_t>(out.size())) return out;
      return {};
    };
    const S3Response response = client_->Perform(request, &target);
    if (response.status == 206 && !response.refused) return;
    if (response.status == 412 || response.status == 404) {
      throw StorageError("S3 " + client_->Describe(request) +
                         ": the value changed or was removed while being read (HTTP " +
                         std::to_string(response.status) +
                         "); another program is writing the store: read again once it is done");
    }
    s3::ThrowResponseError(*client_, request, response);
  }

 private:
  std::shared_ptr<const S3Client> client_;
  std::string object_key_;
  std::string etag_;
  std::int64_t size_;
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
    S3Request request;
    request.listed_prefix = store->prefix_;
    request.query = "list-type=2&max-keys=1";
    if (!location.prefix.empty())
      request.query += "&prefix=" + s3::UriEncode(store->prefix_, false);
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
  const auto size =
      ReadBounded(key, std::numeric_limits<std::int64_t>::max(), [&value](std::int64_t bytes) {
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
  if (response.status == 404 && !IsNoSuchBucket(response)) return std::nullopt;
  if (response.status != 200) s3::ThrowResponseError(*client_, request, response);
  return seen;
}

std::optional<std::int64_t> S3Store::ReadRange(std::string_view key, std::int64_t offset,
                                               std::span<std::byte> out) const {
  const auto length = static_cast<std::int64_t>(out.size());
  S3Request request;
  request.key = ObjectKey(key);
  if (length == 0 || (offset < 0 && -offset != length)) {
    // HTTP has no empty range, and a suffix range reads to the end: size first.
    const std::optional<std::int64_t> size = SizeOf(key);
    if (!size) return std::nullopt;
    const std::int64_t start = RangeStart(offset, length, *size, DescribeKey(key));
    if (length == 0) return size;
    offset = start;
  }
  request.range =
      offset < 0 ? "bytes=" + std::to_string(offset)
                 : "bytes=" + std::to_string(offset) + "-" + std::to_string(offset + length - 1);
  const BodyTarget target = [&](long status, std::int64_t size) -> std::span<std::byte> {
    if (status == 206 && size == length) return out;
    return {};
  };
  const S3Response response = client_->Perform(request, &target);
  if (response.status == 404 && !IsNoSuchBucket(response)) return std::nullopt;
  if (response.status == 200) return Store::ReadRange(key, offset, out);  // Range ignored
  if (response.status != 206 && response.status != 416) {
    s3::ThrowResponseError(*client_, request, response);
  }
  std::optional<std::int64_t> total = RangeTotal(response.content_range);
  // A 416 need not say the size (S3 puts it in its XML, moto nowhere): asked for.
  if (!total && response.status == 416) total = SizeOf(key);
  if (!total) {
    throw StorageError("S3 " + client_->Describe(request) + ": HTTP " +
                       std::to_string(response.status) + " without a readable Content-Range (\"" +
                       response.content_range + "\")");
  }
  // Throws, naming the sizes, when the range does not lie inside the value.
  RangeStart(offset, length, *total, DescribeKey(key));
  if (response.refused || response.status != 206) {
    throw StorageError("S3 " + client_->Describe(request) + ": the server sent " +
                       std::to_string(response.content_length) + " bytes for a range of " +
                       std::to_string(length));
  }
  return total;
}

std::unique_ptr<OpenedValue> S3Store::OpenForReads(std::string_view key) const {
  S3Request request;
  request.method = "HEAD";
  request.key = ObjectKey(key);
  const S3Response response = client_->Perform(request);
  if (response.status == 404) return nullptr;
  if (response.status != 200) s3::ThrowResponseError(*client_, request, response);
  if (response.etag.empty()) return nullptr;  // nothing to pin by: each read on its own
  return std::make_unique<S3OpenedValue>(client_, request.key, response.etag,
                                         std::max<std::int64_t>(response.content_length, 0));
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
  if (response.status == 404 && !IsNoSuchBucket(response)) return false;
  if (response.status != 204 && response.status != 200) {
    s3::ThrowResponseError(*client_, request, response);
  }
  return true;
}

std::vector<std::string> S3Store::List(std::string_view prefix) const {
  std::vector<std::string> keys;
  ForEachListPage(*client_, prefix_ + std::string(prefix), /*by_folder=*/false,
                  [&](const s3::ListPage& page) {
                    for (const s3::ListedObject& object : page.objects) {
                      if (!object.key.starts_with(prefix_)) continue;
                      std::string key = object.key.substr(prefix_.size());
                      try {
                        ValidateKey(key);  // "dir/" markers and the like are no keys
                      } catch (const InvalidArgument&) {
                        continue;
                      }
                      keys.push_back(std::move(key));
                    }
                  });
  std::sort(keys.begin(), keys.end());
  return keys;
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
  ForEachListPage(*client_, object_prefix, /*by_folder=*/true, [&](const s3::ListPage& page) {
    for (const s3::ListedObject& object : page.objects) add(object.key);
    for (const std::string& common : page.common_prefixes) add(common);
  });
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::optional<std::int64_t> S3Store::SizeOf(std::string_view key) const {
  S3Request request;
  request.method = "HEAD";
  request.key = ObjectKey(key);
  const S3Response response = client_->Perform(request);
  if (response.status == 404) return std::nullopt;
  if (response.status != 200) s3::ThrowResponseError(*client_, request, response);
  return std::max<std::int64_t>(response.content_length, 0);
}

std::int64_t S3Store::EraseAll() {
  if (prefix_.empty()) {
    throw InvalidArgument("S3: refusing to erase every object of the bucket " + url_ +
                          "; name a prefix below it");
  }
  std::vector<std::string> keys;
  ForEachListPage(*client_, prefix_, /*by_folder=*/false, [&](const s3::ListPage& page) {
    for (const s3::ListedObject& object : page.objects) keys.push_back(object.key);
  });
  // Several DELETEs in flight at once: a work directory can hold many thousand chunks.
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> removed{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto worker = [&] {
    for (std::size_t i = next++; i < keys.size(); i = next++) {
      S3Request request;
      request.method = "DELETE";
      request.key = keys[i];
      try {
        const S3Response response = client_->Perform(request);
        if (response.status == 204 || response.status == 200) {
          ++removed;
        } else if (response.status != 404) {
          s3::ThrowResponseError(*client_, request, response);
        }
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(16, keys.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  if (threads > 0) worker();
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
  return removed;
}

}  // namespace tessera
