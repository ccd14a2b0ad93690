// tinycore/dist and data-parallel `train` under mpirun. The DistRanks tests run as the ranks of a
// job (this program started by mpirun, see Dist.CollectivesOnTwoRanks) and skip otherwise; the
// Dist tests start those jobs, and `train` ones, and compare them with one process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nn/layers.h"
#include "nn/models.h"
#include "nn/state.h"
#include "tests/run_command.h"
#include "tests/train/tiny_run.h"
#include "tinycore/dist/collectives.h"
#include "tinycore/jit/jit.h"
#include "tinycore/tensor.h"

namespace tc {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// ---- the ranks' side

// They run only as the ranks of a job: a plain run of this program leaves them out (a
// --gtest_filter on the command line, as Dist.CollectivesOnTwoRanks gives its ranks, overrides).
const bool kRanksOnlyUnderMpirun = [] {
  if (!std::getenv("OMPI_COMM_WORLD_SIZE")) setenv("GTEST_FILTER", "-DistRanks.*", 0);
  return true;
}();

class DistRanks : public ::testing::Test {
 protected:
  void SetUp() override {
    // 120 s: a rank may wait that long for the other's first compile of a whole convnet (a cold
    // kernel cache, CHECK_RENDER or ASan, two ranks on two cores beside its own MPI polling);
    // one CI run saw a rank wait more than 30 s there
    dist::init(120);
    if (!dist::distributed()) GTEST_SKIP() << "runs as the ranks of an mpirun job (Dist.*)";
  }
};

// Rank r's values of a case: distinct per rank and per element, exactly representable sums.
std::vector<float> values_of(int rank, int64_t n, int salt) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; i++)
    v[i] = static_cast<float>(((i * 7919 + salt * 31 + rank * 104729) % 2001) - 1000) / 8;
  return v;
}

TEST_F(DistRanks, AllreduceOfFuzzedSizesEqualsTheManualReduction) {
  const int ranks = dist::world_size();
  std::srand(12345);  // every rank draws the same sizes
  for (int c = 0; c < 12; c++) {
    int64_t n = 1 + std::rand() % (c < 10 ? 5000 : 3000000);
    for (dist::ReduceOp op : {dist::ReduceOp::kSum, dist::ReduceOp::kMax, dist::ReduceOp::kMin}) {
      std::vector<float> want = values_of(0, n, c);
      for (int r = 1; r < ranks; r++) {
        std::vector<float> v = values_of(r, n, c);
        for (int64_t i = 0; i < n; i++)
          want[i] = op == dist::ReduceOp::kSum   ? want[i] + v[i]
                    : op == dist::ReduceOp::kMax ? std::max(want[i], v[i])
                                                 : std::min(want[i], v[i]);
      }
      Tensor x = Tensor(values_of(dist::rank(), n, c), Shape{n});
      // an expression in, an expression out: the collective sits inside the graph
      std::vector<float> got = (dist::allreduce(x * 2, op) / 2).data<float>();
      ASSERT_EQ(got, want) << "case " << c << " of " << n << " elements";
    }
  }
}

TEST_F(DistRanks, CapturedStepsReplayTheirCollectives) {
  const int ranks = dist::world_size();
  TinyJit step([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{dist::allreduce(in[0] + 1).sum()};
  });
  for (int call = 0; call < 5; call++) {
    double want = 0;
    for (int r = 0; r < ranks; r++)
      for (float v : values_of(r, 100, call)) want += v + 1;
    Tensor x = Tensor(values_of(dist::rank(), 100, call), Shape{100});
    EXPECT_DOUBLE_EQ(step({x})[0].item<float>(), want) << "call " << call;
  }
  EXPECT_TRUE(step.captured());
}

// Rank r holds x_r and computes L_r = sum(c_r * mean_r'(w * x_r')); the gradients of w, averaged
// over the ranks, are those of mean_r L_r, as one process holding every x_r would compute them.
TEST_F(DistRanks, GradientsThroughAllreduceAveragedOverRanksAreTheWholeBatchs) {
  const int ranks = dist::world_size(), n = 6;
  auto x_of = [](int r) { return values_of(r, 6, 3); };
  auto c_of = [](int r) { return values_of(r, 6, 4); };
  Tensor w = Tensor(values_of(99, n, 5), Shape{n}).requires_grad_();
  Tensor local = w * Tensor(x_of(dist::rank()), Shape{n});
  Tensor loss = (Tensor(c_of(dist::rank()), Shape{n}) * (dist::allreduce(local) / ranks)).sum();
  loss.backward();
  dist::average_gradients({w});
  // d/dw of mean_r sum(c_r * mean_r'(w x_r')) = mean_r(c_r) * mean_r'(x_r')
  std::vector<double> cm(n, 0), xm(n, 0);
  for (int r = 0; r < ranks; r++)
    for (int i = 0; i < n; i++) cm[i] += c_of(r)[i] / ranks, xm[i] += x_of(r)[i] / ranks;
  std::vector<float> got = w.grad()->data<float>();
  for (int i = 0; i < n; i++) EXPECT_NEAR(got[i], cm[i] * xm[i], 1e-4 * std::abs(cm[i] * xm[i]));
}

