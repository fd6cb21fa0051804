#include "chunk_key.hpp"

#include <algorithm>
#include <charconv>

#include "tessera/storage/store.hpp"

namespace tessera::zarr_detail {
namespace {

// Parses one decimal chunk coordinate (no sign, no leading zeros) below `limit`.
bool ParseCoordinate(std::string_view text, Index limit, Index& value) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return false;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  return error == std::errc() && ptr == end && value >= 0 && value < limit;
}

}  // namespace

std::string FormatChunkKey(std::string_view path, std::span<const Index> block, char separator,
                           ChunkKeyEncoding encoding) {
  std::string key;
  const bool v3_default = encoding == ChunkKeyEncoding::kDefault;
  if (v3_default) key = "c";
  if (block.empty() && !v3_default) key = "0";
  for (std::size_t dim = 0; dim < block.size(); ++dim) {
    if (dim > 0 || v3_default) key += separator;
    key += std::to_string(block[dim]);
  }
  return path.empty() ? key : JoinKey(path, key);
}

bool LooksLikeChunkKey(std::string_view key) {
  // v3's default encoding: "c", then separators and digits.
  if (key == "c") return true;
  if (key.size() > 1 && key[0] == 'c' && (key[1] == '/' || key[1] == '.')) key.remove_prefix(2);
  return !key.empty() && key.find_first_not_of("0123456789./") == std::string_view::npos;
}

bool IsChunkKey(std::string_view key, char separator, ChunkKeyEncoding encoding,
                const ChunkGrid& grid) {
  if (encoding == ChunkKeyEncoding::kDefault) {
    if (key == "c") return grid.ndim() == 0;
    if (key.size() < 2 || key[0] != 'c' || key[1] != separator || grid.ndim() == 0) return false;
    key.remove_prefix(2);
  } else if (grid.ndim() == 0) {
    return key == "0";
  }
  Index coordinate = 0;
  for (int dim = 0; dim < grid.ndim(); ++dim) {
    const std::size_t end = dim + 1 < grid.ndim() ? key.find(separator) : key.size();
    if (end == std::string_view::npos) return false;
    if (!ParseCoordinate(key.substr(0, end), grid.grid_shape()[static_cast<std::size_t>(dim)],
                         coordinate)) {
      return false;
    }
    key.remove_prefix(std::min(key.size(), end + 1));
  }
  return true;
}

}  // namespace tessera::zarr_detail
