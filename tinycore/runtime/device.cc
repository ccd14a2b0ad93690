#include "tinycore/runtime/device.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>

#include "absl/strings/str_join.h"
#include "tinycore/error.h"
#include "tinycore/runtime/cl_device.h"
#include "tinycore/runtime/cpu_device.h"
#include "tinycore/runtime/hip_device.h"
#ifdef TC_HAVE_CUDA
#include "tinycore/runtime/cuda_device.h"
#endif

namespace tc::runtime {

// Each language's name, in the enum's order: what both directions read.
constexpr const char* kLanguageNames[] = {"llvm", "cuda", "opencl", "hip"};

const char* language_name(Language language) { return kLanguageNames[static_cast<int>(language)]; }

Language language_named(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  for (int i = 0; i < static_cast<int>(std::size(kLanguageNames)); i++)
    if (lower == kLanguageNames[i]) return static_cast<Language>(i);
  fail("unknown language '%s' (known: %s)", name, absl::StrJoin(kLanguageNames, ", "));
}

const char* effort_name(CompileEffort effort) {
  switch (effort) {
    case CompileEffort::kFull:
      return "full";
    case CompileEffort::kTiled:
      return "tiled";
    case CompileEffort::kLight:
      return "light";
    case CompileEffort::kQuick:
      return "quick";
  }
  return "?";
}

namespace {

// A device kind: its factory, why the factory found nothing, and a cheap test that rules the
// kind out as the default accelerator without making it (nullptr: make it to know).
struct Kind {
  std::string name;
  DeviceFactory make;
  std::string (*why_not)();
  bool (*may_be_accelerator)() = nullptr;
};

std::string cuda_missing() {
#ifdef TC_HAVE_CUDA
  return cuda_unavailable_reason();
#else
  return "tinycore was built without the CUDA toolkit";
#endif
}

// Known devices in order of preference.
const std::vector<Kind>& registry() {
  static const std::vector<Kind> r = {
#ifdef TC_HAVE_CUDA
      {"CUDA", make_cuda_device, cuda_missing},
#else
      {"CUDA", [] { return std::unique_ptr<Device>(); }, cuda_missing},
#endif
      {"HIP", make_hip_device, hip_unavailable_reason},
      {"CL", make_cl_device, cl_unavailable_reason, cl_may_have_gpu},
      {"CPU", make_cpu_device, [] { return std::string(); }},
  };
  return r;
}

// Guards the devices made so far and why the others are not available.
std::mutex& registry_mutex() {
  static auto* mu = new std::mutex();
  return *mu;
}
std::map<std::string, std::string>& reasons() {
  static auto* r = new std::map<std::string, std::string>();
  return *r;
}

std::string canonical(const std::string& name) {
  std::string n = name.substr(0, name.find(':'));
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::toupper(c); });
  return n;
}

// The device of kind `key` (canonical), created on first use; nullptr when it is unknown or
// cannot run here. Devices live as long as the process (their compiled code may be in use).
Device* find_device(const std::string& key) {
  static auto* devices = new std::map<std::string, std::unique_ptr<Device>>();
  std::lock_guard<std::mutex> lock(registry_mutex());
  if (auto it = devices->find(key); it != devices->end()) return it->second.get();
  for (const Kind& kind : registry()) {
    if (kind.name != key) continue;
    Device* d = ((*devices)[key] = kind.make()).get();
    if (!d) reasons()[key] = kind.why_not();
    return d;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> known_devices() {
  std::vector<std::string> out;
  for (const Kind& kind : registry()) out.push_back(kind.name);
  return out;
}

std::vector<std::string> available_devices() {
  std::vector<std::string> out;
  for (const std::string& name : known_devices())
    if (find_device(name)) out.push_back(name);
  return out;
}

Device& get_device(const std::string& name) {
  std::string key = canonical(name);
  if (Device* d = find_device(key)) return *d;
  auto known = known_devices();
  if (std::find(known.begin(), known.end(), key) != known.end())
    fail("device '%s' is not available on this machine: %s (available: %s)", name,
         unavailable_reason(key), absl::StrJoin(available_devices(), ", "));
  fail("unknown device '%s' (available: %s)", name, absl::StrJoin(available_devices(), ", "));
}

std::string unavailable_reason(const std::string& name) {
  std::string key = canonical(name);
  if (find_device(key)) return "";
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto it = reasons().find(key);
  return it == reasons().end() ? "unknown device" : it->second;
}

namespace {
// The default device once chosen (by set_default_device, or by default_device's first call);
// read without a lock, since every new tensor asks. The name is never freed.
std::atomic<const std::string*> chosen_default{nullptr};
std::mutex& default_mutex() {
  static auto* mu = new std::mutex();
  return *mu;
}

// The default device by DEVICE, else the first accelerator, else the CPU.
std::string choose_default() {
  const char* env = std::getenv("DEVICE");
  if (env && *env) {
    std::string name = canonical(env);
    if (!find_device(name))
      fail("DEVICE=%s is not available: %s (available: %s)", env, unavailable_reason(name),
           absl::StrJoin(available_devices(), ", "));
    return name;
  }
  for (const Kind& kind : registry()) {
    if (kind.may_be_accelerator && !kind.may_be_accelerator()) continue;
    if (Device* dev = find_device(kind.name); dev && dev->is_accelerator()) return kind.name;
  }
  return "CPU";
}
}  // namespace

void set_default_device(const std::string& name) {
  std::string key = get_device(name).name();  // throws when unknown or unavailable
  std::lock_guard<std::mutex> lock(default_mutex());
  if (const std::string* d = chosen_default.load()) {
    if (*d != key)
      fail("the default device is already %s: choose the device (%s) before making any tensor", *d,
           name);
    return;
  }
  chosen_default.store(new std::string(key));
}

const std::string& default_device() {
  if (const std::string* d = chosen_default.load(std::memory_order_acquire)) return *d;
  std::lock_guard<std::mutex> lock(default_mutex());
  if (const std::string* d = chosen_default.load()) return *d;
  const std::string* d = new std::string(choose_default());
  chosen_default.store(d, std::memory_order_release);
  return *d;
}

}  // namespace tc::runtime
