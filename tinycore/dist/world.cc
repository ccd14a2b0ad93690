#include "tinycore/dist/world.h"

// the C API only (OpenMPI also declares a deprecated C++ one, in a library of its own)
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "tinycore/error.h"

namespace tc::dist {
namespace {

int my_rank = 0, my_size = 1;
std::atomic<double> timeout_s{60};

// The collective running now (its start, 0 when none) and its description, for the watchdog and
// for a SIGTERM from mpirun (a fixed buffer: a signal handler writes it as it is).
std::atomic<double> started{0};
char running[256] = "";

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void say_and_exit(const char* why, int code) {
  char line[512];
  int n = std::snprintf(line, sizeof line, "dist: rank %d of %d: %s %s\n", my_rank, my_size,
                        running, why);
  if (n > 0) (void)!write(STDERR_FILENO, line, std::min<size_t>(n, sizeof line - 1));
  _exit(code);
}

void watchdog() {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    double t0 = started.load();
    if (t0 > 0 && now() - t0 > timeout_s.load()) {
      char why[160];
      std::snprintf(why, sizeof why,
                    "did not finish within dist.timeout_s = %g s: another rank died or its link "
                    "went silent; resume from the last checkpoint",
                    timeout_s.load());
      say_and_exit(why, 75);
    }
  }
}

// mpirun ends the other ranks with SIGTERM when one dies: say where this one stood
void on_sigterm(int) {
  if (started.load() > 0)
    say_and_exit("was stopped by mpirun: another rank ended (mpirun names it)", 143);
  _exit(143);
}

// Marks a collective as running for its lifetime.
class Running {
 public:
  explicit Running(const std::string& what) {
    std::snprintf(running, sizeof running, "%s", what.c_str());
    started.store(now());
  }
  ~Running() { started.store(0); }
};

void check(int rc, const std::string& what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fail("dist: rank %d: %s failed: %s", my_rank, what, std::string(msg, len));
}

MPI_Datatype mpi_type(DType dtype) {
  if (dtype == dtypes::float32) return MPI_FLOAT;
  if (dtype == dtypes::float64) return MPI_DOUBLE;
  if (dtype == dtypes::int32) return MPI_INT32_T;
  if (dtype == dtypes::int64) return MPI_INT64_T;
  if (dtype == dtypes::uint8) return MPI_UINT8_T;
  fail("dist: MPI reduces float32, float64, int32, int64 and uint8, not %s", dtype.name());
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return MPI_SUM;
    case ReduceOp::kMax:
      return MPI_MAX;
    case ReduceOp::kMin:
      return MPI_MIN;
  }
  return MPI_SUM;
}

}  // namespace

void init(double timeout) {
  if (!(timeout > 0)) fail("dist.timeout_s must be positive, not %g", timeout);
  timeout_s.store(timeout);
  static std::once_flag once;
  std::call_once(once, [] {
    if (!std::getenv("OMPI_COMM_WORLD_SIZE")) return;  // not started by mpirun: a world of one
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &my_size);
    std::atexit([] { MPI_Finalize(); });
    struct sigaction sa {};
    sa.sa_handler = on_sigterm;
    sigaction(SIGTERM, &sa, nullptr);
    std::thread(watchdog).detach();
  });
}

int rank() { return my_rank; }
int world_size() { return my_size; }
bool distributed() { return my_size > 1; }

void allreduce(const void* in, void* out, int64_t count, DType dtype, ReduceOp op,
               const std::string& what) {
  if (my_size == 1) {
    if (in != out) std::memcpy(out, in, count * dtype.itemsize());
    return;
  }
  if (count > INT32_MAX) fail("dist: %s: more than 2^31 - 1 elements in one all-reduce", what);
  Running r("MPI_Allreduce of " + what);
  check(MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, static_cast<int>(count), mpi_type(dtype),
                      mpi_op(op), MPI_COMM_WORLD),
        "MPI_Allreduce of " + what);
}

void broadcast(void* data, int64_t bytes, int root, const std::string& what) {
  if (my_size == 1) return;
  if (bytes > INT32_MAX) fail("dist: %s: more than 2^31 - 1 bytes in one broadcast", what);
  Running r("MPI_Bcast of " + what);
  check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD),
        "MPI_Bcast of " + what);
}

std::vector<double> allgather(double value, const std::string& what) {
  std::vector<double> all(my_size, value);
  if (my_size == 1) return all;
  Running r("MPI_Allgather of " + what);
  check(MPI_Allgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, MPI_COMM_WORLD),
        "MPI_Allgather of " + what);
  return all;
}

}  // namespace tc::dist
