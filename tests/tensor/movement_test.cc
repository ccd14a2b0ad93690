// The movement, indexing and creation helpers of tensor/movement.cc, join.cc and creation.cc
// (squeeze, cat, stack, repeat, split, chunk, roll, pad modes, pad_to, meshgrid, triu/tril,
// diag/diagonal, unfold, linspace, *_like) against a naive double reference: index arithmetic on
// the host (tests/tensor/reference.h plus a few helpers here), over contiguous and non-contiguous
// inputs, negative dims and bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/tensor/gradcheck.h"
#include "tests/tensor/reference.h"
#include "tinycore/dtype.h"
#include "tinycore/tensor.h"

namespace {

namespace ref = tcref;
namespace dt = tc::dtypes;
using ref::NDArray;
using tc::Tensor;
using S = std::vector<int64_t>;

constexpr double kF32 = 1e-6;

int norm(int d, size_t n) { return d < 0 ? d + static_cast<int>(n) : d; }

// An array of `s` whose element at multi-index idx is f(idx).
NDArray gen_idx(const S& s, const std::function<double(const std::vector<int64_t>&)>& f) {
  return ref::generate(s, [&](int64_t i) { return f(ref::unravel(i, s)); });
}

NDArray ref_cat(const std::vector<NDArray>& as, int dim) {
  int d = norm(dim, as[0].shape.size());
  S s = as[0].shape;
  s[d] = 0;
  std::vector<int64_t> off;
  for (const NDArray& a : as) {
    off.push_back(s[d]);
    s[d] += a.shape[d];
  }
  return gen_idx(s, [&](std::vector<int64_t> idx) {
    size_t k = 0;
    while (k + 1 < as.size() && idx[d] >= off[k + 1]) k++;
    idx[d] -= off[k];
    return as[k].at(idx);
  });
}

NDArray ref_roll(const NDArray& a, int64_t shift, int dim) {
  int d = norm(dim, a.shape.size());
  int64_t n = a.shape[d];
  return gen_idx(a.shape, [&](std::vector<int64_t> idx) {
    idx[d] = (((idx[d] - shift) % n) + n) % n;
    return a.at(idx);
  });
}

NDArray ref_repeat(const NDArray& a, const S& reps) {
  S base(reps.size() - a.shape.size(), 1);
  base.insert(base.end(), a.shape.begin(), a.shape.end());
  NDArray b = ref::reshape(a, base);
  S s;
  for (size_t i = 0; i < reps.size(); i++) s.push_back(base[i] * reps[i]);
  return gen_idx(s, [&](std::vector<int64_t> idx) {
    for (size_t i = 0; i < idx.size(); i++) idx[i] %= base[i];
    return b.at(idx);
  });
}

// numpy-style pad modes by index mapping; negative entries then crop.
NDArray ref_pad_mode(const NDArray& a, const ref::Pairs& p, const std::string& mode) {
  S s;
  for (size_t k = 0; k < a.shape.size(); k++)
    s.push_back(a.shape[k] + std::max<int64_t>(p[k].first, 0) + std::max<int64_t>(p[k].second, 0));
  NDArray full = gen_idx(s, [&](std::vector<int64_t> idx) {
    for (size_t k = 0; k < idx.size(); k++) {
      int64_t n = a.shape[k], i = idx[k] - std::max<int64_t>(p[k].first, 0);
      if (mode == "reflect") {
        if (i < 0) i = -i;
        if (i >= n) i = 2 * (n - 1) - i;
      } else if (mode == "replicate") {
        i = std::clamp<int64_t>(i, 0, n - 1);
      } else {  // circular
        i = ((i % n) + n) % n;
      }
      idx[k] = i;
    }
    return a.at(idx);
  });
  ref::Pairs crop;
  for (size_t k = 0; k < s.size(); k++)
    crop.push_back({-std::min<int64_t>(p[k].first, 0), s[k] + std::min<int64_t>(p[k].second, 0)});
  return ref::shrink(full, crop);
}

// triu (upper = true) or tril of the last two dims.
NDArray ref_tri(const NDArray& a, int64_t diagonal, bool upper) {
  size_t n = a.shape.size();
  return gen_idx(a.shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = idx[n - 1] - idx[n - 2];
    bool keep = upper ? off >= diagonal : off <= diagonal;
    return keep ? a.at(idx) : 0.0;
  });
}

// Runs `f` and checks it throws tc::Error whose message contains every piece of `parts`.
void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no tc::Error thrown, expected one mentioning " << parts[0];
  } catch (const tc::Error& e) {
    std::string msg = e.what();
    for (const std::string& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos)
          << "message \"" << msg << "\" lacks \"" << p << "\"";
  }
}

// A (2, 3, 4) input in three layouts: contiguous, permuted and flipped + padded/shrunk views.
struct Input {
  std::string name;
  Tensor t;
  NDArray r;
};
std::vector<Input> inputs() {
  NDArray a = ref::random({2, 3, 4}, 11);
  NDArray p = ref::random({4, 2, 3}, 12);
  NDArray f = ref::random({3, 3, 4}, 13);
  std::vector<Input> out;
  out.push_back({"contiguous", ref::tensor(a), a});
  out.push_back({"permuted", ref::tensor(p).permute({1, 2, 0}), ref::permute(p, {1, 2, 0})});
  NDArray fr = ref::shrink(ref::pad(ref::flip(f, {2}), {{0, 0}, {1, 0}, {0, 0}}, 0.0),
                           {{1, 3}, {0, 3}, {0, 4}});
  out.push_back(
      {"flipped+padded",
       ref::tensor(f).flip({2}).pad({{0, 0}, {1, 0}, {0, 0}}).shrink({{1, 3}, {0, 3}, {0, 4}}),
       fr});
  return out;
}

// ================================================================== squeeze / unsqueeze / t / view

