// Indexing (tensor/indexing.cc): getitem/setitem with ints, slices, NewAxis, Ellipsis and tensor
// indices; gather, scatter, scatter_reduce, masked_select, masked_fill, nonzero,
// repeat_interleave, rearrange, one_hot. References: a naive numpy-style indexer on the host
// (below), naive loops, and PyTorch fixtures (tests/fixtures/gen_index.py). Values are moved,
// not computed, so getitem/gather/scatter results must match exactly (floats included, tolerance
// 0); scatter_reduce sum/mean/prod are within 1e-6 relative (float32) or 1e-12 (float64).
//
// Where tinygrad (the seed) and PyTorch differ, the test follows the seed and says so:
//  - out-of-range values in an index tensor read 0 (torch raises), negative gather indices too;
//  - scatter_reduce 'mean' of an integer tensor is float (torch keeps the dtype);
//  - masked_fill of an int tensor with a float scalar is float (torch keeps int);
//  - setitem with a value of another dtype throws (torch casts).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tests/error_message.h"
#include "tests/tensor/fixture.h"
#include "tests/tensor/gradcheck.h"
#include "tests/tensor/reference.h"
#include "tinycore/dtype.h"
#include "tinycore/tensor.h"

namespace {

namespace ref = tcref;
namespace dt = tc::dtypes;
using ref::NDArray;
using tc::Ellipsis;
using tc::NewAxis;
using tc::Slice;
using tc::Tensor;
using ::testing::HasSubstr;
using S = std::vector<int64_t>;

// ------------------------------------------------------------------ a naive numpy indexer

// One index position for the reference: an int, a slice, None, ..., or an int array.
struct RSlice {
  std::optional<int64_t> start, stop, step;
};
struct RNone {};
struct REll {};
using RIdx = std::variant<int64_t, RSlice, RNone, REll, NDArray>;

// Python's range of a slice over a dimension of size n (written independently of the library:
// by walking the indices).
std::vector<int64_t> slice_positions(const RSlice& s, int64_t n) {
  int64_t step = s.step.value_or(1);
  std::vector<int64_t> out;
  auto norm = [&](std::optional<int64_t> v, int64_t dflt) -> int64_t {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    if (step > 0) return std::min(std::max<int64_t>(x, 0), n);
    return std::min(std::max<int64_t>(x, -1), n - 1);
  };
  int64_t a = norm(s.start, step > 0 ? 0 : n - 1), b = norm(s.stop, step > 0 ? n : -1);
  for (int64_t i = a; step > 0 ? i < b : i > b; i += step) out.push_back(i);
  return out;
}

// For x of shape `xs` indexed by `idx`: the result shape, and for every result element (row-major)
// the flat source position, or -1 where an index array value is out of range (reads 0).
std::pair<S, std::vector<int64_t>> ref_index(const S& xs, std::vector<RIdx> idx) {
  int n_idx = 0;
  for (const RIdx& r : idx)
    n_idx += !std::holds_alternative<RNone>(r) && !std::holds_alternative<REll>(r);
  std::vector<RIdx> full;
  bool seen = false;
  for (const RIdx& r : idx) {
    if (std::holds_alternative<REll>(r)) {
      for (int k = 0; k < static_cast<int>(xs.size()) - n_idx; k++) full.push_back(RSlice{});
      seen = true;
    } else {
      full.push_back(r);
    }
  }
  if (!seen)
    for (int k = 0; k < static_cast<int>(xs.size()) - n_idx; k++) full.push_back(RSlice{});
  // broadcast shape of the arrays and where they sit
  std::vector<int> adv;  // positions in `full`
  S big;
  for (size_t p = 0; p < full.size(); p++)
    if (auto* a = std::get_if<NDArray>(&full[p])) {
      adv.push_back(static_cast<int>(p));
      big = ref::broadcast_shape({big, a->shape});
    }
  bool adjacent = adv.empty() || adv.back() - adv.front() + 1 == static_cast<int>(adv.size());
  // output dims: each is ("slice", src dim, positions) or ("none") or the block of big
  struct ODim {
    int kind;  // 0 slice, 1 none, 2 big block
    int src = -1;
    std::vector<int64_t> pos;
  };
  std::vector<ODim> od;
  if (!adjacent) od.push_back({2, -1, {}});
  int src = 0;
  bool placed = !adjacent;
  for (const RIdx& r : full) {
    if (std::holds_alternative<RNone>(r)) {
      od.push_back({1, -1, {}});
      continue;
    }
    if (auto* s = std::get_if<RSlice>(&r)) od.push_back({0, src, slice_positions(*s, xs[src])});
    if (std::holds_alternative<NDArray>(r) && !placed) {
      od.push_back({2, -1, {}});
      placed = true;
    }
    src++;
  }
  S out_shape;
  for (const ODim& o : od) {
    if (o.kind == 0) out_shape.push_back(static_cast<int64_t>(o.pos.size()));
    if (o.kind == 1) out_shape.push_back(1);
    if (o.kind == 2) out_shape.insert(out_shape.end(), big.begin(), big.end());
  }
  std::vector<int64_t> where;
  for (int64_t e = 0; e < ref::numel(out_shape); e++) {
    std::vector<int64_t> oi = ref::unravel(e, out_shape);
    std::vector<int64_t> si(xs.size(), 0);
    std::vector<int64_t> bi;
    size_t k = 0;
    for (const ODim& o : od) {
      if (o.kind == 0)
        si[o.src] = o.pos[oi[k++]];
      else if (o.kind == 1)
        k++;
      else
        for (size_t j = 0; j < big.size(); j++) bi.push_back(oi[k++]);
    }
    bool valid = true;
    int d = 0;
    for (const RIdx& r : full) {
      if (std::holds_alternative<RNone>(r)) continue;
      if (auto* i = std::get_if<int64_t>(&r)) si[d] = *i < 0 ? *i + xs[d] : *i;
      if (auto* a = std::get_if<NDArray>(&r)) {
        // the element of a broadcast to big at bi
        std::vector<int64_t> ai;
        for (size_t j = 0; j < a->shape.size(); j++) {
          int64_t b = bi[big.size() - a->shape.size() + j];
          ai.push_back(a->shape[j] == 1 ? 0 : b);
        }
        int64_t v = static_cast<int64_t>(a->at(ai));
        if (v < 0) v += xs[d];
        if (v < 0 || v >= xs[d]) valid = false;
        si[d] = v;
      }
      d++;
    }
    where.push_back(valid ? ref::ravel(si, xs) : -1);
  }
  return {out_shape, where};
}

NDArray ref_get(const NDArray& x, const std::vector<RIdx>& idx) {
  auto [shape, where] = ref_index(x.shape, idx);
  std::vector<double> v;
  for (int64_t w : where) v.push_back(w < 0 ? 0.0 : x.v[w]);
  return NDArray(shape, v);
}

// x with the indexed elements set from `val` (broadcast to the indexed shape), in row-major
// order of the index (so the last of repeated indices wins).
NDArray ref_set(NDArray x, const std::vector<RIdx>& idx, const NDArray& val) {
  auto [shape, where] = ref_index(x.shape, idx);
  NDArray vb = ref::broadcast_to(val, shape);
  for (size_t e = 0; e < where.size(); e++)
    if (where[e] >= 0) x.v[where[e]] = vb.v[e];
  return x;
}

// The same index in both spellings.
struct Ix {
  std::vector<tc::IndexItem> t;
  std::vector<RIdx> r;
  Ix& i(int64_t v) {
    t.push_back(static_cast<long long>(v));
    r.push_back(v);
    return *this;
  }
  Ix& s(std::optional<int64_t> a = {}, std::optional<int64_t> b = {},
        std::optional<int64_t> c = {}) {
    t.push_back(Slice(a, b, c));
    r.push_back(RSlice{a, b, c});
    return *this;
  }
  Ix& none() {
    t.push_back(NewAxis);
    r.push_back(RNone{});
    return *this;
  }
  Ix& ell() {
    t.push_back(Ellipsis);
    r.push_back(REll{});
    return *this;
  }
  Ix& arr(const NDArray& a, tc::DType d = dt::int32) {
    t.push_back(ref::tensor(a, d));
    r.push_back(a);
    return *this;
  }
};

NDArray iarr(S shape, std::vector<double> v) { return NDArray(std::move(shape), std::move(v)); }

// True when the graph of t reads buffers only through movement ops (a view, no kernel).
bool is_view(const Tensor& t) {
  for (const tc::UOp* u : t.uop()->toposort()) {
    switch (u->op) {
      case tc::Ops::BUFFER:
      case tc::Ops::RESHAPE:
      case tc::Ops::PERMUTE:
      case tc::Ops::EXPAND:
      case tc::Ops::PAD:
      case tc::Ops::SHRINK:
      case tc::Ops::FLIP:
        break;
      default:
        return false;
    }
  }
  return true;
}

NDArray arange_nd(const S& s) {
  return ref::generate(s, [](int64_t i) { return static_cast<double>(i) * 0.5 - 3; });
}

// ------------------------------------------------------------------ basic getitem

TEST(IndexTest, BasicIndexingIsAViewAndMatchesNumpy) {
  NDArray a = arange_nd({3, 4, 5});
  Tensor x = ref::tensor(a);
  std::vector<Ix> cases = {
      Ix().i(1),
      Ix().i(-1).s(1, {}, 2),
      Ix().ell().s({}, {}, -2),
      Ix().none().s().i(2).none(),
      Ix().s(-10, 10).ell().i(-5),
      Ix().s(3, 1),                             // empty
      Ix().s(2, 0, -1).s(4, 0, -3),             // negative steps, start inside
      Ix().s({}, {}, 7).s(1, 3).s(-1, -6, -2),  // step larger than the size
      Ix().i(0).i(0).i(0),                      // a scalar
      Ix().ell(),
      Ix().s().ell().none(),
  };
  for (size_t k = 0; k < cases.size(); k++) {
    Tensor y = x[cases[k].t];
    EXPECT_TRUE(is_view(y)) << "case " << k;
    ref::expect_exact(y, ref_get(a, cases[k].r), "case " + std::to_string(k));
  }
  // one position without braces
  ref::expect_exact(x[-2], ref_get(a, Ix().i(-2).r));
  ref::expect_exact(x[Slice(1)], ref_get(a, Ix().s(1).r));
}

TEST(IndexTest, BasicIndexingOfNonContiguousInputs) {
  NDArray a = arange_nd({4, 3, 5});
  Tensor x = ref::tensor(a).permute({2, 0, 1}).flip({1});  // (5, 4, 3)
  NDArray b = ref::flip(ref::permute(a, {2, 0, 1}), {1});
  std::vector<Ix> cases = {Ix().s(1, {}, 2).i(-1), Ix().ell().s({}, {}, -1).none(),
                           Ix().s(4, 0, -2).s(1, 3).i(2)};
  for (size_t k = 0; k < cases.size(); k++)
    ref::expect_exact(x[cases[k].t], ref_get(b, cases[k].r), "case " + std::to_string(k));
  // 0-d tensors: NewAxis and Ellipsis only
  Tensor s = Tensor::full({}, 4.5f);
  EXPECT_EQ(s[{NewAxis}].shape(), S({1}));
  EXPECT_EQ(s[{Ellipsis}].item<float>(), 4.5f);
}

// ------------------------------------------------------------------ tensor indices

TEST(IndexTest, TensorIndicesBroadcastAndPlaceDimsAsNumpy) {
  NDArray a = arange_nd({3, 4, 5});
  Tensor x = ref::tensor(a);
  NDArray i2 = iarr({2, 1}, {0, -1});  // negative counts from the end
  NDArray j3 = iarr({3}, {4, 0, -2});
  std::vector<Ix> cases = {
      Ix().arr(iarr({4}, {2, 0, 1, 2})),               // one index, repeats
      Ix().arr(i2).arr(j3),                            // adjacent, broadcast (2, 3)
      Ix().s().arr(i2).arr(j3),                        // adjacent, not first
      Ix().arr(i2).s().arr(j3),                        // non-adjacent: dims first
      Ix().s(1).arr(iarr({2}, {3, 0})).s({}, {}, -2),  // with slices around
      Ix().none().arr(iarr({}, {2})).ell().arr(iarr({2, 2}, {0, 1, 4, 3})),  // 0-d index
      Ix().i(1).arr(iarr({2, 2}, {0, 3, 2, 1})).arr(iarr({2}, {4, 1})),
      Ix().arr(iarr({2}, {1, 0})).i(2).arr(iarr({2}, {3, 3})),  // int between: non-adjacent
  };
  for (size_t k = 0; k < cases.size(); k++)
    ref::expect_exact(x[cases[k].t], ref_get(a, cases[k].r), "case " + std::to_string(k));
  // index dtypes: int8, uint8, int64
  Ix c8 = Ix().s().arr(iarr({3}, {-1, 0, 2}), dt::int8);
  ref::expect_exact(x[c8.t], ref_get(a, c8.r), "int8");
  Ix cu = Ix().arr(iarr({2}, {2, 0}), dt::uint8);
  ref::expect_exact(x[cu.t], ref_get(a, cu.r), "uint8");
  Ix c64 = Ix().ell().arr(iarr({2}, {-5, 4}), dt::int64);
  ref::expect_exact(x[c64.t], ref_get(a, c64.r), "int64");
  // a non-contiguous input
  Tensor xp = x.permute({1, 2, 0}).flip({0});
  NDArray ap = ref::flip(ref::permute(a, {1, 2, 0}), {0});
  Ix cp = Ix().arr(iarr({2}, {3, 1})).s(1, 4).arr(iarr({2}, {2, 0}));
  ref::expect_exact(xp[cp.t], ref_get(ap, cp.r), "permuted");
}

TEST(IndexTest, OutOfRangeTensorIndexValuesReadZero) {
  // tinygrad: "Out-of-bounds indexing results in a value of 0" (torch raises)
  Tensor x = Tensor::from_vector<int32_t>({1, 2, 3});
  Tensor idx = Tensor::from_vector<int32_t>({4, 3, 2, -1, -4});
  EXPECT_EQ(x[idx].data<int32_t>(), (std::vector<int32_t>{0, 0, 3, 3, 0}));
}

TEST(IndexTest, BoolAndFloat16TensorsIndex) {
  Tensor b = Tensor::from_vector<bool>({true, false, true, true}, S{2, 2});
  Tensor idx = Tensor::from_vector<int32_t>({1, 0, 1});
  EXPECT_EQ((b[{idx, Slice()}].dtype()), dt::bool_);
  ref::expect_exact(b[{idx, Slice()}], iarr({3, 2}, {1, 1, 1, 0, 1, 1}));
  Tensor h = ref::tensor(iarr({4}, {0.5, -1.25, 3, 7}), dt::float16);
  Tensor r = h[Tensor::from_vector<int32_t>({3, 1})];
  EXPECT_EQ(r.dtype(), dt::float16);
  ref::expect_exact(r, iarr({2}, {7, -1.25}));
}

TEST(IndexTest, TorchAdvancedGetitem) {
  const tcfix::Case& c = tcfix::fixture("index", "getitem_nonadjacent");
  Tensor x = c["x"].tensor();
  tcfix::expect_matches(x[{c["i0"].tensor(), Slice(), c["i1"].tensor()}], c["out"], 0, 0);
  const tcfix::Case& c2 = tcfix::fixture("index", "getitem_adjacent");
  tcfix::expect_matches(c2["x"].tensor()[{Slice(), c2["j0"].tensor(), c2["j1"].tensor()}],
                        c2["out"], 0, 0);
  const tcfix::Case& c3 = tcfix::fixture("index", "getitem_mixed");
  tcfix::expect_matches(c3["x"].tensor()[{Slice(1), c3["i"].tensor(), Slice({}, {}, 2)}], c3["out"],
                        0, 0);
}

TEST(IndexTest, GetitemGradients) {
  // torch: the gradient of x[i0, :, i1] (repeated index values accumulate)
  const tcfix::Case& c = tcfix::fixture("index", "getitem_nonadjacent");
  Tensor x = c["x"].tensor().requires_grad_();
  Tensor y = x[{c["i0"].tensor(), Slice(), c["i1"].tensor()}];
  y.backward(c["gout"].tensor());
  tcfix::expect_matches(*x.grad(), c["grad_x"], 1e-12, 1e-12);
  // finite differences: basic and advanced, with repeats
  Tensor rep = Tensor::from_vector<int32_t>({2, 0, 2, -1});
  tcgrad::check_grad(tcgrad::unary([&](const Tensor& t) {
                       return t[{Slice({}, {}, -2), NewAxis, rep}];
                     }),
                     {{{3, 4}, tcgrad::mixed(12)}});
}

// ------------------------------------------------------------------ setitem

TEST(IndexTest, BasicSetitemMatchesNumpyAndIsSeenByEveryHandle) {
  NDArray a = arange_nd({4, 5});
  std::vector<std::pair<Ix, NDArray>> cases = {
      {Ix().i(1), ref::random({5}, 1)},
      {Ix().s(1, {}, 2).s({}, {}, -2), ref::random({2, 3}, 2)},
      {Ix().i(-1).s(4, 0, -3), ref::random({2}, 3)},
      {Ix().ell().i(2).none(), ref::random({1}, 4)},  // broadcast
      {Ix().s(3, 1), ref::random({0, 5}, 5)},         // empty: nothing changes
      {Ix().s({}, {}, 3).s(1, 4, 2), ref::random({2, 1}, 6)},
  };
  for (size_t k = 0; k < cases.size(); k++) {
    Tensor x = ref::tensor(a);
    Tensor other = x;  // another handle
    x.setitem(cases[k].first.t, ref::tensor(cases[k].second));
    NDArray want = ref_set(a, cases[k].first.r, cases[k].second);
    ref::expect_exact(x, want, "case " + std::to_string(k));
    ref::expect_exact(other, want, "other handle, case " + std::to_string(k));
  }
  // a scalar value is cast to the tensor's dtype; a setitem while an unrealized graph built
  // before still reads the tensor is an error (as tinygrad), and works once that graph ran
  Tensor x = Tensor::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, S{2, 3});
  Tensor before = x.add(tc::ConstValue(0));
  EXPECT_THAT(error_message([&] {
                x.setitem({Slice(), Slice(1)}, 9);
              }),
              HasSubstr("Tensor.setitem: the tensor of shape (2, 3) is still read by an "
                        "unrealized tensor of shape (2, 3) (ADD)"));
  before.realize();
  x.setitem({Slice(), Slice(1)}, 9);
  x.setitem(0, 2.7);  // int tensor: 2.7 becomes 2
  EXPECT_EQ(before.data<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));  // run first
  EXPECT_EQ(x.data<int32_t>(), (std::vector<int32_t>{2, 2, 2, 4, 9, 9}));
  // setitem on a realized tensor, twice, and on a view-derived (lazy) tensor
  Tensor r = Tensor::from_vector<float>({1, 2, 3, 4}).realize();
  r.setitem(Tensor::from_vector<int32_t>({3, 0}), 8.0);
  r.realize();
  r.setitem(Slice(1, 3), Tensor::from_vector<float>({5, 6}));
  EXPECT_EQ(r.data<float>(), (std::vector<float>{8, 5, 6, 8}));
  Tensor lazy = Tensor::from_vector<float>({1, 2, 3, 4}).flip({0}).mul(tc::ConstValue(2.0));
  lazy.setitem(-1, 0.5);
  EXPECT_EQ(lazy.data<float>(), (std::vector<float>{8, 6, 4, 0.5f}));
}

