#include "s3_response.hpp"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <new>
#include <system_error>
#include <utility>

#include "s3_text.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::s3 {
namespace {

// XML's white space is exactly the blanks of s3_text.hpp.
constexpr std::string_view kXmlSpace = kBlank;
constexpr std::string_view kListContext = "S3 ListObjectsV2 response";
// Bytes of a value a message quotes: enough to recognise it, never a whole body.
constexpr std::size_t kQuotedBytes = 64;
// S3's error messages run to a sentence or two.
constexpr std::size_t kQuotedMessageBytes = 256;

// An element of a parsed document: its name, its character data (entities decoded, the
// text of child elements not included) and its child elements.
struct Element {
  std::string name;
  std::string text;
  std::vector<Element> children;
};

// `text` in double quotes for a message: at most `limit` bytes, control bytes escaped.
std::string Quote(std::string_view text, std::size_t limit = kQuotedBytes) {
  std::string quoted = "\"";
  for (const char c : text.substr(0, limit)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || c == '"' || c == '\\') {
      quoted += "\\x";
      AppendHexByte(quoted, byte);
    } else {
      quoted += c;
    }
  }
  quoted += text.size() > limit ? "\"..." : "\"";
  return quoted;
}

// An element's tag for a message, "<name>": names are unbounded, so cut to kQuotedBytes.
std::string Tag(std::string_view name) {
  return "<" + std::string(name.substr(0, kQuotedBytes)) +
         (name.size() > kQuotedBytes ? "...>" : ">");
}

void AppendUtf8(char32_t code_point, std::string& out) {
  const auto put = [&out](std::uint32_t byte) { out += static_cast<char>(byte); };
  const auto value = static_cast<std::uint32_t>(code_point);
  if (value < 0x80) {
    put(value);
  } else if (value < 0x800) {
    put(0xC0 | (value >> 6));
    put(0x80 | (value & 0x3F));
  } else if (value < 0x10000) {
    put(0xE0 | (value >> 12));
    put(0x80 | ((value >> 6) & 0x3F));
    put(0x80 | (value & 0x3F));
  } else {
    put(0xF0 | (value >> 18));
    put(0x80 | ((value >> 12) & 0x3F));
    put(0x80 | ((value >> 6) & 0x3F));
    put(0x80 | (value & 0x3F));
  }
}

bool IsNameStart(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || byte >= 0x80;
}

bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.'; }

// A well-formedness checking reader of one XML document into an Element tree, without
// recursion (elements nest at most kMaxXmlDepth deep) and without a DTD.
class XmlReader {
 public:
  XmlReader(std::string_view xml, std::string_view context) : xml_(xml), context_(context) {}

  Element ReadDocument() {
    if (StartsWith("\xEF\xBB\xBF")) pos_ += 3;  // a UTF-8 byte order mark
    SkipMisc();
    if (StartsWith("<!")) Fail("'<!' before the root element (DTDs are not supported)");
    if (!StartsWith("<")) Fail(AtEnd() ? "no root element" : "text before the root element");
    Element root;
    if (!ReadStartTag(root)) ReadContent(root);
    SkipMisc();
    if (!AtEnd()) Fail("content after the root element " + Tag("/" + root.name));
    return root;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) const {
    throw FormatError(std::string(context_) + " is not well-formed XML: " + what + " (at byte " +
                      std::to_string(pos_) + ")");
  }

  bool AtEnd() const { return pos_ >= xml_.size(); }
  bool StartsWith(std::string_view prefix) const {
    return xml_.substr(std::min(pos_, xml_.size())).starts_with(prefix);
  }
  void SkipSpace() {
    while (!AtEnd() && kXmlSpace.find(xml_[pos_]) != std::string_view::npos) ++pos_;
  }
  // Moves past `opener` (which starts here) and the `terminator` that must follow it;
  // returns what lies between them.
  std::string_view SkipPast(std::string_view opener, std::string_view terminator,
                            const char* unterminated) {
    pos_ += opener.size();
    const std::size_t end = xml_.find(terminator, pos_);
    if (end == std::string_view::npos) Fail(unterminated);
    const std::string_view skipped = xml_.substr(pos_, end - pos_);
    pos_ = end + terminator.size();
    return skipped;
  }

