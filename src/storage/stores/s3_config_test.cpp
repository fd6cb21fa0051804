// ParseAwsIni's grammar and errors, and ResolveS3Settings' precedence over an injected
// environment and real files in a temporary HOME. Every refusal is checked never to quote
// the secret key, session token or key id it had at hand.
#include "s3_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scoped_environment.hpp"
#include "temp_dir.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::s3 {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKeyId = "AKIATESSERAEXAMPLE01";
constexpr const char* kSecret = "tEsSeRaSeCrEt/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr const char* kToken = "FwoGZXIvYXdzTESSERASESSIONTOKENEXAMPLE";

// A file with every secret of kKeyId's pair, for profile `section`.
std::string KeyPairSection(const std::string& section) {
  return "[" + section + "]\naws_access_key_id = " + kKeyId +
         "\naws_secret_access_key = " + kSecret + "\naws_session_token = " + kToken + "\n";
}

// The message of the FormatError ParseAwsIni throws for `text`; "" when it parses.
std::string IniError(std::string_view text) {
  try {
    ParseAwsIni(text);
  } catch (const FormatError& error) {
    return error.what();
  }
  return "";
}

TEST(ParseAwsIni, ReadsSectionsSettingsAndComments) {
  const auto sections = ParseAwsIni(
      "# AWS credentials\r\n"
      "; written by hand\r\n"
      "\r\n"
      "[ default ]\r\n"
      "AWS_Access_Key_ID=AKIA1\r\n"
      "  # an indented comment\r\n"
      "aws_secret_access_key =  a=b=c  \r\n"
      "empty =\r\n"
      "[profile Dev]  # a note\n"
      "\tregion\t=\teu-west-2\n");
  ASSERT_EQ(sections.size(), 2u);
  const auto& fallback = sections.at("default");
  EXPECT_EQ(fallback.at("aws_access_key_id"), "AKIA1");
  EXPECT_EQ(fallback.at("aws_secret_access_key"), "a=b=c");
  EXPECT_EQ(fallback.at("empty"), "");
  EXPECT_EQ(fallback.size(), 3u);
  EXPECT_EQ(sections.at("profile Dev").at("region"), "eu-west-2");
  EXPECT_TRUE(ParseAwsIni("").empty());
  EXPECT_TRUE(ParseAwsIni("\n# only comments\n").empty());
}

TEST(ParseAwsIni, ReadsIndentedSubSettings) {
  const auto sections = ParseAwsIni(
      "[services local]\n"
      "s3 =\n"
      "  endpoint_url = http://127.0.0.1:9000\n"
      "  Addressing_Style = path\n"
      "region = us-west-1\n"
      "[indented]\n"
      "  a = 1\n"
      "  b = 2\n");
  EXPECT_EQ(sections.at("services local"),
            (std::map<std::string, std::string>{{"s3", ""},
                                                {"s3.endpoint_url", "http://127.0.0.1:9000"},
                                                {"s3.addressing_style", "path"},
                                                {"region", "us-west-1"}}));
  EXPECT_EQ(sections.at("indented"), (std::map<std::string, std::string>{{"a", "1"}, {"b", "2"}}));
}

TEST(ParseAwsIni, RefusesMalformedLinesNamingThem) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"region = us-east-1\n[default]\n", "line 1: a setting before the first [section]"},
      {"[default]\n\nno equals sign\n", "line 3: expected \"key = value\", no '='"},
      {"[default]\n = value\n", "line 2: a setting with no key"},
      {"[default\nregion = x\n", "line 1: a section header without its ']'"},
      {"[ ]\n", "line 1: a section header with no name"},
      {"[default] region = x\n", "line 1: text after a section header's ']'"},
      {"[a]\nx = 1\n[b]\n[a]\n", "line 4: [a] appears twice"},
      {"[a]\nregion = x\nREGION = y\n", "line 3: \"region\" is set twice in [a]"},
      {"[a]\nregion = x\n  output = json\n", "line 3: \"output\" is indented under \"region\""},
      {"[a]\ns3 =\n  addressing_style\n", "line 3: expected \"key = value\""},
      {"[a]\ns3 =\n  k = 1\n  K = 2\n", "line 4: \"s3.k\" is set twice"},
  };
  for (const Case& bad : cases) {
    EXPECT_EQ(IniError(bad.text).find(bad.message), 0u)
        << bad.text << "gave: " << IniError(bad.text);
  }
}

