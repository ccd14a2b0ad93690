#include "frontends/llm/tokenizer.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <queue>
#include <sstream>

#include "tinycore/error.h"

namespace tc::llm {
namespace {

using json = nlohmann::json;

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // "▁" (U+2581)

std::string utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xC0 | (cp >> 6)), s += char(0x80 | (cp & 0x3F));
  } else {
    s += char(0xE0 | (cp >> 12)), s += char(0x80 | ((cp >> 6) & 0x3F));
    s += char(0x80 | (cp & 0x3F));
  }
  return s;
}

// GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others for U+0100 + n.
const std::array<std::string, 256>& byte_chars() {
  static const std::array<std::string, 256> chars = [] {
    std::array<std::string, 256> c;
    uint32_t n = 0;
    for (uint32_t b = 0; b < 256; b++) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      c[b] = utf8(printable ? b : 256 + n++);
    }
    return c;
  }();
  return chars;
}

// The bytes a byte-level token stands for, or nullopt if a character of it is not a byte's.
std::optional<std::string> byte_level_bytes(std::string_view piece) {
  static const std::unordered_map<std::string, uint8_t> byte_of = [] {
    std::unordered_map<std::string, uint8_t> m;
    for (int b = 0; b < 256; b++) m[byte_chars()[b]] = uint8_t(b);
    return m;
  }();
  std::string out;
  for (size_t pos = 0; pos < piece.size();) {
    Utf8Char c = decode_utf8(piece, pos);
    auto it = byte_of.find(std::string(piece.substr(pos, c.len)));
    if (!c.valid || it == byte_of.end()) return std::nullopt;
    out += char(it->second);
    pos += c.len;
  }
  return out;
}

std::string byte_token_text(int b) { return absl::StrFormat("<0x%02X>", b); }

std::string replace_all(std::string_view s, std::string_view from, std::string_view to) {
  std::string out;
  for (size_t pos = 0;;) {
    size_t hit = s.find(from, pos);
    out += s.substr(pos, hit == std::string_view::npos ? std::string_view::npos : hit - pos);
    if (hit == std::string_view::npos) return out;
    out += to;
    pos = hit + from.size();
  }
}

uint64_t pair_key(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

std::string read_text_file(const std::string& path, const char* what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail("cannot open %s '%s'", what, path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

json parse_json(const std::string& text, const char* what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    fail("%s is not valid JSON: %s", what, e.what());
  }
}

// A JSON string, or a tokenizer_config.json token object {"content": ...}; nullopt for null.
std::optional<std::string> token_text(const json& j, const char* what) {
  if (j.is_null()) return std::nullopt;
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("content") && j["content"].is_string()) {
    return j["content"].get<std::string>();
  }
  fail("tokenizer_config.json: %s is neither a string nor {\"content\": ...}", what);
}

}  // namespace

// ---- shared construction ----------------------------------------------------------------------

void Tokenizer::set_vocab(std::vector<std::string> pieces) {
  if (pieces.empty()) fail("tokenizer: the vocabulary is empty");
  pieces_ = std::move(pieces);
  ids_.reserve(pieces_.size());
  for (size_t i = 0; i < pieces_.size(); i++) {
    auto [it, inserted] = ids_.emplace(pieces_[i], int32_t(i));
    if (!inserted)
      fail("tokenizer: duplicate token '%s' (ids %d and %d)", pieces_[i], it->second, i);
  }
  special_.assign(pieces_.size(), 0);
  split_out_.assign(pieces_.size(), 0);
}

int32_t Tokenizer::checked_id(int64_t id, const char* what) const {
  if (id < 0 || id >= vocab_size()) {
    fail("tokenizer: %s id %d is out of range [0, %d)", what, id, vocab_size());
  }
  return int32_t(id);
}

void Tokenizer::add_merge(int32_t a, int32_t b, double priority, int32_t result) {
  merges_.emplace(pair_key(a, b), Merge{priority, result});  // the first (best) one stays
}