TEST(IndexTest, AdvancedSetitem) {
  NDArray a = arange_nd({3, 4, 5});
  std::vector<std::pair<Ix, NDArray>> cases = {
      // repeated indices: the last one wins (row-major order of the index)
      {Ix().arr(iarr({4}, {2, 0, 2, -3})), ref::random({4, 4, 5}, 7)},
      {Ix().s().arr(iarr({2, 1}, {3, -4})).arr(iarr({3}, {0, 4, 2})), ref::random({2, 3}, 8)},
      {Ix().arr(iarr({2}, {2, 1})).s(1, {}, 2).arr(iarr({2}, {3, 0})), ref::random({2, 2}, 9)},
      {Ix().i(1).s({}, {}, -1).arr(iarr({2}, {4, 1})), ref::random({1, 2}, 10)},
      {Ix().arr(iarr({}, {1})).ell(), ref::random({5}, 11)},
  };
  for (size_t k = 0; k < cases.size(); k++) {
    Tensor x = ref::tensor(a);
    x.setitem(cases[k].first.t, ref::tensor(cases[k].second));
    ref::expect_exact(x, ref_set(a, cases[k].first.r, cases[k].second),
                      "case " + std::to_string(k));
  }
  const tcfix::Case& c = tcfix::fixture("index", "setitem_adv");
  Tensor t = c["t"].tensor();
  t.setitem({c["r"].tensor(), c["c"].tensor()}, c["v"].tensor());
  tcfix::expect_matches(t, c["out"], 0, 0);
}

