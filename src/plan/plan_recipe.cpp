// Plan recipe (plan/internal/plan_recipe.hpp): CBOR of {graph, spec, options, learned,
// work directory, hash}; decoding re-plans in a PlanSession holding what was given.
#include "tessera/plan/internal/plan_recipe.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "finalized_plan_state.hpp"
#include "graph_codec_values.hpp"
#include "passes/pass_manager.hpp"
#include "passes/plan_context.hpp"
#include "tessera/core/errors.hpp"
#include "tessera/plan/internal/graph_codec.hpp"
#include "tessera/storage/open_store.hpp"

namespace tessera::planner {
namespace {

using graph_codec::Field;
using graph_codec::Json;
using graph_codec::ReadBool;
using graph_codec::ReadDouble;
using graph_codec::ReadInt;
using graph_codec::ReadString;

// FNV-1a over bytes mixed in turn (the plan hash, the recipe key).
struct Fnv1a {
  std::uint64_t value = 1469598103934665603ULL;
  void Mix(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t index = 0; index < size; ++index) {
      value = (value ^ bytes[index]) * 1099511628211ULL;
    }
  }
};

constexpr std::string_view kFormat = "tessera-plan-recipe";
constexpr int kVersion = 1;
constexpr std::int64_t kMost = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kIntMost = std::numeric_limits<int>::max();

std::int64_t ReadSize(const Json& object, std::string_view key, std::int64_t least = 0) {
  const std::string where = "plan recipe " + std::string(key);
  return ReadInt(Field(object, key, where), where, least, kMost);
}

int ReadWhole(const Json& object, std::string_view key, std::int64_t least = 0) {
  const std::string where = "plan recipe " + std::string(key);
  return static_cast<int>(ReadInt(Field(object, key, where), where, least, kIntMost));
}

const std::string& ReadText(const Json& object, std::string_view key) {
  const std::string where = "plan recipe " + std::string(key);
  return ReadString(Field(object, key, where), where);
}

bool ReadFlag(const Json& object, std::string_view key) {
  const std::string where = "plan recipe " + std::string(key);
  return ReadBool(Field(object, key, where), where);
}

const Json& ReadList(const Json& object, std::string_view key) {
  const std::string where = "plan recipe " + std::string(key);
  const Json& list = Field(object, key, where);
  if (!list.is_array()) graph_codec::Malformed(where, "not a list");
  return list;
}

Json EncodeSpec(const Spec& asked, const Spec& planned) {
  Json spec;
  spec["allowed_mem"] = asked.allowed_mem;
  spec["reserved_mem"] = asked.reserved_mem;
  spec["total_mem"] = planned.effective_total_mem();
  spec["work_dir"] = asked.work_dir.empty() || IsObjectStoreLocation(asked.work_dir)
                         ? asked.work_dir
                         : std::filesystem::absolute(asked.work_dir).string();
  spec["local_disk"] = asked.local_disk;
  spec["executor"] = asked.executor;
  spec["executor_options"] = asked.executor_options;
  spec["max_workers"] = planned.effective_max_workers();
  spec["memory_tiers"] = asked.memory_tiers;
  return spec;
}

Spec DecodeSpec(const Json& json) {
  Spec spec;
  spec.allowed_mem = ReadSize(json, "allowed_mem", Spec::kAutoAllowedMem);
  spec.reserved_mem = ReadSize(json, "reserved_mem");
  spec.total_mem = ReadSize(json, "total_mem");
  spec.work_dir = ReadText(json, "work_dir");
  spec.local_disk = ReadSize(json, "local_disk", Spec::kAutoLocalDisk);
  spec.executor = ReadText(json, "executor");
  const Json& options = Field(json, "executor_options", "plan recipe spec");
  if (!options.is_object()) graph_codec::Malformed("plan recipe executor_options", "not a map");
  for (const auto& [name, value] : options.items()) {
    spec.executor_options[name] = ReadString(value, "plan recipe executor option " + name);
  }
  spec.max_workers = ReadWhole(json, "max_workers");
  for (const Json& tier : ReadList(json, "memory_tiers")) {
    spec.memory_tiers.push_back(ReadInt(tier, "plan recipe memory tier", 1, kMost));
  }
  spec.history = "off";  // the answers come with the recipe
  try {
    spec.validate();
  } catch (const InvalidArgument& error) {
    graph_codec::Malformed("plan recipe spec", error.what());
  }
  return spec;
}

Json EncodeOptions(const PlanOptions& options) {
  return Json{{"fuse", options.fuse},
              {"disabled_passes", options.disabled_passes},
              {"max_fused_sources", options.max_fused_sources},
              {"max_fused_input_blocks", options.max_fused_input_blocks},
              {"tile_elements", options.tile_elements},
              {"intermediate_tier", static_cast<int>(options.intermediate_tier)},
              {"allow_over_total_mem", options.allow_over_total_mem},
              {"disk_compressor", options.disk_compressor
                                      ? graph_codec::WriteCodec(*options.disk_compressor)
                                      : Json(nullptr)}};
}

PlanOptions DecodeOptions(const Json& json) {
  PlanOptions options;
  options.fuse = ReadFlag(json, "fuse");
  for (const Json& name : ReadList(json, "disabled_passes")) {
    options.disabled_passes.push_back(ReadString(name, "plan recipe disabled pass"));
  }
  options.max_fused_sources = ReadWhole(json, "max_fused_sources", 1);
  options.max_fused_input_blocks = ReadSize(json, "max_fused_input_blocks", 1);
  options.tile_elements = ReadSize(json, "tile_elements", 1);
  options.intermediate_tier = static_cast<Tier>(
      ReadInt(Field(json, "intermediate_tier", "plan recipe options"), "plan recipe tier",
              static_cast<int>(Tier::kNone), static_cast<int>(Tier::kMemoryAndObject)));
  options.allow_over_total_mem = ReadFlag(json, "allow_over_total_mem");
  const Json& compressor = Field(json, "disk_compressor", "plan recipe options");
  options.disk_compressor = compressor.is_null()
                                ? std::nullopt
                                : std::optional<CodecConfig>(graph_codec::ReadCodec(
                                      compressor, "plan recipe disk_compressor"));
  return options;
}

Json EncodeLearned(const std::map<std::string, std::optional<LearnedFootprint>>& learned) {
  Json steps = Json::array();
  for (const auto& [fingerprint, footprint] : learned) {
    if (!footprint) {
      steps.push_back(Json{{"fingerprint", fingerprint}});
      continue;
    }
    steps.push_back(Json{{"fingerprint", fingerprint},
                         {"task_bytes", footprint->task_bytes},
                         {"projected_task_bytes", footprint->projected_task_bytes},
                         {"run_id", footprint->run_id},
                         {"records", footprint->records},
                         {"task_seconds", graph_codec::WriteDouble(footprint->task_seconds)},
                         {"seconds_run_id", footprint->seconds_run_id}});
  }
  return steps;
}

void DecodeLearned(const Json& steps, PlanSession& session) {
  for (const Json& step : steps) {
    std::optional<LearnedFootprint> footprint;
    if (step.is_object() && step.contains("task_bytes")) {
      footprint.emplace();
      footprint->task_bytes = ReadSize(step, "task_bytes");
      footprint->projected_task_bytes = ReadSize(step, "projected_task_bytes");
      footprint->run_id = ReadSize(step, "run_id");
      footprint->records = ReadWhole(step, "records");
      footprint->task_seconds =
          ReadDouble(Field(step, "task_seconds", "plan recipe step"), "plan recipe task_seconds");
      footprint->seconds_run_id = ReadSize(step, "seconds_run_id");
    }
    session.learned.emplace(ReadText(step, "fingerprint"), footprint);
  }
  session.learned_given = true;
}

}  // namespace