TEST(Movement, Squeeze) {
  NDArray a = ref::random({2, 1, 3, 1}, 1);
  Tensor t = ref::tensor(a);
  EXPECT_EQ(t.squeeze().shape(), (S{2, 3}));
  ref::expect_exact(t.squeeze(), ref::reshape(a, {2, 3}), "squeeze()");
  EXPECT_EQ(t.squeeze(1).shape(), (S{2, 3, 1}));
  EXPECT_EQ(t.squeeze(-1).shape(), (S{2, 1, 3}));
  EXPECT_EQ(t.squeeze(0).shape(), (S{2, 1, 3, 1}));  // not size 1: unchanged
  EXPECT_EQ(t.squeeze(-4).shape(), (S{2, 1, 3, 1}));
  ref::expect_exact(t.squeeze(-1), ref::reshape(a, {2, 1, 3}), "squeeze(-1)");
  EXPECT_EQ(Tensor::ones({1, 1}).squeeze().shape(), (S{}));
  Tensor s = Tensor::full({}, 3);
  EXPECT_EQ(s.squeeze(0).shape(), (S{}));
  EXPECT_EQ(s.squeeze(-1).shape(), (S{}));
  // a non-contiguous input
  Tensor p = ref::tensor(a).permute({1, 0, 3, 2});
  ref::expect_exact(p.squeeze(), ref::reshape(ref::permute(a, {1, 0, 3, 2}), {2, 3}),
                    "squeeze permuted");
  expect_error([&] { t.squeeze(4); }, {"Tensor.squeeze", "dim 4", "(2, 1, 3, 1)"});
  expect_error([&] { t.squeeze(-5); }, {"Tensor.squeeze", "-5"});
  expect_error([&] { s.squeeze(1); }, {"Tensor.squeeze"});
}

TEST(Movement, Unsqueeze) {
  NDArray a = ref::random({2, 3}, 2);
  Tensor t = ref::tensor(a);
  EXPECT_EQ(t.unsqueeze(0).shape(), (S{1, 2, 3}));
  EXPECT_EQ(t.unsqueeze(2).shape(), (S{2, 3, 1}));
  EXPECT_EQ(t.unsqueeze(-1).shape(), (S{2, 3, 1}));
  EXPECT_EQ(t.unsqueeze(-2).shape(), (S{2, 1, 3}));
  EXPECT_EQ(t.unsqueeze(-3).shape(), (S{1, 2, 3}));
  ref::expect_exact(t.unsqueeze(1), ref::reshape(a, {2, 1, 3}), "unsqueeze(1)");
  ref::expect_exact(t.t().unsqueeze(-1), ref::reshape(ref::transpose(a, 0, 1), {3, 2, 1}),
                    "unsqueeze of transposed");
  EXPECT_EQ(Tensor::full({}, 1.0).unsqueeze(0).shape(), (S{1}));
  EXPECT_EQ(Tensor::full({}, 1.0).unsqueeze(-1).shape(), (S{1}));
  expect_error([&] { t.unsqueeze(3); }, {"Tensor.unsqueeze", "dim 3", "[-3, 2]", "(2, 3)"});
  expect_error([&] { t.unsqueeze(-4); }, {"Tensor.unsqueeze", "-4"});
}

TEST(Movement, TransposeT) {
  NDArray a = ref::random({3, 4}, 3);
  ref::expect_exact(ref::tensor(a).t(), ref::transpose(a, 0, 1), "t 2-d");
  ref::expect_exact(ref::tensor(a).T(), ref::transpose(a, 0, 1), "T 2-d");
  ref::expect_exact(ref::tensor(a).flip({0}).t(), ref::transpose(ref::flip(a, {0}), 0, 1),
                    "t of flipped");
  NDArray b = ref::random({2, 3, 4}, 4);
  ref::expect_exact(ref::tensor(b).t(), ref::transpose(b, 0, 1), "t 3-d swaps 0 and 1");
  NDArray v = ref::random({5}, 5);
  ref::expect_exact(ref::tensor(v).t(), v, "t 1-d");
  EXPECT_EQ(Tensor::full({}, 2.0).t().shape(), (S{}));
}

TEST(Movement, View) {
  NDArray a = ref::random({2, 6}, 6);
  ref::expect_exact(ref::tensor(a).view({3, -1}), ref::reshape(a, {3, 4}), "view");
  ref::expect_exact(ref::tensor(a).t().view({12}), ref::reshape(ref::transpose(a, 0, 1), {12}),
                    "view of transposed");
  expect_error([&] { ref::tensor(a).view({5, 2}); }, {"Tensor.view", "(2, 6)", "(5, 2)"});
}

TEST(Movement, Unflatten) {
  NDArray a = ref::random({3, 4, 1}, 7);
  Tensor t = ref::tensor(a);
  EXPECT_EQ(t.unflatten(1, {2, 2}).shape(), (S{3, 2, 2, 1}));
  EXPECT_EQ(t.unflatten(1, {-1, 2}).shape(), (S{3, 2, 2, 1}));
  EXPECT_EQ(t.unflatten(-3, {3, 1}).shape(), (S{3, 1, 4, 1}));
  ref::expect_exact(t.unflatten(-2, {2, 2}), ref::reshape(a, {3, 2, 2, 1}), "unflatten");
  EXPECT_EQ(Tensor::ones({5, 12, 3}).unflatten(-2, {2, 2, 3, 1, 1}).shape(),
            (S{5, 2, 2, 3, 1, 1, 3}));
  // unflatten undoes flatten, also on a permuted view
  Tensor p = t.permute({1, 0, 2});
  ref::expect_exact(p.flatten(0, 1).unflatten(0, {4, 3}), ref::permute(a, {1, 0, 2}),
                    "unflatten(flatten)");
  expect_error([&] { t.unflatten(1, {3, 2}); }, {"Tensor.unflatten", "(3, 2)", "(3, 4, 1)"});
  expect_error([&] { t.unflatten(1, {-1, 3}); }, {"Tensor.unflatten"});
  expect_error([&] { t.unflatten(3, {1}); }, {"Tensor.unflatten", "dim 3"});
}

// ================================================================== cat / stack / repeat