TEST(IndexTest, SetitemGradients) {
  // d/d(base) is 1 outside the indexed region, d/d(value) sums over broadcast copies
  Tensor idx = Tensor::from_vector<int32_t>({2, 0});
  tcgrad::check_grad(
      [&](const std::vector<Tensor>& in) {
        Tensor b = in[0].mul(tc::ConstValue(1.0));  // a copy: setitem replaces this handle only
        b.setitem({Slice({}, {}, 2), idx}, in[1]);
        return b;
      },
      {{{3, 4}, tcgrad::mixed(12)}, {{1}, {0.7}}});
}

TEST(IndexTest, EmptyIndicesAndEmptyTensors) {
  Tensor x = ref::tensor(arange_nd({3, 4}));
  Tensor none = Tensor::zeros({0}, dt::int32);
  EXPECT_EQ(x[none].shape(), S({0, 4}));
  EXPECT_EQ((x[{Slice(), none}].shape()), S({3, 0}));
  Tensor y = x[Slice(2, 2)];  // (0, 4)
  EXPECT_EQ(y.shape(), S({0, 4}));
  EXPECT_EQ((y[{Slice(), Tensor::from_vector<int32_t>({1, 3})}].shape()), S({0, 2}));
  Tensor c = x.mul(tc::ConstValue(1.0));
  c.setitem(none, 5.0);  // nothing is written
  ref::expect_exact(c, arange_nd({3, 4}));
  EXPECT_EQ(x.gather(1, Tensor::zeros({3, 0}, dt::int32)).shape(), S({3, 0}));
}

