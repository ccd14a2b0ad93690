// What infer serve counts, for GET /metrics (Prometheus text format, version 0.0.4): requests by
// endpoint and status code, latency percentiles over a bounded window of recent requests per
// endpoint, generated tokens, the recent tokens/s and time to first token, the queue's depth, the sequences decoding,
// and a histogram of model batch sizes. Every member is thread safe (HTTP threads record requests,
// the model thread records steps).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tc::infer {

class ServerMetrics {
 public:
  // Requests to `endpoints` are counted under their path, any other path under "other" (so a
  // client probing random paths cannot grow the label set). Batch-size buckets are the powers of
  // two up to max_batch, and max_batch. Latency percentiles look at the last `latency_window`
  // requests of each endpoint; tokens/s at the steps of the last `rate_window_s` seconds.
  ServerMetrics(std::vector<std::string> endpoints, int64_t max_batch, size_t latency_window = 1024,
                double rate_window_s = 10);

  void record_request(std::string_view path, int status, double seconds);
  // One model step: `batch` images or sequences, `tokens` generated, `seconds` it took.
  void record_step(int64_t batch, int64_t tokens, double seconds);
  // A completion's time from its arrival to its first token.
  void record_first_token(double seconds);
  void set_queue_depth(int64_t n);
  void set_active_sequences(int64_t n);

  // For tests and logs.
  int64_t requests(std::string_view endpoint, int status) const;
  // The q-quantile (nearest rank) of the endpoint's recent latencies; -1 when it has none.
  double latency_quantile(std::string_view endpoint, double q) const;
  int64_t generated_tokens() const;

  std::string render() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Latencies {
    std::vector<double> recent;  // a ring of the last latency_window_ latencies
    size_t next = 0;
    int64_t count = 0;
    double sum = 0;
    void add(double seconds, size_t window);
  };
  const std::string& label_of(std::string_view path) const;
  double tokens_per_second(Clock::time_point now) const;  // holds mu_

  const std::vector<std::string> endpoints_;
  const std::string other_ = "other";
  const size_t latency_window_;
  const double rate_window_s_;
  std::vector<int64_t> bucket_bounds_;

  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  std::map<std::string, Latencies> latency_;
  Latencies first_token_;
  std::vector<int64_t> bucket_counts_;  // per bound, not cumulative; the last: above all bounds
  int64_t batches_ = 0, batch_sum_ = 0;
  int64_t tokens_ = 0;
  double model_seconds_ = 0;
  Clock::time_point first_step_{};
  std::deque<std::pair<Clock::time_point, int64_t>> recent_tokens_;  // steps in the rate window
  int64_t queue_depth_ = 0, active_sequences_ = 0;
};

}  // namespace tc::infer