TEST(Movement, Cat) {
  for (const Input& in : inputs()) {
    NDArray b = ref::random({2, 3, 4}, 21), c = ref::random({2, 2, 4}, 22);
    Tensor tb = ref::tensor(b), tc_ = ref::tensor(c);
    for (int dim : {0, 1, 2, -1, -2, -3}) {
      std::string what = in.name + " cat dim " + std::to_string(dim);
      ref::expect_exact(Tensor::cat(std::vector<Tensor>{in.t, tb}, dim), ref_cat({in.r, b}, dim),
                        what);
      ref::expect_exact(in.t.cat({tb, in.t}, dim), ref_cat({in.r, b, in.r}, dim), what + " x3");
    }
    ref::expect_exact(in.t.cat({tc_}, 1), ref_cat({in.r, c}, 1), in.name + " cat sizes differ");
    ref::expect_exact(in.t.cat({tc_, tb}, -2), ref_cat({in.r, c, b}, -2), in.name + " cat 3");
  }
  // one tensor, empty pieces, dtype promotion
  NDArray a = ref::random({2, 3}, 23);
  ref::expect_exact(Tensor::cat(std::vector<Tensor>{ref::tensor(a)}, 1), a, "cat single");
  Tensor e = Tensor::zeros({2, 0});
  ref::expect_exact(ref::tensor(a).cat({e}, 1), a, "cat with an empty piece");
  NDArray ia = ref::random_int({2, 2}, 24, -9, 9), ib = ref::random_int({1, 2}, 25, -9, 9);
  Tensor ci = ref::tensor(ia, dt::int32).cat({ref::tensor(ib, dt::int32)});
  EXPECT_EQ(ci.dtype(), dt::int32);
  ref::expect_exact(ci, ref_cat({ia, ib}, 0), "cat int32");
  Tensor cm = ref::tensor(ia, dt::int32).cat({ref::tensor(ib, dt::float32)});
  EXPECT_EQ(cm.dtype(), dt::float32);
  ref::expect_exact(cm, ref_cat({ia, ib}, 0), "cat int32 + float32");
  NDArray ba = ref::random_int({3}, 26, 0, 1), bb = ref::random_int({2}, 27, 0, 1);
  Tensor cb = ref::tensor(ba, dt::bool_).cat({ref::tensor(bb, dt::bool_)});
  EXPECT_EQ(cb.dtype(), dt::bool_);
  ref::expect_exact(cb, ref_cat({ba, bb}, 0), "cat bool");

  Tensor t = Tensor::ones({2, 3});
  expect_error(
      [&] {
        t.cat({Tensor::ones({2, 4})}, 0);
      },
      {"Tensor.cat", "(2, 3), (2, 4)", "dimension 0"});
  expect_error([&] { t.cat({Tensor::ones({2, 3, 1})}); }, {"Tensor.cat", "(2, 3, 1)"});
  expect_error([&] { t.cat({t}, 2); }, {"Tensor.cat", "dim 2"});
  expect_error([&] { t.cat({t}, -3); }, {"Tensor.cat", "dim -3"});
  expect_error([&] { Tensor::cat(std::vector<Tensor>{}); }, {"Tensor.cat", "at least one"});
  expect_error([&] { Tensor::full({}, 1).cat({Tensor::full({}, 2)}); },
               {"Tensor.cat", "zero-dimensional"});
}

TEST(Movement, Stack) {
  for (const Input& in : inputs()) {
    NDArray b = ref::random({2, 3, 4}, 31);
    Tensor tb = ref::tensor(b);
    for (int dim : {0, 1, 2, 3, -1, -2, -4}) {
      std::string what = in.name + " stack dim " + std::to_string(dim);
      int d = norm(dim, 4);
      S us = in.r.shape;
      us.insert(us.begin() + d, 1);
      NDArray ra = ref::reshape(in.r, us), rb = ref::reshape(b, us);
      ref::expect_exact(in.t.stack({tb, in.t}, dim), ref_cat({ra, rb, ra}, d), what);
      ref::expect_exact(Tensor::stack(std::vector<Tensor>{tb}, dim), rb, what + " single");
    }
  }
  // 0-d tensors stack into a vector
  Tensor v = Tensor::stack(
      std::vector<Tensor>{Tensor::full({}, 1.0), Tensor::full({}, 2.0), Tensor::full({}, 3.0)});
  ref::expect_exact(v, NDArray({3}, {1, 2, 3}), "stack scalars");
  Tensor t = Tensor::ones({2, 3});
  expect_error([&] { t.stack({Tensor::ones({3, 2})}); }, {"Tensor.stack", "(2, 3), (3, 2)"});
  expect_error([&] { t.stack({t}, 3); }, {"Tensor.stack", "dim 3"});
  expect_error([&] { t.stack({t}, -4); }, {"Tensor.stack", "dim -4"});
  expect_error([&] { Tensor::stack(std::vector<Tensor>{}); }, {"Tensor.stack"});
}

TEST(Movement, Repeat) {
  for (const Input& in : inputs()) {
    for (const S& reps : std::vector<S>{{1, 1, 1}, {2, 1, 3}, {1, 2, 1}, {2, 1, 2, 1}, {0, 1, 1}}) {
      std::string what = in.name + " repeat " + ref::shape_str(reps);
      ref::expect_exact(in.t.repeat(reps), ref_repeat(in.r, reps), what);
    }
  }
  NDArray v({3}, {1, 2, 3});
  Tensor r = ref::tensor(v, dt::int32).repeat({4, 2});
  EXPECT_EQ(r.shape(), (S{4, 6}));
  ref::expect_exact(r, ref_repeat(v, {4, 2}), "repeat(4, 2)");
  EXPECT_EQ(ref::tensor(v).repeat({4, 2, 1}).shape(), (S{4, 2, 3}));
  ref::expect_exact(Tensor::full({}, 5).repeat({3}), NDArray({3}, {5, 5, 5}), "repeat scalar");
  expect_error([&] { Tensor::ones({2, 3}).repeat({2}); }, {"Tensor.repeat", "(2, 3)"});
  expect_error([&] { Tensor::ones({2}).repeat({-1}); }, {"Tensor.repeat", "non-negative"});
}

// ================================================================== split / chunk / roll

