#include "tessera/storage/store.hpp"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

// The key as it should appear in a message: quoted, with control bytes escaped so a
// NUL or newline inside a bad key stays visible.
std::string QuoteKey(std::string_view key) {
  std::string text = "\"";
  for (char c : key) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || c == '"' || c == '\\') {
      constexpr char kHex[] = "0123456789abcdef";
      if (c == '"' || c == '\\') {
        text += '\\';
        text += c;
      } else {
        text += "\\x";
        text += kHex[byte >> 4];
        text += kHex[byte & 0xf];
      }
    } else {
      text += c;
    }
  }
  return text + "\"";
}

[[noreturn]] void ThrowBadKey(std::string_view key, std::string_view rule, std::string_view fix) {
  throw InvalidArgument("invalid store key " + QuoteKey(key) + ": " + std::string(rule) + "; " +
                        std::string(fix));
}

}  // namespace

std::vector<std::string> Store::ListFolder(std::string_view folder) const {
  if (!folder.empty()) ValidateKey(folder);
  const std::string prefix = folder.empty() ? std::string() : std::string(folder) + "/";
  std::vector<std::string> names;
  for (const std::string& key : List(prefix)) {
    const std::string_view rest = std::string_view(key).substr(prefix.size());
    const std::string_view name = rest.substr(0, rest.find('/'));
    // Keys come sorted, so the keys under one name are adjacent.
    if (!name.empty() && (names.empty() || names.back() != name)) names.emplace_back(name);
  }
  return names;
}

std::int64_t Store::EraseKeys(std::span<const std::string> keys) {
  for (const std::string& key : keys) ValidateKey(key);
  std::int64_t removed = 0;
  for (const std::string& key : keys) removed += Erase(key) ? 1 : 0;
  return removed;
}

std::vector<ListedKey> Store::ListWithSizes(std::string_view prefix) const {
  std::vector<ListedKey> listed;
  for (std::string& key : List(prefix)) {
    const std::optional<std::int64_t> size = SizeOf(key);
    if (size) listed.push_back({std::move(key), *size});
  }
  return listed;
}

void ValidateKey(std::string_view key) {
  if (key.empty()) {
    ThrowBadKey(key, "the key is empty", "name an entry, e.g. \".zarray\" or \"0.0\"");
  }
  if (key.front() == '/') {
    ThrowBadKey(key, "the key is absolute (starts with '/')",
                "use a path relative to the store's root, without the leading '/'");
  }
  if (key.find('\\') != std::string_view::npos) {
    ThrowBadKey(key, "the key contains a backslash", "separate path segments with '/'");
  }
  if (key.find('\0') != std::string_view::npos) {
    ThrowBadKey(key, "the key contains a NUL byte", "remove the NUL byte");
  }
  std::size_t start = 0;
  while (true) {
    std::size_t end = key.find('/', start);
    std::string_view segment =
        key.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (segment.empty()) {
      ThrowBadKey(key, "the key has an empty segment (\"//\" or a trailing '/')",
                  "remove the doubled or trailing '/'");
    }
    if (segment == "." || segment == "..") {
      ThrowBadKey(key, "the key has a \"" + std::string(segment) + "\" segment",
                  "keys name entries below the root; spell the path without \".\" and \"..\"");
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
}

std::string JoinKey(std::string_view prefix, std::string_view key) {
  if (prefix.empty()) return std::string(key);
  if (key.empty()) return std::string(prefix);
  std::string joined(prefix);
  if (joined.back() != '/') joined += '/';
  joined += key;
  return joined;
}

std::optional<std::string> Store::GetText(std::string_view key) const {
  const std::optional<Buffer> value = Get(key);
  if (!value) return std::nullopt;
  return std::string(reinterpret_cast<const char*>(value->data()),
                     static_cast<std::size_t>(value->size()));
}

std::string Store::DescribeKey(std::string_view key) const { return JoinKey(Describe(), key); }

std::optional<std::int64_t> Store::ReadBounded(std::string_view key, std::int64_t max_size,
                                               const Destination& destination) const {
  const std::optional<std::int64_t> size = SizeOf(key);
  if (!size || *size > max_size) return size;
  std::optional<Buffer> value = Get(key);
  if (!value) return std::nullopt;
  // Get sees the value current now, which may have replaced the one sized above.
  if (value->size() > max_size) return value->size();
  const std::span<std::byte> out = destination(value->size());
  if (!value->empty()) std::memcpy(out.data(), value->data(), out.size());
  return value->size();
}

std::int64_t RangeStart(std::int64_t offset, std::int64_t length, std::int64_t size,
                        const std::string& described_key) {
  const std::int64_t start = offset < 0 ? size + offset : offset;
  if (start < 0 || length < 0 || start > size || length > size - start) {
    throw StorageError("cannot read bytes [" + std::to_string(offset) + ", " +
                       std::to_string(offset) + " + " + std::to_string(length) + ") of " +
                       described_key + ": the value has " + std::to_string(size) +
                       " bytes (a negative offset counts from its end)");
  }
  return start;
}

std::optional<std::int64_t> Store::ReadRange(std::string_view key, std::int64_t offset,
                                             std::span<std::byte> out) const {
  std::optional<Buffer> value = Get(key);
  if (!value) return std::nullopt;
  const auto length = static_cast<std::int64_t>(out.size());
  const std::int64_t start = RangeStart(offset, length, value->size(), DescribeKey(key));
  if (length > 0) std::memcpy(out.data(), value->data() + start, out.size());
  return value->size();
}

std::int64_t OpenedValue::ReadRange(std::int64_t offset, std::span<std::byte> out,
                                    const std::string& described_key) const {
  const std::int64_t start =
      RangeStart(offset, static_cast<std::int64_t>(out.size()), size(), described_key);
  if (!out.empty()) ReadAt(start, out);
  return size();
}

std::unique_ptr<OpenedValue> Store::OpenForReads(std::string_view /*key*/) const { return nullptr; }

PinnedValueStore::PinnedValueStore(const Store& base, std::string_view key)
    : base_(base), key_(key), value_(base.OpenForReads(key)) {}

std::optional<std::int64_t> PinnedValueStore::ReadRange(std::string_view key, std::int64_t offset,
                                                        std::span<std::byte> out) const {
  if (value_ == nullptr || key != key_) return base_.ReadRange(key, offset, out);
  return value_->ReadRange(offset, out, DescribeKey(key));
}

std::optional<std::int64_t> PinnedValueStore::SizeOf(std::string_view key) const {
  if (value_ == nullptr || key != key_) return base_.SizeOf(key);
  return value_->size();
}

void PinnedValueStore::Set(std::string_view key, std::span<const std::byte> /*value*/) {
  throw Error("internal error: " + DescribeKey(key) + " was written through a read-only view");
}

bool PinnedValueStore::Erase(std::string_view key) {
  throw Error("internal error: " + DescribeKey(key) + " was erased through a read-only view");
}

std::optional<std::int64_t> Store::GetInto(std::string_view key, Buffer& out,
                                           std::int64_t max_size) const {
  return ReadBounded(key, max_size, [&out](std::int64_t size) {
    out.ResizeUninitialized(size);
    return out.span();
  });
}

}  // namespace tessera
