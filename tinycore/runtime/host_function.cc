#include "tinycore/runtime/host_function.h"

#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tinycore/error.h"

namespace tc::runtime {
namespace {

struct Registry {
  std::mutex mu;
  // node-stable: host_function hands out references
  absl::flat_hash_map<std::string, std::unique_ptr<HostFunction>> fns;
  static Registry& get() {
    static auto* r = new Registry();
    return *r;
  }
};

class HostProgram : public Program {
 public:
  HostProgram(const HostFunction& fn, int64_t numel, DType dtype, Device& device)
      : fn_(fn), numel_(numel), dtype_(dtype), device_(device) {}
  void run(void* const* bufs, int) override { fn_.run({bufs, numel_, dtype_, device_}); }
  // a sample of a host function is the whole of it (it may be a collective: every rank runs it)
  void run_part(void* const* bufs, int, int) override { run(bufs, 1); }

 private:
  const HostFunction& fn_;
  int64_t numel_;
  DType dtype_;
  Device& device_;
};

class CopyProgram : public Program {
 public:
  CopyProgram(Device& from, Device& to, size_t bytes) : from_(from), to_(to), bytes_(bytes) {}
  void run(void* const* bufs, int) override {
    if (from_.uses_host_memory()) return to_.allocator().copyin(bufs[0], bufs[1], bytes_);
    if (to_.uses_host_memory()) return from_.allocator().copyout(bufs[0], bufs[1], bytes_);
    std::vector<uint8_t> staged(bytes_);
    from_.allocator().copyout(staged.data(), bufs[1], bytes_);
    to_.allocator().copyin(bufs[0], staged.data(), bytes_);
  }
  void run_part(void* const* bufs, int, int) override { run(bufs, 1); }

 private:
  Device &from_, &to_;
  size_t bytes_;
};

}  // namespace

void register_host_function(const std::string& name, HostFunction fn) {
  Registry& r = Registry::get();
  std::lock_guard<std::mutex> lock(r.mu);
  auto& slot = r.fns[name];
  if (slot)
    *slot = std::move(fn);
  else
    slot = std::make_unique<HostFunction>(std::move(fn));
}

const HostFunction& host_function(const std::string& name) {
  Registry& r = Registry::get();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.fns.find(name);
  if (it == r.fns.end()) fail("no host function named '%s' is registered", name);
  return *it->second;
}

std::shared_ptr<Program> host_program(const std::string& name, int64_t numel, DType dtype,
                                      Device& device) {
  return std::make_shared<HostProgram>(host_function(name), numel, dtype, device);
}

std::shared_ptr<Program> copy_program(Device& from, Device& to, size_t bytes) {
  return std::make_shared<CopyProgram>(from, to, bytes);
}

}  // namespace tc::runtime
