// PyTorch reference values for the Tensor tests (header-only). The generators
// tests/fixtures/gen_<name>.py (see tests/fixtures/torch_fixture.py for the text format) write
// tests/fixtures/<name>.fixture; a test reads one case:
//
//   const tcfix::Case& c = tcfix::fixture("conv", "conv2d_stride2");
//   tc::Tensor x = c["x"].tensor();                   // in its fixture dtype (float32 -> float32)
//   tcfix::expect_matches(x.conv2d(...), c["out"], 1e-5, 1e-6);
//   double alpha = c.scalar("alpha");
//
// Files are parsed once and cached. A missing or malformed file, case or label throws
// std::runtime_error naming it.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/tensor/reference.h"
#include "tinycore/dtype.h"
#include "tinycore/tensor.h"

#ifndef TC_FIXTURE_DIR
#error "TC_FIXTURE_DIR must be defined (BUILD.gn defines it for every test target)"
#endif

namespace tcfix {

struct FixtureTensor {
  std::string dtype;  // torch's name ("float32", "int64", "bool", ...) or "scalar"
  std::vector<int64_t> shape;
  std::vector<double> values;  // row-major; ints exact up to 2^53
  std::string case_name;       // where it came from, for messages
  std::string label;
  bool int_scalar = false;  // a "scalar" written as a Python int (or bool)

  // The dtype this tensor has in tinycore: torch's dtype of the same name; a Python float scalar
  // is float32 and a Python int scalar int32 (tinygrad's defaults).
  tc::DType tc_dtype() const {
    static const std::map<std::string, tc::DType> kNames = {
        {"bool", tc::dtypes::bool_},        {"uint8", tc::dtypes::uint8},
        {"uint16", tc::dtypes::uint16},     {"uint32", tc::dtypes::uint32},
        {"uint64", tc::dtypes::uint64},     {"int8", tc::dtypes::int8},
        {"int16", tc::dtypes::int16},       {"int32", tc::dtypes::int32},
        {"int64", tc::dtypes::int64},       {"float16", tc::dtypes::float16},
        {"bfloat16", tc::dtypes::bfloat16}, {"float32", tc::dtypes::float32},
        {"float64", tc::dtypes::float64}};
    if (dtype == "scalar") return int_scalar ? tc::dtypes::int32 : tc::dtypes::float32;
    auto it = kNames.find(dtype);
    if (it == kNames.end())
      throw std::runtime_error("fixture case " + case_name + ", " + label +
                               ": no tinycore dtype for " + dtype);
    return it->second;
  }
  bool is_exact() const {  // integer or bool values: compared exactly
    tc::DType d = tc_dtype();
    return tc::dtypes::is_int(d) || tc::dtypes::is_bool(d);
  }
  tcref::NDArray array() const { return tcref::NDArray(shape, values); }
  tc::Tensor tensor() const { return tensor(tc_dtype()); }
  tc::Tensor tensor(tc::DType d) const { return tcref::tensor(array(), d); }
};

struct Case {
  std::string file;
  std::string name;
  std::map<std::string, FixtureTensor> tensors;

