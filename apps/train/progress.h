// Progress of training on the terminal: on a terminal, one bar per epoch redrawn in place
// ("\r") with the step, loss, throughput (samples/s, and tokens/s for text) and the ETA of the
// epoch's steps; otherwise (a log file) the same as a plain line every `print_every` steps and
// at the epoch's last step. Log lines (evaluations, checkpoints) go to `log` and clear the bar
// first. Quiet: log lines only.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace tc::train {

struct ProgressOpts {
  bool quiet = false;
  bool tty = false;  // redraw a bar in place
  int64_t print_every = 50;
  FILE* bar = stderr;
  FILE* log = stdout;  // nullptr: no log lines (a data-parallel run's ranks but the first)
};

class Progress {
 public:
  explicit Progress(ProgressOpts opts) : o_(std::move(opts)) {}
  // `last_batch`: the epoch's last step to run (its length, or less when train.max_steps ends
  // the run inside it), the bar's total; `first_batch`: where a resumed epoch starts.
  void start_epoch(int64_t epoch, int64_t last_batch, int64_t first_batch);
  // After a step: its place in the epoch (1-based), loss, throughput and wall time.
  void step(int64_t step, int64_t batch, double loss, double samples_per_s,
            std::optional<double> tokens_per_s, double seconds);
  void log(const std::string& line);  // a line that stays
  void end_epoch();

 private:
  void clear_bar();
  ProgressOpts o_;
  int64_t epoch_ = 0, last_batch_ = 0, first_batch_ = 0;
  double seconds_ = 0;  // the epoch's step time so far (for the ETA)
  bool bar_shown_ = false;
};

std::string format_duration(double seconds);  // "1:05:09", "4:07", "0:03"

}  // namespace tc::train
