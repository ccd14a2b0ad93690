// The message of the tc::Error (or the subclass E) that `f` throws, or "no error": tests match the
// parts a message must name.
#pragma once

#include <string>

#include "tinycore/error.h"

template <typename E = tc::Error, typename F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}