  bool has(const std::string& label) const { return tensors.count(label) != 0; }
  const FixtureTensor& operator[](const std::string& label) const {
    auto it = tensors.find(label);
    if (it == tensors.end())
      throw std::runtime_error("fixture " + file + ": case " + name + " has no \"" + label + "\"");
    return it->second;
  }
  double scalar(const std::string& label) const {
    const FixtureTensor& t = (*this)[label];
    if (t.values.size() != 1)
      throw std::runtime_error("fixture " + file + ": case " + name + ", \"" + label +
                               "\" is not a scalar");
    return t.values[0];
  }
};

namespace detail {

inline std::map<std::string, Case> parse_file(const std::string& file, const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("fixture " + file + ": cannot open " + path +
                             " (run its generator: /usr/bin/python3 tests/fixtures/gen_" + file +
                             ".py)");
  std::map<std::string, Case> cases;
  std::string line;
  int lineno = 0;
  auto bad = [&](const std::string& why) {
    return std::runtime_error("fixture " + path + ":" + std::to_string(lineno) + ": " + why);
  };
  Case* cur = nullptr;
  while (std::getline(in, line)) {
    lineno++;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    if (word == "case") {
      if (cur) throw bad("case inside case " + cur->name + " (missing end)");
      std::string name;
      if (!(ls >> name)) throw bad("case without a name");
      if (cases.count(name)) throw bad("duplicate case " + name);
      cur = &cases[name];
      cur->file = file;
      cur->name = name;
    } else if (word == "end") {
      if (!cur) throw bad("end outside a case");
      cur = nullptr;
    } else if (word == "tensor") {
      if (!cur) throw bad("tensor outside a case");
      FixtureTensor t;
      t.case_name = cur->name;
      int64_t rank = -1;
      if (!(ls >> t.label >> t.dtype >> rank) || rank < 0) throw bad("bad tensor header: " + line);
      int64_t n = 1;
      for (int64_t k = 0; k < rank; k++) {
        int64_t d = -1;
        if (!(ls >> d) || d < 0) throw bad("bad dims in: " + line);
        t.shape.push_back(d);
        n *= d;
      }
      std::string values;
      if (!std::getline(in, values)) throw bad("missing values line for " + t.label);
      lineno++;
      std::istringstream vs(values);
      std::string tok;
      while (vs >> tok) {
        char* endp = nullptr;
        double v = std::strtod(tok.c_str(), &endp);
        if (endp == tok.c_str() || *endp != '\0') throw bad("bad value \"" + tok + "\"");
        t.values.push_back(v);
        if (t.dtype == "scalar") t.int_scalar = tok.find_first_of(".eEnNiI") == std::string::npos;
      }
      if (static_cast<int64_t>(t.values.size()) != n)
        throw bad(t.label + ": " + std::to_string(t.values.size()) + " values for " +
                  std::to_string(n) + " elements");
      if (cur->tensors.count(t.label)) throw bad("duplicate label " + t.label);
      std::string label = t.label;
      cur->tensors.emplace(label, std::move(t));
    } else {
      throw bad("unexpected \"" + word + "\"");
    }
  }
  if (cur) throw bad("missing end of case " + cur->name);
  return cases;
}

}  // namespace detail

// The case `case_name` of TC_FIXTURE_DIR/<file>.fixture (parsed once, then cached).
inline const Case& fixture(const std::string& file, const std::string& case_name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<std::map<std::string, Case>>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(file);
  if (it == cache.end()) {
    std::string path = std::string(TC_FIXTURE_DIR) + "/" + file + ".fixture";
    auto parsed = std::make_unique<std::map<std::string, Case>>(detail::parse_file(file, path));
    it = cache.emplace(file, std::move(parsed)).first;
  }
  auto c = it->second->find(case_name);
  if (c == it->second->end())
    throw std::runtime_error("fixture " + file + ": no case \"" + case_name + "\"");
  return c->second;
}

// `got` against the PyTorch values: the same shape, every element within atol + rtol * |want|
// (exactly equal for integer and bool fixtures), NaN where want is NaN and the same infinities.
// At most 10 failing elements are reported, each with its index and both values.
inline void expect_matches(const tc::Tensor& got, const FixtureTensor& want, double rtol,
                           double atol) {
  std::string what = "case " + want.case_name + ", \"" + want.label + "\"";
  ASSERT_EQ(got.shape(), want.shape) << what << ": shape " << tcref::shape_str(got.shape())
                                     << ", torch " << tcref::shape_str(want.shape);
  std::vector<double> g = got.data<double>();
  ASSERT_EQ(g.size(), want.values.size()) << what;
  bool exact = want.is_exact();
  int failures = 0, total = 0;
  for (size_t i = 0; i < g.size(); i++) {
    double e = want.values[i], x = g[i];
    bool ok = exact           ? x == e
              : std::isnan(e) ? std::isnan(x)
              : std::isinf(e) ? x == e
                              : std::fabs(x - e) <= atol + rtol * std::fabs(e);
    if (ok) continue;
    total++;
    if (failures++ < 10) {
      std::ostringstream idx;
      std::vector<int64_t> md = tcref::unravel(static_cast<int64_t>(i), want.shape);
      idx << "[";
      for (size_t k = 0; k < md.size(); k++) idx << (k ? ", " : "") << md[k];
      idx << "]";
      std::ostringstream msg;
      msg.precision(10);
      msg << what << ": element " << i << " " << idx.str() << " of shape "
          << tcref::shape_str(want.shape) << " is " << x << ", torch " << e;
      if (exact)
        msg << " (exact)";
      else
        msg << " (rtol " << rtol << ", atol " << atol << ", diff " << std::fabs(x - e) << ")";
      ADD_FAILURE() << msg.str();
    }
  }
  if (total > 10) ADD_FAILURE() << what << ": " << total << " elements differ in all";
}

// Tolerances of one comparison: |got - want| <= atol + rtol * |want|.
struct Tol {
  double rtol;
  double atol;
};

using OpFn = std::function<std::vector<tc::Tensor>(const std::vector<tc::Tensor>&)>;

// A case written by torch_fixture.py's `record`: inputs in0, in1, ... (each in its fixture
// dtype), outputs out0, out1, ... and, for a differentiable op, weights w<k> and the gradients
// grad<i> of sum_k (out_k * w_k).sum() with respect to the float inputs. Runs `f` on the inputs
// and compares every output (values within `fwd`; its dtype equal to torch's unless
// `check_dtype` is false) and every gradient (via Tensor::gradient, within `grad`).
inline void check_op(const std::string& file, const std::string& case_name, const OpFn& f, Tol fwd,
                     std::optional<Tol> grad = {}, bool check_dtype = true) {
  SCOPED_TRACE("fixture " + file + ", case " + case_name);
  const Case& c = fixture(file, case_name);
  std::vector<tc::Tensor> in;
  for (int k = 0; c.has("in" + std::to_string(k)); k++)
    in.push_back(c["in" + std::to_string(k)].tensor());
  std::vector<tc::Tensor> out = f(in);
  int nout = 0;
  while (c.has("out" + std::to_string(nout))) nout++;
  ASSERT_EQ(static_cast<int>(out.size()), nout) << "outputs of " << case_name;
  std::optional<tc::Tensor> loss;
  for (int k = 0; k < nout; k++) {
    const FixtureTensor& want = c["out" + std::to_string(k)];
    if (check_dtype) {
      EXPECT_EQ(out[k].dtype(), want.tc_dtype())
          << case_name << " out" << k << ": dtype " << out[k].dtype().name() << ", torch "
          << want.dtype;
    }
    if (out[k].shape() != want.shape) {  // nothing more to compare, and no loss to build
      expect_matches(out[k], want, fwd.rtol, fwd.atol);
      return;
    }
    expect_matches(out[k], want, fwd.rtol, fwd.atol);
    std::string w = "w" + std::to_string(k);
    if (c.has(w)) {
      tc::Tensor l = out[k].mul(c[w].tensor(out[k].dtype())).sum();
      loss = loss ? loss->add(l) : l;
    }
  }
  std::vector<tc::Tensor> targets;
  std::vector<const FixtureTensor*> wants;
  for (size_t k = 0; k < in.size(); k++) {
    std::string g = "grad" + std::to_string(k);
    if (!c.has(g)) continue;
    targets.push_back(in[k]);
    wants.push_back(&c[g]);
  }
  if (targets.empty()) return;
  ASSERT_TRUE(grad.has_value()) << case_name << ": the fixture has gradients; give a tolerance";
  ASSERT_TRUE(loss.has_value()) << case_name << ": gradients without weights";
  std::vector<tc::Tensor> got = loss->gradient(targets);
  for (size_t k = 0; k < got.size(); k++) expect_matches(got[k], *wants[k], grad->rtol, grad->atol);
}

// Adapters for check_op: one output; one input.
inline OpFn one(std::function<tc::Tensor(const std::vector<tc::Tensor>&)> f) {
  return [f](const std::vector<tc::Tensor>& x) { return std::vector<tc::Tensor>{f(x)}; };
}
inline OpFn un(std::function<tc::Tensor(const tc::Tensor&)> f) {
  return [f](const std::vector<tc::Tensor>& x) { return std::vector<tc::Tensor>{f(x[0])}; };
}
inline OpFn bin(std::function<tc::Tensor(const tc::Tensor&, const tc::Tensor&)> f) {
  return [f](const std::vector<tc::Tensor>& x) { return std::vector<tc::Tensor>{f(x[0], x[1])}; };
}

}  // namespace tcfix