TEST(Movement, Split) {
  for (const Input& in : inputs()) {
    for (int dim : {1, -2}) {
      std::vector<Tensor> parts = in.t.split(2, dim);
      ASSERT_EQ(parts.size(), 2u) << in.name;
      ref::expect_exact(parts[0], ref::shrink(in.r, {{0, 2}, {0, 2}, {0, 4}}),
                        in.name + " split[0]");
      ref::expect_exact(parts[1], ref::shrink(in.r, {{0, 2}, {2, 3}, {0, 4}}),
                        in.name + " split[1]");
    }
    std::vector<Tensor> parts = in.t.split(S{1, 0, 3}, -1);
    ASSERT_EQ(parts.size(), 3u);
    ref::expect_exact(parts[0], ref::shrink(in.r, {{0, 2}, {0, 3}, {0, 1}}), in.name + " sizes[0]");
    EXPECT_EQ(parts[1].shape(), (S{2, 3, 0}));
    ref::expect_exact(parts[2], ref::shrink(in.r, {{0, 2}, {0, 3}, {1, 4}}), in.name + " sizes[2]");
  }
  NDArray a = ref::generate({5, 2}, [](int64_t i) { return static_cast<double>(i); });
  Tensor t = ref::tensor(a, dt::int32);
  std::vector<Tensor> p = t.split(2);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[2].shape(), (S{1, 2}));
  ref::expect_exact(p[2], NDArray({1, 2}, {8, 9}), "split last piece");
  p = t.split(10);
  ASSERT_EQ(p.size(), 1u);
  ref::expect_exact(p[0], a, "split larger than the dim");
  p = t.split(S{1, 4});
  ASSERT_EQ(p.size(), 2u);
  ref::expect_exact(p[1], ref::shrink(a, {{1, 5}, {0, 2}}), "split [1, 4]");
  p = Tensor::zeros({0, 2}).split(3);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].shape(), (S{0, 2}));
  expect_error([&] { t.split(S{1, 3}); }, {"Tensor.split", "sum to 4", "(5, 2)"});
  expect_error([&] { t.split(0); }, {"Tensor.split", "positive"});
  expect_error([&] { t.split(S{6, -1}); }, {"Tensor.split", "non-negative"});
  expect_error([&] { t.split(1, 2); }, {"Tensor.split", "dim 2"});
}

