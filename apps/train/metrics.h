// A run's metrics, one row per step: metrics.csv (step, epoch, loss, lr, samples_per_s,
// tokens_per_s for text models, and the evaluation's loss and accuracy on the steps that
// evaluated; an empty field where a row has no value) and curves.png (training loss,
// evaluation loss and accuracy against the step). Both are rewritten whole (a temporary file
// renamed over the old one), so a killed run leaves the last complete version.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tc::train {

struct MetricRow {
  int64_t step = 0, epoch = 0;
  double loss = 0, lr = 0, samples_per_s = 0;
  std::optional<double> tokens_per_s;  // text models: target tokens per second
  std::optional<double> eval_loss, eval_accuracy;
};

class Metrics {
 public:
  explicit Metrics(std::string dir) : dir_(std::move(dir)) {}
  // A resumed run: the rows the earlier run wrote up to its checkpoint at `step` (later rows are
  // steps the resumed run takes again). A missing file is no rows; one with other columns (an
  // older train's) is an error.
  void resume(int64_t step);
  void add(const MetricRow& row) { rows_.push_back(row); }
  void set_eval(double loss, double accuracy);  // on the last row
  const std::vector<MetricRow>& rows() const { return rows_; }
  void write() const;  // metrics.csv and curves.png

 private:
  std::string dir_;
  std::vector<MetricRow> rows_;
};

}  // namespace tc::train
