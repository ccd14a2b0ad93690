#include "apps/bench/llm_suite.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "apps/bench/gguf_write.h"
#include "apps/bench/measure.h"
#include "apps/bench/process.h"
#include "apps/infer/generator.h"
#include "apps/infer/llm_text_model.h"
#include "frontends/llm/quant.h"
#include "tinycore/error.h"
#include "tinycore/runtime/thread_pool.h"

namespace bench {

namespace {

namespace gguf = tc::gguf;
namespace fs = std::filesystem;

struct ModelShape {
  const char* name;
  int64_t layers, dim, ffn, heads, kv_heads, vocab, context;
  int64_t head_dim() const { return dim / heads; }
};
// Llama 3.2 1B, and a small model of the same kind that compiles and runs in seconds
constexpr ModelShape kFull{"llama-3.2-1b-shaped", 16, 2048, 8192, 32, 8, 128256, 131072};
constexpr ModelShape kSmall{"llama-tiny", 2, 256, 1024, 4, 2, 1024, 2048};

constexpr uint64_t kSeed = 0x6c6c616d61;  // the weights' fixed seed

struct FileType {
  const char* name;
  uint32_t type;       // of the matrices (norms and rope_freqs are F32 in every file)
  uint32_t file_type;  // llama.cpp's general.file_type (LLAMA_FTYPE_MOSTLY_*)
  uint32_t embedding;  // of token_embd, the tied output projection
};
// q4_k: the output projection in Q6_K, like llama.cpp's Q4_K_S (which also keeps a few attn_v
// and ffn_down layers in Q5_K)
constexpr FileType kTypes[] = {{"f16", gguf::F16, 1, gguf::F16},
                               {"q8_0", gguf::Q8_0, 7, gguf::Q8_0},
                               {"q4_0", gguf::Q4_0, 2, gguf::Q4_0},
                               {"q4_k", gguf::Q4_K, 14, gguf::Q6_K}};

const FileType& file_type(const std::string& name) {
  for (const FileType& t : kTypes)
    if (name == t.name) return t;
  tc::fail("llm suite: --llm-types: no type '%s' (f16, q8_0, q4_0, q4_k)", name);
}

// A status line that shows the suite working: redrawn in place on a terminal, else a line every
// few seconds (a log file).
class Status {
 public:
  void show(const std::string& line) {
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      std::fflush(stderr);
      shown_ = true;
    } else if (now() - last_ > 10) {
      std::fprintf(stderr, "%s\n", line.c_str());
      last_ = now();
    }
  }
  void done() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
    shown_ = false;
  }
  ~Status() { done(); }

 private:
  bool tty_ = isatty(STDERR_FILENO) != 0, shown_ = false;
  double last_ = -1e9;  // the first line shows at once
};

// ---------------------------------------------------------------- the model files

// The tensors llama.cpp's converter writes for Llama 3.2 1B (tied: no output.weight), matrices
// in `type` and the embedding in `embedding`; dims in GGUF order (in, out).
std::vector<GgufTensor> tensors_of(const ModelShape& m, uint32_t type, uint32_t embedding) {
  const int64_t kv = m.kv_heads * m.head_dim();
  std::vector<GgufTensor> t = {{"rope_freqs.weight", {m.head_dim() / 2}, gguf::F32},
                               {"token_embd.weight", {m.dim, m.vocab}, embedding}};
  for (int64_t i = 0; i < m.layers; i++) {
    std::string b = "blk." + std::to_string(i) + ".";
    t.push_back({b + "attn_norm.weight", {m.dim}, gguf::F32});
    t.push_back({b + "attn_q.weight", {m.dim, m.dim}, type});
    t.push_back({b + "attn_k.weight", {m.dim, kv}, type});
    t.push_back({b + "attn_v.weight", {m.dim, kv}, type});
    t.push_back({b + "attn_output.weight", {m.dim, m.dim}, type});
    t.push_back({b + "ffn_norm.weight", {m.dim}, gguf::F32});
    t.push_back({b + "ffn_gate.weight", {m.dim, m.ffn}, type});
    t.push_back({b + "ffn_up.weight", {m.dim, m.ffn}, type});
    t.push_back({b + "ffn_down.weight", {m.ffn, m.dim}, type});
  }
  t.push_back({"output_norm.weight", {m.dim}, gguf::F32});
  return t;
}

int64_t numel(const GgufTensor& t) {
  return std::accumulate(t.dims.begin(), t.dims.end(), int64_t{1}, std::multiplies<>());
}