  // Whitespace, comments and processing instructions (the <?xml ...?> prolog among them).
  void SkipMisc() {
    while (true) {
      SkipSpace();
      if (StartsWith("<!--")) {
        SkipPast("<!--", "-->", "unterminated comment");
      } else if (StartsWith("<?")) {
        SkipPast("<?", "?>", "unterminated processing instruction");
      } else {
        return;
      }
    }
  }

  std::string_view ReadName() {
    const std::size_t start = pos_;
    if (AtEnd() || !IsNameStart(xml_[pos_])) Fail("expected a name");
    while (!AtEnd() && IsNameChar(xml_[pos_])) ++pos_;
    return xml_.substr(start, pos_ - start);
  }

  // Reads "<name attr='value' ...>" into `element`'s name; true when it ends with "/>".
  bool ReadStartTag(Element& element) {
    ++pos_;  // '<'
    element.name = ReadName();
    std::string ignored_value;
    while (true) {
      const std::size_t before_space = pos_;
      SkipSpace();
      if (AtEnd()) Fail("unterminated start tag " + Tag(element.name));
      if (StartsWith("/>")) {
        pos_ += 2;
        return true;
      }
      if (xml_[pos_] == '>') {
        ++pos_;
        return false;
      }
      if (pos_ == before_space) Fail("expected whitespace, '>' or '/>' in " + Tag(element.name));
      ReadName();  // an attribute: xmlns="http://s3.amazonaws.com/doc/2006-03-01/" and others
      SkipSpace();
      if (!StartsWith("=")) Fail("expected '=' after an attribute name in " + Tag(element.name));
      ++pos_;
      SkipSpace();
      if (AtEnd() || (xml_[pos_] != '"' && xml_[pos_] != '\'')) Fail("expected a quoted value");
      const char quote = xml_[pos_++];
      ignored_value.clear();
      while (!AtEnd() && xml_[pos_] != quote) {
        if (xml_[pos_] == '<') Fail("'<' in an attribute value");
        if (xml_[pos_++] == '&') AppendReference(ignored_value);
      }
      if (AtEnd()) Fail("unterminated attribute value in " + Tag(element.name));
      ++pos_;
    }
  }

  // Reads what follows `root`'s start tag up to and including its end tag.
  void ReadContent(Element& root) {
    // Only the innermost open element gains children, so pointers to the open ones stay
    // valid while their parents' child vectors stay untouched.
    std::vector<Element*> open = {&root};
    while (!open.empty()) {
      Element& top = *open.back();
      if (AtEnd()) Fail("unterminated element " + Tag(top.name));
      const char c = xml_[pos_];
      if (c == '&') {
        ++pos_;
        AppendReference(top.text);
      } else if (c == '\r') {  // line ends read as "\n" (XML 1.0 section 2.11)
        top.text += '\n';
        ++pos_;
        if (StartsWith("\n")) ++pos_;
      } else if (c != '<') {
        const std::size_t end = std::min(xml_.find_first_of("<&\r", pos_), xml_.size());
        top.text.append(xml_.substr(pos_, end - pos_));
        pos_ = end;
      } else if (StartsWith("</")) {
        ReadEndTag(top.name);
        open.pop_back();
      } else if (StartsWith("<!--")) {
        SkipPast("<!--", "-->", "unterminated comment");
      } else if (StartsWith("<![CDATA[")) {
        top.text.append(SkipPast("<![CDATA[", "]]>", "unterminated CDATA section"));
      } else if (StartsWith("<?")) {
        SkipPast("<?", "?>", "unterminated processing instruction");
      } else if (StartsWith("<!")) {
        Fail("unexpected '<!' in " + Tag(top.name));
      } else {
        if (open.size() >= static_cast<std::size_t>(kMaxXmlDepth)) {
          Fail("elements nested deeper than " + std::to_string(kMaxXmlDepth));
        }
        Element& child = top.children.emplace_back();
        if (!ReadStartTag(child)) open.push_back(&child);
      }
    }
  }

