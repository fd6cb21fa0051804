// JSON helpers shared by the Zarr metadata documents (.zarray, .zattrs): parsing a
// document with a depth limit, finding and requiring keys, reading integers, and the
// FormatError every malformed value becomes:
//
//   Json document = ParseDocument(text, "/data/a.zarr/.zarray");   // a JSON object
//   const Json& shape = Require(document, "shape", where, "an array of integers >= 0");
//   if (!shape.is_array()) Fail(where, "shape", "an array of integers >= 0", shape);
//   // -> "/data/a.zarr/.zarray: key "shape": expected an array of integers >= 0, found 5"
//
// Internal to src/storage/zarr. Pure functions: thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "tessera/core/shape.hpp"

namespace tessera::zarr_detail {

using Json = nlohmann::json;

// A short, bounded rendering of a JSON value for messages: a few levels and elements
// at most, so that a message never repeats a whole hostile document.
std::string Render(const Json& value, int depth = 2);

// Throws FormatError `<where>: key "<key>": expected <expected>, found <found>`.
[[noreturn]] void FailText(std::string_view where, std::string_view key, std::string_view expected,
                           std::string_view found);
// The same, with `found` rendered by Render.
[[noreturn]] void Fail(std::string_view where, std::string_view key, std::string_view expected,
                       const Json& found);

// Parses a metadata document, which must be a JSON object; FormatError naming `where`
// (with the byte position of a syntax error) otherwise.
Json ParseDocument(std::string_view text, std::string_view where);

// object[key], or null when absent. REQUIRES: object.is_object().
const Json* Find(const Json& object, std::string_view key);
// object[key]; a FormatError naming `shown_key` (default: `key`) when it is missing.
const Json& Require(const Json& object, std::string_view key, std::string_view where,
                    std::string_view expected, std::string_view shown_key = {});

// The value of a JSON integer that fits Index; nullopt for anything else (floats too).
std::optional<Index> AsIndex(const Json& value);

// ZarrAttributes::other_json as a JSON object; InvalidArgument when it is not one.
Json ParseAttributesObject(std::string_view other_json);

// A list of integers >= `min` (a shape, chunk or shard shape); FormatError naming `key`
// with `expected` otherwise.
Shape ParseExtents(const Json& value, std::string_view key, std::string_view where, Index min,
                   std::string_view expected);

// `document` in zarr-python's layout (keys sorted, indent 4, non-ASCII escaped);
// InvalidArgument naming `what` when it cannot be written (invalid UTF-8 in a string).
std::string DumpOrThrow(const Json& document, std::string_view what);

}  // namespace tessera::zarr_detail
