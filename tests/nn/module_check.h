// A module against a PyTorch fixture written by tests/fixtures/torch_fixture.py's module_case:
// PyTorch's state dict loads strictly into the module's (so every name and shape lines up), then
// the forward output, the gradients of sum(out * g) for the input and the parameters the fixture
// has, and the buffers after the step (running statistics) all match.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "nn/module.h"
#include "tests/tensor/fixture.h"

namespace tcfix {

struct ModuleCheck {
  bool train = true;   // Tensor::training() during the forward
  bool grad_x = true;  // the fixture has the input's gradient
  double tol = 1e-5;   // rtol and atol
  // The output from the input (default: module(x)); the case gives the fixture's extra tensors.
  std::function<tc::Tensor(const Case&, const tc::Tensor&)> run = nullptr;
};

// Loads the case's PyTorch state dict ("p:<name>") into m, strictly; returns m's state dict.
inline tc::nn::StateDict load_torch_state(const Case& c, tc::nn::Module& m) {
  tc::nn::StateDict torch_state;
  for (const auto& [label, t] : c.tensors)
    if (label.rfind("p:", 0) == 0) torch_state.emplace(label.substr(2), t.tensor());
  tc::nn::StateDict ours = m.state_dict();
  tc::nn::load_state_dict(ours, torch_state);  // strict: the names and shapes line up
  return ours;
}

inline void check_module(const std::string& file, const std::string& name, tc::nn::Module& m,
                         const ModuleCheck& o = {}) {
  SCOPED_TRACE("fixture " + file + ", case " + name);
  const Case& c = fixture(file, name);
  tc::nn::StateDict ours = load_torch_state(c, m);
  tc::Tensor::Train mode(o.train);
  tc::Tensor x = c["x"].tensor();
  if (o.grad_x) x.requires_grad_();
  tc::Tensor out = o.run ? o.run(c, x) : m(x);
  (out * c["g"].tensor()).sum().backward();
  std::vector<tc::Tensor> to_realize = m.buffers();
  to_realize.push_back(out);
  tc::realize_all(to_realize);
  expect_matches(out, c["out"], o.tol, o.tol);
  if (o.grad_x) expect_matches(*x.grad(), c["grad_x"], o.tol, o.tol);
  for (const auto& [label, t] : c.tensors) {
    if (label.rfind("grad:", 0) == 0) {
      const tc::Tensor& p = ours.at(label.substr(5));
      ASSERT_TRUE(p.grad().has_value()) << label;
      expect_matches(*p.grad(), t, o.tol, o.tol);
    }
    if (label.rfind("after:", 0) == 0) expect_matches(ours.at(label.substr(6)), t, o.tol, o.tol);
  }
}

}  // namespace tcfix
