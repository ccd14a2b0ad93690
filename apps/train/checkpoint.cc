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

void save_checkpoint(const std::string& dir, const nn::Module& model, const nn::StateDict& state,
                     const Position& pos) {
  nn::StateDict all = nn::with_prefix(model.state_dict(), kModelPrefix);
  for (const auto& [name, t] : state) all.emplace(name, t);
  const std::map<std::string, std::string> meta = {
      {"format", "tinycore train checkpoint 1"},  {"step", std::to_string(pos.step)},
      {"epoch", std::to_string(pos.epoch)},       {"batch", std::to_string(pos.batch)},
      {"rng_seed", std::to_string(pos.rng.seed)}, {"rng_counter", std::to_string(pos.rng.counter)},
  };
  nn::safe_save(all, dir + "/" + kCheckpointFile, meta);
  nn::safe_save(model.state_dict(), dir + "/" + kModelFile, {{"step", std::to_string(pos.step)}});
}

Position load_checkpoint(const std::string& dir, nn::Module& model, nn::StateDict state) {
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
    nn::StateDict m = model.state_dict();
    nn::load_state_dict(m, nn::strip_prefix(saved, kModelPrefix));
    for (const auto& [name, t] : nn::with_prefix(m, kModelPrefix)) saved.erase(name);
    nn::load_state_dict(state, saved);
  } catch (const Error& e) {
    fail("resume: %s does not fit this config's model, optimizer and precision: %s", path,
         e.what());
  }
  return pos;
}

}  // namespace tc::train