std::uint64_t PlanHash(const std::vector<std::shared_ptr<ExecutableOp>>& ops) {
  Fnv1a hash;
  for (const auto& op : ops) {
    const OpInfo& info = op->info();
    hash.Mix(info.fingerprint.data(), info.fingerprint.size());
    hash.Mix(&info.kind, sizeof(info.kind));
    hash.Mix(&info.num_tasks, sizeof(info.num_tasks));
    hash.Mix(&info.tier, sizeof(info.tier));
    for (const int input : info.inputs) hash.Mix(&input, sizeof(input));
  }
  return hash.value;
}

std::string RecipeKey(std::string_view recipe) {
  Fnv1a hash;
  hash.Mix(recipe.data(), recipe.size());
  char text[40];
  std::snprintf(text, sizeof(text), "%016llx-%zu", static_cast<unsigned long long>(hash.value),
                recipe.size());
  return text;
}

std::string EncodePlanRecipe(const FinalizedPlan& plan) {
  const FinalizedPlan::State& state = *plan.state_;
  const std::string graph = EncodeGraph(state.requested);
  Json recipe;
  recipe["format"] = kFormat;
  recipe["version"] = kVersion;
  recipe["graph"] = Json::binary(std::vector<std::uint8_t>(graph.begin(), graph.end()));
  recipe["spec"] = EncodeSpec(state.requested_spec, state.spec);
  // The passes switched off here, TESSERA_DISABLE_PASSES's included: a worker's own
  // environment adds to them, never removes (a difference shows in the plan hash).
  PlanOptions options = state.requested_options;
  options.disabled_passes = PassManager().DisabledPasses(options);
  recipe["options"] = EncodeOptions(options);
  recipe["learned"] = EncodeLearned(state.learned);
  recipe["work_directory"] = state.work_directory.empty()
                                 ? std::string()
                                 : std::filesystem::absolute(state.work_directory).string();
  recipe["object_work_prefix"] = state.object_work_prefix;
  recipe["hash"] = PlanHash(state.executables);
  const std::vector<std::uint8_t> bytes = Json::to_cbor(recipe);
  return std::string(bytes.begin(), bytes.end());
}

