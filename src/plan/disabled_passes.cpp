#include "disabled_passes.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tessera/core/errors.hpp"

namespace tessera {

PlanOptions WithDisabledPasses(PlanOptions options) {
  const char* value = std::getenv("TESSERA_DISABLE_PASSES");
  if (value == nullptr) return options;
  const std::string_view names(value);
  std::size_t start = 0;
  while (start <= names.size()) {
    const std::size_t comma = std::min(names.find(',', start), names.size());
    std::string_view name = names.substr(start, comma - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (name == "fusion") {
      options.fuse = false;
    } else if (!name.empty()) {
      throw InvalidArgument("TESSERA_DISABLE_PASSES names an unknown pass \"" + std::string(name) +
                            "\" (in \"" + std::string(names) +
                            "\"); the passes that can be switched off are: fusion");
    }
    start = comma + 1;
  }
  return options;
}

}  // namespace tessera