TEST(IndexTest, ScatterGradients) {
  Tensor idx = Tensor::from_vector<int32_t>({2, 0, 1, 1, 2, 0}, S{2, 3});
  tcgrad::check_grad(tcgrad::binary([&](const Tensor& base, const Tensor& src) {
                       return base.scatter(0, idx, src);
                     }),
                     {{{3, 3}, tcgrad::mixed(9)}, {{2, 3}, tcgrad::ramp(6)}});
}

// ------------------------------------------------------------------ errors

TEST(IndexTest, BadIndicesThrow) {
  Tensor x = Tensor::zeros({3, 4});
  auto throws = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error, expected: " << what;
    } catch (const tc::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  throws([&] { x[{0, 1, 2}]; }, "Tensor.getitem: too many indices");
  throws([&] { x[3]; }, "index 3 is out of bounds for dimension 0 with size 3");
  throws([&] { x[{Slice(), -5}]; }, "index -5 is out of bounds for dimension 1 with size 4");
  throws([&] { x[{Ellipsis, 0, Ellipsis}]; }, "single ellipsis");
  throws([&] { x[Slice({}, {}, 0)]; }, "slice step cannot be 0");
  throws([&] { x[Tensor::from_vector<float>({1.0f})]; }, "index tensor dtype float");
  throws([&] { x[Tensor::from_vector<bool>({true, false, true})]; }, "index tensor dtype bool");
  throws(
      [&] {
        x[{Tensor::from_vector<int32_t>({0, 1}), Tensor::from_vector<int32_t>({0, 1, 2})}];
      },
      "Tensor.getitem: cannot broadcast shapes (2,) and (3,)");
  throws([&] { x.setitem({0}, Tensor::zeros({3})); },
         "Tensor.setitem: value of shape (3,) cannot be broadcast to the indexed shape (4,)");
  throws(
      [&] {
        x.setitem({Tensor::from_vector<int32_t>({0, 1})}, Tensor::zeros({3, 4}));
      },
      "Tensor.setitem: value of shape (3, 4) cannot be broadcast to the indexed shape (2, 4)");
  throws([&] { x.setitem({0}, Tensor::zeros({4}, dt::int32)); },
         "Tensor.setitem: value dtype int differs from the tensor's dtype float");
  throws([&] { x.setitem({0, 0, 0}, 1.0); }, "Tensor.setitem: too many indices");
}

// ------------------------------------------------------------------ gather / scatter