TEST(ParseAwsIni, NeverQuotesTheTextOfALine) {
  const std::string message = IniError(std::string("[default]\naws_secret_access_key: ") + kSecret);
  EXPECT_NE(message, "");
  EXPECT_EQ(message.find(kSecret), std::string::npos) << message;
}

// A session token's continuation line, indented under a key with a value, or a token
// pasted twice: the "key" before its '=' padding is token text, never quoted.
TEST(ParseAwsIni, QuotesOnlyKeysThatLookLikeNames) {
  constexpr const char* kTokenLine =
      "IQoJb3JpZ2luX2VjEHYaCXVzLWVhc3QtMSJHMEUCIQDx+9/TESSERATOKEN==";
  const std::string indented =
      IniError(std::string("[default]\naws_session_token = abc\n  ") + kTokenLine + "\n");
  EXPECT_EQ(indented.find("line 3: this setting is indented under \"aws_session_token\""), 0u)
      << indented;
  const std::string twice =
      IniError(std::string("[default]\n") + kTokenLine + "\n" + kTokenLine + "\n");
  EXPECT_EQ(twice.find("line 3: this line's key is set twice in [default] (first on line 2)"), 0u)
      << twice;
  for (const std::string& message : {indented, twice}) {
    EXPECT_EQ(message.find("IQoJb3JpZ2lu"), std::string::npos) << message;
    EXPECT_EQ(message.find("iqojb3jpz2lu"), std::string::npos) << message;  // lowered
  }
  const std::string long_name =
      IniError("[a]\n" + std::string(65, 'k') + " = 1\n" + std::string(65, 'k') + " = 2\n");
  EXPECT_EQ(long_name.find("line 3: this line's key is set twice"), 0u) << long_name;
}

// ResolveS3Settings over a fake environment whose HOME is a fresh temporary folder.
class ResolveS3SettingsTest : public ::testing::Test {
 protected:
  ResolveS3SettingsTest() {
    environment_["HOME"] = home_.path().string();
    fs::create_directories(home_.path() / ".aws");
  }

