#include "tinycore/runtime/device.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>

#include "absl/strings/str_join.h"
#include "tinycore/error.h"
#include "tinycore/runtime/cpu_device.h"

namespace tc::runtime {
namespace {

using Factory = std::function<std::unique_ptr<Device>()>;

// Known devices in order of preference; each is created on first use.
const std::vector<std::pair<std::string, Factory>>& factories() {
  static const std::vector<std::pair<std::string, Factory>> f = {{"CPU", make_cpu_device}};
  return f;
}

std::string canonical(const std::string& name) {
  std::string n = name.substr(0, name.find(':'));
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::toupper(c); });
  return n;
}

}  // namespace

std::vector<std::string> available_devices() {
  std::vector<std::string> out;
  for (const auto& [name, f] : factories()) out.push_back(name);
  return out;
}

Device& get_device(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<Device>>* devices =
      new std::map<std::string, std::unique_ptr<Device>>();  // lives as long as the JIT'd code
  std::string key = canonical(name);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = devices->find(key); it != devices->end()) return *it->second;
  for (const auto& [n, factory] : factories()) {
    if (n != key) continue;
    auto& slot = (*devices)[key];
    slot = factory();
    return *slot;
  }
  fail("unknown device '%s' (available: %s)", name, absl::StrJoin(available_devices(), ", "));
}

const std::string& default_device() {
  static const std::string d = [] {
    const char* env = std::getenv("DEVICE");
    if (env && *env) {
      std::string name = canonical(env);
      auto names = available_devices();
      if (std::find(names.begin(), names.end(), name) == names.end())
        fail("DEVICE=%s is not available (available: %s)", env, absl::StrJoin(names, ", "));
      return name;
    }
    return available_devices().front();
  }();
  return d;
}

}  // namespace tc::runtime
