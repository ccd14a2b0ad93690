// The message of the tc::Error that `f` throws, or "no error": tests match the parts a message
// must name.
#pragma once

#include <string>

#include "tinycore/error.h"

template <typename F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const tc::Error& e) {
    return e.what();
  }
  return "no error";
}