  void ReadEndTag(const std::string& name) {
    pos_ += 2;  // "</"
    const std::size_t start = pos_;
    if (ReadName() != name) {
      pos_ = start;
      Fail(Tag("/" + std::string(ReadName())) + " closes " + Tag(name));
    }
    SkipSpace();
    if (!StartsWith(">")) Fail("expected '>' to end " + Tag("/" + name));
    ++pos_;
  }

  // Decodes the reference after '&' ("amp;", "#233;", "#xE9;") onto `out`.
  void AppendReference(std::string& out) {
    // The longest name is 4 bytes; numbers may carry leading zeros, within reason.
    constexpr std::size_t kMaxReference = 16;
    const std::size_t semicolon = xml_.substr(pos_, kMaxReference + 1).find(';');
    if (semicolon == std::string_view::npos) Fail("'&' does not start an entity reference");
    const std::string_view reference = xml_.substr(pos_, semicolon);
    static constexpr std::pair<std::string_view, char> kEntities[] = {
        {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    for (const auto& [name, character] : kEntities) {
      if (reference == name) {
        out += character;
        pos_ += semicolon + 1;
        return;
      }
    }
    if (!reference.starts_with('#'))
      Fail("unknown entity " + Quote("&" + std::string(reference) + ";"));
    const bool hex = reference.starts_with("#x");
    const std::string_view digits = reference.substr(hex ? 2 : 1);
    std::uint32_t value = 0;
    const auto [end, error] =
        std::from_chars(digits.data(), digits.data() + digits.size(), value, hex ? 16 : 10);
    // XML 1.1's characters: every scalar value but NUL (S3 writes control characters of
    // keys as references, which XML 1.0 would refuse).
    if (digits.empty() || end != digits.data() + digits.size() || error != std::errc() ||
        value == 0 || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF) || value == 0xFFFE ||
        value == 0xFFFF) {
      Fail(Quote("&" + std::string(reference) + ";") + " is not a valid character reference");
    }
    AppendUtf8(static_cast<char32_t>(value), out);
    pos_ += semicolon + 1;
  }

  std::string_view xml_;
  std::string_view context_;
  std::size_t pos_ = 0;
};

// ---- Reading S3's elements ----

[[noreturn]] void FailList(const std::string& what) {
  throw FormatError(std::string(kListContext) + ": " + what);
}

// The text of an element that should hold only text.
const std::string& LeafText(const Element& element) {
  if (!element.children.empty()) {
    FailList(Tag(element.name) + " holds element " + Tag(element.children.front().name) +
             "; expected only text");
  }
  return element.text;
}

// The only child of `parent` named `name`; nullptr when there is none.
const Element* OnlyChild(const Element& parent, std::string_view name) {
  const Element* found = nullptr;
  for (const Element& child : parent.children) {
    if (child.name != name) continue;
    if (found != nullptr) FailList(Tag(parent.name) + " holds more than one " + Tag(child.name));
    found = &child;
  }
  return found;
}

// A key or prefix of a page listed with encoding-type=url: "%XX" escapes, '+' a space.
std::string UrlDecode(std::string_view text) {
  std::string decoded;
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (text[at] == '+') {
      decoded += ' ';
    } else if (text[at] != '%') {
      decoded += text[at];
    } else {
      const int high = at + 2 < text.size() ? HexDigitValue(text[at + 1]) : -1;
      const int low = at + 2 < text.size() ? HexDigitValue(text[at + 2]) : -1;
      if (high < 0 || low < 0) FailList("bad '%' escape in URL-encoded " + Quote(text));
      decoded += static_cast<char>(high * 16 + low);
      at += 2;
    }
  }
  return decoded;
}