TEST(Movement, Chunk) {
  auto sizes = [](const std::vector<Tensor>& ts) {
    S out;
    for (const Tensor& t : ts) out.push_back(t.shape()[0]);
    return out;
  };
  EXPECT_EQ(sizes(Tensor::arange(11).chunk(6)), (S{2, 2, 2, 2, 2, 1}));
  EXPECT_EQ(sizes(Tensor::arange(12).chunk(6)), (S{2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(sizes(Tensor::arange(13).chunk(6)), (S{3, 3, 3, 3, 1}));
  EXPECT_EQ(sizes(Tensor::zeros({0}).chunk(3)), (S{0, 0, 0}));
  for (const Input& in : inputs()) {
    std::vector<Tensor> c = in.t.chunk(2, -1);
    ASSERT_EQ(c.size(), 2u);
    ref::expect_exact(c[0], ref::shrink(in.r, {{0, 2}, {0, 3}, {0, 2}}), in.name + " chunk[0]");
    ref::expect_exact(c[1], ref::shrink(in.r, {{0, 2}, {0, 3}, {2, 4}}), in.name + " chunk[1]");
    c = in.t.chunk(3, 1);
    ASSERT_EQ(c.size(), 3u);
    ref::expect_exact(c[2], ref::shrink(in.r, {{0, 2}, {2, 3}, {0, 4}}), in.name + " chunk dim 1");
  }
  expect_error([&] { Tensor::arange(4).chunk(0); }, {"Tensor.chunk", "positive"});
  expect_error([&] { Tensor::arange(4).chunk(2, 1); }, {"Tensor.chunk", "dim 1"});
}

TEST(Movement, Roll) {
  NDArray v = ref::generate({4}, [](int64_t i) { return static_cast<double>(i); });
  ref::expect_exact(ref::tensor(v).roll(1, 0), NDArray({4}, {3, 0, 1, 2}), "roll 1");
  ref::expect_exact(ref::tensor(v).roll(-1, 0), NDArray({4}, {1, 2, 3, 0}), "roll -1");
  for (const Input& in : inputs()) {
    for (int64_t shift : {0, 1, 2, 3, -1, -5, 7}) {
      for (int dim : {0, 1, 2, -1, -2}) {
        std::string what =
            in.name + " roll " + std::to_string(shift) + " dim " + std::to_string(dim);
        ref::expect_exact(in.t.roll(shift, dim), ref_roll(in.r, shift, dim), what);
      }
    }
    ref::expect_exact(in.t.roll({1, -2}, {0, -1}), ref_roll(ref_roll(in.r, 1, 0), -2, -1),
                      in.name + " roll two dims");
  }
  ref::expect_exact(Tensor::zeros({0, 2}).roll(1, 0), NDArray({0, 2}, {}), "roll empty");
  expect_error([&] { ref::tensor(v).roll(1, 1); }, {"Tensor.roll", "dim 1"});
  expect_error([&] { ref::tensor(v).roll({1, 2}, {0}); }, {"Tensor.roll", "2 shifts for 1 dims"});
}

// ================================================================== pad modes / pad_to

TEST(Movement, PadModes) {
  std::vector<ref::Pairs> pads = {{{0, 0}, {1, 2}, {3, 0}},
                                  {{1, 1}, {0, 0}, {2, 3}},
                                  {{0, 1}, {2, 2}, {0, 3}},
                                  {{1, -1}, {-1, 2}, {3, -2}},
                                  {{0, 0}, {0, 0}, {0, 0}}};
  for (const Input& in : inputs()) {
    for (const std::string mode : {"reflect", "replicate", "circular"}) {
      for (const ref::Pairs& p : pads) {
        bool neg = false;
        for (auto [b, a] : p) neg |= b < 0 || a < 0;
        if (mode == "circular" && neg) continue;
        std::string what = in.name + " pad " + mode + " " + std::to_string(p[1].first) + "," +
                           std::to_string(p[2].first) + "," + std::to_string(p[2].second);
        ref::expect_exact(in.t.pad(p, mode), ref_pad_mode(in.r, p, mode), what);
      }
    }
    // constant mode is the existing pad
    ref::Pairs p = {{1, 0}, {0, 2}, {-1, 1}};
    ref::expect_exact(in.t.pad(p, "constant", 2.5), ref::pad(in.r, p, 2.5), in.name + " constant");
  }
  // circular may wrap exactly once, reflect needs pads smaller than the size
  NDArray a = ref::random({2, 3}, 41);
  Tensor t = ref::tensor(a);
  ref::expect_exact(t.pad({{2, 2}, {3, 3}}, "circular"),
                    ref_pad_mode(a, {{2, 2}, {3, 3}}, "circular"), "circular full wrap");
  ref::expect_exact(t.pad({{1, 1}, {2, 2}}, "reflect"),
                    ref_pad_mode(a, {{1, 1}, {2, 2}}, "reflect"), "reflect max");
  NDArray ia = ref::random_int({3, 4}, 42, -50, 50);
  Tensor ri = ref::tensor(ia, dt::int32).pad({{2, 1}, {1, 3}}, "replicate");
  EXPECT_EQ(ri.dtype(), dt::int32);
  ref::expect_exact(ri, ref_pad_mode(ia, {{2, 1}, {1, 3}}, "replicate"), "replicate int32");

  expect_error(
      [&] {
        t.pad({{2, 0}, {0, 0}}, "reflect");
      },
      {"Tensor.pad", "reflect", "(2, 0)", "dimension 0", "(2, 3)"});
  expect_error(
      [&] {
        t.pad({{0, 0}, {0, 4}}, "circular");
      },
      {"Tensor.pad", "circular", "more than once"});
  // circular: negative entries cut first and what is left wraps around (torch pads [0, 1, 2, 3, 4]
  // by (1, -2) to [2, 0, 1, 2]); it may wrap once around what is left
  ref::expect_exact(ref::tensor(NDArray({5}, {0, 1, 2, 3, 4})).pad({{1, -2}}, "circular"),
                    NDArray({4}, {2, 0, 1, 2}), "circular cut after");
  ref::expect_exact(t.pad({{-1, 1}, {2, -1}}, "circular"),
                    ref_pad_mode(ref::shrink(a, {{1, 2}, {0, 2}}), {{0, 1}, {2, 0}}, "circular"),
                    "circular cut");
  expect_error([&] { t.pad({{0, 0}, {3, -1}}, "circular"); }, {"Tensor.pad", "more than once"});
  expect_error([&] { t.pad({{0, 0}, {0, 1}}, "wrap"); }, {"Tensor.pad", "'wrap'"});
  expect_error([&] { t.pad({{0, 1}}, "reflect"); }, {"Tensor.pad", "(2, 3)"});
  expect_error(
      [&] {
        Tensor::zeros({0, 2}).pad({{1, 0}, {0, 0}}, "replicate");
      },
      {"Tensor.pad", "size 0"});
  expect_error([&] { t.pad({{0, 0}, {-5, 1}}, "replicate"); }, {"Tensor.pad", "removes more"});
}

TEST(Movement, PadModesGradientCountsReads) {
  // d sum(pad(x)) / dx counts how often each element is read (ref_pad_mode of the elements'
  // positions). Where only the replicated edge is left, that count is a sum read both at a fixed
  // position and per output element of one kernel, and each read needs a loop of its own.
  S shape = {5, 5};
  NDArray position = ref::generate(shape, [](int64_t i) { return static_cast<double>(i); });
  for (const auto& [mode, p] :
       std::vector<std::pair<std::string, ref::Pairs>>{{"replicate", {{1, -5}, {3, -5}}},
                                                       {"replicate", {{1, -4}, {3, -5}}},
                                                       {"replicate", {{-2, 3}, {-4, 2}}},
                                                       {"reflect", {{1, -5}, {3, -5}}},
                                                       {"reflect", {{-3, 2}, {2, -1}}}}) {
    NDArray reads = ref::generate(shape, [](int64_t) { return 0.0; });
    for (double i : ref_pad_mode(position, p, mode).v) reads.v[static_cast<size_t>(i)] += 1;
    Tensor x = Tensor::ones(shape).requires_grad_();
    x.pad(p, mode).sum().backward();
    ASSERT_TRUE(x.grad());
    ref::expect_exact(*x.grad(), reads,
                      mode + " (" + std::to_string(p[0].first) + ", " +
                          std::to_string(p[0].second) + "), (" + std::to_string(p[1].first) + ", " +
                          std::to_string(p[1].second) + ")");
  }
}

TEST(Movement, PadTo) {
  for (const Input& in : inputs()) {
    ref::expect_exact(in.t.pad_to({3, 5, 4}), ref::pad(in.r, {{0, 1}, {0, 2}, {0, 0}}),
                      in.name + " pad_to");
    ref::expect_exact(in.t.pad_to({-1, 3, 6}), ref::pad(in.r, {{0, 0}, {0, 0}, {0, 2}}),
                      in.name + " pad_to keep");
  }
  Tensor t = Tensor::ones({2, 3});
  expect_error([&] { t.pad_to({2, 3, 1}); }, {"Tensor.pad_to", "(2, 3)", "(2, 3, 1)"});
  expect_error([&] { t.pad_to({1, 3}); }, {"Tensor.pad_to", "smaller"});
}

// ================================================================== meshgrid / triu / tril

TEST(Movement, Meshgrid) {
  NDArray x({3}, {1, 2, 3}), y({2}, {4, 5}), z({4}, {6, 7, 8, 9});
  std::vector<Tensor> ts = {ref::tensor(x), ref::tensor(y), ref::tensor(z).flip({0})};
  NDArray zf = ref::flip(z, {0});
  std::vector<Tensor> ij = Tensor::meshgrid(ts);
  ASSERT_EQ(ij.size(), 3u);
  S s = {3, 2, 4};
  ref::expect_exact(ij[0], gen_idx(s, [&](const S& i) { return x.v[i[0]]; }), "ij x");
  ref::expect_exact(ij[1], gen_idx(s, [&](const S& i) { return y.v[i[1]]; }), "ij y");
  ref::expect_exact(ij[2], gen_idx(s, [&](const S& i) { return zf.v[i[2]]; }), "ij z");
  std::vector<Tensor> xy = Tensor::meshgrid(ts, "xy");
  S sx = {2, 3, 4};
  ref::expect_exact(xy[0], gen_idx(sx, [&](const S& i) { return x.v[i[1]]; }), "xy x");
  ref::expect_exact(xy[1], gen_idx(sx, [&](const S& i) { return y.v[i[0]]; }), "xy y");
  ref::expect_exact(xy[2], gen_idx(sx, [&](const S& i) { return zf.v[i[2]]; }), "xy z");
  // two inputs, a 0-d one, and a single input
  std::vector<Tensor> two = Tensor::meshgrid({ref::tensor(x), Tensor::full({}, 7.0)}, "xy");
  EXPECT_EQ(two[0].shape(), (S{1, 3}));
  ref::expect_exact(two[1], NDArray({1, 3}, {7, 7, 7}), "xy scalar");
  std::vector<Tensor> one = Tensor::meshgrid({ref::tensor(x)});
  ref::expect_exact(one[0], x, "single");
  expect_error([&] { Tensor::meshgrid(ts, "ji"); }, {"Tensor.meshgrid", "\"ji\""});
  expect_error(
      [&] {
        Tensor::meshgrid({Tensor::ones({2, 2}), ref::tensor(x)});
      },
      {"Tensor.meshgrid", "(2, 2)"});
}

TEST(Movement, TriuTril) {
  std::vector<std::pair<std::string, std::pair<Tensor, NDArray>>> cases;
  NDArray m = ref::random({3, 4}, 51), w = ref::random({4, 3}, 52), b = ref::random({2, 3, 5}, 53);
  cases.push_back({"3x4", {ref::tensor(m), m}});
  cases.push_back({"4x3", {ref::tensor(w), w}});
  cases.push_back({"batched", {ref::tensor(b), b}});
  cases.push_back({"transposed", {ref::tensor(m).t(), ref::transpose(m, 0, 1)}});
  cases.push_back({"flipped", {ref::tensor(b).flip({2, 0}), ref::flip(b, {2, 0})}});
  for (const auto& [name, c] : cases) {
    for (int64_t d : {-5, -2, -1, 0, 1, 2, 3, 6}) {
      ref::expect_exact(c.first.triu(d), ref_tri(c.second, d, true),
                        name + " triu " + std::to_string(d));
      ref::expect_exact(c.first.tril(d), ref_tri(c.second, d, false),
                        name + " tril " + std::to_string(d));
    }
  }
  NDArray im = ref::random_int({3, 3}, 54, -9, 9);
  Tensor ti = ref::tensor(im, dt::int32).triu(1);
  EXPECT_EQ(ti.dtype(), dt::int32);
  ref::expect_exact(ti, ref_tri(im, 1, true), "triu int32");
  NDArray bm = ref::random_int({3, 3}, 55, 0, 1);
  Tensor tb = ref::tensor(bm, dt::bool_).tril();
  EXPECT_EQ(tb.dtype(), dt::bool_);
  ref::expect_exact(tb, ref_tri(bm, 0, false), "tril bool");
  EXPECT_EQ(Tensor::zeros({0, 3}).triu().shape(), (S{0, 3}));
  expect_error([&] { Tensor::ones({3}).triu(); }, {"Tensor.triu", "(3,)"});
  expect_error([&] { Tensor::ones({3}).tril(); }, {"Tensor.tril", "(3,)"});
}

NDArray ref_diagonal(const NDArray& a, int64_t offset, int dim1, int dim2) {
  size_t n = a.shape.size();
  size_t d1 = norm(dim1, n), d2 = norm(dim2, n);
  int64_t row0 = std::max<int64_t>(0, -offset), col0 = std::max<int64_t>(0, offset);
  int64_t len = std::max<int64_t>(0, std::min(a.shape[d1] - row0, a.shape[d2] - col0));
  S s;
  for (size_t k = 0; k < n; k++)
    if (k != d1 && k != d2) s.push_back(a.shape[k]);
  s.push_back(len);
  return gen_idx(s, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(n);
    size_t j = 0;
    for (size_t k = 0; k < n; k++)
      if (k != d1 && k != d2) src[k] = idx[j++];
    src[d1] = row0 + idx.back();
    src[d2] = col0 + idx.back();
    return a.at(src);
  });
}

// dim becomes the windows, a new last dim holds each window's `size` elements.
NDArray ref_unfold(const NDArray& a, int dim, int64_t size, int64_t step) {
  size_t n = a.shape.size(), d = norm(dim, n);
  S s = a.shape;
  s[d] = (a.shape[d] - size) / step + 1;
  s.push_back(size);
  return gen_idx(s, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> src(idx.begin(), idx.end() - 1);
    src[d] = idx[d] * step + idx.back();
    return a.at(src);
  });
}

TEST(Movement, Diag) {
  NDArray v = ref::random({5}, 61);
  Tensor d = ref::tensor(v).diag();
  ref::expect_exact(
      d,
      gen_idx({5, 5},
              [&](const std::vector<int64_t>& i) { return i[0] == i[1] ? v.v[i[0]] : 0.0; }),
      "diag");
  NDArray iv = ref::random_int({4}, 62, -9, 9);
  Tensor di = ref::tensor(iv, dt::int32).flip({0}).diag();
  EXPECT_EQ(di.dtype(), dt::int32);
  ref::expect_exact(
      di,
      gen_idx({4, 4},
              [&](const std::vector<int64_t>& i) { return i[0] == i[1] ? iv.v[3 - i[0]] : 0.0; }),
      "diag int32 flipped");
  EXPECT_EQ(Tensor::zeros({0}).diag().shape(), (S{0, 0}));
  ref::expect_exact(Tensor::full({1}, 3).diag(), NDArray({1, 1}, {3}), "diag 1");
  expect_error([&] { Tensor::zeros({2, 2}).diag(); }, {"Tensor.diag", "1-D", "(2, 2)"});
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) { return x.diag(); }),
                     {{{4}, tcgrad::mixed(4)}});
}

