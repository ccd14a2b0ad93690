// Uniform floats in [-1, 1) from a seeded generator: the inputs of the codegen tests.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace tc::codegen {

inline std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

}  // namespace tc::codegen
