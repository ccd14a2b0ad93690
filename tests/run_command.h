// Runs a command line through the shell, as the tests of whole programs do (infer, train under
// mpirun), and collects what it printed.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

namespace testrun {

struct Ran {
  int rc = -1;      // its exit code (-1: it did not exit normally)
  std::string out;  // stdout and stderr
};

// `program` with `args`, each single-quoted, as a shell command line.
inline std::string command_line(const std::string& program, const std::vector<std::string>& args) {
  std::string cmd = program;
  for (const std::string& a : args) cmd += " '" + a + "'";
  return cmd;
}

inline Ran run_command(const std::string& cmd) {
  Ran r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace testrun
