#include "s3_config.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

#include "s3_text.hpp"
#include "tessera/core/errors.hpp"

namespace tessera::s3 {
namespace {

namespace fs = std::filesystem;
using Section = std::map<std::string, std::string>;
using Sections = std::map<std::string, Section>;

// Credentials and config files hold a few KB; a larger file is not one of them.
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{1} << 20;
constexpr std::string_view kFormatHelp =
    "the format: https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html";
// Profile settings through which the AWS SDKs fetch credentials in ways this store does not.
constexpr std::string_view kUnsupportedProviders[] = {
    "role_arn", "credential_process", "sso_session", "sso_start_url", "web_identity_token_file"};

// Messages quote names and line numbers only: a line's text may hold a secret.
[[noreturn]] void FailLine(int line, const std::string& what) {
  throw FormatError("line " + std::to_string(line) + ": " + what);
}

// Names a message may quote: 1 to 64 (longer is no setting's name) of A-Z a-z 0-9 _ . -
// (and ' ' in a section's name, "profile dev"). Anything else may be a secret: a token
// padded with '=' splits there into a "key" of token text.
bool IsQuotableName(std::string_view name, bool space_allowed) {
  constexpr std::size_t kMaxQuotedName = 64;
  if (name.empty() || name.size() > kMaxQuotedName) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-' || (space_allowed && c == ' ');
    if (!ok) return false;
  }
  return true;
}

// `key` in double quotes when it may be quoted, else `otherwise` ("the setting of line 4").
std::string QuotedKey(const std::string& key, const std::string& otherwise) {
  return IsQuotableName(key, /*space_allowed=*/false) ? "\"" + key + "\"" : otherwise;
}

// "[name]" when the section's name may be quoted, else where its header is.
std::string QuotedSection(const std::string& name, int header_line) {
  return IsQuotableName(name, /*space_allowed=*/true)
             ? "[" + name + "]"
             : "the section of line " + std::to_string(header_line);
}

// The name in a section header line: "[profile dev]  # note" -> "profile dev".
std::string ReadHeader(std::string_view content, int line) {
  const std::size_t close = content.find(']');
  if (close == std::string_view::npos) FailLine(line, "a section header without its ']'");
  const std::string_view rest = TrimBlank(content.substr(close + 1));
  if (!rest.empty() && rest[0] != '#' && rest[0] != ';') {
    FailLine(line, "text after a section header's ']'");
  }
  const std::string_view name = TrimBlank(content.substr(1, close - 1));
  if (name.empty()) FailLine(line, "a section header with no name");
  return std::string(name);
}

}  // namespace

std::map<std::string, std::map<std::string, std::string>> ParseAwsIni(std::string_view text) {
  Sections sections;
  Section* section = nullptr;
  std::string section_name;
  int section_line = 0;
  std::map<std::string, int> key_lines;  // the line setting each key of the section
  std::string parent_key;  // the section's last unindented key: sub-settings go under it
  int parent_line = 0;
  std::size_t parent_indent = 0;
  bool parent_has_value = false;
  int line_number = 0;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    const std::string_view content = TrimBlank(line);
    if (content.empty() || content[0] == '#' || content[0] == ';') continue;
    if (content[0] == '[') {
      section_name = ReadHeader(content, line_number);
      const auto [it, inserted] = sections.try_emplace(section_name);
      if (!inserted) {
        FailLine(line_number,
                 QuotedSection(section_name, line_number) + " appears twice; merge the two");
      }
      section = &it->second;
      section_line = line_number;
      key_lines.clear();
      parent_key.clear();
      continue;
    }
    if (section == nullptr) FailLine(line_number, "a setting before the first [section] header");
    const std::size_t equals = content.find('=');
    if (equals == std::string_view::npos) FailLine(line_number, "expected \"key = value\", no '='");
    std::string key = AsciiLower(TrimBlank(content.substr(0, equals)));
    if (key.empty()) FailLine(line_number, "a setting with no key before its '='");
    const std::string_view value = TrimBlank(content.substr(equals + 1));
    const std::size_t indent = line.find_first_not_of(kBlank);
    if (!parent_key.empty() && indent > parent_indent) {
      if (parent_has_value) {
        FailLine(line_number,
                 QuotedKey(key, "this setting") + " is indented under " +
                     QuotedKey(parent_key, "the setting of line " + std::to_string(parent_line)) +
                     ", which has a value; unindent it, or indent sub-settings only under a key "
                     "with no value (\"s3 =\")");
      }
      key = parent_key + "." + key;
    } else {
      parent_key = key;
      parent_line = line_number;
      parent_indent = indent;
      parent_has_value = !value.empty();
    }
    const auto [first, inserted] = key_lines.try_emplace(key, line_number);
    if (!inserted) {
      FailLine(line_number, QuotedKey(key, "this line's key") + " is set twice in " +
                                QuotedSection(section_name, section_line) + " (first on line " +
                                std::to_string(first->second) + ")");
    }
    section->emplace(std::move(key), value);
  }
  return sections;
}

