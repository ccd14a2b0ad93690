// The ONNX text-feature operators: TfIdfVectorizer of integer tokens (tinycore has no strings).
#include <algorithm>
#include <string>

#include "frontends/onnx/op_table.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

// A TfIdfVectorizer's n-grams of one length: the pool's n-grams as a (G, n) tensor and the
// output column of each.
struct Grams {
  int64_t n = 0;
  std::vector<int64_t> values, columns;
};

// The pool split by n-gram length (ngram_counts holds where each length starts), checked.
std::vector<Grams> pool(const NodeArgs& a) {
  if (a.attr("pool_strings"))
    fail("ONNX node '%s' (TfIdfVectorizer): string pools are not supported", a.node.name());
  std::vector<int64_t> values = a.attr_ints("pool_int64s"), starts = a.attr_ints("ngram_counts"),
                       columns = a.attr_ints("ngram_indexes");
  std::vector<Grams> out;
  size_t gram = 0;  // the n-gram's index in the pool
  for (size_t i = 0; i < starts.size(); i++) {
    int64_t n = static_cast<int64_t>(i) + 1;
    int64_t end = i + 1 < starts.size() ? starts[i + 1] : static_cast<int64_t>(values.size());
    if (starts[i] < 0 || end < starts[i] || end > static_cast<int64_t>(values.size()) ||
        (end - starts[i]) % n != 0)
      fail(
          "ONNX node '%s' (TfIdfVectorizer): ngram_counts %d..%d do not split a pool of %d into "
          "%d-grams",
          a.node.name(), starts[i], end, values.size(), n);
    Grams g{n, std::vector<int64_t>(values.begin() + starts[i], values.begin() + end), {}};
    for (int64_t k = 0; k < (end - starts[i]) / n; k++, gram++) {
      if (gram >= columns.size())
        fail(
            "ONNX node '%s' (TfIdfVectorizer): ngram_indexes holds %d values, fewer than the "
            "pool's n-grams",
            a.node.name(), columns.size());
      g.columns.push_back(columns[gram]);
    }
    out.push_back(std::move(g));
  }
  return out;
}

// How often each of `g`'s n-grams occurs in the rows of x (..., C) with `skip` tokens skipped
// between its items: (..., G) float.
Tensor occurrences(const Tensor& x, const Grams& g, int64_t skip) {
  int64_t c = x.shape().back(), span = (g.n - 1) * (skip + 1), grams = g.columns.size();
  std::vector<Tensor> items;  // (..., positions) each: the j-th item of every window
  for (int64_t j = 0; j < g.n; j++) {
    std::vector<std::pair<int64_t, int64_t>> keep;
    for (int64_t d : x.shape()) keep.emplace_back(0, d);
    keep.back() = {j * (skip + 1), j * (skip + 1) + c - span};
    items.push_back(x.shrink(keep).unsqueeze(-1));
  }
  Tensor windows = Tensor::cat(items, -1).unsqueeze(-2);  // (..., positions, 1, n)
  Tensor p = Tensor::from_vector(g.values, Shape{grams, g.n});
  return windows.eq(p).all(-1).cast(dtypes::float32).sum(-2);
}

Tensor tfidf(const NodeArgs& a) {
  const Tensor& x = a.in(0);
  if (!dtypes::is_int(x.dtype()) || x.ndim() < 1 || x.ndim() > 2)
    fail("ONNX node '%s' (TfIdfVectorizer): the input must be 1-d or 2-d integers, got %s %s",
         a.node.name(), x.dtype().name(), fmt_shape(x.shape()));
  int64_t lo = a.attr_int("min_gram_length", 1), hi = a.attr_int("max_gram_length", 1);
  int64_t max_skip = a.attr_int("max_skip_count", 0);
  std::string mode = a.attr_string("mode");
  std::vector<int64_t> columns = a.attr_ints("ngram_indexes");
  int64_t width = columns.empty() ? 0 : *std::max_element(columns.begin(), columns.end()) + 1;
  Shape out_shape(x.shape().begin(), x.shape().end() - 1);
  out_shape.push_back(width);
  Tensor counts = Tensor::zeros(out_shape);
  Tensor tokens = x.cast(dtypes::int64);
  for (const Grams& g : pool(a)) {
    if (g.n < lo || g.n > hi || g.columns.empty()) continue;
    // each n-gram's count added to its column: a matmul by the one-hot (G, width) placement
    Tensor place = Tensor::from_vector(g.columns)
                       .unsqueeze(-1)
                       .eq(Tensor::arange(0, static_cast<double>(width), 1, dtypes::int64))
                       .cast(dtypes::float32);
    // unigrams are counted once, not once per skip (ONNX's reference)
    for (int64_t skip = 0; skip <= (g.n == 1 ? 0 : max_skip); skip++)
      if ((g.n - 1) * (skip + 1) < x.shape().back())
        counts = counts.add(occurrences(tokens, g, skip).matmul(place));
  }
  const auto* w = a.attr("weights");
  if (w && w->floats_size() != width)
    fail("ONNX node '%s' (TfIdfVectorizer): weights holds %d values, want %d", a.node.name(),
         w->floats_size(), width);
  Tensor weights =
      w ? Tensor::from_vector(std::vector<float>(w->floats().begin(), w->floats().end()))
        : Tensor::ones({width});
  if (mode == "TF") return counts;
  if (mode == "IDF") return counts.gt(0.0).cast(dtypes::float32).mul(weights);
  if (mode == "TFIDF") return counts.mul(weights);
  fail("ONNX node '%s' (TfIdfVectorizer): mode '%s' is not TF, IDF or TFIDF", a.node.name(), mode);
}

}  // namespace

void add_text_ops(OpTable& t) {
  t.insert({{"TfIdfVectorizer", [](const NodeArgs& a) { return std::vector{tfidf(a)}; }}});
}

}  // namespace tc::onnx
