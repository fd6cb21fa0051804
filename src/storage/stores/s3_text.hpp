// Byte-level text helpers shared by the S3 store's parsers, its URL encoding and its
// client: trimming, ASCII case, hexadecimal digits. Internal to src/storage/stores.
//
//   TrimBlank("  k = v \r\n");          // "k = v"
//   AsciiLower("Content-Range");        // "content-range"
//   AppendHexByte(out, 0x2f);           // out += "2F"
//
// Locale-independent (no <cctype>, whose results depend on the C locale); stateless and
// safe to call from any thread.
#pragma once

#include <string>
#include <string_view>

namespace tessera::s3 {

// The blanks TrimBlank removes: space, tab, carriage return and line feed (the white
// space of XML, of ini files and of HTTP header lines alike).
inline constexpr std::string_view kBlank = " \t\r\n";

// `text` without leading and trailing kBlank characters; a view into `text`.
std::string_view TrimBlank(std::string_view text);

// `c` with A-Z mapped to a-z; every other byte unchanged.
char AsciiLower(char c);
std::string AsciiLower(std::string_view text);

// Appends `byte` as two upper-case hexadecimal digits ("2F").
void AppendHexByte(std::string& out, unsigned char byte);

// The value of hexadecimal digit `c` (either case); -1 for any other byte.
int HexDigitValue(char c);

}  // namespace tessera::s3
