// Pre-tokenizers of byte-level BPE tokenizers: hand-written scanners that split text exactly as
// these regexes do (Python's `regex` module is the reference in tests/fixtures/gen_tokenizers.py):
//   GPT-2:   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   Llama 3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//            ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   Qwen2:   as Llama 3 with \p{N} (one digit a piece) for \p{N}{1,3}
// Invalid UTF-8 bytes are single characters of no class (like the lone surrogates Python's
// "surrogateescape" makes of them), so every byte of the input lands in exactly one piece.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace tc::llm {

// One character of UTF-8 text: its code point and byte length. An invalid or truncated sequence
// (overlong, surrogate, > U+10FFFF, stray continuation) is one byte with valid = false.
struct Utf8Char {
  uint32_t cp;
  uint32_t len;
  bool valid;
};
// The character at byte `pos` (< s.size()); never reads past the end of `s`.
Utf8Char decode_utf8(std::string_view s, size_t pos);

enum class CharClass : uint8_t { Letter, Number, Space, Other };
CharClass char_class(uint32_t cp);

enum class PreTokenizer { Gpt2, Llama3, Qwen2 };
const char* pre_tokenizer_name(PreTokenizer p);

// From GGUF's tokenizer.ggml.pre ("gpt-2", "default", "llama-bpe", "llama3", "qwen2", ...);
// an unknown value is a tc::Error listing the known ones.
PreTokenizer pre_tokenizer_from_gguf(std::string_view pre);
// From the Regex of a tokenizer.json Split pre-tokenizer: the pattern string of one of the
// three above, else nullopt.
std::optional<PreTokenizer> pre_tokenizer_from_regex(std::string_view pattern);

// `text` cut into consecutive pieces (views into `text`) that concatenate back to it.
std::vector<std::string_view> pre_tokenize(PreTokenizer p, std::string_view text);

}  // namespace tc::llm
