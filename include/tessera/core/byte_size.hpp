// Human byte sizes: parse_bytes("400MB") and format_bytes(400'000'000).
//
// Units: B; SI kB/KB, MB, GB, TB, PB (powers of 1000); IEC KiB, MiB, GiB, TiB, PiB
// (powers of 1024). Units are case-insensitive; a space between number and unit is
// allowed; decimals are exact ("1.5 GB" = 1'500'000'000). The result must be a whole,
// non-negative number of bytes that fits in int64.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera {

// Throws InvalidArgument naming the text and the problem (empty, negative, unknown
// unit, not a number, fractional bytes, overflow).
std::int64_t parse_bytes(std::string_view text);

// SI units with one decimal: "400.0 MB", "1.5 GB"; below 1 kB: "100 B".
std::string format_bytes(std::int64_t bytes);

// IEC units with one decimal: "2.0 GiB".
std::string format_bytes_iec(std::int64_t bytes);

}  // namespace tessera
