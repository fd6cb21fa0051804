// A minimal SVG (XML) text builder for the run report: elements with escaped
// attributes and text, numbers in a fixed, locale-free form.
//
//   SvgWriter svg;
//   svg.Open("g", {{"class", "bars"}});
//   svg.Element("rect", {{"x", SvgNumber(10)}, {"width", SvgNumber(2.5)}}, "", "tooltip");
//   svg.Text({{"x", "0"}, {"y", "12"}}, "a<b");     // written as a&lt;b
//   svg.Close("g");
//   std::string text = svg.str();
//
// Attribute values and text are escaped here; callers pass them raw. Not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::cli {

// Escapes text for XML 1.0 and HTML content and attribute values: & < > " ' become
// entities; control characters XML forbids and bytes that are not valid UTF-8 become
// U+FFFD, so any input gives a well-formed document.
std::string XmlEscape(std::string_view text);

// `text` cut to at most `max_chars` code points (ending in "…" when cut); never splits
// a UTF-8 sequence.
std::string Shorten(std::string_view text, std::size_t max_chars);

// A coordinate or size with at most two decimals and no trailing zeros ("12.5", "3"),
// whatever the locale. Non-finite values print as 0.
std::string SvgNumber(double value);

using SvgAttributes = std::vector<std::pair<std::string_view, std::string>>;

class SvgWriter {
 public:
  // <tag attrs>; each Open needs a matching Close.
  void Open(std::string_view tag, const SvgAttributes& attributes);
  void Close(std::string_view tag);
  // <tag attrs/>, or with a tooltip <tag attrs><title>tooltip</title></tag>.
  void Element(std::string_view tag, const SvgAttributes& attributes,
               std::string_view tooltip = {});
  // <text attrs>text</text>.
  void Text(const SvgAttributes& attributes, std::string_view text);
  // <title>text</title>: the tooltip of the element opened last.
  void Title(std::string_view text);
  const std::string& str() const { return text_; }

 private:
  void StartTag(std::string_view tag, const SvgAttributes& attributes);
  std::string text_;
};

}  // namespace tessera::cli