TEST(Movement, Diagonal) {
  struct Case {
    std::string name;
    NDArray a;
    int dim1, dim2;
  };
  std::vector<Case> cases = {{"5x5", ref::random({5, 5}, 63), 0, 1},
                             {"3x4", ref::random({3, 4}, 64), 0, 1},
                             {"4x3", ref::random({4, 3}, 65), 0, 1},
                             {"batched", ref::random({3, 3, 3}, 66), -2, -1},
                             {"batched rect", ref::random({4, 5, 6}, 67), -2, -1},
                             {"4-D", ref::random({2, 3, 4, 5}, 68), -2, -1},
                             {"outer dims", ref::random({2, 3, 4, 5}, 69), 3, 1},
                             {"swapped", ref::random({3, 5}, 70), 1, 0}};
  for (const Case& c : cases) {
    for (int64_t off : {0, 1, -1, 2, -3, 5, -7}) {
      std::string what = c.name + " offset " + std::to_string(off);
      ref::expect_exact(ref::tensor(c.a).diagonal(off, c.dim1, c.dim2),
                        ref_diagonal(c.a, off, c.dim1, c.dim2), what);
    }
  }
  // a non-contiguous view
  NDArray m = ref::random({4, 6}, 71);
  ref::expect_exact(ref::tensor(m).t().flip({0}).diagonal(1),
                    ref_diagonal(ref::flip(ref::transpose(m, 0, 1), {0}), 1, 0, 1), "view");
  expect_error(
      [&] {
        Tensor::zeros({3, 3}).diagonal(0, 1, -1);
      },
      {"Tensor.diagonal", "same dimension"});
  expect_error([&] { Tensor::zeros({3, 3}).diagonal(0, 0, 2); }, {"Tensor.diagonal", "dim 2"});
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) { return x.diagonal(-1); }),
                     {{{3, 4}, tcgrad::mixed(12)}});
}

