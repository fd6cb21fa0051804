#include "svg_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

namespace tessera::cli {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// Length of the valid UTF-8 sequence starting at text[at], 0 when it is not valid.
std::size_t Utf8Length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t offset) {
    return static_cast<unsigned char>(text[at + offset]);
  };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  std::uint32_t code = 0;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07u;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  for (std::size_t offset = 1; offset < length; ++offset) {
    if ((byte(offset) & 0xC0u) != 0x80u) return 0;
    code = (code << 6) | (byte(offset) & 0x3Fu);
  }
  // Overlong forms, UTF-16 surrogates, beyond U+10FFFF and the non-characters FFFE/FFFF
  // (which XML forbids) are not accepted.
  const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
  const bool surrogate = code >= 0xD800 && code <= 0xDFFF;
  if (overlong || surrogate || code > 0x10FFFF || code == 0xFFFE || code == 0xFFFF) return 0;
  return length;
}

}  // namespace

std::string XmlEscape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const char c = text[at];
    const std::size_t length = Utf8Length(text, at);
    if (length == 0) {
      escaped += kReplacement;
      ++at;
      continue;
    }
    if (length > 1) {
      escaped += text.substr(at, length);
      at += length;
      continue;
    }
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&#39;";
        break;
      case '\t':
      case '\n':
      case '\r':
        escaped += c;
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          escaped += kReplacement;
        } else {
          escaped += c;
        }
    }
    ++at;
  }
  return escaped;
}

std::string Shorten(std::string_view text, std::size_t max_chars) {
  std::size_t at = 0;
  std::size_t chars = 0;
  while (at < text.size() && chars < max_chars) {
    const std::size_t length = Utf8Length(text, at);
    at += length == 0 ? 1 : length;
    ++chars;
  }
  if (at >= text.size()) return std::string(text);
  // Keep room for the ellipsis: drop the last code point kept.
  std::size_t cut = at;
  while (cut > 0 && (static_cast<unsigned char>(text[cut - 1]) & 0xC0u) == 0x80u) --cut;
  if (cut > 0) --cut;
  return std::string(text.substr(0, cut)) + "\xE2\x80\xA6";  // U+2026 "…"
}

std::string SvgNumber(double value) {
  if (!std::isfinite(value)) return "0";
  char text[64];
  const auto result = std::to_chars(text, text + sizeof(text), value, std::chars_format::fixed, 2);
  std::string number(text, result.ptr);
  while (number.back() == '0') number.pop_back();
  if (number.back() == '.') number.pop_back();
  if (number == "-0") number = "0";
  return number;
}

void SvgWriter::StartTag(std::string_view tag, const SvgAttributes& attributes) {
  text_ += '<';
  text_ += tag;
  for (const auto& [name, value] : attributes) {
    text_ += ' ';
    text_ += name;
    text_ += "=\"";
    text_ += XmlEscape(value);
    text_ += '"';
  }
}

void SvgWriter::Open(std::string_view tag, const SvgAttributes& attributes) {
  StartTag(tag, attributes);
  text_ += ">\n";
}

void SvgWriter::Close(std::string_view tag) {
  text_ += "</";
  text_ += tag;
  text_ += ">\n";
}

void SvgWriter::Element(std::string_view tag, const SvgAttributes& attributes,
                        std::string_view tooltip) {
  StartTag(tag, attributes);
  if (tooltip.empty()) {
    text_ += "/>\n";
    return;
  }
  text_ += "><title>";
  text_ += XmlEscape(tooltip);
  text_ += "</title></";
  text_ += tag;
  text_ += ">\n";
}

void SvgWriter::Text(const SvgAttributes& attributes, std::string_view text) {
  StartTag("text", attributes);
  text_ += '>';
  text_ += XmlEscape(text);
  text_ += "</text>\n";
}

void SvgWriter::Title(std::string_view text) {
  text_ += "<title>";
  text_ += XmlEscape(text);
  text_ += "</title>\n";
}

}  // namespace tessera::cli
