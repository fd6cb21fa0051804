// Codecs in .zarray documents: numcodecs' JSON configuration ({"id": "blosc", "cname":
// "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}) <-> CodecConfig.
//
//   CodecConfig config = ParseCodecJson(document["compressor"], "compressor", where);
//   document["compressor"] = CodecToJson(config);
//
// This file knows only the JSON spelling of each codec's parameters and numcodecs'
// defaults for keys a document leaves out. Which values are valid is the codec layer's
// rule: ParseCodecJson validates the config with MakeCodec and reports its refusal as
// a FormatError of the document.
//
// Internal to src/storage/zarr. Pure functions: thread-safe.
#pragma once

#include <string_view>

#include "json_fields.hpp"
#include "tessera/storage/codec.hpp"

namespace tessera::zarr_detail {

// The codec described by `value`, which `key` ("compressor", "filters[0]") names in
// messages. Throws FormatError `<where>: key "<key>...": expected ..., found ...` for
// a value that is not a codec object, an id Tessera does not support, a parameter of
// the wrong JSON type (naming "<key>.<parameter>"), or parameters the codec layer
// rejects (naming "<key>"). Keys beyond the codec's parameters are ignored, as newer
// numcodecs versions add some (Zstd's "checksum") that change nothing for decoding.
CodecConfig ParseCodecJson(const Json& value, std::string_view key, std::string_view where);

// numcodecs' configuration of `config`; InvalidArgument for an id without one.
Json CodecToJson(const CodecConfig& config);

}  // namespace tessera::zarr_detail
