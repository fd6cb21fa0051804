// ParseListObjectsV2 and ParseErrorResponse on S3-shaped documents, XML's corners, and
// malformed bodies (every one a FormatError that says what is wrong).
#include "s3_response.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/errors.hpp"

namespace tessera::s3 {
namespace {

// The shape of AWS's ListObjectsV2 example, with our own bucket and keys.
constexpr std::string_view kListing = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>tessera-era5</Name>
  <Prefix>t2m.zarr/</Prefix>
  <KeyCount>4</KeyCount>
  <MaxKeys>1000</MaxKeys>
  <Delimiter>/</Delimiter>
  <IsTruncated>false</IsTruncated>
  <Contents>
    <Key>t2m.zarr/.zarray</Key>
    <LastModified>2024-03-18T09:21:44.000Z</LastModified>
    <ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag>
    <ChecksumAlgorithm>CRC32</ChecksumAlgorithm>
    <Size>412</Size>
    <Owner><ID>75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a</ID>
      <DisplayName>data-team</DisplayName></Owner>
    <StorageClass>STANDARD</StorageClass>
  </Contents>
  <Contents>
    <Key>t2m.zarr/.zattrs</Key>
    <LastModified>2024-03-18T09:21:44.000Z</LastModified>
    <ETag>&quot;0f343b0931126a20f133d67c2b018a3b&quot;</ETag>
    <Size>0</Size>
    <StorageClass>STANDARD</StorageClass>
  </Contents>
  <CommonPrefixes><Prefix>t2m.zarr/0/</Prefix></CommonPrefixes>
  <CommonPrefixes><Prefix>t2m.zarr/1/</Prefix></CommonPrefixes>
</ListBucketResult>
)";

std::string ListOf(std::string_view body) {
  return "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" +
         std::string(body) + "</ListBucketResult>";
}

// The message of the FormatError that parsing `xml` throws; "" when it parses.
std::string ListError(std::string_view xml) {
  try {
    ParseListObjectsV2(xml);
  } catch (const FormatError& error) {
    return error.what();
  }
  return "";
}

TEST(ParseListObjectsV2, ReadsAwsShapedListing) {
  const ListPage page = ParseListObjectsV2(kListing);
  ASSERT_EQ(page.objects.size(), 2u);
  EXPECT_EQ(page.objects[0].key, "t2m.zarr/.zarray");
  EXPECT_EQ(page.objects[0].size, 412);
  EXPECT_EQ(page.objects[1].key, "t2m.zarr/.zattrs");
  EXPECT_EQ(page.objects[1].size, 0);
  EXPECT_EQ(page.common_prefixes, (std::vector<std::string>{"t2m.zarr/0/", "t2m.zarr/1/"}));
  EXPECT_FALSE(page.truncated);
  EXPECT_EQ(page.next_continuation_token, "");
}

TEST(ParseListObjectsV2, ReadsTruncatedPageWithItsToken) {
  const ListPage page = ParseListObjectsV2(
      ListOf("<ContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</ContinuationToken>"
             "<NextContinuationToken>1Xn8+/dc0aVzPcQnh8nE4Ow/fJ1Pw==</NextContinuationToken>"
             "<KeyCount>1</KeyCount><MaxKeys>1</MaxKeys><IsTruncated> true </IsTruncated>"
             "<Contents><Key>t2m.zarr/0/0</Key><Size>9223372036854775807</Size></Contents>"));
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next_continuation_token, "1Xn8+/dc0aVzPcQnh8nE4Ow/fJ1Pw==");
  ASSERT_EQ(page.objects.size(), 1u);
  EXPECT_EQ(page.objects[0].size, 9223372036854775807);
}

TEST(ParseListObjectsV2, ReadsEmptyListing) {
  const ListPage page = ParseListObjectsV2(
      "<?xml version=\"1.0\"?>\n<ListBucketResult><Name>b</Name><Prefix/><KeyCount>0</KeyCount>"
      "<IsTruncated>false</IsTruncated></ListBucketResult>");
  EXPECT_TRUE(page.objects.empty());
  EXPECT_TRUE(page.common_prefixes.empty());
  EXPECT_FALSE(page.truncated);
}

TEST(ParseListObjectsV2, DecodesEntitiesAndCharacterReferences) {
  const ListPage page = ParseListObjectsV2(ListOf(
      "<Contents><Key>a&amp;b &lt;c&gt; &quot;d&apos; &#65;&#x42;&#0067; &#xe9;&#x1F600;&#13;"
      "</Key><Size>1</Size></Contents>"));
  ASSERT_EQ(page.objects.size(), 1u);
  EXPECT_EQ(page.objects[0].key, "a&b <c> \"d' ABC \xC3\xA9\xF0\x9F\x98\x80\r");
}

