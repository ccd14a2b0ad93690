#include "apps/bench/torch_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_format.h"
#include "tinycore/runtime/thread_pool.h"

extern char** environ;

namespace bench {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

// torch_anchors.py beside this program's source, or "" (and why, on stderr) without it or python3.
std::string anchors_script() {
  namespace fs = std::filesystem;
  fs::path script =
      fs::read_symlink("/proc/self/exe").parent_path() / "../../apps/bench/torch_anchors.py";
  if (fs::exists(script) && fs::exists(kPython)) return script.string();
  std::fprintf(stderr, "bench: no PyTorch anchor (%s or %s missing)\n", script.c_str(), kPython);
  return "";
}

}  // namespace

// A socket pair rather than two pipes: one descriptor both ways, and send() with MSG_NOSIGNAL,
// so that a worker that died answers EPIPE instead of killing bench with SIGPIPE. posix_spawn
// rather than fork: after a fork a process with threads (tinycore's pool) may only exec.
TorchWorker::TorchWorker(int threads) {
  const std::string script = anchors_script();
  if (script.empty()) return;
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    std::perror("bench: no PyTorch anchor (socketpair)");
    return;
  }
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_adddup2(&files, ends[1], 0);
  posix_spawn_file_actions_adddup2(&files, ends[1], 1);
  // PyTorch's warnings would fall between bench's lines; failures come back as answers
  posix_spawn_file_actions_addopen(&files, 2, "/dev/null", O_WRONLY, 0);
  const std::string n = std::to_string(threads);
  const char* argv[] = {kPython, script.c_str(), "--serve", "--threads", n.c_str(), nullptr};
  int err = posix_spawn(&pid_, kPython, &files, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&files);
  close(ends[1]);
  if (err != 0) {
    close(ends[0]);
    pid_ = -1;
    std::fprintf(stderr, "bench: no PyTorch anchor (cannot start %s: %s)\n", kPython,
                 std::strerror(err));
    return;
  }
  fd_ = ends[0];
  std::optional<nlohmann::json> hello = call(nullptr);
  if (!hello) return;
  if (hello->contains("error")) {
    end((*hello)["error"].get<std::string>());
    return;
  }
  threads_ = (*hello)["threads"].get<int>();
}

TorchWorker::~TorchWorker() {
  if (!ok()) return;
  close(fd_);
  for (int i = 0; i < 500; i++) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
    usleep(10000);
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

std::nullopt_t TorchWorker::end(const std::string& why) {
  std::fprintf(stderr, "bench: no PyTorch anchor (%s)\n", why.c_str());
  close(fd_);
  fd_ = -1;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  return std::nullopt;
}

std::optional<nlohmann::json> TorchWorker::call(const nlohmann::json& command) {
  if (!ok()) return std::nullopt;
  if (!command.is_null()) {  // null: only the answer (the hello)
    const std::string line = command.dump() + "\n";
    for (size_t sent = 0; sent < line.size();) {
      ssize_t n = send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return end("the worker ended");
      sent += static_cast<size_t>(n);
    }
  }
  const double deadline = now() + kTimeoutS;
  size_t eol;
  while ((eol = read_.find('\n')) == std::string::npos) {
    pollfd p = {fd_, POLLIN, 0};
    const int left_ms = static_cast<int>(std::ceil((deadline - now()) * 1e3));
    const int ready = left_ms > 0 ? poll(&p, 1, left_ms) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return end(absl::StrFormat("no answer from the worker in %.0f s", kTimeoutS));
    if (ready < 0) return end(std::string("poll: ") + std::strerror(errno));
    char buf[4096];
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return end("the worker ended");
    read_.append(buf, static_cast<size_t>(n));
  }
  nlohmann::json answer =
      nlohmann::json::parse(read_.substr(0, eol), nullptr, /*allow_exceptions=*/false);
  read_.erase(0, eol + 1);
  if (!answer.is_object()) return end("the worker answered something that is not JSON");
  return answer;
}

bool TorchWorker::setup(const nlohmann::json& command) {
  std::optional<nlohmann::json> answer = call(command);
  if (!answer) return false;
  if (!answer->contains("ok")) {
    std::fprintf(stderr, "bench: no PyTorch anchor for %s (%s)\n", command["setup"].dump().c_str(),
                 answer->value("error", answer->dump()).c_str());
    return false;
  }
  set_up_ = *answer;
  step_ms_.clear(), overhead_ms_.clear();
  return true;
}

Workload TorchWorker::step(const std::string& name) {
  return [this, name] {
    const double t0 = now();
    std::optional<nlohmann::json> answer = call({{"run", name}});
    if (!answer) return;
    if (!answer->contains("ms")) {
      end(name + ": " + answer->value("error", answer->dump()));
      return;
    }
    step_ms_.push_back((*answer)["ms"].get<double>());
    overhead_ms_.push_back((now() - t0) * 1e3 - step_ms_.back());
    last_ = std::move(*answer);
  };
}

std::unique_ptr<TorchWorker> cpu_torch_worker() {
  if (device().is_accelerator()) return nullptr;
  return std::make_unique<TorchWorker>(tc::runtime::cpu_threads());
}

Turns time_with_pytorch(TorchWorker* torch, const nlohmann::json& setup, const Workload& ours,
                        int rounds, Result& r, const std::vector<Workload>& others) {
  std::vector<Workload> workloads = {ours};
  workloads.insert(workloads.end(), others.begin(), others.end());
  const bool anchored = torch && torch->setup(setup);
  if (anchored) workloads.push_back(torch->step(setup["setup"].get<std::string>()));
  Turns t = time_in_turns(workloads, rounds);
  if (!anchored) return t;
  if (!torch->ok()) {  // it failed on the way: its times are of steps that did nothing
    t.ms.pop_back();
    return t;
  }
  t.ms.back().assign(torch->step_ms().end() - rounds, torch->step_ms().end());  // the rounds'
  r.set_ratio("ratio_vs_pytorch", t.ratio(t.ms.size() - 1));
  r.fields["threads"] = torch->threads();
  r.fields["pytorch_overhead_ms"] = torch->overhead_ms();
  return t;
}

std::optional<nlohmann::json> run_pytorch(const std::string& args) {
  const std::string script = anchors_script();
  if (script.empty()) return std::nullopt;
  std::string cmd = std::string(kPython) + " " + script + " " + args + " 2>/dev/null";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    if (pclose(p) != 0) out.clear();
  }
  nlohmann::json j = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    std::fprintf(stderr,
                 "bench: no PyTorch anchor (torch_anchors.py failed: is python3-torch "
                 "installed?)\n");
    return std::nullopt;
  }
  return j;
}

}  // namespace bench
