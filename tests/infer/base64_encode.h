#pragma once
// A plain base64 encoder (RFC 4648 section 4) for the infer tests and fuzz target, to check the
// server's decoder against and to send images as JSON.

#include <algorithm>
#include <cstdint>
#include <string>

namespace infertest {

inline std::string base64_encode(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = 0;
    size_t k = std::min<size_t>(3, bytes.size() - i);
    for (size_t j = 0; j < 3; j++)
      n = n << 8 | (j < k ? static_cast<unsigned char>(bytes[i + j]) : 0u);
    for (size_t j = 0; j < 4; j++) out += j <= k ? kAlphabet[(n >> (18 - 6 * j)) & 63] : '=';
  }
  return out;
}

}  // namespace infertest