TEST(ParseListObjectsV2, KeepsKeysVerbatim) {
  // Raw UTF-8, spaces at either end, '>' and a CDATA section; raw line ends read as "\n".
  const ListPage page = ParseListObjectsV2(ListOf(
      "<Contents><Key> caf\xC3\xA9 a>b<![CDATA[<&>]]>\r\nz </Key><Size>3</Size></Contents>"));
  ASSERT_EQ(page.objects.size(), 1u);
  EXPECT_EQ(page.objects[0].key, " caf\xC3\xA9 a>b<&>\nz ");
}

TEST(ParseListObjectsV2, SkipsCommentsInstructionsAndUnknownElements) {
  const ListPage page = ParseListObjectsV2(
      "\xEF\xBB\xBF<?xml version='1.0' encoding='UTF-8'?><!-- before -->\n"
      "<ListBucketResult xmlns='http://s3.amazonaws.com/doc/2006-03-01/' a = \"1 &amp; 2\">"
      "<Future><Contents><Key>not-listed</Key><Size>1</Size></Contents><Deeper><x/></Deeper>"
      "</Future><?vendor hint?><Contents><!-- note --><Key>k<!-- c -->ey</Key><Size>5</Size>"
      "<Empty/><Empty a='b'/></Contents ></ListBucketResult>\n<!-- after -->\n");
  ASSERT_EQ(page.objects.size(), 1u);
  EXPECT_EQ(page.objects[0].key, "key");
  EXPECT_EQ(page.objects[0].size, 5);
}

TEST(ParseListObjectsV2, DecodesUrlEncodedKeys) {
  const ListPage page = ParseListObjectsV2(ListOf(
      "<EncodingType>url</EncodingType><Contents><Key>dir/a+b%2Bc%0A%e2%82%ac</Key><Size>1</Size>"
      "</Contents><CommonPrefixes><Prefix>dir/sub%20dir/</Prefix></CommonPrefixes>"));
  ASSERT_EQ(page.objects.size(), 1u);
  EXPECT_EQ(page.objects[0].key, "dir/a b+c\n\xE2\x82\xAC");
  EXPECT_EQ(page.common_prefixes, std::vector<std::string>{"dir/sub dir/"});
  EXPECT_NE(ListError(ListOf("<EncodingType>url</EncodingType><Contents><Key>a%2</Key>"
                             "<Size>1</Size></Contents>")),
            "");
  EXPECT_NE(ListError(ListOf("<EncodingType>base64</EncodingType>")), "");
}

// `levels` nested <x> elements inside a <ListBucketResult>.
std::string Nested(int levels) {
  std::string xml = "<ListBucketResult>";
  for (int level = 0; level < levels; ++level) xml += "<x>";
  for (int level = 0; level < levels; ++level) xml += "</x>";
  return xml + "</ListBucketResult>";
}

TEST(ParseListObjectsV2, AcceptsNestingUpToTheLimit) {
  EXPECT_EQ(ListError(Nested(kMaxXmlDepth - 1)), "");
  EXPECT_NE(ListError(Nested(kMaxXmlDepth)).find("nested deeper than 64"), std::string::npos);
}

TEST(ParseListObjectsV2, RefusesDeepNestingWithoutRecursion) {
  EXPECT_NE(ListError(Nested(100000)).find("nested deeper"), std::string::npos);
  EXPECT_NE(ListError(std::string(200000, '<')), "");
}

struct Malformed {
  const char* name;
  std::string xml;
  const char* message;  // a part of the FormatError's message
};