// Llama 3's rope scaling (factor 32, low/high frequency factors 1 and 4, 8192 original positions)
// as the converter writes it: a divisor per frequency.
std::vector<float> rope_freqs(const ModelShape& m, double theta) {
  std::vector<float> f;
  for (int64_t i = 0; i < m.head_dim() / 2; i++) {
    double freq =
        std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(m.head_dim()));
    double wavelen = 2 * M_PI / freq;
    if (wavelen < 8192.0 / 4) {
      f.push_back(1);
    } else if (wavelen > 8192.0) {
      f.push_back(32);
    } else {
      double smooth = (8192.0 / wavelen - 1) / (4 - 1);
      f.push_back(static_cast<float>(1 / ((1 - smooth) / 32 + smooth)));
    }
  }
  return f;
}

// The values of tensor `index`: norms 1, matrices about normal with std 0.02 (the sum of four
// uniforms, Irwin-Hall: cheap, and the scale of a trained model's weights), from its own seed so
// that every file holds the same values whichever types are written.
std::vector<float> values_of(const GgufTensor& t, size_t index) {
  std::vector<float> v(static_cast<size_t>(numel(t)), 1.0f);
  if (t.dims.size() < 2) return v;
  uint64_t state = kSeed + index * 0x9e3779b97f4a7c15ull;
  const float scale = 0.02f * std::sqrt(3.0f) / 32768;  // 4 uniforms of 16 bits: std 0.02
  for (float& x : v) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);  // splitmix64
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    int64_t sum =
        static_cast<int64_t>(z & 0xffff) + ((z >> 16) & 0xffff) + ((z >> 32) & 0xffff) + (z >> 48);
    x = static_cast<float>(sum - 2 * 65535) * scale;
  }
  return v;
}

std::vector<uint8_t> bytes_of(const std::vector<float>& v, uint32_t type) {
  if (type == gguf::F32) {
    std::vector<uint8_t> b(v.size() * 4);
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  }
  if (type == gguf::F16) {
    std::vector<uint8_t> b(v.size() * 2);
    auto* h = reinterpret_cast<_Float16*>(b.data());
    for (size_t i = 0; i < v.size(); i++) h[i] = static_cast<_Float16>(v[i]);
    return b;
  }
  return gguf::quantize(v.data(), static_cast<int64_t>(v.size()), type);
}

gguf::Value value(uint32_t type) {
  gguf::Value v;
  v.type = type;
  return v;
}
gguf::Value uint(uint64_t u) {
  gguf::Value v = value(gguf::UINT32);
  v.u = u;
  return v;
}
gguf::Value integer(uint32_t type, int64_t i) {  // INT32, BOOL
  gguf::Value v = value(type);
  v.i = i;
  return v;
}
gguf::Value f32(double f) {
  gguf::Value v = value(gguf::FLOAT32);
  v.f = f;
  return v;
}
gguf::Value str(std::string s) {
  gguf::Value v = value(gguf::STRING);
  v.s = std::move(s);
  return v;
}
gguf::Value array(uint32_t elem_type) {
  gguf::Value v = value(gguf::ARRAY);
  v.elem_type = elem_type;
  return v;
}

// GPT-2's printable character of a byte (bytes_to_unicode), as UTF-8.
std::string byte_char(int b) {
  int cp = b;
  if (!((b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff))) {
    int n = 0;  // the n-th byte outside those ranges maps to 256 + n
    for (int c = 0; c < b; c++)
      if (!((c >= '!' && c <= '~') || (c >= 0xa1 && c <= 0xac) || (c >= 0xae && c <= 0xff))) n++;
    cp = 256 + n;
  }
  if (cp < 0x80) return std::string(1, static_cast<char>(cp));
  return {static_cast<char>(0xc0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3f))};
}