TEST(Movement, Unfold) {
  NDArray v = ref::random({8}, 72), c = ref::random({3, 3, 3}, 73),
          f = ref::random({3, 3, 3, 3, 3}, 74);
  struct Case {
    const NDArray& a;
    int dim;
    int64_t size, step;
  };
  for (const Case& k : std::vector<Case>{{v, 0, 2, 1},
                                         {v, 0, 2, 2},
                                         {v, 0, 7, 3},
                                         {v, -1, 8, 1},
                                         {v, 0, 1, 5},
                                         {c, 2, 2, 8},
                                         {c, 1, 3, 1},
                                         {c, 0, 2, 1},
                                         {f, -1, 2, 2},
                                         {f, 1, 3, 2}}) {
    std::string what = "unfold dim " + std::to_string(k.dim) + " size " + std::to_string(k.size) +
                       " step " + std::to_string(k.step) + " of " + ref::shape_str(k.a.shape);
    ref::expect_exact(ref::tensor(k.a).unfold(k.dim, k.size, k.step),
                      ref_unfold(k.a, k.dim, k.size, k.step), what);
  }
  // a permuted view, an int dtype, empty windows
  ref::expect_exact(ref::tensor(c).permute({2, 0, 1}).unfold(1, 2, 1),
                    ref_unfold(ref::permute(c, {2, 0, 1}), 1, 2, 1), "unfold view");
  Tensor ui = Tensor::arange(0, 8, 1, dt::int32).unfold(0, 3, 2);
  EXPECT_EQ(ui.dtype(), dt::int32);
  ref::expect_exact(ui, NDArray({3, 3}, {0, 1, 2, 2, 3, 4, 4, 5, 6}), "unfold arange");
  EXPECT_EQ(ref::tensor(c).unfold(1, 0, 8).shape(), (S{3, 1, 3, 0}));
  EXPECT_EQ(ref::tensor(v).unfold(0, 0, 3).shape(), (S{3, 0}));
  ref::expect_exact(Tensor::full({}, 5.0).unfold(0, 1, 1), NDArray({1}, {5}), "unfold 0-d");
  expect_error([&] { ref::tensor(v).unfold(0, 9, 3); }, {"Tensor.unfold", "size 9", "(8,)"});
  expect_error([&] { ref::tensor(v).unfold(1, 8, 3); }, {"Tensor.unfold", "out of range"});
  expect_error([&] { ref::tensor(v).unfold(0, 1, -1); }, {"Tensor.unfold", "step", "-1"});
  expect_error([&] { ref::tensor(v).unfold(0, -1, 1); }, {"Tensor.unfold", "size", "-1"});
  // overlapping windows: the gradient adds up where windows share elements
  tcgrad::check_grad(tcgrad::unary([](const Tensor& x) { return x.unfold(1, 3, 1); }),
                     {{{2, 5}, tcgrad::mixed(10)}});
}

// ================================================================== creation

TEST(Creation, Linspace) {
  struct Case {
    double start, stop;
    int64_t steps;
  };
  for (const Case& c : std::vector<Case>{{0, 10, 5},
                                         {-1, 1, 5},
                                         {2, 3, 1},
                                         {5, -5, 7},
                                         {0, 1, 2},
                                         {0.5, 2.25, 8},
                                         {3, 3, 4},
                                         {0, 1, 0}}) {
    std::string what = "linspace(" + std::to_string(c.start) + ", " + std::to_string(c.stop) +
                       ", " + std::to_string(c.steps) + ")";
    Tensor t = Tensor::linspace(c.start, c.stop, c.steps);
    EXPECT_EQ(t.dtype(), dt::float32) << what;
    NDArray r = ref::generate({c.steps}, [&](int64_t i) {
      return c.steps == 1 ? c.start
                          : c.start + static_cast<double>(i) * (c.stop - c.start) /
                                          static_cast<double>(c.steps - 1);
    });
    ref::expect_close(t, r, kF32, kF32, what);
  }
  Tensor i = Tensor::linspace(0, 10, 4, dt::int32);  // 0, 3.33, 6.67, 10 truncated
  EXPECT_EQ(i.dtype(), dt::int32);
  ref::expect_exact(i, NDArray({4}, {0, 3, 6, 10}), "linspace int32");
  Tensor d = Tensor::linspace(-2, 2, 5, dt::float64);
  EXPECT_EQ(d.dtype(), dt::float64);
  ref::expect_exact(d, NDArray({5}, {-2, -1, 0, 1, 2}), "linspace float64");
  ref::expect_exact(Tensor::linspace(7, 9, 1, dt::int32), NDArray({1}, {7}), "linspace 1 int");
  expect_error([&] { Tensor::linspace(0, 1, -1); }, {"Tensor.linspace", "non-negative"});
  expect_error([&] { Tensor::linspace(0, 1, 3, dt::bool_); }, {"Tensor.linspace", "bool"});
}