TEST(ParseListObjectsV2, RefusesMalformedDocumentsSayingWhy) {
  const std::string contents_without_size = "<Contents><Key>a</Key></Contents>";
  const std::vector<Malformed> cases = {
      {"empty", "", "no root element"},
      {"blank", " \n\t", "no root element"},
      {"text", "not xml at all", "text before the root element"},
      {"json", "{\"Contents\": []}", "text before the root element"},
      {"wrong root", "<ListAllMyBucketsResult/>", "the root element is <ListAllMyBucketsResult>"},
      {"s3 error", "<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>",
       "an S3 error instead of a listing: \"AccessDenied\": \"Access Denied\""},
      {"contents without key", ListOf("<Contents><Size>1</Size></Contents>"),
       "<Contents> #1 has no <Key>"},
      {"second contents without key",
       ListOf("<Contents><Key>a</Key><Size>1</Size></Contents><Contents/>"),
       "<Contents> #2 has no <Key>"},
      {"empty key", ListOf("<Contents><Key/><Size>1</Size></Contents>"), "empty <Key>"},
      {"two keys", ListOf("<Contents><Key>a</Key><Key>b</Key><Size>1</Size></Contents>"),
       "more than one <Key>"},
      {"key with element", ListOf("<Contents><Key>a<b/></Key><Size>1</Size></Contents>"),
       "<Key> holds element <b>"},
      {"no size", ListOf(contents_without_size), "(key \"a\") has no <Size>"},
      {"negative size", ListOf("<Contents><Key>a</Key><Size>-1</Size></Contents>"),
       "<Size> of key \"a\" is \"-1\"; expected a non-negative 64-bit integer"},
      {"plus size", ListOf("<Contents><Key>a</Key><Size>+1</Size></Contents>"), "\"+1\""},
      {"empty size", ListOf("<Contents><Key>a</Key><Size></Size></Contents>"), "is \"\""},
      {"fraction size", ListOf("<Contents><Key>a</Key><Size>1.5</Size></Contents>"), "\"1.5\""},
      {"hex size", ListOf("<Contents><Key>a</Key><Size>0x10</Size></Contents>"), "\"0x10\""},
      {"huge size", ListOf("<Contents><Key>a</Key><Size>9223372036854775808</Size></Contents>"),
       "non-negative 64-bit integer"},
      {"prefixes without prefix", ListOf("<CommonPrefixes/>"), "<CommonPrefixes> has no <Prefix>"},
      {"truncated without token", ListOf("<IsTruncated>true</IsTruncated>"),
       "truncated but has no <NextContinuationToken>"},
      {"truncated with empty token",
       ListOf("<IsTruncated>true</IsTruncated><NextContinuationToken/>"),
       "no <NextContinuationToken>"},
      {"bad truncated", ListOf("<IsTruncated>yes</IsTruncated>"), "expected true or false"},
      {"two truncated", ListOf("<IsTruncated>false</IsTruncated><IsTruncated>true</IsTruncated>"),
       "more than one <IsTruncated>"},
      {"unterminated root", "<ListBucketResult><Name>b</Name>", "unterminated element"},
      {"unterminated start tag", "<ListBucketResult", "unterminated start tag"},
      {"unterminated end tag", ListOf("") + "x", "content after the root element"},
      {"cut end tag", "<ListBucketResult></ListBucketResult", "expected '>'"},
      {"mismatched", "<ListBucketResult><Name>b</Key></ListBucketResult>", "</Key> closes <Name>"},
      {"two roots", ListOf("") + ListOf(""), "content after the root element"},
      {"unknown entity", ListOf("<Name>&nbsp;</Name>"), "unknown entity \"&nbsp;\""},
      {"bare ampersand", ListOf("<Name>a & b</Name>"), "'&' does not start"},
      {"unterminated entity", ListOf("<Name>&amp</Name>"), "'&' does not start"},
      {"nul reference", ListOf("<Name>&#0;</Name>"), "\"&#0;\" is not a valid character"},
      {"surrogate reference", ListOf("<Name>&#xD800;</Name>"), "\"&#xD800;\" is not a valid"},
      {"too large reference", ListOf("<Name>&#x110000;</Name>"), "is not a valid"},
      {"overflowing reference", ListOf("<Name>&#99999999999;</Name>"), "is not a valid"},
      {"empty reference", ListOf("<Name>&#x;</Name>"), "\"&#x;\" is not a valid"},
      {"signed reference", ListOf("<Name>&#-5;</Name>"), "is not a valid"},
      {"unterminated comment", ListOf("<!-- x"), "unterminated comment"},
      {"unterminated cdata", ListOf("<Name><![CDATA[x</Name>"), "unterminated CDATA"},
      {"unterminated instruction", "<?xml version='1.0'", "unterminated processing instruction"},
      {"doctype", "<!DOCTYPE x [<!ENTITY a 'b'>]><ListBucketResult/>", "DTDs are not supported"},
      {"markup declaration inside", ListOf("<!ENTITY a 'b'>"), "unexpected '<!'"},
      {"unquoted attribute", "<ListBucketResult a=b/>", "expected a quoted value"},
      {"attribute without value", "<ListBucketResult a/>", "expected '='"},
      {"attributes run together", "<ListBucketResult a='1'b='2'/>", "expected whitespace"},
      {"unterminated attribute", "<ListBucketResult a='1/>", "unterminated attribute value"},
      {"angle in attribute", "<ListBucketResult a='<'/>", "'<' in an attribute value"},
      {"bad name", "<1ListBucketResult/>", "expected a name"},
      {"lone angle", ListOf("<"), "expected a name"},
  };
  for (const Malformed& bad : cases) {
    const std::string message = ListError(bad.xml);
    EXPECT_NE(message.find(bad.message), std::string::npos)
        << bad.name << ": expected \"" << bad.message << "\" in \"" << message << "\"";
    EXPECT_TRUE(message.starts_with("S3 ListObjectsV2 response")) << bad.name << ": " << message;
  }
}

TEST(ParseListObjectsV2, LocatesSyntaxErrors) {
  EXPECT_NE(ListError("<ListBucketResult>&bogus;</ListBucketResult>").find("(at byte 19)"),
            std::string::npos);
}