void Tokenizer::add_merge_text(std::string_view a, std::string_view b, double priority) {
  for (std::string_view part : {a, b}) {
    if (!find(part))
      fail("tokenizer: merge '%s %s' names '%s', which is not in the vocabulary", a, b, part);
  }
  std::string merged = std::string(a) + std::string(b);
  std::optional<int32_t> result = find(merged);
  if (!result)
    fail("tokenizer: merge '%s %s' makes '%s', which is not in the vocabulary", a, b, merged);
  add_merge(*find(a), *find(b), priority, *result);
}

void Tokenizer::mark_split_out(int32_t id, bool special) {
  const std::string& text = pieces_[id];
  if (text.empty()) fail("tokenizer: added token %d is empty", id);
  int32_t node = 0;
  for (char ch : text) {
    auto [it, inserted] = trie_[node].next.emplace(uint8_t(ch), int32_t(trie_.size()));
    if (inserted) trie_.emplace_back();
    node = it->second;
  }
  trie_[node].token = id;
  special_[id] = special;
  split_out_[id] = 1;
}

void Tokenizer::finish() {
  byte_ids_.fill(-1);
  std::vector<int32_t> byte_of(pieces_.size(), -1);  // id -> the byte a byte token stands for
  int found = 0;
  for (int b = 0; b < 256; b++) {
    std::string text = kind_ == Kind::ByteLevel ? byte_chars()[b] : byte_token_text(b);
    if (std::optional<int32_t> id = find(text)) {
      byte_ids_[b] = *id;
      byte_of[*id] = b;
      found++;
    } else if (kind_ == Kind::ByteLevel) {
      fail("tokenizer: byte-level BPE vocabulary lacks the token '%s' for byte 0x%02X", text, b);
    }
  }
  if (kind_ == Kind::SentencePiece && byte_fallback_ && found != 256) {
    fail("tokenizer: byte fallback needs the 256 tokens <0x00>..<0xFF>, the vocabulary has %d",
         found);
  }
  bytes_.resize(pieces_.size());
  for (size_t id = 0; id < pieces_.size(); id++) {
    const std::string& p = pieces_[id];
    if (split_out_[id]) {
      bytes_[id] = p;  // added and special tokens are their text
    } else if (kind_ == Kind::SentencePiece) {
      bytes_[id] =
          byte_of[id] >= 0 ? std::string(1, char(byte_of[id])) : replace_all(p, kSpaceMark, " ");
    } else {
      bytes_[id] = byte_level_bytes(p).value_or(p);
    }
  }
  if (bos_) checked_id(*bos_, "BOS");
  if (eos_) checked_id(*eos_, "EOS");
  if (add_bos_ && !bos_) fail("tokenizer: add_bos_token is set but there is no BOS token");
}

// ---- encoding ---------------------------------------------------------------------------------

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos) const {
  std::vector<int32_t> out;
  if (add_bos) {
    if (!bos_) fail("tokenizer: encode with a BOS token, but the tokenizer has none");
    out.push_back(*bos_);
  }
  // Added tokens split out first, leftmost-longest; the text between them is encoded alone.
  size_t start = 0;
  for (size_t i = 0; i < text.size();) {
    int32_t token = -1, node = 0;
    size_t end = i;
    for (size_t k = i; k < text.size(); k++) {
      auto it = trie_[node].next.find(uint8_t(text[k]));
      if (it == trie_[node].next.end()) break;
      node = it->second;
      if (trie_[node].token >= 0) token = trie_[node].token, end = k + 1;
    }
    if (token < 0) {
      i++;
      continue;
    }
    encode_fragment(text.substr(start, i - start), start == 0 || prefix_every_fragment_, out);
    out.push_back(token);
    i = start = end;
  }
  encode_fragment(text.substr(start), start == 0 || prefix_every_fragment_, out);
  return out;
}

void Tokenizer::encode_fragment(std::string_view text, bool prefix,
                                std::vector<int32_t>& out) const {
  if (text.empty()) return;
  if (kind_ == Kind::ByteLevel) {
    for (std::string_view piece : pre_tokenize(pre_, text)) {
      if (ignore_merges_) {
        std::string chars;
        for (char b : piece) chars += byte_chars()[uint8_t(b)];
        if (std::optional<int32_t> id = find(chars)) {
          out.push_back(*id);
          continue;
        }
      }
      bpe(piece, out);
    }
    return;
  }
  std::string normalized = prefix && dummy_prefix_ ? std::string(kSpaceMark) : std::string();
  normalized += replace_all(text, " ", kSpaceMark);
  bpe(normalized, out);
}