namespace {

// A set variable's value; nullopt when unset or "" (as the AWS SDKs read them).
std::optional<std::string> Variable(const EnvironmentLookup& environment, const char* name) {
  std::optional<std::string> value = environment(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

// A non-empty setting of `section`; nullptr when it has none.
const std::string* Setting(const Section& section, const std::string& key) {
  const auto it = section.find(key);
  return it == section.end() || it->second.empty() ? nullptr : &it->second;
}

// A credentials or config file: where it is (or "" when nothing says) and its sections
// (none when it is missing).
struct IniFile {
  std::string kind;  // "credentials" or "config"
  std::string path;
  Sections sections;

  std::string Describe() const {
    return "the AWS " + kind + " file " + (path.empty() ? "(none: HOME is unset)" : path);
  }
};

IniFile ReadIniFile(const EnvironmentLookup& environment, const char* variable, const char* kind) {
  IniFile file{kind, "", {}};
  const std::optional<std::string> home = Variable(environment, "HOME");
  if (std::optional<std::string> path = Variable(environment, variable)) {
    file.path = home && path->starts_with("~/") ? *home + path->substr(1) : *path;
  } else if (home) {
    file.path = (fs::path(*home) / ".aws" / kind).string();
  } else {
    return file;
  }
  const std::string cannot_read =
      "cannot read " + file.Describe() + " (set " + variable + " to read another)";
  std::error_code error;
  const fs::file_status status = fs::status(file.path, error);
  if (status.type() == fs::file_type::not_found) return file;
  if (error) throw InvalidArgument(cannot_read + ": " + error.message());
  if (!fs::is_regular_file(status)) throw InvalidArgument(cannot_read + ": not a regular file");
  const std::uintmax_t size = fs::file_size(file.path, error);
  if (!error && size > kMaxFileBytes) throw InvalidArgument(cannot_read + ": larger than 1 MiB");
  std::ifstream in(file.path, std::ios::binary);
  if (!in.is_open()) throw InvalidArgument(cannot_read + ": it cannot be opened; check its mode");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw InvalidArgument(cannot_read + ": reading it failed");
  try {
    file.sections = ParseAwsIni(text);
  } catch (const FormatError& malformed) {
    throw InvalidArgument(file.Describe() + " is malformed at " + malformed.what() +
                          "; fix or remove that line (" + std::string(kFormatHelp) + ")");
  }
  return file;
}

// The label of a section named "<word> <label>" ("profile dev" -> "dev"); "" otherwise.
std::string_view SectionLabel(std::string_view name, std::string_view word) {
  if (!name.starts_with(word) || name.size() <= word.size()) return {};
  if (kBlank.find(name[word.size()]) == std::string_view::npos) return {};
  return TrimBlank(name.substr(word.size()));
}

// Section "[<word> <label>]" of `sections`; nullptr when there is none.
const Section* LabelledSection(const Sections& sections, std::string_view word,
                               std::string_view label) {
  if (label.empty()) return nullptr;
  for (const auto& [name, section] : sections) {
    if (SectionLabel(name, word) == label) return &section;
  }
  return nullptr;
}

// A config file's profile: [profile NAME], or [default] for "default".
const Section* ConfigProfile(const Sections& sections, const std::string& profile) {
  if (const Section* section = LabelledSection(sections, "profile", profile)) return section;
  const auto it = sections.find("default");
  return profile == "default" && it != sections.end() ? &it->second : nullptr;
}

std::string CheckEndpoint(const std::string& value, const std::string& source) {
  if (value.find('@') != std::string::npos) {
    throw InvalidArgument(source +
                          " holds user information ('@'); give credentials through "
                          "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, not in the endpoint");
  }
  const std::string scheme_text = AsciiLower(value.substr(0, 8));
  const std::size_t scheme = scheme_text.starts_with("http://")    ? 7
                             : scheme_text.starts_with("https://") ? 8
                                                                   : 0;
  std::string endpoint = AsciiLower(value.substr(0, scheme)) + value.substr(scheme);
  while (endpoint.size() > scheme && endpoint.back() == '/') endpoint.pop_back();
  const bool bad_character = std::any_of(endpoint.begin(), endpoint.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte <= 0x20 || byte == 0x7f || c == '?' || c == '#';
  });
  if (scheme == 0 || endpoint.size() == scheme || endpoint[scheme] == '/' || bad_character) {
    throw InvalidArgument(source + " is \"" + value.substr(0, 200) +
                          "\": expected an http:// or https:// URL with a host and no query, "
                          "such as http://127.0.0.1:9000");
  }
  return endpoint;
}

std::string CheckRegion(const std::string& region, const std::string& source) {
  // Region names are short: "us-east-1", "ap-southeast-4", or a local store's own.
  constexpr std::size_t kMaxRegionLength = 64;
  const bool valid =
      region.size() <= kMaxRegionLength && std::all_of(region.begin(), region.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_';
      });
  if (!valid) {
    throw InvalidArgument(source + " is \"" + region.substr(0, kMaxRegionLength) +
                          "\": expected a region name such as us-east-1 (letters, digits, '-')");
  }
  return region;
}

// The endpoint a config file's profile gives: its services' s3 endpoint_url, else its own.
std::optional<std::string> ProfileEndpoint(const IniFile& config, const Section& profile,
                                           const std::string& where) {
  if (const std::string* services = Setting(profile, "services")) {
    const Section* section = LabelledSection(config.sections, "services", *services);
    if (section == nullptr) {
      throw InvalidArgument(where + " names services \"" + *services + "\", but " +
                            config.Describe() + " has no [services " + *services + "] section");
    }
    if (const std::string* url = Setting(*section, "s3.endpoint_url")) {
      return CheckEndpoint(
          *url, "endpoint_url of s3 in [services " + *services + "] of " + config.Describe());
    }
  }
  if (const std::string* url = Setting(profile, "endpoint_url")) {
    return CheckEndpoint(*url, "endpoint_url of " + where);
  }
  return std::nullopt;
}

void RefuseUnsupportedProviders(const Section& profile, const std::string& where) {
  for (const std::string_view provider : kUnsupportedProviders) {
    if (profile.contains(std::string(provider))) {
      throw InvalidArgument(where + " gets credentials through " + std::string(provider) +
                            ", which Tessera's S3 store does not support; export static "
                            "credentials instead (eval \"$(aws configure export-credentials "
                            "--format env)\"), or set AWS_ACCESS_KEY_ID and "
                            "AWS_SECRET_ACCESS_KEY");
    }
  }
}

// The static keys of a profile's section; nullopt when it has none.
std::optional<S3Credentials> StaticKeys(const Section& profile, const std::string& where) {
  const auto get = [&profile](const char* key) {
    const std::string* value = Setting(profile, key);
    return value == nullptr ? std::string() : *value;
  };
  S3Credentials keys{get("aws_access_key_id"), get("aws_secret_access_key"),
                     get("aws_session_token")};
  if (keys.access_key_id.empty() != keys.secret_access_key.empty()) {
    throw InvalidArgument(where +
                          (keys.access_key_id.empty()
                               ? " sets aws_secret_access_key but not aws_access_key_id"
                               : " sets aws_access_key_id but not aws_secret_access_key") +
                          "; set both, or neither for anonymous access");
  }
  if (keys.access_key_id.empty()) return std::nullopt;
  return keys;
}

}  // namespace