  fs::path Write(const fs::path& relative, const std::string& text) {
    const fs::path path = home_.path() / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  void WriteCredentials(const std::string& text) { Write(".aws/credentials", text); }
  void WriteConfig(const std::string& text) { Write(".aws/config", text); }

  S3Settings Resolve() {
    return ResolveS3Settings([this](const char* name) -> std::optional<std::string> {
      const auto it = environment_.find(name);
      if (it == environment_.end()) return std::nullopt;
      return it->second;
    });
  }

  // The InvalidArgument's message; checks it quotes no secret (nor the key id).
  std::string ResolveError() {
    try {
      Resolve();
    } catch (const InvalidArgument& error) {
      const std::string message = error.what();
      for (const char* secret : {kSecret, kToken, kKeyId}) {
        EXPECT_EQ(message.find(secret), std::string::npos) << message;
      }
      return message;
    }
    ADD_FAILURE() << "resolved without an error";
    return "";
  }

  std::string Home(const std::string& relative) const { return (home_.path() / relative).string(); }

  tessera::testing::TempDir home_{"s3config"};
  std::map<std::string, std::string> environment_;
};

TEST_F(ResolveS3SettingsTest, DefaultsToAnonymousAwsWithoutFilesOrVariables) {
  const S3Settings settings = Resolve();
  EXPECT_EQ(settings.credentials_source, "");
  EXPECT_EQ(settings.endpoint, "");
  EXPECT_EQ(settings.region, "us-east-1");
  EXPECT_TRUE(settings.credentials.empty());
  EXPECT_EQ(settings.profile, "default");
  environment_.erase("HOME");
  EXPECT_TRUE(Resolve().credentials.empty());
}

TEST_F(ResolveS3SettingsTest, EnvironmentKeysWinOverFiles) {
  WriteCredentials("[default]\naws_access_key_id = FILEID\naws_secret_access_key = FILESECRET\n");
  WriteConfig("[default]\naws_access_key_id = CONFIGID\naws_secret_access_key = CONFIGSECRET\n");
  environment_["AWS_ACCESS_KEY_ID"] = kKeyId;
  environment_["AWS_SECRET_ACCESS_KEY"] = kSecret;
  S3Settings settings = Resolve();
  EXPECT_EQ(settings.credentials.access_key_id, kKeyId);
  EXPECT_EQ(settings.credentials.secret_access_key, kSecret);
  EXPECT_EQ(settings.credentials.session_token, "");
  EXPECT_FALSE(settings.credentials.empty());
  EXPECT_EQ(settings.credentials_source,
            "the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)");
  environment_["AWS_SESSION_TOKEN"] = kToken;
  EXPECT_EQ(Resolve().credentials.session_token, kToken);
}

TEST_F(ResolveS3SettingsTest, ReadsTheDefaultProfileOfTheCredentialsFile) {
  WriteCredentials("[dev]\naws_access_key_id = DEVID\naws_secret_access_key = DEVSECRET\n" +
                   KeyPairSection("default"));
  const S3Settings settings = Resolve();
  EXPECT_EQ(settings.credentials.access_key_id, kKeyId);
  EXPECT_EQ(settings.credentials.secret_access_key, kSecret);
  EXPECT_EQ(settings.credentials.session_token, kToken);
  EXPECT_EQ(settings.profile, "default");
  EXPECT_EQ(settings.credentials_source,
            "profile \"default\" of the AWS credentials file " + Home(".aws/credentials"));
}

TEST_F(ResolveS3SettingsTest, NamedProfileReadsBothFiles) {
  WriteCredentials(KeyPairSection("default") +
                   "[dev]\naws_access_key_id = DEVID\naws_secret_access_key = DEVSECRET\n");
  WriteConfig(
      "[default]\nregion = us-west-2\n"
      "[profile dev]\nregion = eu-west-2\nendpoint_url = http://127.0.0.1:9000/\n");
  environment_["AWS_PROFILE"] = "dev";
  const S3Settings settings = Resolve();
  EXPECT_EQ(settings.profile, "dev");
  EXPECT_EQ(settings.credentials.access_key_id, "DEVID");
  EXPECT_EQ(settings.credentials.secret_access_key, "DEVSECRET");
  EXPECT_EQ(settings.region, "eu-west-2");
  EXPECT_EQ(settings.endpoint, "http://127.0.0.1:9000");
}

TEST_F(ResolveS3SettingsTest, AwsProfileWinsOverAwsDefaultProfile) {
  WriteConfig("[profile a]\nregion = eu-north-1\n[profile b]\nregion = sa-east-1\n");
  environment_["AWS_DEFAULT_PROFILE"] = "b";
  EXPECT_EQ(Resolve().region, "sa-east-1");
  environment_["AWS_PROFILE"] = "a";
  EXPECT_EQ(Resolve().region, "eu-north-1");
  EXPECT_EQ(Resolve().profile, "a");
}

TEST_F(ResolveS3SettingsTest, CredentialsFileWinsOverConfigFile) {
  WriteConfig(
      "[profile  dev ]\naws_access_key_id = CONFIGID\naws_secret_access_key = CONFIGSECRET\n"
      "[profile default]\naws_access_key_id = DEFAULTID\naws_secret_access_key = S\n");
  environment_["AWS_PROFILE"] = "dev";
  EXPECT_EQ(Resolve().credentials.access_key_id, "CONFIGID");  // none in the credentials file
  EXPECT_EQ(Resolve().credentials_source,
            "profile \"dev\" of the AWS config file " + Home(".aws/config"));
  WriteCredentials("[dev]\naws_access_key_id = FILEID\naws_secret_access_key = FILESECRET\n");
  EXPECT_EQ(Resolve().credentials.access_key_id, "FILEID");
  environment_.erase("AWS_PROFILE");
  EXPECT_EQ(Resolve().credentials.access_key_id, "DEFAULTID");  // [profile default]
}

TEST_F(ResolveS3SettingsTest, VariablesChooseTheFiles) {
  WriteCredentials(KeyPairSection("default"));
  WriteConfig("[default]\nregion = us-west-2\n");
  const fs::path credentials =
      Write("elsewhere/creds", "[default]\naws_access_key_id = X\naws_secret_access_key = Y\n");
  environment_["AWS_SHARED_CREDENTIALS_FILE"] = credentials.string();
  environment_["AWS_CONFIG_FILE"] = "~/elsewhere/conf";
  Write("elsewhere/conf", "[default]\nregion = ap-south-1\n");
  const S3Settings settings = Resolve();
  EXPECT_EQ(settings.credentials.access_key_id, "X");
  EXPECT_EQ(settings.region, "ap-south-1");
  environment_["AWS_SHARED_CREDENTIALS_FILE"] = Home("missing/credentials");  // missing: fine
  EXPECT_TRUE(Resolve().credentials.empty());
}

TEST_F(ResolveS3SettingsTest, RegionPrecedence) {
  WriteConfig("[default]\nregion = eu-central-1\n");
  EXPECT_EQ(Resolve().region, "eu-central-1");
  environment_["AWS_DEFAULT_REGION"] = "us-west-1";
  EXPECT_EQ(Resolve().region, "us-west-1");
  environment_["AWS_REGION"] = "ca-central-1";
  EXPECT_EQ(Resolve().region, "ca-central-1");
  environment_["AWS_REGION"] = "";  // "" counts as unset
  EXPECT_EQ(Resolve().region, "us-west-1");
}

TEST_F(ResolveS3SettingsTest, EndpointPrecedence) {
  WriteConfig(
      "[default]\nendpoint_url = http://profile:9000\nservices = local\n"
      "[services local]\ns3 =\n  endpoint_url = https://service.example:9443/\n");
  EXPECT_EQ(Resolve().endpoint, "https://service.example:9443");
  WriteConfig("[default]\nendpoint_url = http://profile:9000\n");
  EXPECT_EQ(Resolve().endpoint, "http://profile:9000");
  environment_["AWS_ENDPOINT_URL"] = "http://all-services:1";
  EXPECT_EQ(Resolve().endpoint, "http://all-services:1");
  environment_["AWS_ENDPOINT_URL_S3"] = "HTTP://Minio.Local:9000//";
  EXPECT_EQ(Resolve().endpoint, "http://Minio.Local:9000");
}

TEST_F(ResolveS3SettingsTest, RefusesMalformedEndpoints) {
  for (const char* bad : {"ftp://host", "127.0.0.1:9000", "http://", "https:///bucket",
                          "http://a b", "http://h:9000?x=1", "http://h#f", "http://h\n"}) {
    environment_["AWS_ENDPOINT_URL_S3"] = bad;
    EXPECT_NE(ResolveError().find("AWS_ENDPOINT_URL_S3 is \""), std::string::npos) << bad;
  }
  // User information is refused without being echoed (ResolveError checks the secret,
  // the token and the key id are not quoted), from a variable or a file.
  environment_["AWS_ENDPOINT_URL_S3"] = std::string("http://") + kKeyId + ":" + kSecret + "@h";
  EXPECT_NE(ResolveError().find("AWS_ENDPOINT_URL_S3 holds user information"), std::string::npos);
  environment_.erase("AWS_ENDPOINT_URL_S3");
  WriteConfig(std::string("[default]\nendpoint_url = https://") + kKeyId + ":" + kSecret +
              "@minio.local:9000\n");
  EXPECT_NE(ResolveError().find("holds user information"), std::string::npos);
  WriteConfig("");
  environment_.erase("AWS_ENDPOINT_URL_S3");
  WriteConfig("[default]\nendpoint_url = s3.amazonaws.com\n");
  EXPECT_NE(ResolveError().find("endpoint_url of profile \"default\" of the AWS config file " +
                                Home(".aws/config")),
            std::string::npos);
}

TEST_F(ResolveS3SettingsTest, RefusesBadRegions) {
  environment_["AWS_REGION"] = "us-east-1/../x";
  EXPECT_NE(ResolveError().find("AWS_REGION is \"us-east-1/../x\""), std::string::npos);
  environment_.erase("AWS_REGION");
  WriteConfig("[default]\nregion = us east\n");
  EXPECT_NE(ResolveError().find("region of profile \"default\""), std::string::npos);
}

TEST_F(ResolveS3SettingsTest, RefusesHalfAKeyPair) {
  environment_["AWS_ACCESS_KEY_ID"] = kKeyId;
  EXPECT_NE(ResolveError().find("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"),
            std::string::npos);
  environment_.erase("AWS_ACCESS_KEY_ID");
  environment_["AWS_SECRET_ACCESS_KEY"] = kSecret;
  environment_["AWS_SESSION_TOKEN"] = kToken;
  EXPECT_NE(ResolveError().find("AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"),
            std::string::npos);
  environment_.clear();
  environment_["HOME"] = home_.path().string();
  WriteCredentials(std::string("[default]\naws_secret_access_key = ") + kSecret + "\n");
  EXPECT_NE(ResolveError().find("profile \"default\" of the AWS credentials file " +
                                Home(".aws/credentials") +
                                " sets aws_secret_access_key but not aws_access_key_id"),
            std::string::npos);
}

TEST_F(ResolveS3SettingsTest, RefusesANamedProfileInNeitherFile) {
  WriteCredentials(KeyPairSection("default"));
  WriteConfig("[profile dev]\nregion = eu-west-1\n[prod]\nregion = x\n");
  environment_["AWS_PROFILE"] = "prod";  // [prod] in the config file is no profile
  const std::string message = ResolveError();
  EXPECT_NE(message.find("AWS profile \"prod\" (AWS_PROFILE) is in neither"), std::string::npos);
  EXPECT_NE(message.find(Home(".aws/credentials")), std::string::npos) << message;
  EXPECT_NE(message.find(Home(".aws/config")), std::string::npos) << message;
  environment_.erase("AWS_PROFILE");
  environment_["AWS_DEFAULT_PROFILE"] = "staging";
  EXPECT_NE(ResolveError().find("\"staging\" (AWS_DEFAULT_PROFILE)"), std::string::npos);
  environment_.erase("HOME");
  EXPECT_NE(ResolveError().find("(none: HOME is unset)"), std::string::npos);
}

TEST_F(ResolveS3SettingsTest, AMissingDefaultProfileIsAnonymous) {
  WriteCredentials("[dev]\naws_access_key_id = DEVID\naws_secret_access_key = DEVSECRET\n");
  EXPECT_TRUE(Resolve().credentials.empty());
}

TEST_F(ResolveS3SettingsTest, RefusesMalformedFilesNamingFileAndLine) {
  WriteCredentials(KeyPairSection("default") + std::string("aws_session_token ") + kToken + "\n");
  const std::string message = ResolveError();
  EXPECT_NE(message.find("the AWS credentials file " + Home(".aws/credentials") +
                         " is malformed at line 5: expected \"key = value\""),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("fix or remove that line"), std::string::npos);
  WriteCredentials(KeyPairSection("default"));
  WriteConfig("region = us-east-1\n");
  EXPECT_NE(ResolveError().find("config file " + Home(".aws/config") + " is malformed at line 1"),
            std::string::npos);
}

TEST_F(ResolveS3SettingsTest, RefusesUnreadableFiles) {
  fs::create_directories(home_.path() / ".aws" / "credentials");
  EXPECT_NE(ResolveError().find("cannot read the AWS credentials file " + Home(".aws/credentials") +
                                " (set AWS_SHARED_CREDENTIALS_FILE to read another): not a "
                                "regular file"),
            std::string::npos);
}

TEST_F(ResolveS3SettingsTest, RefusesCredentialProvidersItLacks) {
  WriteCredentials(KeyPairSection("base"));
  WriteConfig(
      "[profile admin]\nrole_arn = arn:aws:iam::123456789012:role/admin\n"
      "source_profile = base\n[profile sso]\nsso_session = corp\n");
  environment_["AWS_PROFILE"] = "admin";
  EXPECT_NE(ResolveError().find("profile \"admin\" of the AWS config file " + Home(".aws/config") +
                                " gets credentials through role_arn"),
            std::string::npos);
  environment_["AWS_PROFILE"] = "sso";
  EXPECT_NE(ResolveError().find("through sso_session"), std::string::npos);
  environment_["AWS_ACCESS_KEY_ID"] = kKeyId;  // keys from the environment need no provider
  environment_["AWS_SECRET_ACCESS_KEY"] = kSecret;
  EXPECT_EQ(Resolve().credentials.access_key_id, kKeyId);
}

TEST_F(ResolveS3SettingsTest, RefusesUnknownServicesSection) {
  WriteConfig("[default]\nservices = locl\n[services local]\ns3 =\n  endpoint_url = http://h\n");
  EXPECT_NE(ResolveError().find("names services \"locl\""), std::string::npos);
}

TEST(ProcessEnvironment, ReadsTheProcessEnvironment) {
  const tessera::testing::ScopedEnvironment set("TESSERA_S3_CONFIG_TEST_VARIABLE", "value");
  const tessera::testing::ScopedEnvironment unset("TESSERA_S3_CONFIG_TEST_UNSET", std::nullopt);
  const EnvironmentLookup environment = ProcessEnvironment();
  EXPECT_EQ(environment("TESSERA_S3_CONFIG_TEST_VARIABLE"), "value");
  EXPECT_EQ(environment("TESSERA_S3_CONFIG_TEST_UNSET"), std::nullopt);
}

}  // namespace
}  // namespace tessera::s3