// Synced batchnorm on each rank's share of a batch: the outputs, and the averaged gradients, of
// one process normalizing the whole batch.
TEST_F(DistRanks, SyncedBatchnormOnSharesIsTheWholeBatchs) {
  const int ranks = dist::world_size(), rows = 3, c = 4;
  Tensor::manual_seed(7);
  Tensor whole = Tensor::randn({rows * ranks, c, 5, 5}).realize(),
         w0 = Tensor::randn({c}).realize();
  Tensor target = Tensor::randn({rows * ranks, c, 5, 5}).realize();
  auto run = [&](const Tensor& x, const Tensor& t, bool sync) {
    nn::BatchNorm bn(c);
    nn::BatchNorm::sync_statistics({});
    if (sync)
      nn::BatchNorm::sync_statistics(
          {[ranks](const Tensor& s) { return dist::allreduce(s) / ranks; }, ranks});
    Tensor w = w0.clone().realize().requires_grad_();
    Tensor::Train train;
    Tensor y = bn(x * w.reshape({1, c, 1, 1}));
    ((y - t).square().mean()).backward();
    std::vector<Tensor> params = bn.parameters();
    params.push_back(w);
    if (sync) dist::average_gradients(params);
    nn::BatchNorm::sync_statistics({});
    std::vector<std::vector<float>> out = {y.data<float>(), bn.running_var.data<float>()};
    for (const Tensor& p : params) out.push_back(p.grad()->data<float>());
    return out;
  };
  auto share = [&](const Tensor& t) {
    return t.shrink({{dist::rank() * rows, (dist::rank() + 1) * rows}, {0, c}, {0, 5}, {0, 5}});
  };
  std::vector<std::vector<float>> want = run(whole, target, false);
  std::vector<std::vector<float>> got = run(share(whole), share(target), true);
  // this rank's rows of the output
  std::vector<float> rows_of_want(want[0].begin() + dist::rank() * rows * c * 25,
                                  want[0].begin() + (dist::rank() + 1) * rows * c * 25);
  want[0] = rows_of_want;
  for (size_t k = 0; k < want.size(); k++) {
    ASSERT_EQ(got[k].size(), want[k].size());
    for (size_t i = 0; i < want[k].size(); i++)
      EXPECT_NEAR(got[k][i], want[k][i], 1e-5 + 1e-5 * std::abs(want[k][i])) << k << " " << i;
  }
}

// The MNIST convnet (synced batchnorm) on shares of a batch whose inputs are mostly zeros, as
// images are. At 2 ranks the whole batch is 32, the first batchnorm's width: that once sent the
// loss's own zeros of shape (32,) into the batchnorm's bias gradient (Tensor::Impl::set_uop).
TEST_F(DistRanks, ConvnetGradientsOnSharesAreTheWholeBatchs) {
  const int ranks = dist::world_size(), rows = 16;
  Tensor::manual_seed(3);
  Tensor x = (Tensor::randn({rows * ranks, 1, 28, 28}) - 1).relu().realize();
  Tensor y = (Tensor::rand({rows * ranks}) * 10).cast(dtypes::int32).realize();
  auto grads = [&](const Tensor& xs, const Tensor& ys, bool sync) {
    Tensor::manual_seed(5);
    std::unique_ptr<nn::Module> model = nn::mnist_convnet(10);
    nn::BatchNorm::sync_statistics({});
    if (sync)
      nn::BatchNorm::sync_statistics(
          {[ranks](const Tensor& s) { return dist::allreduce(s) / ranks; }, ranks});
    Tensor::Train train;
    std::vector<Tensor> params = model->parameters();
    for (Tensor& p : params) p.requires_grad_();
    (*model)(xs).sparse_categorical_crossentropy(ys).backward();
    if (sync) dist::average_gradients(params);
    nn::BatchNorm::sync_statistics({});
    std::vector<std::vector<float>> out;
    for (const Tensor& p : params) out.push_back(p.grad()->data<float>());
    return out;
  };
  int r = dist::rank();
  std::vector<std::vector<float>> want = grads(x, y, false);
  std::vector<std::vector<float>> got =
      grads(x.shrink({{r * rows, (r + 1) * rows}, {0, 1}, {0, 28}, {0, 28}}),
            y.shrink({{r * rows, (r + 1) * rows}}), true);
  for (size_t k = 0; k < want.size(); k++) {
    double scale = 0;
    for (float v : want[k]) scale = std::max(scale, std::abs(double{v}));
    for (size_t i = 0; i < want[k].size(); i++)
      ASSERT_NEAR(got[k][i], want[k][i], 1e-5 * scale) << "parameter " << k << " element " << i;
  }
}

