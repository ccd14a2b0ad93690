// Modules: layers that own named tensors (parameters, and buffers such as running statistics) and
// named child modules, so a model's state dict lines up with PyTorch's and tinygrad's by name
// ("layer1.0.conv1.weight"). A module registers pointers to its own members, so modules are
// neither copied nor moved; hold them by value in their parent or by unique_ptr.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/state.h"
#include "tinycore/tensor.h"

namespace tc::nn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  virtual Tensor forward(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) { return forward(x); }

  // Every tensor by its dotted name: parameters and buffers (tinygrad's get_state_dict).
  StateDict state_dict() const;
  // The trainable tensors (tinygrad's get_parameters), in registration order.
  std::vector<Tensor> parameters() const;
  // The non-trainable state a training step also updates (running statistics).
  std::vector<Tensor> buffers() const;

 protected:
  void register_parameter(std::string name, Tensor* t);
  void register_buffer(std::string name, Tensor* t);
  void register_module(std::string name, Module* m);

 private:
  void visit(const std::string& prefix,
             const std::function<void(const std::string&, Tensor&, bool)>& fn) const;
  struct Entry {
    std::string name;
    Tensor* tensor;
    bool parameter;
  };
  std::vector<Entry> tensors_;
  std::vector<std::pair<std::string, Module*>> children_;
};

// Layers applied in order; children are named "0", "1", ... as in PyTorch.
class Sequential : public Module {
 public:
  Sequential() = default;
  template <typename M, typename... Args>
  M& add(Args&&... args) {
    auto m = std::make_unique<M>(std::forward<Args>(args)...);
    M& ref = *m;
    register_module(std::to_string(layers_.size()), m.get());
    layers_.push_back(std::move(m));
    return ref;
  }
  // A stateless step (an activation, a reshape) that takes a place in the numbering.
  void add(std::function<Tensor(const Tensor&)> fn);
  Tensor forward(const Tensor& x) override;
  size_t size() const { return layers_.size(); }

 private:
  std::vector<std::unique_ptr<Module>> layers_;
};

}  // namespace tc::nn
