// The llm suite (issue 33): a Llama-3.2-1B-shaped model (16 layers, d 2048, FFN 8192, 32/8 heads,
// vocab 128256) with random weights, written once as GGUF F16, Q8_0, Q4_0 and Q4_K files, run
// through infer's public path (LlmTextModel, Generator): load time, prompt processing and its
// time to first token, generation at batch 1 and with concurrent streams, resident memory; beside
// the memory-bandwidth limit (weight bytes per token over the measured bandwidth) and beside
// llama.cpp's llama-bench on the same files when a llama.cpp build is given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/bench/report.h"

namespace bench {

struct LlmOptions {
  std::vector<std::string> types = {"f16", "q8_0", "q4_0", "q4_k"};  // which files
  // 0: the suite's sizes (512, 128, 8; with `small` 32, 16, 2)
  int64_t prompt = 0, gen = 0, streams = 0;
  std::string llama_cpp;  // a llama.cpp build folder (bin/llama-bench or llama-bench), or ""
  bool small = false;     // a 2-layer, d 256, vocab 1024 model in a scratch folder
};

// Throws tc::Error for a type it does not know; where the cache folder lacks the disk space for
// the files it must write, says so and returns no case. `bandwidth_gbps`: the device's measured
// memory bandwidth (STREAM triad on the CPU).
std::vector<Result> llm_suite(const LlmOptions& o, double bandwidth_gbps);

}  // namespace bench
