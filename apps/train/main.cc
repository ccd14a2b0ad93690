// train: trains the model a YAML config describes (apps/train/trainer.h does the work).
//   train [--config FILE] [key.path=value ...] [--resume runs/<name>] [--quiet] [--help]
#include <signal.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "apps/common/config.h"
#include "apps/train/embedded_config.h"  // kEmbeddedConfig: configs/mnist.yaml (generated)
#include "apps/train/trainer.h"
#include "tinycore/runtime/device.h"

namespace {

constexpr const char* kEmbeddedSource = "configs/mnist.yaml";

std::atomic<bool> interrupted{false};

void on_sigint(int) {
  if (interrupted.exchange(true)) _exit(130);  // a second Ctrl-C does not wait for the checkpoint
}

void usage(FILE* f) {
  std::fprintf(
      f,
      "usage: train [--config FILE] [key.path=value ...] [--resume runs/<name>] "
      "[--device NAME] [--quiet] [--help]\n"
      "\n"
      "Trains the model a YAML config describes and writes the run to "
      "<log.dir>/<log.name>/:\n"
      "config.yaml, checkpoint.safetensors (model, optimizer and position: what "
      "--resume reads),\nmodel.safetensors (the weights alone), metrics.csv (step, "
      "epoch, loss, lr, samples_per_s,\ntokens_per_s for text, eval_loss, "
      "eval_accuracy), curves.png, and vocab.bin for data.vocab chars.\n"
      "\n"
      "  --config FILE     the config (default: %s, built into this program)\n"
      "  key.path=value    overrides one config key, e.g. optim.lr=3e-4 "
      "train.epochs=2\n"
      "  --resume DIR      continues the run in DIR from its last checkpoint with its "
      "config.yaml\n"
      "                    (overrides still apply); the result equals an "
      "uninterrupted run\n"
      "  --device NAME     where to train: CPU, CUDA, CL, HIP (default: DEVICE, else the\n"
      "                    fastest available)\n"
      "  --quiet           no progress bar or progress lines, log lines only\n"
      "  --help            this text\n"
      "\n"
      "Ctrl-C (SIGINT) saves a checkpoint after the current step, then exits (130).\n"
      "Under mpirun, each rank trains on its share of every batch (train.batch_size is per\n"
      "rank) and rank 0 writes the run (keys dist.*; README: data-parallel training).\n"
      "\n"
      "Config keys (sections model, data, optim, train, log, dist):\n%s",
      kEmbeddedSource, tc::config::describe_keys().c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string config_path, resume, device;
  std::vector<std::string> overrides;
  tc::train::RunOptions opts;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    }
    if ((a == "--config" || a == "--resume" || a == "--device") && i + 1 < argc) {
      (a == "--config" ? config_path : a == "--resume" ? resume : device) = argv[++i];
    } else if (a == "--quiet") {
      opts.quiet = true;
    } else if (a.find('=') != std::string::npos && a[0] != '-') {
      overrides.push_back(a);
    } else {
      std::fprintf(stderr, "train: unknown argument '%s' (train --help lists them)\n", argv[i]);
      return 2;
    }
  }
  if (!config_path.empty() && !resume.empty()) {
    std::fprintf(stderr,
                 "train: --resume reads the run's own config.yaml; give key=value overrides "
                 "instead of --config\n");
    return 2;
  }
  try {
    if (!device.empty()) tc::runtime::set_default_device(device);
    tc::config::Config config;
    if (!resume.empty())
      config = tc::config::load_config(resume + "/config.yaml", overrides);
    else if (!config_path.empty())
      config = tc::config::load_config(config_path, overrides);
    else
      config = tc::config::parse_config(kEmbeddedConfig, kEmbeddedSource, overrides);
    opts.resume_dir = resume;
    opts.interrupt = &interrupted;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, nullptr);
    tc::train::RunResult r = tc::train::run_training(config, opts);
    switch (r.outcome) {
      case tc::train::Outcome::kFinished:
        return 0;
      case tc::train::Outcome::kInterrupted:
        return 130;
      case tc::train::Outcome::kStopped:
        std::fflush(nullptr);
        raise(SIGKILL);  // train.stop_after: die as `kill -9` would, to test --resume
        return 137;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "train: %s\n", e.what());
    return 1;
  }
}