// Llama 3's keys as llama.cpp's converter writes them, with a byte-level BPE vocabulary (the 256
// bytes, a few merges, Llama 3's special tokens) padded to the model's vocabulary with reserved
// control tokens, as Llama 3's own is.
gguf::Metadata metadata_of(const ModelShape& m, const FileType& t) {
  gguf::Metadata md;
  auto& v = md.values;
  v["general.architecture"] = str("llama");
  v["general.name"] = str(std::string(m.name) + "-random");
  v["general.alignment"] = uint(32);
  v["general.file_type"] = uint(t.file_type);
  v["llama.vocab_size"] = uint(static_cast<uint64_t>(m.vocab));
  v["llama.context_length"] = uint(static_cast<uint64_t>(m.context));
  v["llama.embedding_length"] = uint(static_cast<uint64_t>(m.dim));
  v["llama.block_count"] = uint(static_cast<uint64_t>(m.layers));
  v["llama.feed_forward_length"] = uint(static_cast<uint64_t>(m.ffn));
  v["llama.attention.head_count"] = uint(static_cast<uint64_t>(m.heads));
  v["llama.attention.head_count_kv"] = uint(static_cast<uint64_t>(m.kv_heads));
  v["llama.rope.dimension_count"] = uint(static_cast<uint64_t>(m.head_dim()));
  v["llama.rope.freq_base"] = f32(500000);
  v["llama.attention.layer_norm_rms_epsilon"] = f32(1e-5);

  std::vector<std::string> tokens;
  for (int b = 0; b < 256; b++) tokens.push_back(byte_char(b));
  std::vector<std::string> merges = {"Ġ t", "t h", "h e", "i n", "Ġ a"};
  for (const std::string& mg : merges) {
    size_t space = mg.find(' ');
    tokens.push_back(mg.substr(0, space) + mg.substr(space + 1));
  }
  const int64_t normal = static_cast<int64_t>(tokens.size());
  for (const char* s : {"<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"}) tokens.push_back(s);
  for (int64_t i = 0; static_cast<int64_t>(tokens.size()) < m.vocab; i++)
    tokens.push_back(absl::StrFormat("<|reserved_special_token_%d|>", i));
  gguf::Value tok = array(gguf::STRING);
  gguf::Value types = array(gguf::INT32);
  for (size_t i = 0; i < tokens.size(); i++) {
    tok.items.push_back(str(tokens[i]));
    types.items.push_back(integer(gguf::INT32, static_cast<int64_t>(i) < normal ? 1 : 3));
  }
  gguf::Value merge = array(gguf::STRING);
  for (const std::string& mg : merges) merge.items.push_back(str(mg));
  v["tokenizer.ggml.model"] = str("gpt2");
  v["tokenizer.ggml.pre"] = str("llama-bpe");
  v["tokenizer.ggml.tokens"] = std::move(tok);
  v["tokenizer.ggml.token_type"] = std::move(types);
  v["tokenizer.ggml.merges"] = std::move(merge);
  v["tokenizer.ggml.bos_token_id"] = uint(static_cast<uint64_t>(normal));
  v["tokenizer.ggml.eos_token_id"] = uint(static_cast<uint64_t>(normal + 1));
  v["tokenizer.ggml.add_bos_token"] = integer(gguf::BOOL, 1);
  return md;
}

int64_t weight_bytes(const std::vector<GgufTensor>& tensors) {
  int64_t n = 0;
  for (const GgufTensor& t : tensors) n += t.bytes();
  return n;
}

std::string path_of(const std::string& dir, const ModelShape& m, const FileType& t) {
  return dir + "/" + m.name + "." + t.name + ".gguf";
}

// Writes the files of `types` that `dir` lacks, in one pass over the weights (each tensor made
// once, then stored in every type). Each is written beside its name and renamed when complete,
// so an interrupted run leaves no file that looks whole. False (and why) when the disk is short.
bool write_models(const std::string& dir, const ModelShape& m,
                  const std::vector<const FileType*>& types) {
  std::vector<const FileType*> missing;
  double need = 0;
  for (const FileType* t : types)
    if (!fs::exists(path_of(dir, m, *t))) {
      missing.push_back(t);
      need += static_cast<double>(weight_bytes(tensors_of(m, t->type, t->embedding))) + (16 << 20);
    }
  if (missing.empty()) return true;
  fs::create_directories(dir);
  const double free = static_cast<double>(fs::space(dir).available);
  if (free < need + (1 << 30)) {  // and 1 GiB left for everything else
    std::printf(
        "llm: skipped: the model files need %.1f GB in %s and only %.1f GB are free (set "
        "TC_BENCH_LLM_DIR to a folder with room, or ask for fewer with --llm-types)\n",
        need / 1e9, dir.c_str(), free / 1e9);
    return false;
  }
  std::printf("llm: writing %zu model file(s) (%.1f GB) into %s, once\n", missing.size(),
              need / 1e9, dir.c_str());
  std::vector<std::unique_ptr<GgufWriter>> writers;
  std::vector<std::vector<GgufTensor>> files;
  for (const FileType* t : missing) {
    files.push_back(tensors_of(m, t->type, t->embedding));
    writers.push_back(std::make_unique<GgufWriter>(path_of(dir, m, *t) + ".part",
                                                   metadata_of(m, *t), files.back()));
  }
  const std::vector<GgufTensor> layout = tensors_of(m, gguf::F32, gguf::F32);
  int64_t total = 0, done = 0;
  for (const GgufTensor& t : layout) total += numel(t);
  Status status;
  const double t0 = now();
  for (size_t i = 0; i < layout.size(); i++) {
    std::vector<float> v =
        layout[i].name == "rope_freqs.weight" ? rope_freqs(m, 500000) : values_of(layout[i], i);
    for (size_t k = 0; k < missing.size(); k++) writers[k]->write(bytes_of(v, files[k][i].type));
    done += numel(layout[i]);
    double s = now() - t0, frac = static_cast<double>(done) / static_cast<double>(total);
    int bar = static_cast<int>(24 * frac);
    status.show(absl::StrFormat("llm: writing [%s%s] %3.0f%%  %.0f M weights  ETA %.0f s",
                                std::string(bar, '#'), std::string(24 - bar, '.'), 100 * frac,
                                static_cast<double>(done) / 1e6, s / frac - s));
  }
  status.done();
  for (size_t k = 0; k < missing.size(); k++) {
    writers[k]->close();
    fs::rename(path_of(dir, m, *missing[k]) + ".part", path_of(dir, m, *missing[k]));
  }
  std::printf("llm: wrote the model files in %.1f s\n", now() - t0);
  return true;
}

