// Tokenizers of language models, two BPE algorithms behind one class:
//  - byte-level BPE (GPT-2, Llama 3, Qwen2): added/special tokens split out first (longest
//    match), the rest pre-tokenized (pretokenize.h), each piece's bytes mapped through GPT-2's
//    bytes_to_unicode and merged by merge rank, lowest first.
//  - SentencePiece-style BPE (Llama 2, Mistral v0.1; llama.cpp's "llama" model): spaces become
//    "▁" and a "▁" is prepended to each text fragment (add_dummy_prefix), UTF-8 characters are
//    merged best first (GGUF: the highest score of the merged piece; tokenizer.json: the merge
//    rank), characters the vocabulary lacks become byte tokens "<0xAB>".
// Both merge with a priority queue over a linked list of symbols (ties: leftmost first), so a
// long piece costs O(n log n).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frontends/llm/pretokenize.h"

namespace tc::llm {

// GGUF's tokenizer keys (tokenizer.ggml.* and tokenizer.chat_template), filled from a file by
// the GGUF reader.
struct GgufVocab {
  std::string model;  // "gpt2" (byte-level BPE) | "llama" (SentencePiece BPE)
  std::string pre;    // tokenizer.ggml.pre, for "gpt2"
  std::vector<std::string> tokens;
  std::vector<float> scores;         // "llama": merge priority of each piece
  std::vector<int32_t> token_types;  // 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused,
                                     // 6 byte; empty = all normal
  std::vector<std::string> merges;   // "gpt2": "a b", rank = position
  std::optional<int32_t> bos, eos;
  bool add_bos = false;
  std::string chat_template;
};

class Tokenizer {
 public:
  enum class Kind { ByteLevel, SentencePiece };

  // Hugging Face tokenizers' tokenizer.json (model.type "BPE"), as text or a file.
  static Tokenizer from_hf_json(const std::string& json_text);
  static Tokenizer from_hf_file(const std::string& tokenizer_json_path);
  // tokenizer.json plus tokenizer_config.json (bos_token, eos_token, add_bos_token,
  // chat_template) when its path is not empty.
  static Tokenizer from_hf_files(const std::string& tokenizer_json_path,
                                 const std::string& tokenizer_config_path);
  static Tokenizer from_gguf(const GgufVocab& vocab);

  // Token ids of `text` (any bytes), BOS first when add_bos (an error if there is no BOS).
  // Special tokens written in the text are encoded as themselves.
  std::vector<int32_t> encode(std::string_view text, bool add_bos) const;
  // The text of `ids` (special tokens as their text); an id out of range is a tc::Error.
  std::string decode(const std::vector<int32_t>& ids) const;
  // The bytes of one token, for streaming (may end inside a UTF-8 sequence). A SentencePiece
  // token's leading "▁" is a space here: decode() drops the one that starts the text.
  std::string decode_one(int32_t id) const;

  Kind kind() const { return kind_; }
  int64_t vocab_size() const { return int64_t(pieces_.size()); }
  std::optional<int32_t> bos() const { return bos_; }
  std::optional<int32_t> eos() const { return eos_; }
  // Whether a BOS should start a prompt (GGUF add_bos_token, tokenizer_config add_bos_token).
  bool add_bos() const { return add_bos_; }
  bool is_special(int32_t id) const;
  // The id of the token whose vocabulary text is `token_text` ("<|eot_id|>", "Ġthe", "▁the").
  std::optional<int32_t> find(std::string_view token_text) const;
  // The vocabulary text of token `id`.
  const std::string& piece(int32_t id) const;
  const std::string& chat_template() const { return chat_template_; }
  PreTokenizer pre_tokenizer() const { return pre_; }

 private:
  struct Merge {
    double priority;  // lower merges first
    int32_t result;
  };

  Tokenizer() = default;
  // Shared by the loaders: the vocabulary, its index and the derived tables.
  void set_vocab(std::vector<std::string> pieces);
  void add_merge(int32_t a, int32_t b, double priority, int32_t result);
  void add_merge_text(std::string_view a, std::string_view b, double priority);
  void mark_split_out(int32_t id, bool special);
  void finish();  // byte tables, decoded bytes, checks
  int32_t checked_id(int64_t id, const char* what) const;

  void encode_fragment(std::string_view text, bool prefix, std::vector<int32_t>& out) const;
  void bpe(std::string_view text, std::vector<int32_t>& out) const;

  struct TextHash {  // lets find() look up a string_view without a copy
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  struct TrieNode {  // added tokens, matched in the text byte by byte
    std::unordered_map<uint8_t, int32_t> next;
    int32_t token = -1;
  };

  Kind kind_ = Kind::ByteLevel;
  PreTokenizer pre_ = PreTokenizer::Gpt2;
  std::vector<std::string> pieces_;                                          // id -> text
  std::unordered_map<std::string, int32_t, TextHash, std::equal_to<>> ids_;  // text -> id
  std::vector<std::string> bytes_;                                           // id -> decoded bytes
  std::vector<uint8_t> special_;                // id -> a special (control) token
  std::vector<uint8_t> split_out_;              // id -> an added token, matched in the text
  std::unordered_map<uint64_t, Merge> merges_;  // (left id, right id) -> merge
  std::array<int32_t, 256> byte_ids_{};         // a byte's token (-1: none)
  std::vector<TrieNode> trie_{TrieNode{}};
  std::optional<int32_t> bos_, eos_, unk_;
  bool add_bos_ = false;
  bool ignore_merges_ = false;         // byte-level: a piece that is a token is taken whole
  bool byte_fallback_ = false;         // SentencePiece: unknown characters as "<0xAB>" tokens
  bool dummy_prefix_ = true;           // SentencePiece: "▁" before each text fragment
  bool prefix_every_fragment_ = true;  // ... after added tokens too, not only the first
  std::string chat_template_;
};

}  // namespace tc::llm