TEST_F(DistRanks, BroadcastGivesEveryRankTheRootsValues) {
  Tensor a = Tensor(values_of(dist::rank(), 10, 1), Shape{2, 5});
  Tensor b = Tensor::full({3}, dist::rank() + 7, dtypes::int32).contiguous().realize();
  dist::broadcast({a, b});
  EXPECT_EQ(a.data<float>(), values_of(0, 10, 1));
  EXPECT_EQ(b.data<int32_t>(), (std::vector<int32_t>{7, 7, 7}));
}

// ---- jobs started from here

bool have_mpirun() { return std::system("command -v mpirun > /dev/null 2>&1") == 0; }

std::string programs() { return fs::read_symlink("/proc/self/exe").parent_path().string(); }

// An mpirun command line for `np` ranks of `program` (its args single-quoted). As root it needs
// OpenMPI's consent; every rank gets a core's share, unpinned (pinned ranks of a 2-core machine
// take turns on one core). `two_hosts`: 2 ranks on two simulated hosts instead
// (tools/two_hosts.sh, which exits 77 where it cannot make them). Under the sanitizers the ranks
// do not look for leaks: OpenMPI leaves its plugins' memory to the process's end (hundreds of
// allocations, in libraries it has unloaded by then, so no suppression can name them).
std::string mpirun(int np, const std::string& program, const std::vector<std::string>& args,
                   bool two_hosts = false) {
  std::string cmd = "ASAN_OPTIONS=\"${ASAN_OPTIONS:-}:detect_leaks=0\" ";
  cmd += two_hosts ? "bash " + tinyrun::kRoot + "/tools/two_hosts.sh " + program
                   : "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout "
                     "300 mpirun --oversubscribe --bind-to none -np " +
                         std::to_string(np) + " " + program;
  return testrun::command_line(cmd, args);
}

using testrun::Ran;
using testrun::run_command;

class Dist : public ::testing::Test {
 protected:
  void SetUp() override {
    if (dist::distributed()) GTEST_SKIP() << "started by mpirun: the jobs are started from outside";
    if (!have_mpirun())
      GTEST_SKIP() << "mpirun is not installed (tools/setup.sh installs openmpi-bin): the "
                      "multi-process tests are skipped";
  }
};

TEST_F(Dist, CollectivesOnTwoRanks) {
  Ran r = run_command(
      mpirun(2, programs() + "/dist_test", {"--gtest_filter=DistRanks.*", "--gtest_color=no"}));
  EXPECT_EQ(r.rc, 0) << r.out;
  // both ranks ran every DistRanks test (none skipped)
  size_t passed = 0;
  for (size_t at = 0; (at = r.out.find("[  PASSED  ] 6 tests.", at)) != std::string::npos; at++)
    passed++;
  EXPECT_EQ(passed, 2u) << r.out;
}

// The weights a run saved, by name.
std::map<std::string, std::vector<float>> weights_of(const std::string& run_dir) {
  std::map<std::string, std::vector<float>> w;
  for (const auto& [name, t] : nn::safe_load(run_dir + "/model.safetensors"))
    if (t.dtype() == dtypes::float32) w[name] = t.data<float>();
  return w;
}

