#include "apps/bench/dist_suite.h"

// the C API only (OpenMPI also declares a deprecated C++ one, in a library of its own)
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/str_format.h"
#include "apps/bench/measure.h"
#include "apps/bench/process.h"
#include "tinycore/dist/collectives.h"
#include "tinycore/jit/jit.h"

namespace bench {
namespace {

namespace fs = std::filesystem;

std::string human_bytes(double b) {
  return b >= (1 << 20) ? absl::StrFormat("%g MB", b / (1 << 20))
                        : absl::StrFormat("%g KB", b / (1 << 10));
}

std::vector<int64_t> sizes_bytes(bool small) {
  std::vector<int64_t> s;
  for (int64_t b = 4 << 10; b <= (small ? (256 << 10) : (64 << 20)); b *= 4) s.push_back(b);
  return s;
}

// Runs `cmd` (stdout and stderr to this process's stderr): its exit code.
int shell(const std::string& cmd) {
  int status = std::system((cmd + " 1>&2").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string self() { return fs::read_symlink("/proc/self/exe").string(); }
std::string repo() { return fs::read_symlink("/proc/self/exe").parent_path().string() + "/../.."; }

// As root OpenMPI asks for consent; under the sanitizers its ranks do not look for leaks (it
// leaves its unloaded plugins' memory to the process's end; see tests/dist/dist_test.cc)
constexpr const char* kRoot =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
    "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" ";

// The all-reduce job over `transport` ("shm": mpirun here; "tcp": two simulated hosts): its
// cases, or none (saying why) when it could not run.
std::vector<Result> allreduce_cases(const std::string& transport, bool small) {
  TempFolder tmp("tinycore-bench-dist");
  std::string answer = tmp.path + "/allreduce.json";
  std::string env = std::string(kDistRankEnv) + "=" + answer;
  std::string cmd =
      transport == "shm"
          ? absl::StrFormat(
                "%s%s timeout 600 mpirun --oversubscribe --bind-to none -np 2 -x %s "
                "%s --no-table%s",
                kRoot, env, kDistRankEnv, self(), small ? " --small" : "")
          : absl::StrFormat("%s%s bash %s/tools/two_hosts.sh -x %s %s --no-table%s", kRoot, env,
                            repo(), kDistRankEnv, self(), small ? " --small" : "");
  int rc = shell(cmd);
  if (rc != 0 || !fs::exists(answer)) {
    std::fprintf(stderr, "bench: dist: the %s all-reduce job did not run (exit %d)%s\n",
                 transport.c_str(), rc,
                 rc == 77 ? ": this machine cannot make network namespaces (root, iproute2)" : "");
    return {};
  }
  nlohmann::json j = nlohmann::json::parse(std::ifstream(answer));
  std::vector<Result> out;
  const double n = j["ranks"];
  for (const auto& c : j["cases"]) {
    double bytes = c["bytes"], raw = c["raw_ms"], ours = c["tinycore_ms"];
    auto busbw = [&](double ms) { return bytes * 2 * (n - 1) / n / (ms * 1e-3) / 1e9; };
    Result r{"dist", absl::StrFormat("allreduce %s %s", transport, human_bytes(bytes)), false, ours,
             busbw(ours)};
    r.ratios["vs_raw_mpi_allreduce"] = busbw(ours) / busbw(raw);
    r.fields["raw_busbw_gbps"] = busbw(raw);
    r.fields["raw_ms"] = raw;
    out.push_back(r);
    print(r);
  }
  return out;
}

// MNIST training samples/s (the median step after warm-up, from metrics.csv) of `train` on
// `ranks` ranks of one thread each.
double mnist_samples_per_s(int ranks, bool small) {
  TempFolder tmp("tinycore-bench-dist-train");
  int steps = small ? 6 : 30;
  std::string train = fs::read_symlink("/proc/self/exe").parent_path().string() + "/train";
  std::string args = absl::StrFormat(
      "%s --quiet train.max_steps=%d train.batch_size=%d train.eval_every=1000000 "
      "train.checkpoint_every=1000000 data.eval_limit=64 log.dir=%s log.name=run",
      train, steps, 256 / ranks, tmp.path);
  std::string cmd = ranks == 1 ? absl::StrFormat("CPU_THREADS=1 %s", args)
                               : absl::StrFormat(
                                     "%sCPU_THREADS=1 timeout 600 mpirun "
                                     "--oversubscribe --bind-to none -np %d -x "
                                     "CPU_THREADS %s",
                                     kRoot, ranks, args);
  if (shell(cmd) != 0) return 0;
  std::ifstream csv(tmp.path + "/run/metrics.csv");
  std::string line;
  std::getline(csv, line);  // header: step, epoch, loss, lr, samples_per_s, ...
  std::vector<double> rates;
  for (int row = 0; std::getline(csv, line); row++) {
    if (row < 2) continue;  // the first (plain) and second (capturing) steps
    size_t at = 0;
    for (int comma = 0; comma < 4; comma++) at = line.find(',', at) + 1;
    rates.push_back(std::stod(line.substr(at)));
  }
  if (rates.empty()) return 0;
  std::nth_element(rates.begin(), rates.begin() + rates.size() / 2, rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

std::vector<Result> dist_suite(bool small) {
  if (shell("command -v mpirun > /dev/null") != 0) {
    std::fprintf(stderr, "bench: dist: mpirun is not installed (tools/setup.sh installs it)\n");
    return {};
  }
  std::vector<Result> out = allreduce_cases("shm", small);
  if (small) {  // the smoke test: one job, in seconds
    std::printf("dist: TCP and the training runs skipped with --small\n");
    return out;
  }
  for (Result& r : allreduce_cases("tcp", small)) out.push_back(r);
  double one = mnist_samples_per_s(1, small), two = mnist_samples_per_s(2, small);
  if (one > 0 && two > 0) {
    Result r{"dist", "mnist train 2 ranks x 1 thread (batch 2x128)", false, 0, 0};
    r.fields["samples_per_s"] = two;
    r.fields["one_rank_samples_per_s"] = one;
    r.ratios["scaling_vs_one_rank"] = two / one;
    out.push_back(r);
    print(r);
  } else {
    std::fprintf(stderr, "bench: dist: the mnist training runs failed\n");
  }
  return out;
}

int dist_rank_child(const char* answer, bool small) {
  tc::dist::init(120);
  const int rank = tc::dist::rank(), ranks = tc::dist::world_size();
  nlohmann::json cases = nlohmann::json::array();
  for (int64_t bytes : sizes_bytes(small)) {
    const int64_t n = bytes / 4;
    tc::Tensor x = tc::Tensor::full({n}, 1.0f + rank).contiguous().realize();
    std::vector<float> in(n, 1.0f + rank), out(n);
    // a step of kChain all-reduces, each of the one before, as a training step holds several
    // buckets: the time of one inside a replay
    constexpr int kChain = 8;
    tc::TinyJit step([](const std::vector<tc::Tensor>& v) {
      tc::Tensor y = v[0];
      for (int i = 0; i < kChain; i++) y = tc::dist::allreduce(y);
      return std::vector<tc::Tensor>{y};
    });
    // a fixed count per size (every rank must make the same calls): ~64 MB moved a round
    const int iters = static_cast<int>(std::clamp<int64_t>((64 << 20) / bytes, 8, 2000)) / kChain;
    auto raw = [&] {
      for (int i = 0; i < iters * kChain; i++)
        MPI_Allreduce(i % 2 ? out.data() : in.data(), i % 2 ? in.data() : out.data(),
                      static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    };
    auto ours = [&] {
      for (int i = 0; i < iters; i++) step({x});
    };
    for (int i = 0; i < 3; i++) step({x});  // run, capture, replay
    // interleaved rounds, each started together; the median round
    std::vector<double> raw_ms, ours_ms;
    for (int round = 0; round < (small ? 3 : 7); round++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      raw();
      raw_ms.push_back((now() - t0) * 1e3 / (iters * kChain));
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = now();
      ours();
      ours_ms.push_back((now() - t0) * 1e3 / (iters * kChain));
    }
    // each rank starts from 1 + rank: the chain's result is their sum times ranks^(kChain - 1)
    if (step({x})[0].data<float>()[n - 1] !=
        ranks * (ranks + 1) / 2.0f * std::pow(static_cast<float>(ranks), kChain - 1))
      std::fprintf(stderr, "bench: dist: rank %d: wrong all-reduce result\n", rank);
    cases.push_back(
        {{"bytes", bytes}, {"raw_ms", median(raw_ms)}, {"tinycore_ms", median(ours_ms)}});
  }
  if (rank == 0) std::ofstream(answer) << nlohmann::json{{"ranks", ranks}, {"cases", cases}};
  return 0;
}

}  // namespace bench
