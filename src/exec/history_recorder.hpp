// Recording a run into the history database op by op (tessera/memory/history.hpp).
//
//   exec::HistoryRecorder recorder(spec, options, workers);   // opens Spec::history's database
//   recorder.RecordOp(op_index, op_report, task_records);   // as each op commits
//   recorder.Finish("ok", report);                          // or "failed: <cause>"
//
// With history off (Spec::history, TESSERA_HISTORY, ExecuteOptions::record_history) it
// does nothing. It never throws for the database: history is advice, and a database
// that fails warns once and is dropped (HistoryDatabase). A run that dies between ops
// stays recorded up to its last committed op, with status "running".
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessera/core/spec.hpp"
#include "tessera/exec/execution_report.hpp"
#include "tessera/memory/history.hpp"

namespace tessera::exec {

class HistoryRecorder {
 public:
  // `workers`: the most tasks the run's executor runs at once (Executor::workers()).
  HistoryRecorder(const Spec& spec, const ExecuteOptions& options, int workers);

  // The run's id in the database; 0 when nothing is recorded.
  std::int64_t run_id() const { return run_id_; }

  void RecordOp(int op_index, const OpReport& op, std::span<const TaskRecord> tasks);
  void Finish(const std::string& status, const ExecutionReport& report);

 private:
  std::shared_ptr<HistoryDatabase> database_;
  std::int64_t run_id_ = 0;
};

}  // namespace tessera::exec