// out[..i..] = x[..index[..i..] at dim..] (0 where out of range), naive.
NDArray ref_gather(const NDArray& x, int dim, const NDArray& idx) {
  return ref::generate(idx.shape, [&](int64_t e) {
    std::vector<int64_t> i = ref::unravel(e, idx.shape);
    int64_t v = static_cast<int64_t>(idx.v[e]);
    if (v < 0 || v >= x.shape[dim]) return 0.0;
    i[dim] = v;
    return x.at(i);
  });
}

TEST(IndexTest, GatherMatchesNaiveAndTorch) {
  NDArray a = ref::random({3, 4, 2}, 21);
  Tensor x = ref::tensor(a);
  NDArray i1 = iarr({2, 3, 2}, {0, 3, 3, 1, 2, 2, 1, 0, 0, 0, 3, 1});
  ref::expect_exact(x.gather(1, ref::tensor(i1, dt::int32)), ref_gather(a, 1, i1), "dim 1");
  NDArray i0 = iarr({3, 1, 2}, {2, 0, 1, 1, 0, 2});
  ref::expect_exact(x.gather(-3, ref::tensor(i0, dt::int64)), ref_gather(a, 0, i0), "dim -3");
  // non-contiguous input, int8 index
  Tensor xt = x.permute({2, 0, 1}).flip({2});  // (2, 3, 4)
  NDArray at = ref::flip(ref::permute(a, {2, 0, 1}), {2});
  NDArray il = iarr({2, 2, 3}, {3, 0, 1, 2, 2, 2, 0, 1, 3, 3, 3, 0});
  ref::expect_exact(xt.gather(-1, ref::tensor(il, dt::int8)), ref_gather(at, 2, il), "dim -1");
  // tinygrad: out-of-range and negative index values read 0 (torch raises)
  NDArray bad = iarr({1, 2, 1}, {4, -1});
  ref::expect_exact(x.gather(1, ref::tensor(bad, dt::int32)), iarr({1, 2, 1}, {0, 0}));
  for (const char* name : {"gather_dim1", "gather_dim0"}) {
    const tcfix::Case& c = tcfix::fixture("index", name);
    tcfix::expect_matches(c["x"].tensor().gather(name[10] - '0', c["idx"].tensor()), c["out"], 0,
                          0);
  }
}

TEST(IndexTest, GatherGradients) {
  const tcfix::Case& c = tcfix::fixture("index", "gather_dim1");
  Tensor x = c["x"].tensor().requires_grad_();
  x.gather(1, c["idx"].tensor()).backward(c["gout"].tensor());
  tcfix::expect_matches(*x.grad(), c["grad_x"], 1e-12, 1e-12);
  Tensor idx = Tensor::from_vector<int32_t>({2, 0, 2, 1, 1, 1}, S{3, 2});
  tcgrad::check_grad(tcgrad::unary([&](const Tensor& t) { return t.gather(0, idx); }),
                     {{{3, 3}, tcgrad::mixed(9)}});
}

TEST(IndexTest, ScatterMatchesNaiveAndTorch) {
  for (const char* name : {"scatter_dim0", "scatter_dim1"}) {
    const tcfix::Case& c = tcfix::fixture("index", name);
    Tensor out = c["base"].tensor().scatter(name[11] - '0', c["idx"].tensor(), c["src"].tensor());
    tcfix::expect_matches(out, c["out"], 0, 0);
  }
  const tcfix::Case& add = tcfix::fixture("index", "scatter_add_scalar");
  tcfix::expect_matches(add["base"].tensor().scatter(0, add["idx"].tensor(), 1.5, "add"),
                        add["out"], 1e-12, 0);
  const tcfix::Case& mul = tcfix::fixture("index", "scatter_mul_scalar");
  tcfix::expect_matches(mul["base"].tensor().scatter(0, mul["idx"].tensor(), 1.5, "multiply"),
                        mul["out"], 1e-12, 0);
  // repeated indices: the last write (in row-major order of the index) wins; out of range and
  // negative values write nothing (tinygrad; torch raises); a scalar src is cast (int tensor)
  Tensor base = Tensor::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, S{2, 3});
  Tensor idx = Tensor::from_vector<int32_t>({2, 2, 0, 7, 0, -1}, S{2, 3});
  Tensor src = Tensor::from_vector<int32_t>({10, 20, 30, 40, 50, 60}, S{2, 3});
  EXPECT_EQ(base.scatter(1, idx, src).data<int32_t>(), (std::vector<int32_t>{30, 2, 20, 50, 5, 6}));
  EXPECT_EQ(base.scatter(1, idx, 7.9).data<int32_t>(), (std::vector<int32_t>{7, 2, 7, 7, 5, 6}));
  // a non-contiguous self and src, index smaller than both
  NDArray b = ref::random({4, 3}, 31), sv = ref::random({3, 4}, 32);
  Tensor bt = ref::tensor(ref::transpose(b, 0, 1)).t();  // (4, 3), permuted view
  Tensor st = ref::tensor(sv).flip({0});
  NDArray sf = ref::flip(sv, {0});
  Tensor out = bt.scatter(0, Tensor::from_vector<int64_t>({3, 0, 1, 1}, S{2, 2}), st);
  NDArray want = b;
  int64_t ix[2][2] = {{3, 0}, {1, 1}};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) want.v[ix[i][j] * 3 + j] = sf.at({i, j});
  ref::expect_exact(out, want);
}

TEST(IndexTest, ScatterReduceMatchesTorch) {
  for (const char* red : {"sum", "prod", "mean", "amax", "amin"}) {
    for (int inc : {1, 0}) {
      std::string name = std::string("scatter_reduce_") + red + "_" + std::to_string(inc);
      const tcfix::Case& c = tcfix::fixture("index", name);
      // float32: sums/products of 3 values, 1e-6 relative
      Tensor out32 =
          c["base"]
              .tensor(dt::float32)
              .scatter_reduce(0, c["idx"].tensor(), c["src"].tensor(dt::float32), red, inc != 0);
      EXPECT_EQ(out32.dtype(), dt::float32);
      tcfix::expect_matches(out32, c["out"], 1e-6, 1e-6);
      // float64 with gradients (torch's: amax/amin have no ties here)
      Tensor b = c["base"].tensor().requires_grad_(), s = c["src"].tensor().requires_grad_();
      Tensor out = b.scatter_reduce(0, c["idx"].tensor(), s, red, inc != 0);
      tcfix::expect_matches(out, c["out"], 1e-12, 1e-12);
      out.backward(c["gout"].tensor());
      tcfix::expect_matches(*b.grad(), c["grad_base"], 1e-12, 1e-12);
      tcfix::expect_matches(*s.grad(), c["grad_src"], 1e-12, 1e-12);
    }
  }
}