// ---------------------------------------------------------------- measuring

double rss_mib(const char* key = "VmRSS:") {  // this process's resident memory
  std::ifstream f("/proc/self/status");
  for (std::string line; std::getline(f, line);)
    if (line.starts_with(key)) return std::stod(line.substr(std::strlen(key))) / 1024;
  return 0;
}

// Token ids of a prompt: BOS, then bytes from a fixed seed.
std::vector<int32_t> prompt_tokens(int64_t n, int32_t bos, uint32_t seed) {
  std::vector<int32_t> p = {bos};
  while (static_cast<int64_t>(p.size()) < n)
    p.push_back(static_cast<int32_t>((seed = seed * 1664525u + 1013904223u) >> 24));
  return p;
}

// llama-bench's prompt processing and generation tokens/s on `path`; nullopt (and why) when the
// build has no llama-bench or it fails.
struct LlamaCpp {
  double prompt_tps = 0, gen_tps = 0;
};
std::optional<LlamaCpp> llama_bench(const std::string& dir, const std::string& path, int64_t prompt,
                                    int64_t gen) {
  std::string bin;
  for (const char* sub : {"/bin/llama-bench", "/llama-bench"})
    if (fs::exists(dir + sub)) bin = dir + sub;
  if (bin.empty()) {
    std::printf("llm: llama.cpp anchor skipped: no bin/llama-bench or llama-bench in %s\n",
                dir.c_str());
    return std::nullopt;
  }
  std::string cmd = absl::StrFormat("'%s' -m '%s' -p %d -n %d -t %d -o json 2>/dev/null", bin, path,
                                    prompt, gen, tc::runtime::cpu_threads());
  std::printf("llm: running %s\n", cmd.c_str());
  std::fflush(stdout);
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    if (pclose(p) != 0) out.clear();
  }
  auto rows = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  LlamaCpp r;
  if (rows.is_array())
    for (const auto& row : rows) {
      // a prompt-processing row has n_gen 0, a generation row n_prompt 0
      (row.value("n_gen", int64_t{0}) == 0 ? r.prompt_tps : r.gen_tps) = row.value("avg_ts", 0.0);
    }
  if (r.prompt_tps <= 0 || r.gen_tps <= 0) {
    std::printf("llm: llama.cpp anchor skipped: llama-bench gave no JSON results for %s\n",
                path.c_str());
    return std::nullopt;
  }
  return r;
}

