#include "apps/train/checkpoint.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "absl/strings/numbers.h"
#include "nn/safetensors.h"
#include "nn/state.h"
#include "tinycore/error.h"

namespace tc::train {
namespace {

const char* kModelPrefix = "model.";
const char* kOptimPrefix = "optim.";

nn::StateDict with_prefix(const nn::StateDict& d, const std::string& prefix) {
  nn::StateDict out;
  for (const auto& [name, t] : d) out.emplace(prefix + name, t);
  return out;
}

nn::StateDict strip_prefix(const nn::StateDict& d, const std::string& prefix) {
  nn::StateDict out;
  for (const auto& [name, t] : d)
    if (name.rfind(prefix, 0) == 0) out.emplace(name.substr(prefix.size()), t);
  return out;
}

std::map<std::string, std::string> read_metadata(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("resume: cannot read %s", path);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  try {
    return safetensors::parse_header(bytes.data(), bytes.size()).metadata;
  } catch (const safetensors::FormatError& e) {
    fail("resume: %s is not a valid checkpoint: %s", path, e.what());
  }
}

template <typename T>
T number(const std::map<std::string, std::string>& meta, const std::string& key,
         const std::string& path) {
  auto it = meta.find(key);
  T v;
  if (it == meta.end() || !absl::SimpleAtoi(it->second, &v))
    fail("resume: %s has no valid '%s' in its metadata (not a train checkpoint?)", path, key);
  return v;
}

}  // namespace

void save_checkpoint(const std::string& dir, const nn::Module& model, const nn::Optimizer& opt,
                     const Position& pos) {
  nn::StateDict all = with_prefix(model.state_dict(), kModelPrefix);
  all.merge(with_prefix(opt.state_dict(), kOptimPrefix));
  const std::map<std::string, std::string> meta = {
      {"format", "tinycore train checkpoint 1"},  {"step", std::to_string(pos.step)},
      {"epoch", std::to_string(pos.epoch)},       {"batch", std::to_string(pos.batch)},
      {"rng_seed", std::to_string(pos.rng.seed)}, {"rng_counter", std::to_string(pos.rng.counter)},
  };
  nn::safe_save(all, dir + "/" + kCheckpointFile, meta);
  nn::safe_save(model.state_dict(), dir + "/" + kModelFile, {{"step", std::to_string(pos.step)}});
}

Position load_checkpoint(const std::string& dir, nn::Module& model, nn::Optimizer& opt) {
  const std::string path = dir + "/" + kCheckpointFile;
  if (!std::filesystem::exists(path))
    fail("resume: %s has no %s (not a train run, or killed before its first checkpoint)", dir,
         kCheckpointFile);
  std::map<std::string, std::string> meta = read_metadata(path);
  Position pos{.step = number<int64_t>(meta, "step", path),
               .epoch = number<int64_t>(meta, "epoch", path),
               .batch = number<int64_t>(meta, "batch", path),
               .rng = {number<uint64_t>(meta, "rng_seed", path),
                       number<uint64_t>(meta, "rng_counter", path)}};
  nn::StateDict saved = nn::safe_load(path);
  try {
    nn::StateDict m = model.state_dict(), o = opt.state_dict();
    nn::load_state_dict(m, strip_prefix(saved, kModelPrefix));
    nn::load_state_dict(o, strip_prefix(saved, kOptimPrefix));
  } catch (const Error& e) {
    fail("resume: %s does not fit this config's model and optimizer: %s", path, e.what());
  }
  return pos;
}

}  // namespace tc::train
