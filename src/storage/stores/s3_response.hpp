// Parsers of the XML bodies S3 answers with: one page of a ListObjectsV2 listing, and the
// <Error> document of a failed request.
//
//   1. ListPage page = ParseListObjectsV2(body);   // throws FormatError when malformed
//   2. if (page.truncated) ... list again with page.next_continuation_token
//   3. std::optional<ErrorResponse> error = ParseErrorResponse(body);  // never throws
//
// Bodies are untrusted. Any input is parsed without crashing or reading out of bounds:
// elements nest at most kMaxXmlDepth deep, DTDs are refused, entities are the five of XML
// and numeric character references. Unknown elements are skipped with their contents.
// Stateless; safe to call from any thread. Internal to src/storage/stores.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::s3 {

// Element nesting the parsers accept (S3's documents nest 3 deep); deeper is FormatError.
inline constexpr int kMaxXmlDepth = 64;

struct ListedObject {
  std::string key;
  std::int64_t size = 0;
};

struct ListPage {
  std::vector<ListedObject> objects;         // <Contents>: <Key>, <Size>; in document order
  std::vector<std::string> common_prefixes;  // <CommonPrefixes><Prefix>
  bool truncated = false;                    // <IsTruncated>true</IsTruncated>
  std::string next_continuation_token;       // <NextContinuationToken>; set when truncated
};

// A ListObjectsV2 response body (root <ListBucketResult>). Keys and prefixes are decoded
// when the page says <EncodingType>url</EncodingType>. Throws FormatError saying what is
// wrong and where when `xml` is not well-formed XML, its root is another element (an S3
// <Error> is named with its code), a <Contents> lacks a <Key> or <Size>, a <Size> is not a
// non-negative 64-bit integer, or the page is truncated without a continuation token.
ListPage ParseListObjectsV2(std::string_view xml);

struct ErrorResponse {
  std::string code;     // "NoSuchKey", "SlowDown", ...
  std::string message;  // "" when the document has none
};

// The code and message of an S3 error document (root <Error> with a non-empty <Code>);
// nullopt for anything else, including malformed XML. Never throws.
std::optional<ErrorResponse> ParseErrorResponse(std::string_view xml);

}  // namespace tessera::s3
