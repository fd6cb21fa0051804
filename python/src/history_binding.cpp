// tessera.history(): what recorded runs projected and measured, one row per op of each
// run, newest run first: a pandas DataFrame when pandas is installed, else a list of
// dicts with the same keys.
#include <string>

#include "bindings.hpp"

namespace tessera::python {
namespace {

nb::list HistoryRows(int runs, nb::handle db) {
  const std::string setting = db.is_none() ? "" : nb::cast<std::string>(nb::str(db));
  const std::optional<std::filesystem::path> path = ResolveHistoryPath(setting);
  if (!path) {
    throw InvalidArgument(
        "history is off (TESSERA_HISTORY=off or no cache folder): there is nothing to read; "
        "name a database with db=PATH");
  }
  std::vector<RunHistory> recorded;
  {
    nb::gil_scoped_release release;
    const std::shared_ptr<HistoryDatabase> history = OpenRecordedHistory(*path, "db=PATH");
    recorded = history->RecentRuns(runs);
    CheckStillReadable(*history, "db=PATH");
  }
  nb::list rows;
  for (const RunHistory& run : recorded) {
    for (const OpHistory& op : run.ops) {
      nb::dict row;
      row["run"] = run.id;
      row["started_at"] = run.started_at;
      row["label"] = run.label;
      row["status"] = run.status;
      row["executor"] = run.executor;
      row["workers"] = run.workers;
      row["allowed_mem"] = run.allowed_mem;
      row["reserved_mem"] = run.reserved_mem;
      row["peak_rss_bytes"] = run.peak_rss_bytes;
      row["op"] = op.name;
      row["kind"] = op.kind;
      row["fingerprint"] = op.fingerprint;
      row["tasks"] = op.tasks;
      row["projected_mem"] = op.projected_mem;
      row["estimated_mem"] = op.estimated_mem;
      row["measured_mem_max"] = op.measured_mem_max;
      row["measured_mem_median"] = op.measured_mem_median;
      row["unaccounted_mem_max"] = op.unaccounted_mem_max;
      row["footprint_mem_max"] = op.footprint_mem_max;
      row["seconds"] = op.seconds;
      row["task_seconds_median"] = op.task_seconds_median;
      rows.append(row);
    }
  }
  return rows;
}

}  // namespace

void BindHistory(nb::module_& m) {
  m.def(
      "history",
      [](int runs, nb::handle db) -> nb::object {
        if (runs < 1) throw InvalidArgument("history: runs must be at least 1");
        nb::list rows = HistoryRows(runs, db);
        try {
          return nb::module_::import_("pandas").attr("DataFrame")(rows);
        } catch (const nb::python_error& error) {
          if (!error.matches(PyExc_ImportError)) throw;
          return rows;
        }
      },
      nb::arg("runs") = 10, nb::kw_only(), nb::arg("db") = nb::none(),
      "What the `runs` most recent runs projected and measured, one row per op (newest run "
      "first): a pandas DataFrame, or a list of dicts without pandas. db: the database "
      "(default: Spec's history setting, TESSERA_HISTORY, then the user's cache).");
}

}  // namespace tessera::python
