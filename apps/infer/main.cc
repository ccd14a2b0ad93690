// infer: a trained run's model from the command line, or served over HTTP.
//   infer --run DIR --image FILE [--topk K]
//   infer --run DIR --text PROMPT [--max-tokens N] [--temperature T] [--top-k K] [--top-p P]
//         [--seed S]
//   infer serve --run DIR [--host H] [--port P] [server options]
//   infer --model M.onnx (--input [NAME=]FILE.npy ... | --image FILE [--size HxW] [--mean r,g,b]
//         [--std r,g,b]) [--output DIR]
//   infer serve --model M.onnx [--name NAME] [server options]
//   infer --model M.gguf|HF_DIR (--prompt TEXT | --chat [--system TEXT]) [sampling options]
#include <signal.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "apps/infer/classifier.h"
#include "apps/infer/generator.h"
#include "apps/infer/llm_cli.h"
#include "apps/infer/llm_text_model.h"
#include "apps/infer/onnx_cli.h"
#include "apps/infer/server.h"
#include "tinycore/error.h"
#include "tinycore/runtime/device.h"

namespace {

using tc::fail;

void usage(FILE* f) {
  std::fprintf(
      f,
      "usage: infer --run DIR --image FILE [--topk K]\n"
      "       infer --run DIR --text PROMPT [--max-tokens N] [--temperature T] [--top-k K]\n"
      "             [--top-p P] [--seed S]\n"
      "       infer serve --run DIR [--host H] [--port P] [server options]\n"
      "       infer --model M.onnx (--input [NAME=]FILE.npy ... | --image FILE [--size HxW]\n"
      "             [--mean r,g,b] [--std r,g,b]) [--output DIR]\n"
      "       infer serve --model M.onnx [--name NAME] [server options]\n"
      "       infer --model M.gguf|HF_DIR (--prompt TEXT | --chat [--system TEXT])\n"
      "             [--max-tokens N] [--temperature T] [--top-k K] [--top-p P] [--min-p P]\n"
      "             [--repeat-penalty R] [--stop TEXT]... [--seed S] [--max-context N]\n"
      "             [--quantize q8_0|q4_0|q4_k|q6_k] [--chat-template llama3|chatml|mistral]\n"
      "\n"
      "Runs the model of a finished train run (DIR holds its config.yaml and "
      "model.safetensors).\n"
      "\n"
      "  --run DIR          the run folder, e.g. runs/mnist\n"
      "  --image FILE       classify an image (PNG, JPEG, BMP, GIF, TGA, PNM); prints the top "
      "classes\n"
      "  --topk K           how many classes to print (default 5, at most the model's "
      "classes)\n"
      "  --text PROMPT      continue PROMPT with a GPT run, printing tokens as they are made\n"
      "  --max-tokens N     tokens to generate (default 64; the context bounds prompt + "
      "tokens)\n"
      "  --temperature T    sampling temperature, 0 = greedy (default 1)\n"
      "  --top-k K          sample from the K most probable tokens (default 0 = all)\n"
      "  --top-p P          sample from the smallest set holding probability P (default 1)\n"
      "  --seed S           sampling seed (default 0): equal seeds give equal text\n"
      "\n"
      "  --model FILE       run an ONNX model instead: prints each output (name, dtype, shape, "
      "values)\n"
      "  --input [NAME=]F   an input from a .npy file (repeatable; NAME may be left out when the "
      "model\n"
      "                     has one input)\n"
      "  --image FILE       with --model: an image as the NCHW float32 input, batch 1, scaled to "
      "0..1\n"
      "  --size HxW         its size (or N for NxN; default: the input's declared size)\n"
      "  --mean r,g,b       subtracted per channel after scaling (default 0)\n"
      "  --std r,g,b        divided by per channel (default 1)\n"
      "  --output DIR       save the outputs as DIR/<name>.npy instead of printing them\n"
      "\n"
      "  --model M.gguf|DIR a language model instead: a GGUF file (the first of a split set) or "
      "a\n"
      "                     Hugging Face folder (config.json, safetensors, tokenizer.json)\n"
      "  --prompt TEXT      continue TEXT, printing tokens as they are made\n"
      "  --chat             a conversation: each line of input is a user turn, in the model's "
      "chat\n"
      "                     format (--chat-template names one: llama3, chatml, mistral)\n"
      "  --system TEXT      a system message that opens the chat\n"
      "  sampling           as above; for language models the defaults are llama.cpp's: "
      "temperature\n"
      "                     0.8, top-k 40, top-p 0.95, min-p 0.05; --repeat-penalty R (default "
      "1)\n"
      "                     divides the logits of the last 64 tokens; --stop TEXT (repeatable) "
      "ends\n"
      "                     the text before TEXT\n"
      "  --max-context N    positions the KV cache holds (default: the model's, at most 4096)\n"
      "  --quantize TYPE    quantize float weights on load: q8_0, q4_0, q4_k or q6_k\n"
      "\n"
      "serve: an HTTP server with POST /v1/classify, POST /v1/completions (OpenAI-shaped, "
      "stream: true\n"
      "for server-sent events), GET /healthz and GET /metrics (Prometheus).\n"
      "  --host H           address to bind (default 127.0.0.1: this machine only)\n"
      "  --port P           port (default 8080; 0 picks a free one and prints it)\n"
      "  --max-batch N      images per model step, or sequences decoding together "
      "(default 8)\n"
      "  --batch-wait-ms MS how long a request waits for others to batch with (default 2)\n"
      "  --queue N          requests waiting for the model; more are answered 503 (default "
      "64)\n"
      "  --max-body-bytes N larger request bodies are answered 413 (default 8388608)\n"
      "  --max-image-side N larger images are answered 413 (default 4096)\n"
      "  --max-tokens N     the most tokens a completion may ask for (default 256)\n"
      "  --timeout S        seconds a request may wait and run, and a socket may stall "
      "(default 30)\n"
      "  --threads N        HTTP event-loop threads, each serving any number of connections "
      "(default 1)\n"
      "  --name NAME        the name an ONNX or language model is served under (default: its "
      "file\n"
      "                     or folder name)\n"
      "serve --model M.gguf|DIR also answers POST /v1/chat/completions and GET /v1/models "
      "(OpenAI's\n"
      "shapes); --max-context, --quantize and --chat-template apply as above.\n"
      "serve --model answers KServe's Open Inference Protocol v2 (as Triton): GET "
      "/v2/health/ready,\n"
      "GET /v2/models/NAME (inputs and outputs), POST /v2/models/NAME/infer; and /healthz, "
      "/metrics.\n"
      "\n"
      "  --device NAME      where the model runs: CPU, CUDA, CL, HIP (default: DEVICE, else the\n"
      "                     fastest available)\n"
      "  --help             this text\n");
}

int64_t to_int(const std::string& flag, const std::string& v) {
  int64_t x = 0;
  if (!absl::SimpleAtoi(v, &x)) fail("%s: expected an integer, got '%s'", flag, v);
  return x;
}
double to_double(const std::string& flag, const std::string& v) {
  double x = 0;
  if (!absl::SimpleAtod(v, &x) || !std::isfinite(x))
    fail("%s: expected a number, got '%s'", flag, v);
  return x;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("--image: cannot read '%s'", path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int classify(const std::map<std::string, std::string>& a) {
  tc::infer::Classifier model(a.at("--run"));
  int64_t topk = a.count("--topk") ? to_int("--topk", a.at("--topk")) : 5;
  if (topk < 1 || topk > model.classes())
    fail("--topk: expected an integer in 1..%d, got %d", model.classes(), topk);
  std::string path = a.at("--image");
  std::vector<float> x;
  try {
    x = model.preprocess(read_file(path));
  } catch (const tc::Error& e) {
    fail("%s: %s", path, e.what());
  }
  std::vector<std::vector<tc::infer::ClassScore>> scores = model.classify({x}, topk);
  for (const tc::infer::ClassScore& s : scores[0])
    std::printf("%8.4f  %s (%lld)\n", s.prob, s.label.c_str(), static_cast<long long>(s.index));
  return 0;
}

// The sampling flags over `p`'s defaults.
tc::infer::SamplingParams sampling(const std::map<std::string, std::string>& a,
                                   const std::vector<std::string>& stops,
                                   tc::infer::SamplingParams p) {
  auto get = [&](const char* k) { return a.count(k) ? &a.at(k) : nullptr; };
  if (auto v = get("--max-tokens")) p.max_tokens = to_int("--max-tokens", *v);
  if (auto v = get("--temperature")) p.temperature = to_double("--temperature", *v);
  if (auto v = get("--top-k")) p.top_k = to_int("--top-k", *v);
  if (auto v = get("--top-p")) p.top_p = to_double("--top-p", *v);
  if (auto v = get("--min-p")) p.min_p = to_double("--min-p", *v);
  if (auto v = get("--repeat-penalty")) p.repetition_penalty = to_double("--repeat-penalty", *v);
  if (auto v = get("--seed")) p.seed = static_cast<uint64_t>(to_int("--seed", *v));
  p.stop = stops;
  if (p.max_tokens < 1) fail("--max-tokens: expected at least 1, got %d", p.max_tokens);
  if (p.temperature < 0) fail("--temperature: expected 0 or more, got %g", p.temperature);
  if (p.top_k < 0) fail("--top-k: expected 0 or more, got %d", p.top_k);
  if (!(p.top_p > 0 && p.top_p <= 1)) fail("--top-p: expected a number in (0, 1], got %g", p.top_p);
  if (!(p.min_p >= 0 && p.min_p <= 1))
    fail("--min-p: expected a number in [0, 1], got %g", p.min_p);
  if (!(p.repetition_penalty > 0))
    fail("--repeat-penalty: expected a positive number, got %g", p.repetition_penalty);
  return p;
}

int generate(const std::map<std::string, std::string>& a, const std::vector<std::string>& stops) {
  tc::infer::Generator model(a.at("--run"));
  tc::infer::SamplingParams p = sampling(a, stops, {});
  const std::string& prompt = a.at("--text");
  model.encode(prompt);  // a prompt the run cannot take fails before any of it is printed
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  std::fflush(stdout);
  model.generate(prompt, p, [](const tc::infer::Emitted& e) {
    std::fwrite(e.text.data(), 1, e.text.size(), stdout);
    std::fflush(stdout);  // streamed: each token shows as it is made
  });
  std::printf("\n");
  return 0;
}

int run_model(const std::map<std::string, std::string>& a, const std::vector<std::string>& inputs) {
  auto get = [&](const char* k) { return a.count(k) ? a.at(k) : std::string(); };
  tc::infer::run_onnx_cli({.model = a.at("--model"),
                           .inputs = inputs,
                           .image = get("--image"),
                           .size = get("--size"),
                           .mean = get("--mean"),
                           .std = get("--std"),
                           .output_dir = get("--output")},
                          stdout);
  return 0;
}

int run_language_model(const std::map<std::string, std::string>& a,
                       const std::vector<std::string>& stops) {
  auto get = [&](const char* k) { return a.count(k) ? a.at(k) : std::string(); };
  tc::infer::LlmCliArgs args{
      .model = a.at("--model"),
      .prompt = get("--prompt"),
      .chat = a.count("--chat") > 0,
      .system = get("--system"),
      .chat_template = get("--chat-template"),
      .load = {},
      .params = sampling(
          a, stops,
          {.max_tokens = 256, .temperature = 0.8, .top_k = 40, .top_p = 0.95, .min_p = 0.05})};
  if (a.count("--max-context"))
    args.load.max_context = to_int("--max-context", a.at("--max-context"));
  if (args.load.max_context < 1)
    fail("--max-context: expected at least 1, got %d", args.load.max_context);
  args.load.quantize = get("--quantize");
  tc::infer::run_llm_cli(args, stdin, stdout, stderr);
  return 0;
}

int serve(const std::map<std::string, std::string>& a) {
  tc::infer::ServerOptions o;
  auto get = [&](const char* k) { return a.count(k) ? &a.at(k) : nullptr; };
  if (auto v = get("--host")) o.host = *v;
  if (auto v = get("--port")) o.port = static_cast<int>(to_int("--port", *v));
  if (auto v = get("--max-batch")) o.max_batch = to_int("--max-batch", *v);
  if (auto v = get("--batch-wait-ms")) o.batch_wait_ms = to_double("--batch-wait-ms", *v);
  if (auto v = get("--queue")) o.queue_limit = to_int("--queue", *v);
  if (auto v = get("--max-body-bytes")) o.max_body_bytes = to_int("--max-body-bytes", *v);
  if (auto v = get("--max-image-side")) o.image.max_side = to_int("--max-image-side", *v);
  if (auto v = get("--max-tokens")) o.max_tokens = to_int("--max-tokens", *v);
  if (auto v = get("--timeout")) o.request_timeout_s = to_double("--timeout", *v);
  if (auto v = get("--threads")) o.threads = static_cast<int>(to_int("--threads", *v));
  if (auto v = get("--name")) o.model_name = *v;
  if (auto v = get("--max-context")) o.max_context = to_int("--max-context", *v);
  if (auto v = get("--quantize")) o.quantize = *v;
  if (auto v = get("--chat-template")) o.chat_template = *v;
  if (o.port < 0 || o.port > 65535) fail("--port: expected 0..65535, got %d", o.port);
  if (o.max_batch < 1 || o.queue_limit < 1 || o.max_body_bytes < 1 || o.image.max_side < 1 ||
      o.max_tokens < 1 || o.threads < 1 || !(o.request_timeout_s > 0) || o.batch_wait_ms < 0)
    fail(
        "serve: --max-batch, --queue, --max-body-bytes, --max-image-side, --max-tokens, "
        "--threads and --timeout must be positive, --batch-wait-ms 0 or more");
  // SIGINT/SIGTERM are taken by a thread of their own (sigwait), which stops the server cleanly.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const std::string& source = a.count("--model") ? a.at("--model") : a.at("--run");
  tc::infer::Server server(source, o);
  std::fprintf(stderr, "infer: serving %s on http://%s:%d\n", source.c_str(), o.host.c_str(),
               server.port());
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server.stop();
  });
  server.run();
  pthread_kill(stopper.native_handle(), SIGTERM);  // wakes the stopper if run() ended itself
  stopper.join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  static const std::set<std::string> kValued = {"--run",
                                                "--image",
                                                "--topk",
                                                "--text",
                                                "--max-tokens",
                                                "--temperature",
                                                "--top-k",
                                                "--top-p",
                                                "--seed",
                                                "--host",
                                                "--port",
                                                "--max-batch",
                                                "--batch-wait-ms",
                                                "--queue",
                                                "--max-body-bytes",
                                                "--max-image-side",
                                                "--timeout",
                                                "--threads",
                                                "--device",
                                                "--model",
                                                "--input",
                                                "--output",
                                                "--size",
                                                "--mean",
                                                "--std",
                                                "--name",
                                                "--prompt",
                                                "--system",
                                                "--chat-template",
                                                "--max-context",
                                                "--quantize",
                                                "--min-p",
                                                "--repeat-penalty",
                                                "--stop"};
  bool serving = argc > 1 && std::string(argv[1]) == "serve";
  std::map<std::string, std::string> args;
  std::vector<std::string> inputs, stops;  // --input and --stop, the flags that repeat
  for (int i = serving ? 2 : 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    }
    if (a == "--chat") {  // the one flag without a value
      args[a] = "";
      continue;
    }
    if (!kValued.count(a)) {
      std::fprintf(stderr, "infer: unknown argument '%s' (infer --help lists them)\n", argv[i]);
      return 2;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "infer: %s needs a value\n", argv[i]);
      return 2;
    }
    if (a == "--input")
      inputs.push_back(argv[++i]);
    else if (a == "--stop")
      stops.push_back(argv[++i]);
    else
      args[a] = argv[++i];
  }
  const bool llm = args.count("--model") && tc::infer::is_language_model(args["--model"]);
  const bool onnx = args.count("--model") && !llm;
  if (llm) {
    if (args.count("--run") || (!serving && args.count("--prompt") == args.count("--chat"))) {
      std::fprintf(stderr,
                   "infer: give --model M.gguf|DIR with one of --prompt TEXT or --chat (infer "
                   "--help)\n");
      return 2;
    }
  } else if (onnx) {
    if (args.count("--run") || args.count("--text") ||
        (!serving && inputs.empty() && !args.count("--image"))) {
      std::fprintf(stderr,
                   "infer: give --model FILE with --input [NAME=]FILE.npy or --image FILE, or "
                   "serve --model FILE (infer --help)\n");
      return 2;
    }
  } else if (!args.count("--run") || (!serving && args.count("--image") == args.count("--text"))) {
    std::fprintf(stderr,
                 "infer: give --run DIR and one of --image FILE or --text PROMPT, or serve --run "
                 "DIR (infer --help)\n");
    return 2;
  }
  try {
    if (args.count("--device")) tc::runtime::set_default_device(args["--device"]);
    if (serving) return serve(args);
    if (llm) return run_language_model(args, stops);
    if (onnx) return run_model(args, inputs);
    return args.count("--image") ? classify(args) : generate(args, stops);
  } catch (const tc::Error& e) {
    std::fprintf(stderr, "infer: %s\n", e.what());
    // With --model every tc::Error is about what was given (the model, an input, an argument).
    return onnx || llm ? 2 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "infer: %s\n", e.what());
    return 1;
  }
}
