#include "apps/infer/server_metrics.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tc::infer {

ServerMetrics::ServerMetrics(std::vector<std::string> endpoints, int64_t max_batch,
                             size_t latency_window, double rate_window_s)
    : endpoints_(std::move(endpoints)),
      latency_window_(std::max<size_t>(latency_window, 1)),
      rate_window_s_(rate_window_s) {
  for (int64_t b = 1; b < max_batch; b *= 2) bucket_bounds_.push_back(b);
  bucket_bounds_.push_back(std::max<int64_t>(max_batch, 1));
  bucket_counts_.assign(bucket_bounds_.size() + 1, 0);
}

const std::string& ServerMetrics::label_of(std::string_view path) const {
  for (const std::string& e : endpoints_)
    if (e == path) return e;
  return other_;
}

void ServerMetrics::Latencies::add(double seconds, size_t window) {
  if (recent.size() < window)
    recent.push_back(seconds);
  else
    recent[next] = seconds;
  next = (next + 1) % window;
  count++;
  sum += seconds;
}

void ServerMetrics::record_request(std::string_view path, int status, double seconds) {
  const std::string& endpoint = label_of(path);
  std::lock_guard<std::mutex> lock(mu_);
  requests_[{endpoint, status}]++;
  latency_[endpoint].add(seconds, latency_window_);
}

void ServerMetrics::record_first_token(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  first_token_.add(seconds, latency_window_);
}

void ServerMetrics::record_step(int64_t batch, int64_t tokens, double seconds) {
  Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  size_t b = std::lower_bound(bucket_bounds_.begin(), bucket_bounds_.end(), batch) -
             bucket_bounds_.begin();
  bucket_counts_[b]++;
  batches_++;
  batch_sum_ += batch;
  model_seconds_ += seconds;
  if (tokens > 0) {
    if (tokens_ == 0)
      first_step_ =
          now - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    tokens_ += tokens;
    while (!recent_tokens_.empty() &&
           std::chrono::duration<double>(now - recent_tokens_.front().first).count() >
               rate_window_s_)
      recent_tokens_.pop_front();
    recent_tokens_.emplace_back(now, tokens);
  }
}

void ServerMetrics::set_queue_depth(int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_depth_ = n;
}

void ServerMetrics::set_active_sequences(int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  active_sequences_ = n;
}

int64_t ServerMetrics::requests(std::string_view endpoint, int status) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = requests_.find({std::string(endpoint), status});
  return it == requests_.end() ? 0 : it->second;
}

namespace {
double nearest_rank(std::vector<double> v, double q) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}
}  // namespace

double ServerMetrics::latency_quantile(std::string_view endpoint, double q) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = latency_.find(std::string(endpoint));
  return it == latency_.end() ? -1 : nearest_rank(it->second.recent, q);
}

int64_t ServerMetrics::generated_tokens() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tokens_;
}

// Tokens of the steps that ended in the last rate_window_s seconds, per second of that window
// (of the time since the first token, while that is shorter): falls to 0 when idle.
double ServerMetrics::tokens_per_second(Clock::time_point now) const {
  double window =
      std::min(rate_window_s_, std::chrono::duration<double>(now - first_step_).count());
  if (tokens_ == 0 || window <= 0) return 0;
  int64_t n = 0;
  for (const auto& [t, tokens] : recent_tokens_)
    if (std::chrono::duration<double>(now - t).count() <= rate_window_s_) n += tokens;
  return static_cast<double>(n) / window;
}

std::string ServerMetrics::render() const {
  Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  auto header = [&](const char* name, const char* type, const char* help) {
    absl::StrAppend(&out, "# HELP ", name, " ", help, "\n# TYPE ", name, " ", type, "\n");
  };
  header("infer_requests_total", "counter", "HTTP requests answered, by endpoint and status code.");
  for (const auto& [key, n] : requests_)
    absl::StrAppendFormat(&out, "infer_requests_total{endpoint=\"%s\",code=\"%d\"} %d\n", key.first,
                          key.second, n);
  header("infer_request_latency_seconds", "summary",
         "Time from a request's arrival to its answer (to the end of a stream); quantiles over the "
         "recent requests of each endpoint.");
  for (const auto& [endpoint, l] : latency_) {
    for (double q : {0.5, 0.9, 0.99})
      absl::StrAppendFormat(&out,
                            "infer_request_latency_seconds{endpoint=\"%s\",quantile=\"%g\"} %.9g\n",
                            endpoint, q, nearest_rank(l.recent, q));
    absl::StrAppendFormat(&out, "infer_request_latency_seconds_sum{endpoint=\"%s\"} %.9g\n",
                          endpoint, l.sum);
    absl::StrAppendFormat(&out, "infer_request_latency_seconds_count{endpoint=\"%s\"} %d\n",
                          endpoint, l.count);
  }
  header("infer_time_to_first_token_seconds", "summary",
         "Time from a completion's arrival to its first token; quantiles over recent completions.");
  for (double q : {0.5, 0.9, 0.99})
    absl::StrAppendFormat(&out, "infer_time_to_first_token_seconds{quantile=\"%g\"} %.9g\n", q,
                          nearest_rank(first_token_.recent, q));
  absl::StrAppendFormat(&out, "infer_time_to_first_token_seconds_sum %.9g\n", first_token_.sum);
  absl::StrAppendFormat(&out, "infer_time_to_first_token_seconds_count %d\n", first_token_.count);
  header("infer_generated_tokens_total", "counter", "Tokens generated by completions.");
  absl::StrAppendFormat(&out, "infer_generated_tokens_total %d\n", tokens_);
  header("infer_tokens_per_second", "gauge",
         "Tokens generated per second over the last seconds (0 when idle).");
  absl::StrAppendFormat(&out, "infer_tokens_per_second %.9g\n", tokens_per_second(now));
  header("infer_model_seconds_total", "counter", "Time the model thread spent in model steps.");
  absl::StrAppendFormat(&out, "infer_model_seconds_total %.9g\n", model_seconds_);
  header("infer_queue_depth", "gauge", "Requests waiting for the model thread.");
  absl::StrAppendFormat(&out, "infer_queue_depth %d\n", queue_depth_);
  header("infer_active_sequences", "gauge", "Completions decoding now.");
  absl::StrAppendFormat(&out, "infer_active_sequences %d\n", active_sequences_);
  header("infer_batch_size", "histogram", "Images or sequences per model step.");
  int64_t cumulative = 0;
  for (size_t i = 0; i < bucket_bounds_.size(); i++) {
    cumulative += bucket_counts_[i];
    absl::StrAppendFormat(&out, "infer_batch_size_bucket{le=\"%d\"} %d\n", bucket_bounds_[i],
                          cumulative);
  }
  absl::StrAppendFormat(&out, "infer_batch_size_bucket{le=\"+Inf\"} %d\n", batches_);
  absl::StrAppendFormat(&out, "infer_batch_size_sum %d\ninfer_batch_size_count %d\n", batch_sum_,
                        batches_);
  return out;
}

}  // namespace tc::infer
