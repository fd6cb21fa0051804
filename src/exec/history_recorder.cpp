#include "history_recorder.hpp"

#include <utility>

namespace tessera::exec {
namespace {

OpHistory ToHistory(int op_index, const OpReport& op) {
  OpHistory history;
  history.index = op_index;
  history.name = op.name;
  history.kind = op.kind;
  history.fingerprint = op.fingerprint;
  history.tasks = op.tasks - op.tasks_skipped;
  history.projected_mem = op.projected_mem;
  history.estimated_mem = op.estimated_mem;
  history.estimate_from_history = op.estimate_from_history;
  history.measured_mem_max = op.measured_mem_max;
  history.measured_mem_median = op.measured_mem_median;
  history.measured_mem_p95 = op.measured_mem_p95;
  history.unaccounted_mem_max = op.unaccounted_mem_max;
  history.unaccounted_mem_median = op.unaccounted_mem_median;
  history.unaccounted_mem_p95 = op.unaccounted_mem_p95;
  history.footprint_mem_max = op.footprint_mem_max;
  history.seconds = op.seconds;
  history.task_seconds_max = op.task_seconds_max;
  history.task_seconds_median = op.task_seconds_median;
  history.task_seconds_p95 = op.task_seconds_p95;
  history.rss_growth_bytes = op.rss_growth_bytes;
  return history;
}

TaskHistory ToHistory(const TaskRecord& record) {
  TaskHistory history;
  history.op = record.op;
  history.task = record.task;
  history.worker = record.worker;
  history.start_seconds = record.start_seconds;
  history.seconds = record.seconds;
  history.projected_mem = record.projected_mem;
  history.measured_mem = record.measured_mem;
  history.unaccounted_mem = record.unaccounted_mem;
  return history;
}

}  // namespace

HistoryRecorder::HistoryRecorder(const Spec& spec, const ExecuteOptions& options, int workers) {
  if (!options.record_history) return;
  const std::optional<std::filesystem::path> path = ResolveHistoryPath(spec.history);
  if (!path) return;
  database_ = HistoryDatabase::Open(*path);
  RunHistory run;
  run.label = options.label.empty() ? "execute" : options.label;
  run.executor = spec.executor;
  run.workers = workers;
  run.allowed_mem = spec.allowed_mem;
  run.reserved_mem = spec.reserved_mem;
  run.total_mem = spec.effective_total_mem();
  run_id_ = database_->BeginRun(run);
}

void HistoryRecorder::RecordOp(int op_index, const OpReport& op,
                               std::span<const TaskRecord> tasks) {
  if (run_id_ == 0) return;
  std::vector<TaskHistory> ran;
  ran.reserve(tasks.size());
  for (const TaskRecord& record : tasks) {
    if (!record.skipped) ran.push_back(ToHistory(record));
  }
  database_->RecordOp(run_id_, ToHistory(op_index, op), ran);
}

void HistoryRecorder::Finish(const std::string& status, const ExecutionReport& report) {
  if (run_id_ == 0) return;
  database_->FinishRun(run_id_, status, report.seconds, report.peak_rss_bytes);
  const ClusterReport& from = report.cluster;
  if (from.ranks == 0) return;
  ClusterHistory cluster{from.ranks,
                         from.bytes_fetched,
                         from.bytes_replicated,
                         from.bytes_rebalanced,
                         from.bytes_dropped,
                         from.bytes_spilled,
                         from.bytes_gathered,
                         from.decisions,
                         from.tasks_moved_after_failure,
                         {}};
  for (const RankReport& rank : from.per_rank) {
    cluster.per_rank.push_back(RankHistory{rank.rank, rank.tasks, rank.capacity,
                                           rank.measured_mem_max, rank.peak_rss_bytes,
                                           rank.held_bytes_max});
  }
  database_->RecordCluster(run_id_, cluster);
}

}  // namespace tessera::exec