TEST(IndexTest, ScatterReduceIntegers) {
  Tensor base = Tensor::from_vector<int32_t>({5, -5, 1, 8}, S{1, 4});
  Tensor idx = Tensor::from_vector<int32_t>({0, 0, 0, 0, 0, 0, 0, 0}, S{2, 4});
  Tensor src = Tensor::from_vector<int32_t>({1, 2, 3, 4, -7, 6, 2, 9}, S{2, 4});
  EXPECT_EQ(base.scatter_reduce(0, idx, src, "sum").data<int32_t>(),
            (std::vector<int32_t>{-1, 3, 6, 21}));
  EXPECT_EQ(base.scatter_reduce(0, idx, src, "prod", false).data<int32_t>(),
            (std::vector<int32_t>{-7, 12, 6, 36}));
  EXPECT_EQ(base.scatter_reduce(0, idx, src, "amax").data<int32_t>(),
            (std::vector<int32_t>{5, 6, 3, 9}));
  EXPECT_EQ(base.scatter_reduce(0, idx, src, "amin", false).data<int32_t>(),
            (std::vector<int32_t>{-7, 2, 2, 4}));
  // tinygrad: 'mean' divides, so an int tensor gives float32 (torch keeps int and floors)
  Tensor mean = base.scatter_reduce(0, idx, src, "mean");
  EXPECT_EQ(mean.dtype(), dt::float32);
  ref::expect_close(mean, iarr({1, 4}, {-1 / 3.0, 1, 2, 7}), 1e-6);
  // 'amax' of an untouched position with include_self=false keeps self (also at -inf)
  Tensor f = Tensor::from_vector<float>({-INFINITY, 2}, S{2});
  Tensor one = Tensor::from_vector<int32_t>({1}, S{1});
  EXPECT_EQ(
      f.scatter_reduce(0, one, Tensor::from_vector<float>({1}, S{1}), "amax", false).data<float>(),
      (std::vector<float>{-INFINITY, 1}));
}

TEST(IndexTest, BadGatherAndScatterThrow) {
  Tensor x = Tensor::zeros({3, 4});
  Tensor i2 = Tensor::zeros({2, 2}, dt::int32);
  auto throws = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error, expected: " << what;
    } catch (const tc::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  throws([&] { x.gather(0, Tensor::zeros({2}, dt::int32)); },
         "Tensor.gather: index of shape (2,) must have as many dimensions as the tensor (3, 4)");
  throws([&] { x.gather(2, i2); }, "Tensor.gather: dim 2 is out of range");
  throws(
      [&] {
        x.gather(0, Tensor::zeros({2, 5}, dt::int32));
      },
      "Tensor.gather: index shape (2, 5) exceeds the tensor shape (3, 4) in dimension 1");
  throws([&] { x.gather(0, Tensor::zeros({2, 2})); }, "Tensor.gather: index dtype float");
  throws(
      [&] {
        x.scatter(0, i2, Tensor::zeros({1, 2}));
      },
      "Tensor.scatter: index shape (2, 2) must be <= src shape (1, 2)");
  throws(
      [&] {
        x.scatter(1, Tensor::zeros({4, 1}, dt::int32), Tensor::zeros({4, 1}));
      },
      "<= self shape (3, 4) in every dimension but 1");
  throws(
      [&] {
        x.scatter(0, i2, Tensor::zeros({2, 2}, dt::int32));
      },
      "Tensor.scatter: src dtype int must equal self dtype float");
  throws(
      [&] {
        x.scatter(0, i2, Tensor::zeros({2, 2}), "add");
      },
      "reduce='add' needs a scalar src; for a Tensor src use scatter_reduce");
  throws([&] { x.scatter(0, i2, 1.0, "max"); }, "reduce='max' must be one of");
  throws(
      [&] {
        x.scatter_reduce(0, i2, Tensor::zeros({2, 2}), "max");
      },
      "Tensor.scatter_reduce: reduce='max' must be one of 'sum', 'prod', 'mean', 'amax'");
  throws([&] { x.scatter_reduce(0, Tensor::zeros({2}, dt::int32), Tensor::zeros({2}), "sum"); },
         "must have the same number of dimensions");
}

// ------------------------------------------------------------------ masks and nonzero

TEST(IndexTest, MaskedSelectAndNonzero) {
  const tcfix::Case& c = tcfix::fixture("index", "masked_select");
  Tensor x = c["x"].tensor(), m = c["mask"].tensor();
  tcfix::expect_matches(x.masked_select(m), c["out"], 0, 0);
  const tcfix::Case& cb = tcfix::fixture("index", "masked_select_bcast");
  tcfix::expect_matches(cb["x"].tensor().masked_select(cb["mask"].tensor()), cb["out"], 0, 0);
  // with a size (the recent seed): padded with fill_value, or truncated; nothing realized
  std::vector<double> sel = c["out"].values;  // 5 values
  Tensor padded = x.masked_select(m, 7, -1.5);
  std::vector<double> want = sel;
  want.insert(want.end(), {-1.5, -1.5});
  ref::expect_exact(padded, NDArray({7}, want));
  ref::expect_exact(x.masked_select(m, 2), NDArray({2}, {sel[0], sel[1]}));
  // a non-contiguous input, nothing selected, an int tensor
  Tensor xt = x.t();
  Tensor mt = m.t();
  ref::expect_exact(xt.masked_select(mt), NDArray({5}, {sel[0], sel[3], sel[1], sel[2], sel[4]}));
  EXPECT_EQ(x.masked_select(Tensor::full({3, 4}, false)).shape(), S({0}));
  Tensor xi = Tensor::from_vector<int32_t>({4, 5, 6});
  EXPECT_EQ(xi.masked_select(Tensor::from_vector<bool>({true, false, true})).data<int32_t>(),
            (std::vector<int32_t>{4, 6}));

  const tcfix::Case& n = tcfix::fixture("index", "nonzero");
  Tensor nz = n["x"].tensor(dt::int32).nonzero();
  EXPECT_EQ(nz.dtype(), dt::int32);  // tinygrad's arange dtype (torch: int64)
  tcfix::expect_matches(nz, n["out"], 0, 0);
  Tensor f = Tensor::from_vector<float>({0, -2, 0, 0.5, NAN, 0}, S{2, 1, 3}).flip({2});
  ref::expect_exact(f.nonzero(), iarr({3, 3}, {0, 0, 1, 1, 0, 1, 1, 0, 2}));
  ref::expect_exact(f.nonzero(4, -1), iarr({4, 3}, {0, 0, 1, 1, 0, 1, 1, 0, 2, -1, -1, -1}));
  EXPECT_EQ(Tensor::zeros({2, 2}).nonzero().shape(), S({0, 2}));
  EXPECT_EQ(Tensor::full({}, 3.0f).nonzero().shape(), S({1, 0}));
  EXPECT_EQ(Tensor::full({}, 0.0f).nonzero().shape(), S({0, 0}));
}

