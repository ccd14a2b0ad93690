#include "apps/train/metrics.h"

#include <cstdio>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "apps/common/plot.h"
#include "apps/train/replace_file.h"
#include "tinycore/error.h"

namespace tc::train {
namespace {

constexpr const char* kHeader =
    "step,epoch,loss,lr,samples_per_s,tokens_per_s,eval_loss,eval_accuracy";

std::string optional_text(const std::optional<double>& v) {
  return v ? absl::StrFormat("%.6g", *v) : "";
}

}  // namespace

void Metrics::resume(int64_t step) {
  rows_.clear();
  std::ifstream in(dir_ + "/metrics.csv");
  std::string line;
  if (!in || !std::getline(in, line)) return;
  if (line != kHeader)
    fail("resume: %s/metrics.csv: its columns are '%s', expected '%s'", dir_, line, kHeader);
  auto optional = [](const std::string& field) {
    double v;
    return absl::SimpleAtod(field, &v) ? std::optional<double>(v) : std::nullopt;
  };
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ',');
    MetricRow r;
    if (f.size() != 8 || !absl::SimpleAtoi(f[0], &r.step) || !absl::SimpleAtoi(f[1], &r.epoch) ||
        !absl::SimpleAtod(f[2], &r.loss) || !absl::SimpleAtod(f[3], &r.lr) ||
        !absl::SimpleAtod(f[4], &r.samples_per_s))
      fail("resume: %s/metrics.csv: bad row '%s'", dir_, line);
    r.tokens_per_s = optional(f[5]);
    r.eval_loss = optional(f[6]);
    r.eval_accuracy = optional(f[7]);
    if (r.step <= step) rows_.push_back(r);
  }
}

void Metrics::set_eval(double loss, double accuracy) {
  if (rows_.empty()) return;
  rows_.back().eval_loss = loss;
  rows_.back().eval_accuracy = accuracy;
}

void Metrics::write() const {
  std::string csv = absl::StrCat(kHeader, "\n");
  for (const MetricRow& r : rows_)
    absl::StrAppendFormat(&csv, "%d,%d,%.6g,%.6g,%.6g,%s,%s,%s\n", r.step, r.epoch, r.loss, r.lr,
                          r.samples_per_s, optional_text(r.tokens_per_s),
                          optional_text(r.eval_loss), optional_text(r.eval_accuracy));
  replace_file(dir_ + "/metrics.csv", csv);
  plot::Series loss{"train loss", {}, {}}, eval_loss{"eval loss", {}, {}},
      accuracy{"eval accuracy", {}, {}};
  for (const MetricRow& r : rows_) {
    loss.x.push_back(static_cast<double>(r.step));
    loss.y.push_back(r.loss);
    if (r.eval_loss) {
      eval_loss.x.push_back(static_cast<double>(r.step));
      eval_loss.y.push_back(*r.eval_loss);
      accuracy.x.push_back(static_cast<double>(r.step));
      accuracy.y.push_back(*r.eval_accuracy);
    }
  }
  replace_file(dir_ + "/curves.png", [&](const std::string& tmp) {
    plot::line_chart(tmp, "training curves", "step", "loss / accuracy",
                     {loss, eval_loss, accuracy});
  });
}

}  // namespace tc::train