// `train` on 2 ranks x batch B and in one process x batch 2B from the same config: the same
// losses and weights (within 1e-5), every rank's weights bitwise equal after every step
// (dist.check_replicas), and only rank 0's files.
void expect_two_ranks_match_one_process(const std::string& name, std::vector<std::string> keys,
                                        int64_t per_rank, bool two_hosts = false) {
  std::string dir = tinyrun::fresh_dir("dist_" + name + (two_hosts ? "_hosts" : ""));
  std::vector<std::string> base = tinyrun::tiny_overrides(name, dir, 512);
  keys.insert(keys.begin(), base.begin(), base.end());
  keys.insert(keys.end(), {"train.max_steps=20", "train.eval_every=10", "log.dir=" + dir});
  std::vector<std::string> two = {"--config", tinyrun::kRoot + "/configs/" + name + ".yaml",
                                  "--quiet"};
  two.insert(two.end(), keys.begin(), keys.end());
  std::vector<std::string> one = two;
  two.insert(two.end(), {"train.batch_size=" + std::to_string(per_rank), "log.name=two",
                         "dist.check_replicas=true"});
  one.insert(one.end(), {"train.batch_size=" + std::to_string(2 * per_rank), "log.name=one"});
  Ran r2 = run_command(mpirun(2, programs() + "/../train", two, two_hosts));
  if (r2.rc == 77) GTEST_SKIP() << "no network namespaces here (needs root and iproute2)";
  ASSERT_EQ(r2.rc, 0) << r2.out;
  EXPECT_THAT(r2.out, HasSubstr("data parallel: 2 ranks x " + std::to_string(per_rank)));
  Ran r1 = run_command(testrun::command_line(programs() + "/../train", one));
  ASSERT_EQ(r1.rc, 0) << r1.out;

  std::vector<train::MetricRow> a = tinyrun::metrics_of(dir + "/one"),
                                b = tinyrun::metrics_of(dir + "/two");
  ASSERT_EQ(a.size(), 20u);
  ASSERT_EQ(b.size(), 20u);
  for (size_t i = 0; i < a.size(); i++)
    EXPECT_NEAR(b[i].loss, a[i].loss, 1e-5 * std::abs(a[i].loss)) << "step " << i + 1;
  ASSERT_TRUE(a.back().eval_loss && b.back().eval_loss);
  EXPECT_NEAR(*b.back().eval_loss, *a.back().eval_loss, 1e-5 * *a.back().eval_loss);
  auto wa = weights_of(dir + "/one"), wb = weights_of(dir + "/two");
  ASSERT_EQ(wa.size(), wb.size());
  for (const auto& [k, v] : wa) {
    ASSERT_EQ(wb[k].size(), v.size()) << k;
    // Attention's key bias is left out: its gradient is 0 in exact arithmetic (softmax is blind
    // to a shift of a row's every score), so Adam steps on each run's own rounding noise.
    size_t keys = k.ends_with("attn.in_proj_bias") ? v.size() / 3 : v.size();
    for (size_t i = 0; i < v.size(); i++)
      if (i < keys || i >= 2 * keys) {
        ASSERT_NEAR(wb[k][i], v[i], 1e-5) << k << " " << i;
      }
  }
}

TEST_F(Dist, GptOnTwoRanksMatchesOneProcessWithTheWholeBatch) {
  expect_two_ranks_match_one_process("gpt", {"train.checkpoint_every=10", "optim.lr=3e-4"}, 4);
}

// The same job on two simulated hosts: TCP between network namespaces, as between machines.
TEST_F(Dist, GptAcrossTwoSimulatedHostsMatchesOneProcess) {
  expect_two_ranks_match_one_process("gpt", {"train.checkpoint_every=10", "optim.lr=3e-4"}, 4,
                                     /*two_hosts=*/true);
}

// Batchnorm synced over the ranks. Adam at 1e-4: at the config's 1e-3, the two runs' gradients
// agree to 5e-6 (float sums over other batch shapes) but the trajectories then part, as a
// max-pool's winner flips, by more than 1e-5 within 20 steps.
TEST_F(Dist, MnistConvnetWithSyncedBatchnormMatchesOneProcess) {
  expect_two_ranks_match_one_process(
      "mnist", {"dist.sync_batchnorm=true", "optim.lr=1e-4", "train.eval_batch_size=32"}, 16);
}

// The pid of rank `rank` of a job whose command line holds `marker` (0 while there is none).
pid_t pid_of_rank(int rank, const std::string& marker) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmd(e.path() / "cmdline"), env(e.path() / "environ");
    std::string c((std::istreambuf_iterator<char>(cmd)), {}),
        v((std::istreambuf_iterator<char>(env)), {});
    if (c.find(marker) == std::string::npos || c.find("mpirun") != std::string::npos) continue;
    if (v.find(std::string("OMPI_COMM_WORLD_RANK=") + std::to_string(rank) + '\0') !=
        std::string::npos)
      return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A long gpt run on 2 ranks, started in the background; once its first checkpoint is written,