TEST(IndexTest, MaskedFill) {
  const tcfix::Case& c = tcfix::fixture("index", "masked_fill");
  Tensor x = c["x"].tensor(), m = c["mask"].tensor();
  tcfix::expect_matches(x.masked_fill(m, -7.5), c["out"], 0, 0);
  // a broadcast tensor value, a non-contiguous input
  Tensor v = Tensor::from_vector<float>({1, 2, 3, 4}, S{4});
  NDArray xa = c["x"].array();
  NDArray want = ref::generate({3, 4}, [&](int64_t i) {
    return c["mask"].values[i] ? static_cast<double>(i % 4 + 1) : xa.v[i];
  });
  ref::expect_exact(x.masked_fill(m, v), want);
  ref::expect_exact(x.t().masked_fill(m.t(), v.reshape({4, 1})), ref::transpose(want, 0, 1));
  // tinygrad: an int tensor filled with a float becomes float (torch keeps int)
  Tensor xi = Tensor::from_vector<int32_t>({1, 2});
  Tensor r = xi.masked_fill(Tensor::from_vector<bool>({false, true}), 0.5);
  EXPECT_EQ(r.dtype(), dt::float32);
  EXPECT_EQ(r.data<float>(), (std::vector<float>{1, 0.5f}));
  tcgrad::check_grad(
      tcgrad::binary([&](const Tensor& a, const Tensor& b) { return a.masked_fill(m, b); }),
      {{{3, 4}, tcgrad::mixed(12)}, {{4}, tcgrad::ramp(4)}});
}

TEST(IndexTest, BadMasksThrow) {
  Tensor x = Tensor::zeros({3, 4});
  auto throws = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error, expected: " << what;
    } catch (const tc::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  throws(
      [&] {
        x.masked_select(Tensor::zeros({3, 4}, dt::int32));
      },
      "Tensor.masked_select: expects a bool mask, got int");
  throws(
      [&] {
        x.masked_select(Tensor::full({2, 4}, true));
      },
      "Tensor.masked_select: mask of shape (2, 4) does not broadcast to the tensor's shape (3, 4)");
  throws([&] { x.masked_select(Tensor::full({4}, true), -1); }, "size must be non-negative");
  throws([&] { x.masked_fill(Tensor::full({2}, true), 1.0); },
         "Tensor.masked_fill: cannot broadcast shapes (3, 4) and (2,)");
  throws([&] { x.nonzero(-2); }, "Tensor.nonzero: size must be non-negative, got -2");
}

// ------------------------------------------------------------------ shape helpers

TEST(IndexTest, RepeatInterleaveAndOneHot) {
  const tcfix::Case& c = tcfix::fixture("index", "repeat_interleave");
  Tensor x = c["x"].tensor();
  Tensor r = x.repeat_interleave(3, -1);
  EXPECT_TRUE(is_view(r));
  tcfix::expect_matches(r, c["out"], 0, 0);
  tcfix::expect_matches(x.repeat_interleave(2), c["out_flat"], 0, 0);
  std::vector<double> xa = x.data<double>();
  ref::expect_exact(x.t().repeat_interleave(2, 0),
                    ref::generate({8, 3}, [&](int64_t i) { return xa[(i % 3) * 4 + i / 6]; }));
  EXPECT_EQ(x.repeat_interleave(0, 1).shape(), S({3, 0}));

  const tcfix::Case& o = tcfix::fixture("index", "one_hot");
  Tensor t = o["x"].tensor(dt::int32);
  Tensor h = t.one_hot();           // num_classes inferred: max + 1 = 4
  EXPECT_EQ(h.dtype(), dt::int32);  // tinygrad's where(1, 0) (torch: int64)
  tcfix::expect_matches(h, o["out"], 0, 0);
  tcfix::expect_matches(t.flip({0}).flip({0}).one_hot(6), o["out6"], 0, 0);
  // out-of-range and negative classes give all-zero rows (torch raises)
  ref::expect_exact(Tensor::from_vector<int64_t>({-1, 2, 5}).one_hot(3),
                    iarr({3, 3}, {0, 0, 0, 0, 0, 1, 0, 0, 0}));
}