FinalizedPlan DecodePlanRecipe(std::string_view bytes) {
  Json recipe;
  try {
    recipe = Json::from_cbor(bytes.begin(), bytes.end());
  } catch (const Json::exception& error) {
    throw FormatError(std::string("plan recipe: not valid CBOR (") + error.what() + ")");
  }
  if (!recipe.is_object() || !recipe.contains("format") || !recipe["format"].is_string() ||
      recipe["format"].get<std::string>() != kFormat) {
    throw FormatError("plan recipe: not a Tessera plan recipe");
  }
  if (const int version = ReadWhole(recipe, "version"); version != kVersion) {
    throw FormatError("plan recipe version " + std::to_string(version) +
                      " is not this Tessera's (" + std::to_string(kVersion) +
                      "): run the same Tessera version on the client and the workers");
  }
  const Json& graph = Field(recipe, "graph", "plan recipe");
  if (!graph.is_binary()) graph_codec::Malformed("plan recipe graph", "not bytes");
  const std::vector<PlanOutput> outputs = DecodeGraph(std::string_view(
      reinterpret_cast<const char*>(graph.get_binary().data()), graph.get_binary().size()));
  const Spec spec = DecodeSpec(Field(recipe, "spec", "plan recipe"));
  const PlanOptions options = DecodeOptions(Field(recipe, "options", "plan recipe"));
  auto session = std::make_shared<PlanSession>();
  DecodeLearned(ReadList(recipe, "learned"), *session);
  session->given_work_directory = ReadText(recipe, "work_directory");
  session->given_object_work_prefix = ReadText(recipe, "object_work_prefix");
  const std::uint64_t hash =
      graph_codec::ReadUInt(Field(recipe, "hash", "plan recipe"), "plan recipe hash");
  FinalizedPlan plan = FinalizeInSession(outputs, spec, options, std::move(session));
  if (const std::uint64_t made = PlanHash(plan.executable_ops()); made != hash) {
    throw Error("plan recipe: the plan made here (hash " + std::to_string(made) +
                ") differs from the one sent (hash " + std::to_string(hash) +
                "): run the same Tessera version, with the same inputs visible at the same "
                "paths, on the client and the workers");
  }
  return plan;
}

}  // namespace tessera::planner
