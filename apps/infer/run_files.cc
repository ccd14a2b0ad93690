#include "apps/infer/run_files.h"

#include <filesystem>

#include "apps/common/build_model.h"
#include "nn/state.h"
#include "tinycore/error.h"

namespace tc::infer {

LoadedRun load_run(const std::string& dir) {
  if (!std::filesystem::is_directory(dir))
    fail("run folder '%s' does not exist (train writes runs/<name>/)", dir);
  std::string config_file = dir + "/config.yaml", weights_file = dir + "/model.safetensors";
  for (const std::string& f : {config_file, weights_file})
    if (!std::filesystem::exists(f))
      fail("run folder '%s' has no %s: is it a finished train run?", dir,
           std::filesystem::path(f).filename().string());
  LoadedRun run{config::load_config(config_file), nullptr};
  run.model = config::build_model(run.config.model);
  nn::StateDict weights = nn::safe_load(weights_file);
  nn::StateDict model = run.model->state_dict();
  try {
    nn::load_state_dict(model, weights);
  } catch (const Error& e) {
    fail("%s does not fit the model of %s: %s", weights_file, config_file, e.what());
  }
  return run;
}

}  // namespace tc::infer