TEST(IndexTest, Rearrange) {
  NDArray a = arange_nd({2, 3, 4});
  Tensor x = ref::tensor(a);
  // "b c (h w) -> b (c h) w" with h = 2: reshape (2, 3, 2, 2), no permute, merge (3, 2)
  Tensor r = x.rearrange("b c (h w) -> b (c h) w", {{"h", 2}});
  EXPECT_TRUE(is_view(r));
  ref::expect_exact(r, ref::reshape(a, {2, 6, 2}));
  ref::expect_exact(x.rearrange("b c w -> w b c"), ref::permute(a, {2, 0, 1}));
  ref::expect_exact(
      x.rearrange("b c (h w) -> (w b) h c", {{"w", 2}}),
      ref::reshape(ref::permute(ref::reshape(a, {2, 3, 2, 2}), {3, 0, 2, 1}), {4, 2, 3}));
  ref::expect_exact(x.rearrange("... w -> w ..."), ref::permute(a, {2, 0, 1}));
  ref::expect_exact(x.rearrange("b ... -> (b ...)"), ref::reshape(a, {24}));
  ref::expect_exact(x.rearrange("b c w -> b 1 c () w"), ref::reshape(a, {2, 1, 3, 1, 4}));
  ref::expect_exact(x.rearrange("a b c ... -> c 1 a b ..."),
                    ref::reshape(ref::permute(a, {2, 0, 1}), {4, 1, 2, 3}));
  Tensor one = ref::tensor(ref::reshape(a, {2, 1, 12}));
  ref::expect_exact(one.rearrange("x () y -> y x"), ref::transpose(ref::reshape(a, {2, 12}), 0, 1));
  auto throws = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error, expected: " << what;
    } catch (const tc::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  throws([&] { x.rearrange("b c w"); }, "Tensor.rearrange: need exactly one \"->\"");
  throws([&] { x.rearrange("b c w -> b c"); }, "Tensor.rearrange: name mismatch");
  throws([&] { x.rearrange("b b w -> b b w"); }, "name mismatch");
  throws([&] { x.rearrange("b c w -> b c w", {{"h", 2}}); }, "axis h is not used");
  throws([&] { x.rearrange("b c (w -> b c w"); }, "bracket mismatch");
  throws([&] { x.rearrange("b c _w -> b c _w"); }, "invalid axis name _w");
  throws([&] { x.rearrange("b (c ...) -> b c ..."); }, "cannot have collapsed ellipsis");
  throws([&] { x.rearrange("b c -> c b"); },
         "\"b c -> c b\" has 2 dimensions on the left, the tensor has shape (2, 3, 4)");
  throws([&] { x.rearrange("b c (h w) -> b c h w", {{"h", 3}}); }, "does not fit shape (2, 3, 4)");
  throws([&] { x.rearrange("b c (h w) -> b c h w"); }, "does not fit shape (2, 3, 4)");
  throws(
      [&] {
        x.rearrange("b c w -> b c w", {{"c", 4}});
      },
      "size 4 provided for dimension c is incorrect (it is 3)");
  throws([&] { Tensor::zeros({2}).one_hot(); },
         "Tensor.one_hot: expects an integer dtype, got float");
  throws([&] { x.repeat_interleave(-1); }, "repeats must be non-negative, got -1");
  throws([&] { x.repeat_interleave(2, 3); }, "Tensor.repeat_interleave: dim 3 is out of range");
}

}  // namespace

// A view (movements, detach) of a tensor that holds a buffer aliases it, as in tinygrad and torch:
// writes through the view land in the base, and the view sees the base's writes.
TEST(IndexTest, WritesThroughViewsLandInTheBase) {
  auto zeros = [](S shape) { return Tensor::zeros(shape).contiguous().realize(); };
  Tensor flip = zeros({3});
  flip.flip({0}).setitem(0, 5.0);  // t[::-1][0] = 5
  EXPECT_EQ(flip.data<float>(), (std::vector<float>{0, 0, 5}));
  Tensor chained = zeros({3, 3});
  chained[1].setitem(2, 5.0);  // N[1][2] = 5
  EXPECT_EQ(chained.data<float>(), (std::vector<float>{0, 0, 0, 0, 0, 5, 0, 0, 0}));
  Tensor perm = zeros({2, 3});
  perm.transpose().setitem({tc::IndexItem(1), tc::IndexItem(0)}, 5.0);  // t.T[1, 0] = 5
  EXPECT_EQ(perm.data<float>(), (std::vector<float>{0, 5, 0, 0, 0, 0}));
  Tensor det = zeros({3, 3});
  det.detach().setitem({tc::IndexItem(1), tc::IndexItem(2)}, 5.0);
  EXPECT_EQ(det[1][2].item<float>(), 5.0f);
  // row swap through a view taken before: the view sees t[0]'s new value (tinygrad's result)
  Tensor t = Tensor::arange(6).cast(tc::dtypes::float32).reshape({3, 2}).contiguous().realize();
  Tensor tmp = t[0];
  t.setitem(0, t[1]);
  t.setitem(2, tmp);
  EXPECT_EQ(t.data<float>(), (std::vector<float>{2, 3, 2, 3, 2, 3}));
  // an expanded view repeats elements: a write through it is an error naming that
  Tensor e = zeros({1, 3});
  EXPECT_THAT(error_message([&] {
                e.expand({2, 3}).assign(Tensor::ones({2, 3}));
              }),
              HasSubstr("cannot write through a view of shape (2, 3) that expands"));
}

// A clone has a buffer of its own, also of a tensor written in place (whose contiguous() is its
// own buffer): writes to either leave the other alone.
TEST(IndexTest, CloneOwnsItsBuffer) {
  Tensor x = Tensor::zeros({4}).contiguous().realize();
  x.assign(Tensor::full({4}, 3.0f)).realize();
  x.assign(x.add(Tensor::arange(4).cast(tc::dtypes::float32))).realize();  // in place now
  Tensor c = x.clone().realize();
  x.assign(Tensor::full({4}, 2.0f)).realize();
  EXPECT_EQ(c.data<float>(), (std::vector<float>{3, 4, 5, 6}));
  c.setitem(1, 9.0);
  EXPECT_EQ(c.data<float>(), (std::vector<float>{3, 9, 5, 6}));
  EXPECT_EQ(x.data<float>(), (std::vector<float>{2, 2, 2, 2}));
  // the clone of an unrealized tensor is a write target of its own, not a reader of it (found
  // by tests/fuzz/tensor_fuzz.cc: setitem took the source, still alive, for a reader)
  Tensor y = x.add(1.0f);
  Tensor yc = y.clone();
  yc.setitem(0, -1.0);
  EXPECT_EQ(yc.data<float>(), (std::vector<float>{-1, 3, 3, 3}));
  EXPECT_EQ(y.data<float>(), (std::vector<float>{3, 3, 3, 3}));
}

// tinygrad's rule: setitem while another live tensor's unrealized graph reads the tensor raises,
// naming the reader, since eager and lazy evaluation would disagree on what it computes.
TEST(IndexTest, SetitemWithAnUnrealizedReaderIsAnError) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}).realize();
  {
    Tensor y = x * 2.0f;
    EXPECT_THAT(error_message([&] { x.setitem(0, 99.0); }),
                HasSubstr("still read by an unrealized tensor of shape (4,) (MUL)"));
  }
  x.setitem(0, 99.0);  // the reader is gone
  EXPECT_EQ(x.data<float>(), (std::vector<float>{99, 2, 3, 4}));
  Tensor y = x * 2.0f, view = y[tc::Slice(0, 1)];  // a view of an unrealized result reads it
  EXPECT_THAT(error_message([&] { y.setitem(0, 5.0); }), HasSubstr("still read by"));
}
