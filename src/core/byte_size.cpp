#include "tessera/core/byte_size.hpp"

#include <array>
#include <cctype>
#include <cstdio>
#include <limits>

#include "tessera/core/errors.hpp"

namespace tessera {
namespace {

struct Unit {
  std::string_view name;  // lower case
  std::int64_t factor;
};

constexpr std::int64_t kKilo = 1000;
constexpr std::int64_t kKibi = 1024;

constexpr std::array<Unit, 18> kUnits = {{
    {"", 1},
    {"b", 1},
    {"k", kKilo},
    {"kb", kKilo},
    {"mb", kKilo* kKilo},
    {"gb", kKilo* kKilo* kKilo},
    {"tb", kKilo* kKilo* kKilo* kKilo},
    {"pb", kKilo* kKilo* kKilo* kKilo* kKilo},
    {"kib", kKibi},
    {"mib", kKibi* kKibi},
    {"gib", kKibi* kKibi* kKibi},
    {"tib", kKibi* kKibi* kKibi* kKibi},
    {"pib", kKibi* kKibi* kKibi* kKibi* kKibi},
    {"m", kKilo* kKilo},
    {"g", kKilo* kKilo* kKilo},
    {"t", kKilo* kKilo* kKilo* kKilo},
    {"ki", kKibi},
    {"mi", kKibi* kKibi},
}};

[[noreturn]] void Fail(std::string_view text, std::string_view problem) {
  throw InvalidArgument("invalid byte size \"" + std::string(text) + "\": " + std::string(problem) +
                        " (examples: \"400MB\", \"2GiB\", \"1.5 GB\", \"100\")");
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

std::string FormatScaled(std::int64_t bytes, std::int64_t base,
                         const std::array<std::string_view, 6>& names) {
  const bool negative = bytes < 0;
  // Magnitude as unsigned so that INT64_MIN is representable.
  const unsigned long long magnitude = negative ? 0ULL - static_cast<unsigned long long>(bytes)
                                                : static_cast<unsigned long long>(bytes);
  if (magnitude < static_cast<unsigned long long>(base)) {
    return std::to_string(bytes) + " B";
  }
  std::size_t unit = 0;
  long double value = static_cast<long double>(magnitude);
  // Values that print as "1000.0" at one decimal move up a unit ("1.0 MB").
  const long double carry = static_cast<long double>(base) - 0.05L;
  while (value >= carry && unit + 1 < names.size()) {
    value /= static_cast<long double>(base);
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof(text), "%s%.1Lf %s", negative ? "-" : "", value,
                std::string(names[unit]).c_str());
  return text;
}

}  // namespace

std::int64_t parse_bytes(std::string_view original) {
  std::string_view text = Trim(original);
  if (text.empty()) Fail(original, "it is empty");
  if (text.front() == '-') Fail(original, "sizes cannot be negative");
  if (text.front() == '+') text.remove_prefix(1);

  // Digits before and after the decimal point, kept exact as integers.
  unsigned __int128 mantissa = 0;
  int fraction_digits = 0;
  bool seen_digit = false;
  bool seen_point = false;
  std::size_t pos = 0;
  for (; pos < text.size(); ++pos) {
    char c = text[pos];
    if (c >= '0' && c <= '9') {
      seen_digit = true;
      mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
      if (mantissa >
          static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max()) * 1000000) {
        Fail(original, "the number is too large for a 64-bit byte count");
      }
      if (seen_point) ++fraction_digits;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!seen_digit) Fail(original, "it does not start with a number");
  if (fraction_digits > 18) Fail(original, "too many decimal digits");

  std::string unit_text;
  for (char c : Trim(text.substr(pos))) {
    unit_text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const Unit* unit = nullptr;
  for (const Unit& candidate : kUnits) {
    if (candidate.name == unit_text) unit = &candidate;
  }
  if (unit == nullptr) {
    Fail(original, "unknown unit \"" + unit_text +
                       "\"; use B, kB, MB, GB, TB, PB or KiB, MiB, GiB, TiB, PiB");
  }

  unsigned __int128 divisor = 1;
  for (int digit = 0; digit < fraction_digits; ++digit) divisor *= 10;
  unsigned __int128 scaled = 0;
  if (__builtin_mul_overflow(mantissa, static_cast<unsigned __int128>(unit->factor), &scaled)) {
    Fail(original, "it overflows a 64-bit byte count");
  }
  if (scaled % divisor != 0) Fail(original, "it is not a whole number of bytes");
  const unsigned __int128 bytes = scaled / divisor;
  if (bytes > static_cast<unsigned __int128>(std::numeric_limits<std::int64_t>::max())) {
    Fail(original, "it overflows a 64-bit byte count");
  }
  return static_cast<std::int64_t>(bytes);
}

std::string format_bytes(std::int64_t bytes) {
  return FormatScaled(bytes, 1000, {"B", "kB", "MB", "GB", "TB", "PB"});
}

std::string format_bytes_iec(std::int64_t bytes) {
  return FormatScaled(bytes, 1024, {"B", "KiB", "MiB", "GiB", "TiB", "PiB"});
}

}  // namespace tessera