// Merges the symbols of `text` (bytes for byte-level BPE, UTF-8 characters for SentencePiece)
// best merge first, leftmost on ties, and appends the ids of the result.
void Tokenizer::bpe(std::string_view text, std::vector<int32_t>& out) const {
  struct Symbol {
    int32_t id;  // -1: not in the vocabulary (SentencePiece: falls back to bytes)
    uint32_t start, len;
    int32_t prev, next;
  };
  struct Candidate {
    double priority;
    int32_t left, a, b, result;
    bool operator<(const Candidate& o) const {  // std::priority_queue pops the largest
      return priority != o.priority ? priority > o.priority : left > o.left;
    }
  };
  std::vector<Symbol> syms;
  for (size_t pos = 0; pos < text.size();) {
    uint32_t len = kind_ == Kind::ByteLevel ? 1 : decode_utf8(text, pos).len;
    int32_t id = kind_ == Kind::ByteLevel ? byte_ids_[uint8_t(text[pos])]
                                          : find(text.substr(pos, len)).value_or(-1);
    int32_t n = int32_t(syms.size());
    syms.push_back({id, uint32_t(pos), len, n - 1, -1});
    if (n > 0) syms[n - 1].next = n;
    pos += len;
  }
  std::priority_queue<Candidate> queue;
  auto consider = [&](int32_t left) {
    if (left < 0) return;
    int32_t right = syms[left].next;
    if (right < 0 || syms[left].id < 0 || syms[right].id < 0) return;
    auto it = merges_.find(pair_key(syms[left].id, syms[right].id));
    if (it != merges_.end()) {
      queue.push({it->second.priority, left, syms[left].id, syms[right].id, it->second.result});
    }
  };
  for (int32_t i = 0; i + 1 < int32_t(syms.size()); i++) consider(i);
  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    Symbol& left = syms[c.left];
    // Stale: the left symbol was merged away or either side changed since.
    if (left.len == 0 || left.next < 0 || left.id != c.a || syms[left.next].id != c.b) continue;
    Symbol& right = syms[left.next];
    left.id = c.result;
    left.len += right.len;
    left.next = right.next;
    if (right.next >= 0) syms[right.next].prev = c.left;
    right.len = 0;
    consider(left.prev);
    consider(c.left);
  }
  for (int32_t i = syms.empty() ? -1 : 0; i >= 0; i = syms[i].next) {
    if (syms[i].id >= 0) {
      out.push_back(syms[i].id);
      continue;
    }
    for (uint32_t k = 0; k < syms[i].len; k++) {
      uint8_t b = uint8_t(text[syms[i].start + k]);
      if (byte_fallback_) {
        out.push_back(byte_ids_[b]);
      } else if (unk_) {
        if (k == 0) out.push_back(*unk_);
      } else {
        fail(
            "tokenizer: '%s' is not in the vocabulary, which has no byte fallback and no unknown "
            "token",
            text.substr(syms[i].start, syms[i].len));
      }
    }
  }
}

// ---- decoding and lookups ---------------------------------------------------------------------

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string out;
  // SentencePiece: drop the "▁" encode() prepended at the start and after each added token.
  bool strip = kind_ == Kind::SentencePiece && dummy_prefix_;
  bool at_fragment_start = true;
  for (int32_t id : ids) {
    std::string_view s = bytes_[checked_id(id, "decode:")];
    bool split_out = split_out_[id];
    if (strip && at_fragment_start && !split_out && !s.empty() && s[0] == ' ') s.remove_prefix(1);
    at_fragment_start = split_out && prefix_every_fragment_;
    out += s;
  }
  return out;
}

std::string Tokenizer::decode_one(int32_t id) const { return bytes_[checked_id(id, "decode:")]; }

bool Tokenizer::is_special(int32_t id) const { return special_[checked_id(id, "is_special:")]; }