TEST(ParseListObjectsV2, RefusesEveryCutListing) {
  // A body cut short (a dropped connection) never reads as a shorter listing.
  const std::size_t end = kListing.rfind('>') + 1;
  for (std::size_t size = 0; size < end; ++size) {
    EXPECT_NE(ListError(kListing.substr(0, size)), "") << "cut at " << size;
  }
  EXPECT_EQ(ListError(kListing.substr(0, end)), "");
}

TEST(ParseListObjectsV2, QuotesAtMostAShortPieceOfAValue) {
  const std::string message = ListError(
      ListOf("<Contents><Key>k</Key><Size>" + std::string(5000, '7') + "x</Size></Contents>"));
  EXPECT_NE(message.find("\"..."), std::string::npos) << message;
  EXPECT_LT(message.size(), 300u);
  const std::string long_name = ListError("<" + std::string(100000, 'n') + ">");
  EXPECT_NE(long_name.find("unterminated element <nnn"), std::string::npos) << long_name;
  EXPECT_LT(long_name.size(), 300u);
  EXPECT_NE(
      ListError(ListOf("<Contents><Key>k</Key><Size>1\x01</Size></Contents>")).find("\"1\\x01\""),
      std::string::npos);
}

TEST(ParseErrorResponse, ReadsNoSuchKey) {
  const auto error = ParseErrorResponse(R"(<?xml version="1.0" encoding="UTF-8"?>
<Error>
  <Code>NoSuchKey</Code>
  <Message>The specified key does not exist.</Message>
  <Key>t2m.zarr/0/7</Key>
  <RequestId>8C5E9B0D1A2F3E44</RequestId>
  <HostId>c2VjcmV0LWhvc3QtaWQtZm9yLXRlc3Rpbmc=</HostId>
</Error>)");
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, "NoSuchKey");
  EXPECT_EQ(error->message, "The specified key does not exist.");
}

TEST(ParseErrorResponse, ReadsSignatureDoesNotMatch) {
  const auto error = ParseErrorResponse(
      "<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated "
      "does not match the signature you provided. Check your key and signing method.</Message>"
      "<AWSAccessKeyId>AKIAEXAMPLEEXAMPLE12</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256\n"
      "20240318T092144Z\n20240318/us-east-1/s3/aws4_request\nabc</StringToSign>"
      "<SignatureProvided>0123abcd</SignatureProvided><StringToSignBytes>41 57 53</"
      "StringToSignBytes><CanonicalRequest>GET\n/t2m.zarr/.zarray\n\nhost:b.s3.amazonaws.com"
      "</CanonicalRequest><RequestId>4442587FB7D0A2F9</RequestId><HostId>h</HostId></Error>");
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, "SignatureDoesNotMatch");
  EXPECT_TRUE(error->message.starts_with("The request signature we calculated"));
}

TEST(ParseErrorResponse, ReadsSlowDownWithEntitiesAndNoMessage) {
  const auto slow = ParseErrorResponse(
      "<Error><Code>SlowDown</Code><Message>Please reduce your request rate &amp; retry."
      "</Message><RequestId>1</RequestId></Error>");
  ASSERT_TRUE(slow.has_value());
  EXPECT_EQ(slow->code, "SlowDown");
  EXPECT_EQ(slow->message, "Please reduce your request rate & retry.");
  const auto bare = ParseErrorResponse("<Error><Code> InternalError </Code></Error>");
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->code, "InternalError");
  EXPECT_EQ(bare->message, "");
}

TEST(ParseErrorResponse, IsNulloptForAnythingElse) {
  const std::vector<std::string> others = {
      "",
      "Service Unavailable",
      "<html><body>502 Bad Gateway</body></html>",
      std::string(kListing),
      "<Error><Message>no code</Message></Error>",
      "<Error><Code></Code></Error>",
      "<Error><Code>A</Code><Code>B</Code></Error>",
      "<Error><Code><b>x</b></Code></Error>",
      "<Error><Code>NoSuchKey</Code>",
      "<Error><Code>NoSuchKey</Code></Error><Error/>",
      "<Error><Code>&bad;</Code></Error>",
      std::string(100000, '<'),
  };
  for (const std::string& other : others) {
    EXPECT_FALSE(ParseErrorResponse(other).has_value()) << other.substr(0, 80);
  }
}

TEST(ParseErrorResponse, NeverThrowsOnCutDocuments) {
  const std::string document =
      "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>a &lt; b</Message></Error>";
  for (std::size_t size = 0; size < document.size(); ++size) {
    EXPECT_FALSE(ParseErrorResponse(document.substr(0, size)).has_value()) << size;
  }
  EXPECT_TRUE(ParseErrorResponse(document).has_value());
}

}  // namespace
}  // namespace tessera::s3
