// Where the S3 store's settings come from, found as AWS's SDKs and CLI find them:
// environment variables first, then the selected profile of the shared credentials file
// (~/.aws/credentials) and config file (~/.aws/config).
//
//   S3Settings settings = ResolveS3Settings(ProcessEnvironment());
//   // settings.endpoint "" means AWS: https://s3.<settings.region>.amazonaws.com
//
// Only static keys are read: a profile whose credentials come from role_arn,
// credential_process, SSO or web identity is refused with advice, never silently
// anonymous. Messages never quote a secret access key or session token, nor the text
// of a line of either file. Stateless; safe to call from any thread (getenv aside).
// Internal to src/storage/stores.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::s3 {

struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // "" for long-term keys

  // True for anonymous access: no key at all.
  bool empty() const;
};

struct S3Settings {
  std::string endpoint;  // "http://127.0.0.1:9000", no trailing '/'; "" = AWS's own
  std::string region = "us-east-1";
  S3Credentials credentials;
  std::string profile;  // the profile read, for messages
  // Where the credentials came from, for messages (never the keys themselves): "the
  // environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)", or "profile \"dev\" of the
  // AWS credentials file /home/me/.aws/credentials"; "" when anonymous.
  std::string credentials_source;
};

// The sections of an AWS shared credentials or config file, by name ("default",
// "profile dev", "services local"), each a map of key -> value. Lines are "[name]"
// headers, "key = value" settings (split at the first '='; key and value trimmed, keys
// lowercased), '#' or ';' comments and blank lines. A line indented deeper than a
// "key =" setting with no value is a sub-setting, stored as "key.subkey" ("s3 =" then
// "  endpoint_url = ..." gives "s3.endpoint_url"). Throws FormatError naming the line
// number (the caller names the file) for a setting before any header, a line without
// '=', an empty key or section name, a section or key given twice, or an indented line
// under a setting that has a value; nothing else (std::bad_alloc aside). A message quotes
// a key or section name only when it looks like one (at most 64 of A-Z a-z 0-9 _ . -, and
// ' ' in a section's name), else names its line: a token line padded with '=' splits
// into a "key" of secret text.
std::map<std::string, std::map<std::string, std::string>> ParseAwsIni(std::string_view text);

// The value of an environment variable; nullopt when unset. Injectable for tests.
using EnvironmentLookup = std::function<std::optional<std::string>(const char* name)>;

// The process's environment (getenv).
EnvironmentLookup ProcessEnvironment();

// The settings as the AWS SDKs resolve them (variables set to "" count as unset):
//   profile      AWS_PROFILE, else AWS_DEFAULT_PROFILE, else "default".
//   endpoint     AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL, else from the config file's
//                profile: endpoint_url under "s3 =" in the [services NAME] section its
//                `services` names, else its endpoint_url; else "" (AWS).
//   region       AWS_REGION, else AWS_DEFAULT_REGION, else the config file's profile's
//                region, else "us-east-1".
//   credentials  AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN),
//                else aws_access_key_id and aws_secret_access_key (and aws_session_token)
//                of section [NAME] of the credentials file, else of the config file's
//                profile, else none (anonymous); credentials_source says which.
// The credentials file is AWS_SHARED_CREDENTIALS_FILE, else $HOME/.aws/credentials; the
// config file AWS_CONFIG_FILE, else $HOME/.aws/config (a leading "~/" is $HOME). The
// config file's profile is section [profile NAME], or [default] for "default". Missing
// files are fine. Throws InvalidArgument, saying what to fix, when a file cannot be read
// or is malformed (naming the file and line), a profile named by AWS_PROFILE or
// AWS_DEFAULT_PROFILE is in neither file, only one of a key pair is set, a profile's
// credentials need a provider this store lacks, or the endpoint is not an http:// or
// https:// URL or the region is not a region name.
S3Settings ResolveS3Settings(const EnvironmentLookup& environment);

}  // namespace tessera::s3
