// Runs the infer binary (next to the test programs' folder) and collects what it printed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tests/run_command.h"

namespace infertest {

using testrun::Ran;

// infer with `args`, each single-quoted; `input_file`, when given, is its standard input.
inline Ran infer(const std::vector<std::string>& args, const std::string& input_file = "") {
  std::string cmd = testrun::command_line(
      (std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "infer")
          .string(),
      args);
  if (!input_file.empty()) cmd += " < '" + input_file + "'";
  return testrun::run_command(cmd);
}

}  // namespace infertest