// Steps the generator until no slot is active: the seconds of each step and the tokens it made.
struct Steps {
  std::vector<double> seconds;
  std::vector<int64_t> tokens;
  // the steady steps' tokens per second, after the first `skip` (the decode step's first run and
  // its TinyJit capture)
  double tokens_per_s(size_t skip) const {
    double s = 0, n = 0;
    for (size_t i = skip; i < seconds.size(); i++)
      s += seconds[i], n += static_cast<double>(tokens[i]);
    return s > 0 ? n / s : 0;
  }
  double step_s(size_t skip) const {
    double s = 0;
    for (size_t i = skip; i < seconds.size(); i++) s += seconds[i];
    return seconds.size() > skip ? s / static_cast<double>(seconds.size() - skip) : 0;
  }
};
Steps run_steps(tc::infer::Generator& g, const std::string& what, int64_t expected) {
  Steps r;
  Status status;
  int64_t made = 0;
  while (g.active() > 0) {
    double t0 = now();
    std::vector<tc::infer::Emitted> out = g.step();
    r.seconds.push_back(now() - t0);
    r.tokens.push_back(static_cast<int64_t>(out.size()));
    made += r.tokens.back();
    status.show(absl::StrFormat("llm: %s: %d/%d tokens, %.0f ms/step", what, made, expected,
                                r.seconds.back() * 1e3));
  }
  return r;
}

constexpr size_t kWarmSteps = 2;  // the decode step's first run and its capture

std::vector<Result> measure_type(const std::string& path, const ModelShape& m, const FileType& type,
                                 int64_t prompt, int64_t gen, int64_t streams,
                                 double bandwidth_gbps, const std::optional<LlamaCpp>& anchor) {
  const std::string label = absl::StrFormat("%s %s", m.name, type.name);
  tc::llm::LoadOptions load;
  load.max_context = prompt + gen;
  tc::infer::SamplingParams greedy;
  greedy.max_tokens = gen;
  greedy.temperature = 0;
  std::printf("llm: %s: loading %s\n", label.c_str(), path.c_str());
  std::fflush(stdout);

  const double rss_before = rss_mib();
  double t0 = now();
  auto model = std::make_unique<tc::infer::LlmTextModel>(path, load);
  const double load_s = now() - t0, rss_loaded = rss_mib();
  const double bytes_per_token = static_cast<double>(model->loaded().file_bytes);
  const int32_t bos = model->loaded().tokenizer->bos().value_or(0);
  // the multiply-adds of a token: every matrix once (the tied embedding as the output)
  double macs = 0;
  for (const GgufTensor& t : tensors_of(m, gguf::F32, gguf::F32))
    if (t.dims.size() == 2) macs += static_cast<double>(numel(t));

  // prompt processing: the first prefill compiles its kernels; the second is the one a user
  // waits for once the server is warm
  std::vector<Result> results;
  double tps = 0;
  Status status;
  {  // the batch-1 generator, gone before the streams' model is loaded
    tc::infer::Generator g(std::move(model), 1);
    std::vector<int32_t> tokens = prompt_tokens(prompt, bos, 1);
    status.show(
        absl::StrFormat("llm: %s: first prefill of %d tokens (kernels compile)", label, prompt));
    t0 = now();
    g.start(tokens, greedy);
    const double first_prefill_s = now() - t0;
    g.cancel(0);
    status.show(absl::StrFormat("llm: %s: prefill of %d tokens", label, prompt));
    t0 = now();
    g.start(tokens, greedy);
    const double ttft = now() - t0;
    status.done();
    Result pp{"llm", absl::StrFormat("%s pp%d", label, prompt), true};
    pp.time_ms = ttft * 1e3;
    pp.rate = 2 * macs * static_cast<double>(prompt) / ttft / 1e9;
    pp.fields["tokens_per_s"] = static_cast<double>(prompt) / ttft;
    pp.fields["first_token_s"] = ttft;
    pp.fields["first_prefill_s"] = first_prefill_s;
    pp.fields["load_s"] = load_s;
    pp.fields["rss_after_load_mib"] = rss_loaded;
    pp.fields["rss_model_mib"] = rss_loaded - rss_before;
    if (anchor) {
      pp.fields["llama_cpp_tokens_per_s"] = anchor->prompt_tps;
      pp.ratios["ratio_vs_llama_cpp"] = pp.fields["tokens_per_s"] / anchor->prompt_tps;
    }
    print(pp);

    // generation at batch 1, after the prompt
    Steps b1 = run_steps(g, label + " generation b1", gen);
    Result tg{"llm", absl::StrFormat("%s tg%d b1", label, gen), false};
    tps = b1.tokens_per_s(kWarmSteps);
    const double limit = bandwidth_gbps * 1e9 / bytes_per_token;
    tg.time_ms = b1.step_s(kWarmSteps) * 1e3;
    tg.rate = bytes_per_token * tps / 1e9;  // the weights' bytes read per second
    tg.fields["tokens_per_s"] = tps;
    tg.fields["first_steps_s"] =
        b1.seconds.size() >= kWarmSteps ? b1.seconds[0] + b1.seconds[1] : 0;
    tg.fields["weight_bytes_per_token"] = bytes_per_token;
    tg.fields["bandwidth_gbps"] = bandwidth_gbps;
    tg.fields["bandwidth_limit_tokens_per_s"] = limit;
    tg.fields["rss_after_generate_mib"] = rss_mib();
    tg.ratios["fraction_of_bandwidth_limit"] = tps / limit;
    if (anchor) {
      tg.fields["llama_cpp_tokens_per_s"] = anchor->gen_tps;
      tg.ratios["ratio_vs_llama_cpp"] = tps / anchor->gen_tps;
    }
    print(tg);
    results = {pp, tg};
  }
  if (streams < 2) return results;

  // concurrent streams: a generator of `streams` slots on the file loaded again, every stream
  // started with a short prompt of its own, then decoded together (a step reads the weights once)
  tc::infer::Generator many(std::make_unique<tc::infer::LlmTextModel>(path, load), streams);
  const int64_t short_prompt = std::min<int64_t>(prompt, 32);
  for (int64_t s = 0; s < streams; s++) {
    status.show(absl::StrFormat("llm: %s: starting stream %d of %d (a prefill of %d tokens)", label,
                                s + 1, streams, short_prompt));
    many.start(prompt_tokens(short_prompt, bos, static_cast<uint32_t>(s + 2)), greedy);
  }
  status.done();
  Steps bn = run_steps(many, absl::StrFormat("%s generation x%d", label, streams), gen * streams);
  Result st{"llm", absl::StrFormat("%s tg%d x%d streams", label, gen, streams), false};
  const double aggregate = bn.tokens_per_s(kWarmSteps);
  st.time_ms = bn.step_s(kWarmSteps) * 1e3;
  st.rate = bytes_per_token / bn.step_s(kWarmSteps) / 1e9;
  st.fields["tokens_per_s"] = aggregate;
  st.fields["tokens_per_s_per_stream"] = aggregate / static_cast<double>(streams);
  st.fields["rss_after_generate_mib"] = rss_mib();
  st.fields["rss_peak_mib"] = rss_mib("VmHWM:");
  st.ratios["streams_speedup"] = aggregate / tps;  // over batch 1
  print(st);
  results.push_back(st);
  return results;
}

}  // namespace