// `signal` goes to rank 1. Returns what the job printed, its exit code and how long it took to
// end after the signal.
struct Stopped {
  Ran ran;
  double after_signal_s = 0;
};
Stopped signal_rank_one(const std::string& dir, int signal, std::vector<std::string> keys) {
  std::vector<std::string> args = {"--config", tinyrun::kRoot + "/configs/gpt.yaml", "--quiet"};
  std::vector<std::string> base = tinyrun::tiny_overrides("gpt", dir, 512);
  args.insert(args.end(), base.begin(), base.end());
  args.insert(args.end(), {"train.max_steps=1000000", "train.checkpoint_every=20", "log.dir=" + dir,
                           "log.name=run"});
  args.insert(args.end(), keys.begin(), keys.end());
  Stopped s;
  std::chrono::steady_clock::time_point signalled;
  std::thread job([&] { s.ran = run_command(mpirun(2, programs() + "/../train", args)); });
  pid_t pid = 0;
  for (int i = 0; i < 600 && !(pid && fs::exists(dir + "/run/checkpoint.safetensors")); i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!pid) pid = pid_of_rank(1, dir);
  }
  EXPECT_NE(pid, 0) << "rank 1 never started";
  if (pid) kill(pid, signal);
  signalled = std::chrono::steady_clock::now();
  job.join();
  s.after_signal_s = seconds_since(signalled);
  if (pid) kill(pid, SIGKILL);  // a stopped rank that outlived the job
  return s;
}

TEST_F(Dist, AKilledRankEndsEveryRankAndTheRunResumesFromItsCheckpoint) {
  std::string dir = tinyrun::fresh_dir("dist_killed");
  Stopped s = signal_rank_one(dir, SIGKILL, {});
  EXPECT_NE(s.ran.rc, 0);
  EXPECT_LT(s.after_signal_s, 60) << s.ran.out;
  // mpirun names the rank that died; rank 0 says which collective it was in
  EXPECT_THAT(s.ran.out, HasSubstr("rank 1")) << s.ran.out;
  EXPECT_THAT(s.ran.out, HasSubstr("dist: rank 0 of 2: MPI_Allreduce")) << s.ran.out;
  int64_t at = tinyrun::metrics_of(dir + "/run").size();
  ASSERT_GE(at, 20);
  ASSERT_EQ(at % 20, 0);
  // resumed for 10 more steps, it ends where a run that was never killed does
  std::string more = "train.max_steps=" + std::to_string(at + 10);
  Ran resumed =
      run_command(mpirun(2, programs() + "/../train", {"--resume", dir + "/run", "--quiet", more}));
  ASSERT_EQ(resumed.rc, 0) << resumed.out;
  std::vector<std::string> whole = {"--config", tinyrun::kRoot + "/configs/gpt.yaml", "--quiet"};
  std::vector<std::string> base = tinyrun::tiny_overrides("gpt", dir, 512);
  whole.insert(whole.end(), base.begin(), base.end());
  whole.insert(whole.end(),
               {"train.checkpoint_every=20", "log.dir=" + dir, "log.name=whole", more});
  Ran uninterrupted = run_command(mpirun(2, programs() + "/../train", whole));
  ASSERT_EQ(uninterrupted.rc, 0) << uninterrupted.out;
  EXPECT_EQ(weights_of(dir + "/run"), weights_of(dir + "/whole"));
  EXPECT_EQ(tinyrun::metrics_of(dir + "/run").size(), static_cast<size_t>(at + 10));
}

TEST_F(Dist, ASilentRankEndsEveryRankWithinTheTimeout) {
  std::string dir = tinyrun::fresh_dir("dist_silent");
  // rank 1 stops answering (SIGSTOP: as a link gone silent, nothing tells the others)
  Stopped s = signal_rank_one(dir, SIGSTOP, {"dist.timeout_s=2"});
  EXPECT_NE(s.ran.rc, 0);
  EXPECT_THAT(s.ran.out, HasSubstr("dist: rank 0 of 2: MPI_Allreduce of ")) << s.ran.out;
  EXPECT_THAT(s.ran.out, HasSubstr("did not finish within dist.timeout_s = 2 s")) << s.ran.out;
  EXPECT_LT(s.after_signal_s, 30) << s.ran.out;
}

}  // namespace
}  // namespace tc