bool S3Credentials::empty() const { return access_key_id.empty() && secret_access_key.empty(); }

EnvironmentLookup ProcessEnvironment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

S3Settings ResolveS3Settings(const EnvironmentLookup& environment) {
  S3Settings settings;
  const char* profile_variable = "AWS_PROFILE";
  std::optional<std::string> named = Variable(environment, profile_variable);
  if (!named) {
    profile_variable = "AWS_DEFAULT_PROFILE";
    named = Variable(environment, profile_variable);
  }
  settings.profile = named.value_or("default");
  const IniFile credentials =
      ReadIniFile(environment, "AWS_SHARED_CREDENTIALS_FILE", "credentials");
  const IniFile config = ReadIniFile(environment, "AWS_CONFIG_FILE", "config");
  const auto found = credentials.sections.find(settings.profile);
  const Section* credentials_profile =
      found == credentials.sections.end() ? nullptr : &found->second;
  const Section* config_profile = ConfigProfile(config.sections, settings.profile);
  if (named && credentials_profile == nullptr && config_profile == nullptr) {
    throw InvalidArgument("AWS profile \"" + settings.profile + "\" (" + profile_variable +
                          ") is in neither " + credentials.Describe() + " nor " +
                          config.Describe() + "; add a [" + settings.profile +
                          "] section to the first or a [profile " + settings.profile +
                          "] section to the second, or unset " + profile_variable);
  }
  const std::string credentials_where =
      "profile \"" + settings.profile + "\" of " + credentials.Describe();
  const std::string config_where = "profile \"" + settings.profile + "\" of " + config.Describe();

  if (const std::optional<std::string> url = Variable(environment, "AWS_ENDPOINT_URL_S3")) {
    settings.endpoint = CheckEndpoint(*url, "AWS_ENDPOINT_URL_S3");
  } else if (const std::optional<std::string> all = Variable(environment, "AWS_ENDPOINT_URL")) {
    settings.endpoint = CheckEndpoint(*all, "AWS_ENDPOINT_URL");
  } else if (config_profile != nullptr) {
    settings.endpoint = ProfileEndpoint(config, *config_profile, config_where).value_or("");
  }

  if (const std::optional<std::string> region = Variable(environment, "AWS_REGION")) {
    settings.region = CheckRegion(*region, "AWS_REGION");
  } else if (const std::optional<std::string> old = Variable(environment, "AWS_DEFAULT_REGION")) {
    settings.region = CheckRegion(*old, "AWS_DEFAULT_REGION");
  } else if (const std::string* configured =
                 config_profile == nullptr ? nullptr : Setting(*config_profile, "region")) {
    settings.region = CheckRegion(*configured, "region of " + config_where);
  }

  const std::optional<std::string> key_id = Variable(environment, "AWS_ACCESS_KEY_ID");
  const std::optional<std::string> secret = Variable(environment, "AWS_SECRET_ACCESS_KEY");
  if (key_id && secret) {
    settings.credentials = {*key_id, *secret,
                            Variable(environment, "AWS_SESSION_TOKEN").value_or("")};
    settings.credentials_source = "the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)";
  } else if (key_id || secret) {
    throw InvalidArgument(
        std::string(key_id ? "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY "
                           : "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID ") +
        "is not; set both, or unset both to read profile \"" + settings.profile + "\"");
  } else {
    if (credentials_profile != nullptr) {
      RefuseUnsupportedProviders(*credentials_profile, credentials_where);
    }
    if (config_profile != nullptr) RefuseUnsupportedProviders(*config_profile, config_where);
    std::optional<S3Credentials> keys;
    if (credentials_profile != nullptr) keys = StaticKeys(*credentials_profile, credentials_where);
    if (keys) {
      settings.credentials_source = credentials_where;
    } else if (config_profile != nullptr) {
      keys = StaticKeys(*config_profile, config_where);
      if (keys) settings.credentials_source = config_where;
    }
    if (keys) settings.credentials = std::move(*keys);
  }
  return settings;
}

}  // namespace tessera::s3