ListedObject ReadObject(const Element& contents, std::size_t index, bool url_encoded) {
  const std::string where = "<Contents> #" + std::to_string(index + 1);
  const Element* key = OnlyChild(contents, "Key");
  if (key == nullptr) FailList(where + " has no <Key>");
  ListedObject object;
  object.key = url_encoded ? UrlDecode(LeafText(*key)) : LeafText(*key);
  if (object.key.empty()) FailList(where + " has an empty <Key>");
  const Element* size = OnlyChild(contents, "Size");
  if (size == nullptr) FailList(where + " (key " + Quote(object.key) + ") has no <Size>");
  const std::string_view digits = TrimBlank(LeafText(*size));
  const auto [end, error] =
      std::from_chars(digits.data(), digits.data() + digits.size(), object.size);
  if (digits.empty() || digits.front() < '0' || digits.front() > '9' ||
      end != digits.data() + digits.size() || error != std::errc()) {
    FailList("<Size> of key " + Quote(object.key) + " is " + Quote(size->text) +
             "; expected a non-negative 64-bit integer");
  }
  return object;
}

bool ReadTruncated(const Element& element) {
  const std::string_view text = TrimBlank(LeafText(element));
  if (text == "true") return true;
  if (text == "false") return false;
  FailList("<IsTruncated> is " + Quote(element.text) + "; expected true or false");
}

}  // namespace

ListPage ParseListObjectsV2(std::string_view xml) {
  const Element root = XmlReader(xml, kListContext).ReadDocument();
  if (root.name != "ListBucketResult") {
    if (const std::optional<ErrorResponse> error = ParseErrorResponse(xml)) {
      FailList("an S3 error instead of a listing: " + Quote(error->code) + ": " +
               Quote(error->message, kQuotedMessageBytes));
    }
    FailList("the root element is " + Tag(root.name) + "; expected <ListBucketResult>");
  }
  bool url_encoded = false;
  if (const Element* encoding = OnlyChild(root, "EncodingType")) {
    const std::string_view type = TrimBlank(LeafText(*encoding));
    if (type != "url") FailList("unknown <EncodingType> " + Quote(type) + "; expected url");
    url_encoded = true;
  }
  ListPage page;
  for (const Element& child : root.children) {
    if (child.name == "Contents") {
      page.objects.push_back(ReadObject(child, page.objects.size(), url_encoded));
    } else if (child.name == "CommonPrefixes") {
      const Element* prefix = OnlyChild(child, "Prefix");
      if (prefix == nullptr) FailList("a <CommonPrefixes> has no <Prefix>");
      page.common_prefixes.push_back(url_encoded ? UrlDecode(LeafText(*prefix))
                                                 : LeafText(*prefix));
    }
  }
  if (const Element* truncated = OnlyChild(root, "IsTruncated")) {
    page.truncated = ReadTruncated(*truncated);
  }
  if (const Element* token = OnlyChild(root, "NextContinuationToken")) {
    page.next_continuation_token = LeafText(*token);
  }
  if (page.truncated && page.next_continuation_token.empty()) {
    FailList("the page is truncated but has no <NextContinuationToken> to list the rest with");
  }
  return page;
}

std::optional<ErrorResponse> ParseErrorResponse(std::string_view xml) {
  try {
    const Element root = XmlReader(xml, "S3 error response").ReadDocument();
    if (root.name != "Error") return std::nullopt;
    const Element* code = OnlyChild(root, "Code");
    if (code == nullptr || !code->children.empty()) return std::nullopt;
    ErrorResponse error;
    error.code = TrimBlank(code->text);
    if (error.code.empty()) return std::nullopt;
    const Element* message = OnlyChild(root, "Message");
    if (message != nullptr && message->children.empty()) error.message = message->text;
    return error;
  } catch (const FormatError&) {
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    return std::nullopt;
  }
}

}  // namespace tessera::s3
