#include "apps/train/progress.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace tc::train {

std::string format_duration(double seconds) {
  int64_t s = std::isfinite(seconds) && seconds > 0 ? static_cast<int64_t>(seconds + 0.5) : 0;
  if (s >= 3600) return absl::StrFormat("%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  return absl::StrFormat("%d:%02d", s / 60, s % 60);
}

void Progress::start_epoch(int64_t epoch, int64_t last_batch, int64_t first_batch) {
  epoch_ = epoch;
  last_batch_ = last_batch;
  first_batch_ = first_batch;
  seconds_ = 0;
}

void Progress::step(int64_t step, int64_t batch, double loss, double samples_per_s,
                    std::optional<double> tokens_per_s, double seconds) {
  seconds_ += seconds;
  if (o_.quiet) return;
  double per_step = seconds_ / static_cast<double>(batch - first_batch_);
  std::string eta = format_duration(per_step * static_cast<double>(last_batch_ - batch));
  std::string tokens = tokens_per_s ? absl::StrFormat("  %.0f tokens/s", *tokens_per_s) : "";
  std::string stats = absl::StrFormat("step %d  loss %.4f  %.0f samples/s%s  ETA %s", step, loss,
                                      samples_per_s, tokens, eta);
  if (o_.tty) {
    constexpr int kWidth = 24;
    int filled = static_cast<int>(kWidth * batch / std::max<int64_t>(last_batch_, 1));
    std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
    std::fprintf(o_.bar, "\r\033[Kepoch %lld [%s] %lld/%lld  %s", static_cast<long long>(epoch_),
                 bar.c_str(), static_cast<long long>(batch), static_cast<long long>(last_batch_),
                 stats.c_str());
    std::fflush(o_.bar);
    bar_shown_ = true;
  } else if (step % o_.print_every == 0 || batch == last_batch_) {
    std::fprintf(o_.bar, "epoch %lld %lld/%lld  %s\n", static_cast<long long>(epoch_),
                 static_cast<long long>(batch), static_cast<long long>(last_batch_), stats.c_str());
    std::fflush(o_.bar);
  }
}

void Progress::clear_bar() {
  if (!bar_shown_) return;
  std::fprintf(o_.bar, "\n");
  std::fflush(o_.bar);
  bar_shown_ = false;
}

void Progress::log(const std::string& line) {
  if (!o_.log) return;
  clear_bar();
  std::fprintf(o_.log, "%s\n", line.c_str());
  std::fflush(o_.log);
}

void Progress::end_epoch() { clear_bar(); }

}  // namespace tc::train
