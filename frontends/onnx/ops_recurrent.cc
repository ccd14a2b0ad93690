// ONNX's recurrent layers RNN, GRU and LSTM as Tensor ops: the input's products with W for every
// time step at once, then the time loop unrolled over the static sequence length, one cell step
// a time step and direction (reverse runs over each batch entry's own length).
#include <functional>

#include "frontends/onnx/op_table.h"

namespace tc::onnx {
namespace {

// One activation of activations[] (ONNX's names), with its alpha and beta where it takes them.
Tensor activate(const NodeArgs& a, const std::string& name, const Tensor& x, float alpha,
                float beta) {
  if (name == "Tanh") return x.tanh();
  if (name == "Sigmoid") return x.sigmoid();
  if (name == "Relu") return x.relu();
  if (name == "Affine") return x.mul(alpha).add(beta);
  if (name == "LeakyRelu") return x.leaky_relu(alpha);
  if (name == "ThresholdedRelu") return x.gt(alpha).where(x, 0.0f);
  if (name == "ScaledTanh") return x.mul(beta).tanh().mul(alpha);
  if (name == "HardSigmoid") return x.hardsigmoid(alpha, beta);
  if (name == "Elu") return x.elu(alpha);
  if (name == "Softsign") return x.softsign();
  if (name == "Softplus") return x.softplus();
  fail("ONNX node '%s' (%s): activation '%s' is not one ONNX names", a.node.name(),
       a.node.op_type(), name);
}

// An activation bound to its alpha and beta.
using Activation = std::function<Tensor(const Tensor&)>;

// The layer's activations, `per_dir` a direction (the defaults where the attribute is absent);
// alphas and betas are consumed in order by the activations that take them, as onnxruntime does.
std::vector<Activation> activations(const NodeArgs& a, const std::vector<std::string>& defaults,
                                    int dirs) {
  std::vector<std::string> names;
  if (const auto* at = a.attr("activations"))
    names.assign(at->strings().begin(), at->strings().end());
  if (names.empty())
    for (int d = 0; d < dirs; d++) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != defaults.size() * dirs)
    fail("ONNX node '%s' (%s): %d activations, want %d", a.node.name(), a.node.op_type(),
         names.size(), defaults.size() * dirs);
  std::vector<float> alphas, betas;
  if (const auto* at = a.attr("activation_alpha"))
    alphas.assign(at->floats().begin(), at->floats().end());
  if (const auto* at = a.attr("activation_beta"))
    betas.assign(at->floats().begin(), at->floats().end());
  size_t ai = 0, bi = 0;
  std::vector<Activation> out;
  for (const std::string& name : names) {
    // onnxruntime's defaults where the lists run short
    bool takes_alpha = name == "Affine" || name == "LeakyRelu" || name == "ThresholdedRelu" ||
                       name == "ScaledTanh" || name == "HardSigmoid" || name == "Elu";
    bool takes_beta = name == "Affine" || name == "ScaledTanh" || name == "HardSigmoid";
    float fallback = name == "LeakyRelu" ? 0.01f : name == "HardSigmoid" ? 0.2f : 1.0f;
    float alpha = takes_alpha && ai < alphas.size() ? alphas[ai++] : fallback;
    float beta = takes_beta && bi < betas.size() ? betas[bi++]
                 : name == "HardSigmoid"         ? 0.5f
                                                 : 0.0f;
    activate(a, name, Tensor::full({}, 0.0f), alpha, beta);  // an unknown name fails before use
    out.push_back(
        [&a, name, alpha, beta](const Tensor& x) { return activate(a, name, x, alpha, beta); });
  }
  return out;
}

// A cell's state: h, and c for an LSTM.
using State = std::vector<Tensor>;
// One time step of one direction: the state from this step's x·Wᵀ + Wb (batch, gates·hidden),
// the previous state and the direction's R, Rb (where given), P and activations.
struct Direction {
  Tensor r;                     // (gates·hidden, hidden)
  std::optional<Tensor> rb, p;  // (gates·hidden), (3·hidden)
  std::vector<Activation> act;
};
using Cell = std::function<State(const Tensor& xw, const State& prev, const Direction& d)>;

// Input i of the node checked to have `shape`.
const Tensor& shaped(const NodeArgs& a, size_t i, const Shape& shape) {
  const Tensor& t = a.in(i);
  if (t.shape() != shape)
    fail("ONNX node '%s' (%s): input %d has shape %s, want %s", a.node.name(), a.node.op_type(), i,
         fmt_shape(t.shape()), fmt_shape(shape));
  return t;
}

// Direction d's initial state from input i (initial_h, initial_c), else zeros.
Tensor initial(const NodeArgs& a, size_t i, int d, int dirs, int64_t batch, int64_t hidden) {
  if (!a.has(i)) return Tensor::zeros({batch, hidden}, a.in(0).dtype());
  if (a.attr_int("layout", 0) != 0)  // (batch, dirs, hidden)
    return shaped(a, i, {batch, dirs, hidden}).getitem({Slice(), static_cast<long>(d)});
  return shaped(a, i, {dirs, batch, hidden}).getitem({static_cast<long>(d)});
}

// A recurrent layer of `gates` gates: reads X, W, R, B, sequence_lens, initial_h (and initial_c
// for the `states` = 2 of an LSTM), unrolls `cell` over time and directions, and returns Y,
// Y_h (and Y_c) in the layout asked.
std::vector<Tensor> recurrent(const NodeArgs& a, int gates, int states,
                              const std::vector<std::string>& default_acts, const Cell& cell) {
  bool batch_first = a.attr_int("layout", 0) != 0;
  Tensor x = a.in(0);
  if (x.ndim() != 3)
    fail("ONNX node '%s' (%s): X has shape %s, want 3 dimensions", a.node.name(), a.node.op_type(),
         fmt_shape(x.shape()));
  if (batch_first) x = x.permute({1, 0, 2});
  int64_t seq = x.shape()[0], batch = x.shape()[1], input = x.shape()[2];
  std::string direction = a.attr("direction") ? a.attr("direction")->s() : "forward";
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    fail("ONNX node '%s' (%s): direction '%s'", a.node.name(), a.node.op_type(), direction);
  int dirs = direction == "bidirectional" ? 2 : 1;
  int64_t hidden = a.in(2).ndim() == 3 ? a.in(2).shape()[2] : 0;
  if (a.attr("hidden_size")) hidden = a.attr_int("hidden_size", 0);
  if (hidden < 1 || hidden > (int64_t{1} << 30))
    fail("ONNX node '%s' (%s): hidden size %d", a.node.name(), a.node.op_type(), hidden);
  int64_t gh = gates * hidden;
  const Tensor& w = shaped(a, 1, {dirs, gh, input});
  const Tensor& r = shaped(a, 2, {dirs, gh, hidden});
  std::vector<Activation> acts = activations(a, default_acts, dirs);
  float clip = a.attr_float("clip", 0.0f);
  // the steps each batch entry runs; later ones keep the state and output zeros
  std::optional<Tensor> lens;
  if (a.has(4)) lens = shaped(a, 4, {batch}).cast(dtypes::int64).reshape({1, batch});
  Tensor steps = Tensor::arange(0, static_cast<double>(seq), 1, dtypes::int64).reshape({seq, 1});
  std::vector<Tensor> ys;
  State finals[2];
  for (int d = 0; d < dirs; d++) {
    Direction dir{r.getitem({static_cast<long>(d)}), {}, {}, {}};
    dir.act.assign(acts.begin() + d * default_acts.size(),
                   acts.begin() + (d + 1) * default_acts.size());
    Tensor xw = x.matmul(w.getitem({static_cast<long>(d)}).transpose());  // (seq, batch, gh)
    if (a.has(3)) {
      Tensor b = shaped(a, 3, {dirs, 2 * gh}).getitem({static_cast<long>(d)});
      xw = xw.add(b.shrink({{0, gh}}));
      dir.rb = b.shrink({{gh, 2 * gh}});
    }
    if (states == 2 && a.has(7))
      dir.p = shaped(a, 7, {dirs, 3 * hidden}).getitem({static_cast<long>(d)});
    // clip bounds the gates' inputs (f and g), not an LSTM's cell state on its way to h
    for (size_t k = 0; clip > 0 && k < dir.act.size() && k < 2; k++)
      dir.act[k] = [f = dir.act[k], clip](const Tensor& v) { return f(v.clip(-clip, clip)); };
    // a reverse direction reads each entry's steps from its last: step t is len - 1 - t
    bool reverse = direction == "reverse" || d == 1;
    Tensor len = lens ? *lens : Tensor::full({1, batch}, static_cast<long>(seq), dtypes::int64);
    Tensor order = steps.lt(len).where(len.sub(1L).sub(steps), steps);  // (seq, batch)
    if (reverse) xw = xw.gather(0, order.unsqueeze(2).expand({seq, batch, gh}));
    State state;
    for (int s = 0; s < states; s++) state.push_back(initial(a, 5 + s, d, dirs, batch, hidden));
    std::vector<Tensor> y;
    for (int64_t t = 0; t < seq; t++) {
      State next = cell(xw.getitem({static_cast<long>(t)}), state, dir);
      Tensor live = steps.getitem({static_cast<long>(t)}).lt(len).reshape({batch, 1});
      for (int s = 0; s < states; s++) state[s] = lens ? live.where(next[s], state[s]) : next[s];
      y.push_back(lens ? live.where(next[0], 0.0f) : next[0]);
      if ((t + 1) % kStepsPerRealize == 0) realize_all(state);
    }
    Tensor yd = Tensor::stack(y, 0);  // (seq, batch, hidden), back in time order
    if (reverse) yd = yd.gather(0, order.unsqueeze(2).expand({seq, batch, hidden}));
    ys.push_back(yd);
    finals[d] = state;
  }
  Tensor y = Tensor::stack(ys, 1);  // (seq, dirs, batch, hidden)
  std::vector<Tensor> out = {batch_first ? y.permute({2, 0, 1, 3}) : y};
  for (int s = 0; s < states; s++) {
    std::vector<Tensor> per_dir;
    for (int d = 0; d < dirs; d++) per_dir.push_back(finals[d][s]);
    out.push_back(Tensor::stack(per_dir, batch_first ? 1 : 0));
  }
  return out;
}

// The gate k (of `gates`) of v's last axis.
Tensor gate(const Tensor& v, int k, int gates) {
  int64_t h = v.shape().back() / gates;
  std::vector<IndexItem> at(v.ndim() - 1, IndexItem(Slice()));
  at.emplace_back(Slice(k * h, (k + 1) * h));
  return v.getitem(at);
}

// h·Rᵀ + Rb: the recurrent part of every gate.
Tensor recur(const Tensor& h, const Direction& d) {
  Tensor hr = h.matmul(d.r.transpose());
  return d.rb ? hr.add(*d.rb) : hr;
}

State rnn_cell(const Tensor& xw, const State& prev, const Direction& d) {
  return {d.act[0](xw.add(recur(prev[0], d)))};
}

State gru_cell(const NodeArgs& a, const Tensor& xw, const State& prev, const Direction& d) {
  const Tensor& h = prev[0];
  // gates z, r, h~; linear_before_reset applies r after h's product with Rh
  Tensor hr = h.matmul(d.r.transpose());
  auto rb = [&](int k) { return d.rb ? gate(*d.rb, k, 3) : Tensor::zeros({}, h.dtype()); };
  Tensor z = d.act[0](gate(xw, 0, 3).add(gate(hr, 0, 3)).add(rb(0)));
  Tensor r = d.act[0](gate(xw, 1, 3).add(gate(hr, 1, 3)).add(rb(1)));
  Tensor rh = d.r.getitem({Slice(2 * h.shape()[1], 3 * h.shape()[1])});
  Tensor cand = a.attr_int("linear_before_reset", 0) != 0
                    ? r.mul(gate(hr, 2, 3).add(rb(2)))
                    : r.mul(h).matmul(rh.transpose()).add(rb(2));
  Tensor hh = d.act[1](gate(xw, 2, 3).add(cand));
  return {z.mul(-1.0f).add(1.0f).mul(hh).add(z.mul(h))};
}

State lstm_cell(const NodeArgs& a, const Tensor& xw, const State& prev, const Direction& d) {
  const Tensor &h = prev[0], &c = prev[1];
  // gates i, o, f, c; peepholes i, o, f
  Tensor g = xw.add(recur(h, d));
  auto peep = [&](int k, const Tensor& cell) {
    return d.p ? gate(*d.p, k, 3).mul(cell) : Tensor::zeros({}, h.dtype());
  };
  Tensor i = d.act[0](gate(g, 0, 4).add(peep(0, c)));
  Tensor f = a.attr_int("input_forget", 0) != 0 ? i.mul(-1.0f).add(1.0f)
                                                : d.act[0](gate(g, 2, 4).add(peep(2, c)));
  Tensor cand = d.act[1](gate(g, 3, 4));
  Tensor cn = f.mul(c).add(i.mul(cand));
  Tensor o = d.act[0](gate(g, 1, 4).add(peep(1, cn)));
  return {o.mul(d.act[2](cn)), cn};
}

}  // namespace

void add_recurrent_ops(OpTable& t) {
  t.insert({
      {"RNN", [](const NodeArgs& a) { return recurrent(a, 1, 1, {"Tanh"}, rnn_cell); }},
      {"GRU",
       [](const NodeArgs& a) {
         return recurrent(a, 3, 1, {"Sigmoid", "Tanh"},
                          [&a](const Tensor& xw, const State& prev, const Direction& d) {
                            return gru_cell(a, xw, prev, d);
                          });
       }},
      {"LSTM",
       [](const NodeArgs& a) {
         return recurrent(a, 4, 2, {"Sigmoid", "Tanh", "Tanh"},
                          [&a](const Tensor& xw, const State& prev, const Direction& d) {
                            return lstm_cell(a, xw, prev, d);
                          });
       }},
  });
}

}  // namespace tc::onnx
