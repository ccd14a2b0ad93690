#include "frontends/llm/pretokenize.h"

#include <algorithm>
#include <string>

#include "frontends/llm/unicode_ranges.h"
#include "tinycore/error.h"

namespace tc::llm {
namespace {

constexpr uint32_t kInvalid = 0xFFFFFFFF;  // an invalid byte: no class, matches nothing

bool in_ranges(std::span<const CodeRange> ranges, uint32_t cp) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                             [](uint32_t c, const CodeRange& r) { return c < r.lo; });
  return it != ranges.begin() && cp <= std::prev(it)->hi;
}

bool is_continuation(uint8_t b) { return (b & 0xC0) == 0x80; }

// The text as characters, so the scanners can look ahead and back by character.
struct Chars {
  std::vector<uint32_t> cp;
  std::vector<CharClass> cls;
  std::vector<size_t> offset;  // byte offset of each character, plus the end

  explicit Chars(std::string_view s) {
    for (size_t pos = 0; pos < s.size();) {
      Utf8Char c = decode_utf8(s, pos);
      cp.push_back(c.valid ? c.cp : kInvalid);
      cls.push_back(c.valid ? char_class(c.cp) : CharClass::Other);
      offset.push_back(pos);
      pos += c.len;
    }
    offset.push_back(s.size());
  }
  size_t size() const { return cp.size(); }
  bool is(size_t i, CharClass c) const { return i < size() && cls[i] == c; }
  bool is_cp(size_t i, uint32_t c) const { return i < size() && cp[i] == c; }
  bool is_newline(size_t i) const { return is_cp(i, '\r') || is_cp(i, '\n'); }
  // The end of the run of class `c` that starts at i.
  size_t run(size_t i, CharClass c) const {
    while (is(i, c)) i++;
    return i;
  }
};

// 's 't 're 've 'm 'll 'd at i: their length in characters, or 0. Case-insensitive matching
// (Llama 3, Qwen2) uses simple case folding, under which U+017F (long s) is an 's'.
size_t contraction(const Chars& c, size_t i, bool ignore_case) {
  if (!c.is_cp(i, '\'')) return 0;
  auto at = [&](size_t k) -> uint32_t {
    if (k >= c.size()) return 0;
    uint32_t cp = c.cp[k];
    if (ignore_case && cp >= 'A' && cp <= 'Z') return cp + 32;
    if (ignore_case && cp == 0x17F) return 's';
    return cp;
  };
  uint32_t a = at(i + 1), b = at(i + 2);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

// \s+(?!\S)|\s+ at whitespace i: the run, less its last character when a non-space follows it
// (that character then leads the next piece).
size_t space_run(const Chars& c, size_t i) {
  size_t j = c.run(i, CharClass::Space);
  return (j < c.size() && j - 1 > i) ? j - 1 : j;
}

// The end of the GPT-2 piece that starts at i.
size_t next_gpt2(const Chars& c, size_t i) {
  if (size_t k = contraction(c, i, false)) return i + k;
  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`
  for (CharClass cls : {CharClass::Letter, CharClass::Number, CharClass::Other}) {
    if (c.is(i, cls)) return c.run(i, cls);
    if (c.is_cp(i, ' ') && c.is(i + 1, cls)) return c.run(i + 1, cls);
  }
  return space_run(c, i);
}

// The end of the Llama 3 (max_digits 3) or Qwen2 (max_digits 1) piece that starts at i.
size_t next_llama3(const Chars& c, size_t i, size_t max_digits) {
  if (size_t k = contraction(c, i, true)) return i + k;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c.is(i, CharClass::Letter)) return c.run(i, CharClass::Letter);
  if (!c.is_newline(i) && !c.is(i, CharClass::Number) && c.is(i + 1, CharClass::Letter)) {
    return c.run(i + 1, CharClass::Letter);
  }
  // \p{N}{1,max_digits}
  if (c.is(i, CharClass::Number)) return std::min(c.run(i, CharClass::Number), i + max_digits);
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  size_t s = (c.is_cp(i, ' ') && c.is(i + 1, CharClass::Other)) ? i + 1 : i;
  if (c.is(s, CharClass::Other)) {
    size_t j = c.run(s, CharClass::Other);
    while (c.is_newline(j)) j++;
    return j;
  }
  // \s*[\r\n]+: the whitespace run up to its last newline
  size_t j = c.run(i, CharClass::Space);
  for (size_t k = j; k > i; k--) {
    if (c.is_newline(k - 1)) return k;
  }
  return space_run(c, i);
}

}  // namespace

Utf8Char decode_utf8(std::string_view s, size_t pos) {
  uint8_t b0 = uint8_t(s[pos]);
  const Utf8Char bad{b0, 1, false};
  if (b0 < 0x80) return {b0, 1, true};
  uint32_t len, cp, min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return bad;
  }
  if (s.size() - pos < len) return bad;
  for (uint32_t k = 1; k < len; k++) {
    uint8_t b = uint8_t(s[pos + k]);
    if (!is_continuation(b)) return bad;
    cp = (cp << 6) | (b & 0x3F);
  }
  // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
  if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return bad;
  return {cp, len, true};
}

CharClass char_class(uint32_t cp) {
  if (in_ranges(kLetterRanges, cp)) return CharClass::Letter;
  if (in_ranges(kNumberRanges, cp)) return CharClass::Number;
  if (in_ranges(kSpaceRanges, cp)) return CharClass::Space;
  return CharClass::Other;
}

const char* pre_tokenizer_name(PreTokenizer p) {
  switch (p) {
    case PreTokenizer::Gpt2:
      return "gpt-2";
    case PreTokenizer::Llama3:
      return "llama-bpe";
    case PreTokenizer::Qwen2:
      return "qwen2";
  }
  return "?";
}

PreTokenizer pre_tokenizer_from_gguf(std::string_view pre) {
  // "default" (and a missing key) is what llama.cpp falls back to; GPT-2's regex is its core.
  if (pre == "gpt-2" || pre == "gpt2" || pre == "default" || pre.empty()) {
    return PreTokenizer::Gpt2;
  }
  if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3") return PreTokenizer::Llama3;
  if (pre == "qwen2" || pre == "deepseek-r1-qwen") return PreTokenizer::Qwen2;
  fail(
      "tokenizer.ggml.pre '%s' is not supported (known: gpt-2, default, llama-bpe, llama3, qwen2, "
      "deepseek-r1-qwen)",
      std::string(pre));
}

std::optional<PreTokenizer> pre_tokenizer_from_regex(std::string_view pattern) {
  static constexpr std::string_view kLlama3 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  static constexpr std::string_view kQwen2 =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  static constexpr std::string_view kGpt2 =
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  if (pattern == kLlama3) return PreTokenizer::Llama3;
  if (pattern == kQwen2) return PreTokenizer::Qwen2;
  if (pattern == kGpt2) return PreTokenizer::Gpt2;
  return std::nullopt;
}

std::vector<std::string_view> pre_tokenize(PreTokenizer p, std::string_view text) {
  Chars c(text);
  std::vector<std::string_view> pieces;
  for (size_t i = 0; i < c.size();) {
    size_t j = p == PreTokenizer::Gpt2     ? next_gpt2(c, i)
               : p == PreTokenizer::Llama3 ? next_llama3(c, i, 3)
                                           : next_llama3(c, i, 1);
    pieces.push_back(text.substr(c.offset[i], c.offset[j] - c.offset[i]));
    i = j;
  }
  return pieces;
}

}  // namespace tc::llm
