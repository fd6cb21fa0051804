// sizing_bench: what allowed_mem "auto" costs at planning time, and what it chooses:
// the dew point over t2 and rh (float32 Zarr arrays of one shape and chunking) and a
// rechunk of t2, each planned with a given allowed_mem and with auto (to_zarr plans;
// nothing is run or written).
//
//   build/bench/sizing_bench --t2 t2.zarr --rh rh.zarr [--allowed-mem 512MB]
//                            [--rechunk-to 32,100,100] [--repeat 5]
//
// Prints one row per plan: the best of --repeat plannings in milliseconds, the budget
// (given, or chosen by auto), the plan's requirement, its trial plans and the bytes its
// ops read and write.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench_report.hpp"
#include "tessera/tessera.hpp"

namespace {

struct Timed {
  double milliseconds = 1e300;
  std::optional<tessera::FinalizedPlan> plan;
};

// The best of `repeat` plannings of `array` (as to_zarr would plan it) under `spec`.
Timed PlanBest(const tessera::Array& array, const tessera::Spec& spec, int repeat) {
  Timed best;
  for (int run = 0; run < repeat; ++run) {
    const bench::Clock::time_point start = bench::Clock::now();
    tessera::FinalizedPlan plan =
        tessera::Array(array.node(), spec).plan_to_zarr("/nonexistent/sizing_bench.zarr");
    const double milliseconds = bench::SecondsSince(start) * 1e3;
    if (milliseconds < best.milliseconds) best = Timed{milliseconds, std::move(plan)};
  }
  return best;
}

void PrintRow(const std::string& what, const std::string& budget, const Timed& timed) {
  const tessera::FinalizedPlan& plan = *timed.plan;
  std::printf("| %-22s | %-5s | %9.1f | %12s | %12s | %6d | %10s |\n", what.c_str(), budget.c_str(),
              timed.milliseconds, tessera::format_bytes(plan.spec().allowed_mem).c_str(),
              tessera::format_bytes(plan.required_allowed_mem()).c_str(), plan.budget_plans(),
              tessera::format_bytes(plan.bytes_moved()).c_str());
}

tessera::Shape ParseShape(const std::string& text) {
  tessera::Shape shape;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) shape.push_back(std::stoll(item));
  return shape;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("sizing_bench: planning time and choices of allowed_mem auto");
  std::string t2_path;
  std::string rh_path;
  std::string allowed_mem = "512MB";
  std::string rechunk_to = "32,100,100";
  int repeat = 5;
  app.add_option("--t2", t2_path, "t2 (K), float32 Zarr array")->required();
  app.add_option("--rh", rh_path, "rh (%), same shape and chunks")->required();
  app.add_option("--allowed-mem", allowed_mem, "The given budget to compare with");
  app.add_option("--rechunk-to", rechunk_to, "Target chunks of the rechunk of t2");
  app.add_option("--repeat", repeat, "Plannings per row (the best is shown)");
  CLI11_PARSE(app, argc, argv);

  tessera::Spec given = tessera::Spec::from({{"allowed_mem", allowed_mem}, {"history", "off"}});
  tessera::Spec automatic = given;
  automatic.allowed_mem = tessera::Spec::kAutoAllowedMem;
  const tessera::Array t2 = tessera::from_zarr(t2_path, given);
  const tessera::Array rh = tessera::from_zarr(rh_path, given);
  const tessera::Array td = tessera::pow(
      (1.0 / 273) -
          0.0001844 * tessera::log(0.611 * tessera::exp(5423 * ((1.0 / 273) - (1.0 / t2))) * rh /
                                   100 / 0.611),
      -1);
  const tessera::Array moved = t2.rechunk(ParseShape(rechunk_to));

  std::printf("| %-22s | %-5s | %9s | %12s | %12s | %6s | %10s |\n", "plan", "mode", "ms",
              "allowed_mem", "required", "trials", "I/O");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|\n", std::string(24, '-').c_str(), std::string(7, '-').c_str(),
              std::string(11, '-').c_str(), std::string(14, '-').c_str(),
              std::string(14, '-').c_str(), std::string(8, '-').c_str(),
              std::string(12, '-').c_str());
  PrintRow("dew point", "given", PlanBest(td, given, repeat));
  PrintRow("dew point", "auto", PlanBest(td, automatic, repeat));
  PrintRow("rechunk to " + rechunk_to, "given", PlanBest(moved, given, repeat));
  PrintRow("rechunk to " + rechunk_to, "auto", PlanBest(moved, automatic, repeat));
  return 0;
}