std::optional<int32_t> Tokenizer::find(std::string_view token_text) const {
  auto it = ids_.find(token_text);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

const std::string& Tokenizer::piece(int32_t id) const { return pieces_[checked_id(id, "piece:")]; }

// ---- GGUF -------------------------------------------------------------------------------------

Tokenizer Tokenizer::from_gguf(const GgufVocab& v) {
  Tokenizer t;
  if (v.model == "gpt2") {
    t.kind_ = Kind::ByteLevel;
    t.pre_ = pre_tokenizer_from_gguf(v.pre);
    t.ignore_merges_ = t.pre_ == PreTokenizer::Llama3;  // as llama.cpp does for llama-bpe
  } else if (v.model == "llama") {
    t.kind_ = Kind::SentencePiece;
    if (v.scores.empty()) fail("tokenizer.ggml.scores is missing (the \"llama\" model needs it)");
  } else {
    fail("tokenizer.ggml.model '%s' is not supported (known: gpt2, llama)", v.model);
  }
  size_t n = v.tokens.size();
  if (!v.scores.empty() && v.scores.size() != n) {
    fail("tokenizer.ggml.scores has %d values for %d tokens", v.scores.size(), n);
  }
  if (!v.token_types.empty() && v.token_types.size() != n) {
    fail("tokenizer.ggml.token_type has %d values for %d tokens", v.token_types.size(), n);
  }
  t.set_vocab(v.tokens);
  bool any_byte_token = false;
  for (size_t i = 0; i < n; i++) {
    int32_t type = v.token_types.empty() ? 1 : v.token_types[i];
    if (type < 1 || type > 6) fail("tokenizer.ggml.token_type[%d] is %d, not 1..6", i, type);
    if (type == 3 || type == 4) t.mark_split_out(int32_t(i), type == 3);
    if (type == 2) t.unk_ = int32_t(i);
    any_byte_token |= type == 6;
  }
  if (t.kind_ == Kind::ByteLevel) {
    for (size_t r = 0; r < v.merges.size(); r++) {
      const std::string& m = v.merges[r];
      size_t space = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
      if (space == std::string::npos)
        fail("tokenizer.ggml.merges[%d] '%s' is not two tokens", r, m);
      t.add_merge_text(std::string_view(m).substr(0, space), std::string_view(m).substr(space + 1),
                       double(r));
    }
  } else {
    // llama.cpp merges two symbols when their concatenation is a piece, best score first: every
    // split of a normal or user-defined piece into two pieces is such a merge. Pieces longer
    // than kMaxMergedPiece bytes are left out, so a hostile vocabulary costs O(bytes), not
    // O(bytes^2) (real ones stay far below it).
    constexpr size_t kMaxMergedPiece = 256;
    t.byte_fallback_ = any_byte_token;
    for (size_t i = 0; i < n; i++) {
      int32_t type = v.token_types.empty() ? 1 : v.token_types[i];
      if ((type != 1 && type != 4) || v.tokens[i].size() > kMaxMergedPiece) continue;
      std::string_view p = v.tokens[i];
      for (size_t k = 1; k < p.size(); k++) {
        std::optional<int32_t> a = t.find(p.substr(0, k)), b = t.find(p.substr(k));
        if (a && b) t.add_merge(*a, *b, -double(v.scores[i]), int32_t(i));
      }
    }
  }
  t.bos_ = v.bos;
  t.eos_ = v.eos;
  t.add_bos_ = v.add_bos;
  t.chat_template_ = v.chat_template;
  t.finish();
  return t;
}

// ---- Hugging Face tokenizer.json --------------------------------------------------------------

namespace {

// The members of a "Sequence" (under `list_key`), or the one item itself.
std::vector<json> flatten(const json& j, const char* list_key) {
  if (j.is_null()) return {};
  if (j.value("type", "") == "Sequence" && j.contains(list_key)) {
    return j[list_key].get<std::vector<json>>();
  }
  return {j};
}

}  // namespace

Tokenizer Tokenizer::from_hf_json(const std::string& json_text) {
  json j = parse_json(json_text, "tokenizer.json");
  if (!j.is_object() || !j.contains("model") || !j["model"].is_object()) {
    fail("tokenizer.json has no \"model\" object");
  }
  const json& model = j["model"];
  if (model.value("type", "BPE") != "BPE") {
    fail("tokenizer.json: model type '%s' is not supported (only BPE)", model.value("type", ""));
  }
  if (!model.contains("vocab") || !model["vocab"].is_object()) {
    fail("tokenizer.json: model.vocab is missing");
  }
  Tokenizer t;
  try {
    // The vocabulary and the added tokens, by id; ids must cover 0..n-1.
    std::vector<std::pair<int64_t, std::string>> entries;
    for (auto& [text, id] : model["vocab"].items()) entries.emplace_back(id.get<int64_t>(), text);
    json added = j.value("added_tokens", json::array());
    for (const json& a : added) entries.emplace_back(a.at("id").get<int64_t>(), a.at("content"));
    int64_t max_id = -1;
    for (auto& [id, text] : entries) {
      if (id < 0 || id >= int64_t(entries.size())) {
        fail("tokenizer.json: token '%s' has id %d, out of range for %d tokens", text, id,
             entries.size());
      }
      max_id = std::max(max_id, id);
    }
    std::vector<std::optional<std::string>> by_id(size_t(max_id + 1));
    for (auto& [id, text] : entries) {
      if (by_id[id] && *by_id[id] != text) {
        fail("tokenizer.json: id %d is both '%s' and '%s'", id, *by_id[id], text);
      }
      by_id[id] = text;
    }
    std::vector<std::string> pieces;
    for (size_t id = 0; id < by_id.size(); id++) {
      if (!by_id[id]) fail("tokenizer.json: token id %d has no text", id);
      pieces.push_back(*by_id[id]);
    }
    t.set_vocab(std::move(pieces));
    for (const json& a : added) t.mark_split_out(a["id"].get<int32_t>(), a.value("special", false));

    // Which algorithm: a "▁" normalizer or Metaspace means SentencePiece, ByteLevel byte-level.
    bool byte_level = false, space_mark = false, prepend = false, regex_split = false;
    for (const json& p : flatten(j.value("pre_tokenizer", json()), "pretokenizers")) {
      std::string type = p.value("type", "");
      if (type == "ByteLevel") {
        byte_level = true;
        if (p.value("add_prefix_space", false)) {
          fail("tokenizer.json: ByteLevel add_prefix_space is not supported");
        }
        if (p.value("use_regex", true)) t.pre_ = PreTokenizer::Gpt2, regex_split = true;
      } else if (type == "Split" && p.contains("pattern") && p["pattern"].contains("Regex")) {
        std::string pattern = p["pattern"]["Regex"];
        std::optional<PreTokenizer> pre = pre_tokenizer_from_regex(pattern);
        if (!pre) fail("tokenizer.json: Split regex '%s' is not a known pre-tokenizer", pattern);
        t.pre_ = *pre, regex_split = true;
      } else if (type == "Metaspace") {
        space_mark = true;
        if (p.value("split", false)) fail("tokenizer.json: Metaspace with split is not supported");
        std::string scheme = p.value("prepend_scheme", "always");
        prepend = scheme != "never" && p.value("add_prefix_space", true);
        t.prefix_every_fragment_ = scheme == "always";
      } else {
        fail("tokenizer.json: pre_tokenizer '%s' is not supported", type);
      }
    }
    for (const json& n : flatten(j.value("normalizer", json()), "normalizers")) {
      std::string type = n.value("type", "");
      if (type == "Prepend" && n.value("prepend", "") == kSpaceMark) {
        prepend = true;
      } else if (type == "Replace" && n.contains("pattern") &&
                 n["pattern"].value("String", "") == " " && n.value("content", "") == kSpaceMark) {
        space_mark = true;
      } else if (type != "NFC") {  // NFC: text is taken as already NFC (no tables here)
        fail("tokenizer.json: normalizer '%s' is not supported", type);
      }
    }
    if (byte_level == space_mark) {
      fail(
          "tokenizer.json: need either a ByteLevel pre_tokenizer or a SentencePiece \"▁\" "
          "normalizer/Metaspace");
    }
    if (byte_level && !regex_split) {
      fail("tokenizer.json: ByteLevel without a regex split is not supported");
    }
    t.kind_ = byte_level ? Kind::ByteLevel : Kind::SentencePiece;
    t.dummy_prefix_ = prepend;
    t.byte_fallback_ = model.value("byte_fallback", false);
    t.ignore_merges_ = t.kind_ == Kind::ByteLevel && model.value("ignore_merges", false);
    if (model.contains("unk_token") && model["unk_token"].is_string()) {
      std::string unk = model["unk_token"];
      t.unk_ = t.find(unk);
      if (!t.unk_) fail("tokenizer.json: unk_token '%s' is not in the vocabulary", unk);
    }
    json merges = model.value("merges", json::array());
    for (size_t r = 0; r < merges.size(); r++) {
      const json& m = merges[r];
      if (m.is_string()) {
        std::string s = m;
        size_t space = s.find(' ');
        if (space == std::string::npos) fail("tokenizer.json: merge '%s' is not two tokens", s);
        t.add_merge_text(std::string_view(s).substr(0, space),
                         std::string_view(s).substr(space + 1), double(r));
      } else if (m.is_array() && m.size() == 2) {
        t.add_merge_text(m[0].get<std::string>(), m[1].get<std::string>(), double(r));
      } else {
        fail("tokenizer.json: merge %d is neither \"a b\" nor [a, b]", r);
      }
    }
    // A post_processor that starts every sequence with a special token: that token is the BOS.
    for (const json& post : flatten(j.value("post_processor", json()), "processors")) {
      if (post.value("type", "") == "TemplateProcessing" && post.contains("single") &&
          !post["single"].empty() && post["single"][0].contains("SpecialToken")) {
        std::string bos = post["single"][0]["SpecialToken"].at("id");
        t.bos_ = t.find(bos);
        t.add_bos_ = t.bos_.has_value();
      }
    }
  } catch (const json::exception& e) {
    fail("tokenizer.json: %s", e.what());
  }
  t.finish();
  return t;
}

Tokenizer Tokenizer::from_hf_file(const std::string& path) {
  return from_hf_json(read_text_file(path, "tokenizer.json"));
}

Tokenizer Tokenizer::from_hf_files(const std::string& tokenizer_json_path,
                                   const std::string& tokenizer_config_path) {
  Tokenizer t = from_hf_file(tokenizer_json_path);
  if (tokenizer_config_path.empty()) return t;
  json c = parse_json(read_text_file(tokenizer_config_path, "tokenizer_config.json"),
                      "tokenizer_config.json");
  if (!c.is_object()) fail("tokenizer_config.json is not an object");
  auto special = [&](const char* key) -> std::optional<int32_t> {
    if (!c.contains(key)) return std::nullopt;
    std::optional<std::string> text = token_text(c[key], key);
    if (!text) return std::nullopt;
    std::optional<int32_t> id = t.find(*text);
    if (!id) fail("tokenizer_config.json: %s '%s' is not in the vocabulary", key, *text);
    return id;
  };
  if (std::optional<int32_t> bos = special("bos_token")) t.bos_ = bos;
  if (std::optional<int32_t> eos = special("eos_token")) t.eos_ = eos;
  if (c.contains("add_bos_token") && c["add_bos_token"].is_boolean()) {
    t.add_bos_ = c["add_bos_token"].get<bool>();
  }
  if (t.add_bos_ && !t.bos_) fail("tokenizer_config.json: add_bos_token without a bos_token");
  if (c.contains("chat_template")) {
    const json& ct = c["chat_template"];
    if (ct.is_string()) {
      t.chat_template_ = ct.get<std::string>();
    } else if (ct.is_array()) {  // [{"name": ..., "template": ...}]: the "default" one
      for (const json& named : ct) {
        if (named.value("name", "") == "default" || t.chat_template_.empty()) {
          t.chat_template_ = named.value("template", "");
        }
      }
    }
  }
  return t;
}

}  // namespace tc::llm
