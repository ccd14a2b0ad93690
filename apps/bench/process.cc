#include "apps/bench/process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace bench {

TempFolder::TempFolder(const std::string& name)
    : path(std::filesystem::temp_directory_path() / (name + std::to_string(getpid()))) {
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
}

TempFolder::~TempFolder() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

std::string cache_folder(const std::string& name, const char* env) {
  if (const char* d = std::getenv(env); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/" + name;
  if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/" + name;
  return "/tmp/" + name;
}

// Its argv and environment are built before the fork, since the child of a process with threads
// may only exec.
bool run_again(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> vars = env;
  for (char** e = environ; *e; e++) {
    std::string var = *e;
    std::string name = var.substr(0, var.find('=') + 1);
    if (std::none_of(env.begin(), env.end(),
                     [&](const std::string& v) { return v.compare(0, name.size(), name) == 0; }))
      vars.push_back(var);
  }
  std::vector<char*> argv, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  for (const std::string& v : vars) envp.push_back(const_cast<char*>(v.c_str()));
  argv.push_back(nullptr), envp.push_back(nullptr);
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execve("/proc/self/exe", argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

}  // namespace bench