std::vector<Result> llm_suite(const LlmOptions& o, double bandwidth_gbps) {
  const ModelShape& m = o.small ? kSmall : kFull;
  const int64_t prompt = o.prompt > 0 ? o.prompt : o.small ? 32 : 512;
  const int64_t gen = o.gen > 0 ? o.gen : o.small ? 16 : 128;
  const int64_t streams = o.streams > 0 ? o.streams : o.small ? 2 : 8;
  std::vector<const FileType*> types;
  for (const std::string& t : o.types) types.push_back(&file_type(t));
  // the small model is written afresh into a scratch folder: a smoke test leaves nothing behind
  std::optional<TempFolder> scratch;
  if (o.small) scratch.emplace("tc_bench_llm_");
  const std::string dir =
      o.small ? scratch->path : cache_folder("tinycore-bench-llm", "TC_BENCH_LLM_DIR");
  if (!write_models(dir, m, types)) return {};
  if (o.llama_cpp.empty())
    std::printf("llm: no --llama-cpp DIR given: the llama.cpp anchor is skipped\n");
  std::printf(
      "llm: %s (%lld layers, d %lld, FFN %lld, %lld/%lld heads, vocab %lld), random weights; "
      "prompt %lld tokens, generation %lld tokens at batch 1 and with %lld streams, %d threads\n",
      m.name, static_cast<long long>(m.layers), static_cast<long long>(m.dim),
      static_cast<long long>(m.ffn), static_cast<long long>(m.heads),
      static_cast<long long>(m.kv_heads), static_cast<long long>(m.vocab),
      static_cast<long long>(prompt), static_cast<long long>(gen), static_cast<long long>(streams),
      tc::runtime::cpu_threads());
  std::vector<Result> results;
  for (const FileType* t : types) {
    const std::string path = path_of(dir, m, *t);
    std::optional<LlamaCpp> anchor;
    if (!o.llama_cpp.empty()) anchor = llama_bench(o.llama_cpp, path, prompt, gen);
    for (Result& r : measure_type(path, m, *t, prompt, gen, streams, bandwidth_gbps, anchor))
      results.push_back(std::move(r));
  }
  return results;
}

}  // namespace bench