TEST(Creation, Like) {
  Tensor a = Tensor::ones({2, 3}, dt::int16).permute({1, 0});
  Tensor z = Tensor::zeros_like(a);
  EXPECT_EQ(z.shape(), (S{3, 2}));
  EXPECT_EQ(z.dtype(), dt::int16);
  ref::expect_exact(z, ref::generate({3, 2}, [](int64_t) { return 0.0; }), "zeros_like");
  Tensor o = Tensor::ones_like(a, dt::float64);
  EXPECT_EQ(o.dtype(), dt::float64);
  ref::expect_exact(o, ref::generate({3, 2}, [](int64_t) { return 1.0; }), "ones_like dtype");
  Tensor f = Tensor::full_like(a, 42);
  EXPECT_EQ(f.dtype(), dt::int16);
  ref::expect_exact(f, ref::generate({3, 2}, [](int64_t) { return 42.0; }), "full_like");
  Tensor fb = Tensor::full_like(Tensor::zeros({4}), true, dt::bool_);
  EXPECT_EQ(fb.dtype(), dt::bool_);
  ref::expect_exact(fb, NDArray({4}, {1, 1, 1, 1}), "full_like bool");
  Tensor ff = Tensor::full_like(Tensor::zeros({2}), 2.5);
  EXPECT_EQ(ff.dtype(), dt::float32);
  ref::expect_exact(ff, NDArray({2}, {2.5, 2.5}), "full_like float");
  Tensor e = Tensor::empty_like(a);
  EXPECT_EQ(e.shape(), (S{3, 2}));
  EXPECT_EQ(e.dtype(), dt::int16);
  EXPECT_EQ(Tensor::empty_like(a, dt::uint8).dtype(), dt::uint8);
  EXPECT_EQ(Tensor::zeros_like(Tensor::full({}, 1.0)).shape(), (S{}));
  EXPECT_EQ(Tensor::ones_like(Tensor::zeros({0, 4})).numel(), 0);
}

// Found by tests/fuzz/tensor_fuzz.cc: an empty tensor padded, or reduced to something that is
// not empty, holds only the fill or the identity, and no kernel may read its empty buffer.
TEST(Movement, EmptyTensorsPaddedAndReducedReadNoBuffer) {
  Tensor empty = Tensor::from_vector<float>({}).reshape({2, 0, 3});  // a buffer of no element
  ref::expect_exact(empty.pad({{1, 0}, {1, 2}, {0, 0}}).sum(), ref::vals({}, {0}));
  ref::expect_exact(empty.pad({{0, 0}, {1, 1}, {0, 0}}, 2.5),
                    ref::generate({2, 2, 3}, [](int64_t) { return 2.5; }));
  ref::expect_exact(empty.sum(1), ref::generate({2, 3}, [](int64_t) { return 0.0; }));
  ref::expect_exact(empty.max(), ref::vals({}, {-ref::kInf}));
  ref::expect_exact(empty.min({0, 1}, true),
                    ref::generate({1, 1, 3}, [](int64_t) { return ref::kInf; }));
  Tensor ints = Tensor::from_vector<int32_t>({}).reshape({0, 4});
  ref::expect_exact(ints.max(0), ref::generate({4}, [](int64_t) { return -2147483648.0; }));
  ref::expect_exact(ints.min(), ref::vals({}, {2147483647.0}));
}

// Found by tests/fuzz/tensor_fuzz.cc: lanes of a width that is not a power of two (9) loaded
// under a per-lane pad mask came back wrong in one lane when the masked load was LLVM's.
TEST(Movement, PaddedMaxOverNineLanesMatchesTheReference) {
  NDArray x = ref::random_int({7, 1, 7}, 25933, -4, 4);
  ref::Pairs p = {{1, 2}, {1, 1}, {1, 1}};
  NDArray want = ref::map(ref::reduce(ref::pad(x, p), ref::Reduce::Max, {1}),
                          [](double v) { return v != 0 ? 1.0 : 0.0; });
  ref::expect_exact(ref::tensor(x, dt::int32).pad(p).max(1).cast(dt::bool_), want);
}

// Found by tests/fuzz/tensor_fuzz.cc (program 375956983): a reduce loop's padded load and the
// store after the loop share an index base; the renderer reused the value the load emitted
// inside the loop at the store, which its block does not reach (LLVM's IR did not verify, and
// the kernel read a wild address).
TEST(Movement, PaddedLoadInAReduceAndTheStoreAfterItShareAnIndex) {
  NDArray x = ref::random({1, 3, 3, 3}, 375956983), y = ref::random({}, 2),
          z = ref::random({3, 1, 3, 3}, 3);
  ref::Pairs p = {{2, 0}, {0, 1}, {0, 0}, {0, 0}};
  NDArray d = ref::zip(y, ref::pad(x, p), [](double a, double b) { return a - b; });
  NDArray m =
      ref::where(ref::zip(d, z, [](double a, double b) { return a < b ? 1.0 : 0.0; }), d, z);
  Tensor a = ref::tensor(y, dt::float32) - ref::tensor(x, dt::float32).pad(p);
  Tensor zt = ref::tensor(z, dt::float32);
  ref::expect_close(a.lt(zt).where(a, zt).sum(0), ref::reduce(m, ref::Reduce::Sum, {0}), 1e-5);
}

}  // namespace
