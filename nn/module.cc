#include "nn/module.h"

namespace tc::nn {
namespace {
// A Sequential entry for a plain function.
class Lambda : public Module {
 public:
  explicit Lambda(std::function<Tensor(const Tensor&)> fn) : fn_(std::move(fn)) {}
  Tensor forward(const Tensor& x) override { return fn_(x); }

 private:
  std::function<Tensor(const Tensor&)> fn_;
};
}  // namespace

void Module::register_parameter(std::string name, Tensor* t) {
  t->requires_grad_();
  tensors_.push_back({std::move(name), t, true});
}
void Module::register_buffer(std::string name, Tensor* t) {
  tensors_.push_back({std::move(name), t, false});
}
void Module::register_module(std::string name, Module* m) {
  children_.emplace_back(std::move(name), m);
}

void Module::visit(const std::string& prefix,
                   const std::function<void(const std::string&, Tensor&, bool)>& fn) const {
  for (const Entry& e : tensors_) fn(prefix + e.name, *e.tensor, e.parameter);
  for (const auto& [name, child] : children_) child->visit(prefix + name + ".", fn);
}

StateDict Module::state_dict() const {
  StateDict out;
  visit("", [&](const std::string& name, Tensor& t, bool) { out.emplace(name, t); });
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  visit("", [&](const std::string&, Tensor& t, bool p) {
    if (p) out.push_back(t);
  });
  return out;
}

std::vector<Tensor> Module::buffers() const {
  std::vector<Tensor> out;
  visit("", [&](const std::string&, Tensor& t, bool p) {
    if (!p) out.push_back(t);
  });
  return out;
}

void Sequential::add(std::function<Tensor(const Tensor&)> fn) { add<Lambda>(std::move(fn)); }

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (auto& l : layers_) y = l->forward(y);
  return y;
}

}  // namespace tc::nn
