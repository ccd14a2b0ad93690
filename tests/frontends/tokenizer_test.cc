// Tokenizers and chat templates against independent references made by
// tests/fixtures/gen_tokenizers.py: the pre-tokenizers against the real regexes (Python's
// `regex` module), byte-level BPE against a plain Python BPE over the same trained merges, and
// the SentencePiece-style BPE against sentencepiece's own encoder.
#include "frontends/llm/tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_replace.h"
#include "frontends/llm/chat_template.h"
#include "tinycore/error.h"

namespace tc::llm {
namespace {

using json = nlohmann::json;

std::string fixture_path(const std::string& name) {
  return std::string(TC_FIXTURE_DIR) + "/llm_tokenizers/" + name;
}

json load_json(const std::string& name) {
  std::ifstream f(fixture_path(name));
  EXPECT_TRUE(f.good()) << fixture_path(name);
  return json::parse(f);
}

const json& cases() {
  static const json c = load_json("cases.json");
  return c;
}

// The test strings (any bytes: some are invalid UTF-8).
const std::vector<std::string>& strings() {
  static const std::vector<std::string> s = [] {
    std::vector<std::string> out;
    for (const json& h : cases()["strings"])
      out.push_back(absl::HexStringToBytes(h.get<std::string>()));
    return out;
  }();
  return s;
}

std::vector<int32_t> ref_ids(const std::string& tokenizer, size_t i) {
  return cases()[tokenizer]["ids"][i].get<std::vector<int32_t>>();
}

GgufVocab gguf_vocab(const std::string& name, const std::string& pre) {
  json j = load_json(name);
  GgufVocab v;
  v.model = j["model"];
  v.pre = pre;
  v.tokens = j["tokens"].get<std::vector<std::string>>();
  v.token_types = j["token_types"].get<std::vector<int32_t>>();
  if (j.contains("scores")) v.scores = j["scores"].get<std::vector<float>>();
  if (j.contains("merges")) v.merges = j["merges"].get<std::vector<std::string>>();
  v.bos = j["bos"].get<int32_t>();
  v.eos = j["eos"].get<int32_t>();
  v.add_bos = j.value("add_bos", false);
  return v;
}

struct ByteLevelCase {
  std::string name;  // in cases.json and {name}.tokenizer.json
  std::string gguf_pre;
  PreTokenizer pre;
};
const std::vector<ByteLevelCase> kByteLevel = {
    {"gpt2", "gpt-2", PreTokenizer::Gpt2},
    {"llama3", "llama-bpe", PreTokenizer::Llama3},
    {"qwen2", "qwen2", PreTokenizer::Qwen2},
};

// Both loaders of each byte-level tokenizer, with a label for messages.
std::vector<std::pair<std::string, Tokenizer>> byte_level_tokenizers(const ByteLevelCase& c) {
  std::vector<std::pair<std::string, Tokenizer>> out;
  out.emplace_back(c.name + " tokenizer.json",
                   Tokenizer::from_hf_file(fixture_path(c.name + ".tokenizer.json")));
  out.emplace_back(c.name + " gguf",
                   Tokenizer::from_gguf(gguf_vocab("bytelevel.gguf.json", c.gguf_pre)));
  return out;
}

std::vector<std::pair<std::string, Tokenizer>> spm_tokenizers() {
  std::vector<std::pair<std::string, Tokenizer>> out;
  out.emplace_back("spm gguf", Tokenizer::from_gguf(gguf_vocab("spm.gguf.json", "")));
  out.emplace_back("spm tokenizer.json",
                   Tokenizer::from_hf_file(fixture_path("spm.tokenizer.json")));
  // Newer tokenizer.json files say the same with a Metaspace pre-tokenizer.
  json j = load_json("spm.tokenizer.json");
  j["normalizer"] = nullptr;
  j["pre_tokenizer"] = {{"type", "Metaspace"},
                        {"replacement", "\xE2\x96\x81"},
                        {"prepend_scheme", "always"},
                        {"split", false}};
  out.emplace_back("spm tokenizer.json (Metaspace)", Tokenizer::from_hf_json(j.dump()));
  return out;
}

void expect_error(const std::function<void()>& f, const std::string& substring) {
  try {
    f();
    ADD_FAILURE() << "no tc::Error, expected one naming '" << substring << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos)
        << "'" << e.what() << "' does not name '" << substring << "'";
  }
}

// ---- pre-tokenizers ---------------------------------------------------------------------------

TEST(PreTokenize, SplitsAsTheReferenceRegexes) {
  for (const ByteLevelCase& c : kByteLevel) {
    for (size_t i = 0; i < strings().size(); i++) {
      std::vector<std::string> got;
      for (std::string_view p : pre_tokenize(c.pre, strings()[i])) {
        got.push_back(absl::BytesToHexString(std::string(p)));
      }
      EXPECT_EQ(got, cases()[c.name]["splits"][i].get<std::vector<std::string>>())
          << c.name << " string " << i;
    }
  }
}

TEST(PreTokenize, PicksTheScannerFromGgufAndTokenizerJson) {
  EXPECT_EQ(pre_tokenizer_from_gguf("gpt-2"), PreTokenizer::Gpt2);
  EXPECT_EQ(pre_tokenizer_from_gguf("default"), PreTokenizer::Gpt2);
  EXPECT_EQ(pre_tokenizer_from_gguf("llama-bpe"), PreTokenizer::Llama3);
  EXPECT_EQ(pre_tokenizer_from_gguf("llama3"), PreTokenizer::Llama3);
  EXPECT_EQ(pre_tokenizer_from_gguf("qwen2"), PreTokenizer::Qwen2);
  expect_error([] { pre_tokenizer_from_gguf("falcon"); }, "'falcon'");
  EXPECT_EQ(pre_tokenizer_from_regex(R"(\s+)"), std::nullopt);
  for (const ByteLevelCase& c : kByteLevel) {
    Tokenizer t = Tokenizer::from_hf_file(fixture_path(c.name + ".tokenizer.json"));
    EXPECT_EQ(t.pre_tokenizer(), c.pre) << c.name;
    EXPECT_EQ(t.kind(), Tokenizer::Kind::ByteLevel);
  }
}

TEST(PreTokenize, DecodesUtf8WithoutReadingPastTheEnd) {
  // A 4-byte lead at the end of the view, with valid continuations beyond it in memory.
  std::string s = "a\xF0\x9F\x98\x80";
  Utf8Char c = decode_utf8(std::string_view(s).substr(0, 2), 1);
  EXPECT_FALSE(c.valid);
  EXPECT_EQ(c.len, 1u);
  c = decode_utf8(s, 1);
  EXPECT_TRUE(c.valid);
  EXPECT_EQ(c.cp, 0x1F600u);
  EXPECT_EQ(c.len, 4u);
}

// ---- byte-level BPE ---------------------------------------------------------------------------

TEST(ByteLevelBpe, BothLoadersGiveTheReferenceIds) {
  for (const ByteLevelCase& c : kByteLevel) {
    for (auto& [label, tok] : byte_level_tokenizers(c)) {
      for (size_t i = 0; i < strings().size(); i++) {
        EXPECT_EQ(tok.encode(strings()[i], false), ref_ids(c.name, i)) << label << " string " << i;
      }
    }
  }
}

TEST(ByteLevelBpe, DecodeInvertsEncode) {
  for (const ByteLevelCase& c : kByteLevel) {
    for (auto& [label, tok] : byte_level_tokenizers(c)) {
      for (size_t i = 0; i < strings().size(); i++) {
        std::vector<int32_t> ids = tok.encode(strings()[i], false);
        EXPECT_EQ(tok.decode(ids), strings()[i]) << label << " string " << i;
        std::string streamed;
        for (int32_t id : ids) streamed += tok.decode_one(id);
        EXPECT_EQ(streamed, strings()[i]) << label << " string " << i;
      }
    }
  }
}

TEST(ByteLevelBpe, SpecialTokensBosAndEos) {
  for (auto& [label, tok] : byte_level_tokenizers(kByteLevel[1])) {
    std::optional<int32_t> eot = tok.find("<|eot_id|>"), tool = tok.find("<|tool|>");
    ASSERT_TRUE(eot && tool) << label;
    EXPECT_TRUE(tok.is_special(*eot)) << label;
    EXPECT_FALSE(tok.is_special(*tool)) << label;  // added, not special: still split out
    EXPECT_FALSE(tok.is_special(*tok.find("a"))) << label;
    EXPECT_EQ(tok.decode_one(*eot), "<|eot_id|>");
    EXPECT_EQ(tok.piece(*tok.find("Ġ")), "Ġ");
    EXPECT_EQ(tok.decode_one(*tok.find("Ġ")), " ");
  }
  Tokenizer gguf = Tokenizer::from_gguf(gguf_vocab("bytelevel.gguf.json", "llama-bpe"));
  EXPECT_EQ(gguf.bos(), gguf.find("<|begin_of_text|>"));
  EXPECT_EQ(gguf.eos(), gguf.find("<|endoftext|>"));
  std::vector<int32_t> want = ref_ids("llama3", 4);
  want.insert(want.begin(), *gguf.bos());
  EXPECT_EQ(gguf.encode(strings()[4], true), want);
  // tokenizer.json alone has no BOS here: asking for one is an error.
  Tokenizer hf = Tokenizer::from_hf_file(fixture_path("llama3.tokenizer.json"));
  EXPECT_EQ(hf.bos(), std::nullopt);
  expect_error([&] { hf.encode("hi", true); }, "BOS");
}

TEST(ByteLevelBpe, TokenizerConfigGivesBosEosAndTheChatTemplate) {
  Tokenizer t = Tokenizer::from_hf_files(fixture_path("llama3.tokenizer.json"),
                                         fixture_path("tokenizer_config.json"));
  json config = load_json("tokenizer_config.json");
  EXPECT_EQ(t.bos(), t.find(config["bos_token"]["content"].get<std::string>()));
  EXPECT_EQ(t.eos(), t.find(config["eos_token"].get<std::string>()));
  EXPECT_TRUE(t.add_bos());
  EXPECT_EQ(t.chat_template(), config["chat_template"].get<std::string>());
  EXPECT_EQ(t.encode("Hello world", true).front(), *t.bos());
}

// Hugging Face's Llama 3 files add the BOS in a post_processor (a TemplateProcessing, here in a
// Sequence as newer files have it): that token is the BOS, added by default.
TEST(ByteLevelBpe, PostProcessorGivesTheBos) {
  json j = load_json("llama3.tokenizer.json");
  json bos_first = {{"type", "TemplateProcessing"},
                    {"single",
                     {{{"SpecialToken", {{"id", "<|begin_of_text|>"}, {"type_id", 0}}}},
                      {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}};
  j["post_processor"] = {{"type", "Sequence"},
                         {"processors", {{{"type", "ByteLevel"}}, bos_first}}};
  Tokenizer t = Tokenizer::from_hf_json(j.dump());
  EXPECT_EQ(t.bos(), t.find("<|begin_of_text|>"));
  EXPECT_TRUE(t.add_bos());
  EXPECT_EQ(t.encode("", t.add_bos()), std::vector<int32_t>{*t.bos()});
}

// A long piece without spaces costs O(n log n), not a quadratic number of passes.
TEST(ByteLevelBpe, LongInputsWithoutSpacesRoundTrip) {
  Tokenizer t = Tokenizer::from_hf_file(fixture_path("gpt2.tokenizer.json"));
  std::string s;
  while (s.size() < (1u << 20)) s += "thequickbrownfoxjumpsoverthelazydog";
  std::vector<int32_t> ids = t.encode(s, false);
  EXPECT_LT(ids.size(), s.size() * 9 / 10);  // the trained merges do apply
  EXPECT_EQ(t.decode(ids), s);
}

// ---- SentencePiece-style BPE ------------------------------------------------------------------

TEST(SentencePieceBpe, BothLoadersGiveSentencePieceIds) {
  size_t checked = 0;
  for (auto& [label, tok] : spm_tokenizers()) {
    EXPECT_EQ(tok.kind(), Tokenizer::Kind::SentencePiece);
    for (size_t i = 0; i < strings().size(); i++) {
      const json& ref = cases()["spm"]["ids"][i];
      if (ref.is_null()) continue;  // invalid UTF-8: sentencepiece takes str (see below)
      EXPECT_EQ(tok.encode(strings()[i], false), ref.get<std::vector<int32_t>>())
          << label << " string " << i;
      checked++;
    }
  }
  EXPECT_GE(checked, 3 * 30u);
}

TEST(SentencePieceBpe, DecodeInvertsEncode) {
  for (auto& [label, tok] : spm_tokenizers()) {
    for (size_t i = 0; i < strings().size(); i++) {
      for (bool bos : {false, true}) {
        if (bos && !tok.bos()) continue;
        std::string want = (bos ? tok.piece(*tok.bos()) : "") + strings()[i];
        EXPECT_EQ(tok.decode(tok.encode(strings()[i], bos)), want)
            << label << " string " << i << " bos " << bos;
      }
    }
  }
}

TEST(SentencePieceBpe, InvalidUtf8AndUnknownCharactersBecomeByteTokens) {
  Tokenizer t = Tokenizer::from_gguf(gguf_vocab("spm.gguf.json", ""));
  EXPECT_TRUE(t.add_bos());
  ASSERT_TRUE(t.bos().has_value());
  std::vector<int32_t> ids = t.encode("\xFF", true);
  // BOS, the dummy prefix "▁", then the invalid byte as <0xFF>.
  EXPECT_EQ(ids, (std::vector<int32_t>{*t.bos(), *t.find("\xE2\x96\x81"), *t.find("<0xFF>")}));
  EXPECT_EQ(t.decode_one(*t.find("<0xFF>")), "\xFF");
  EXPECT_EQ(t.decode_one(*t.find("<0x41>")), "A");
}

TEST(SentencePieceBpe, LongInputsWithoutSpacesRoundTrip) {
  Tokenizer t = Tokenizer::from_gguf(gguf_vocab("spm.gguf.json", ""));
  std::string s;
  while (s.size() < (1u << 20)) s += "thequickbrownfoxjumpsoverthelazydog\xE2\x98\x83";
  std::vector<int32_t> ids = t.encode(s, false);
  EXPECT_LT(ids.size(), s.size() * 9 / 10);
  EXPECT_EQ(t.decode(ids), s);
}

// Random bytes (mostly invalid UTF-8) with pieces of special tokens mixed in: every tokenizer
// gives them back byte for byte.
TEST(Tokenizers, RandomBytesRoundTrip) {
  std::vector<std::pair<std::string, Tokenizer>> all = spm_tokenizers();
  for (const ByteLevelCase& c : kByteLevel) {
    for (auto& t : byte_level_tokenizers(c)) all.push_back(std::move(t));
  }
  const std::vector<std::string> bits = {"<|eot_id|>", "<|im_", "<s>",          "</s", " ",
                                         "\n",         "'S",    "\xE2\x96\x81", "9"};
  std::mt19937 rng(33);
  for (int round = 0; round < 200; round++) {
    std::string s;
    int n = int(rng() % 64);
    for (int k = 0; k < n; k++) {
      if (rng() % 4 == 0) {
        s += bits[rng() % bits.size()];
      } else {
        s += char(rng() % 256);
      }
    }
    for (auto& [label, tok] : all) {
      // SentencePiece cannot tell a "▁" in the text from a space (nor can sentencepiece).
      std::string want = tok.kind() == Tokenizer::Kind::SentencePiece
                             ? absl::StrReplaceAll(s, {{"\xE2\x96\x81", " "}})
                             : s;
      EXPECT_EQ(tok.decode(tok.encode(s, false)), want) << label << " " << absl::CHexEscape(s);
    }
  }
}

// ---- bad input --------------------------------------------------------------------------------

TEST(TokenizerErrors, BadGgufVocabulariesNameTheProblem) {
  GgufVocab good = gguf_vocab("bytelevel.gguf.json", "gpt-2");
  GgufVocab v = good;
  v.merges.push_back("nope_token a");
  expect_error([&] { Tokenizer::from_gguf(v); }, "'nope_token'");
  v = good;
  v.merges.push_back("a Ġ");  // "aĠ" is no token
  expect_error([&] { Tokenizer::from_gguf(v); }, "'aĠ'");
  v = good;
  v.tokens.push_back(v.tokens[70]);
  v.token_types.push_back(1);
  expect_error([&] { Tokenizer::from_gguf(v); }, "duplicate token '" + v.tokens[70] + "'");
  v = good;
  v.merges.clear();
  v.tokens[0] = "<replaced>";  // byte 0x00's token, "Ā"
  expect_error([&] { Tokenizer::from_gguf(v); }, "byte 0x00");
  v = good;
  v.model = "bert";
  expect_error([&] { Tokenizer::from_gguf(v); }, "'bert'");
  v = good;
  v.pre = "mystery";
  expect_error([&] { Tokenizer::from_gguf(v); }, "'mystery'");
  v = good;
  v.token_types.pop_back();
  expect_error([&] { Tokenizer::from_gguf(v); }, "token_type");
  v = good;
  v.bos = int32_t(v.tokens.size());
  expect_error([&] { Tokenizer::from_gguf(v); }, "BOS id");

  GgufVocab spm = gguf_vocab("spm.gguf.json", "");
  spm.scores.clear();
  expect_error([&] { Tokenizer::from_gguf(spm); }, "scores");
}

TEST(TokenizerErrors, BadTokenizerJsonNamesTheProblem) {
  std::ifstream f(fixture_path("gpt2.tokenizer.json"));
  std::stringstream ss;
  ss << f.rdbuf();
  json good = json::parse(ss.str());
  expect_error([] { Tokenizer::from_hf_json("{not json"); }, "not valid JSON");
  json j = good;
  j["model"]["type"] = "WordPiece";
  expect_error([&] { Tokenizer::from_hf_json(j.dump()); }, "'WordPiece'");
  j = good;
  j["model"]["merges"].push_back("Ġ nope_token");
  expect_error([&] { Tokenizer::from_hf_json(j.dump()); }, "'nope_token'");
  j = good;
  j["model"]["merges"].push_back(json::array({"a"}));
  expect_error([&] { Tokenizer::from_hf_json(j.dump()); }, "merge");
  j = good;
  j["model"]["vocab"]["extra"] = 100000;
  expect_error([&] { Tokenizer::from_hf_json(j.dump()); }, "'extra' has id 100000");
  j = good;
  j["pre_tokenizer"] = {{"type", "Sequence"},
                        {"pretokenizers",
                         {{{"type", "Split"}, {"pattern", {{"Regex", "\\w+"}}}},
                          {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  expect_error([&] { Tokenizer::from_hf_json(j.dump()); }, "'\\w+'");
  expect_error([] { Tokenizer::from_hf_file("/nonexistent/tokenizer.json"); }, "cannot open");
}

TEST(TokenizerErrors, DecodeOfAnIdOutOfRange) {
  Tokenizer t = Tokenizer::from_hf_file(fixture_path("qwen2.tokenizer.json"));
  expect_error([&] { t.decode({1, int32_t(t.vocab_size())}); }, "out of range");
  expect_error([&] { t.decode_one(-1); }, "out of range");
}

// ---- chat templates ---------------------------------------------------------------------------

const std::vector<ChatMessage> kChat = {
    {"system", "You are helpful."},
    {"user", "Hi there!  "},
    {"assistant", "Hello."},
    {"user", "What is 2+2?"},
};

// The expected strings are what the official Jinja templates render (Meta-Llama-3-8B-Instruct,
// Qwen2-Instruct without its default system prompt, Mistral-7B-Instruct), written out by hand.
TEST(ChatTemplate, Llama3) {
  EXPECT_EQ(render_chat(ChatFamily::Llama3, kChat, true),
            "<|begin_of_text|>"
            "<|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi there!<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(render_chat(ChatFamily::Llama3, {{"user", "\n hi \t"}}, false),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>");
  EXPECT_EQ(chat_stop_text(ChatFamily::Llama3), "<|eot_id|>");
}

TEST(ChatTemplate, ChatML) {
  EXPECT_EQ(render_chat(ChatFamily::ChatML, kChat, true),
            "<|im_start|>system\nYou are helpful.<|im_end|>\n"
            "<|im_start|>user\nHi there!  <|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n"
            "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(render_chat(ChatFamily::ChatML, {{"user", "Hi"}}, false),
            "<|im_start|>user\nHi<|im_end|>\n");
  EXPECT_EQ(chat_stop_text(ChatFamily::ChatML), "<|im_end|>");
}

TEST(ChatTemplate, Mistral) {
  EXPECT_EQ(
      render_chat(ChatFamily::Mistral, kChat, true),
      "<s>[INST] You are helpful.\n\nHi there!   [/INST]Hello.</s>[INST] What is 2+2? [/INST]");
  EXPECT_EQ(render_chat(ChatFamily::Mistral, {{"user", "Hi"}}, true), "<s>[INST] Hi [/INST]");
  EXPECT_EQ(chat_stop_text(ChatFamily::Mistral), "</s>");
}

// The rendered prompt tokenizes with its markers as single special tokens.
TEST(ChatTemplate, RenderedPromptsEncodeTheirMarkersAsSpecialTokens) {
  Tokenizer t = Tokenizer::from_hf_file(fixture_path("llama3.tokenizer.json"));
  std::vector<int32_t> ids = t.encode(render_chat(ChatFamily::Llama3, kChat, true), false);
  int32_t eot = *t.find(chat_stop_text(ChatFamily::Llama3));
  EXPECT_EQ(std::count(ids.begin(), ids.end(), eot), 4);
  EXPECT_EQ(ids.front(), *t.find("<|begin_of_text|>"));
  ids = t.encode(render_chat(ChatFamily::ChatML, kChat, true), false);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), *t.find(chat_stop_text(ChatFamily::ChatML))), 4);
}

TEST(ChatTemplate, FamilyFromTheModelsTemplateOrAName) {
  // Excerpts of the official templates.
  EXPECT_EQ(detect_chat_family("{% set content = '<|start_header_id|>' + message['role'] + "
                               "'<|end_header_id|>\n\n' + message['content'] | trim %}"),
            ChatFamily::Llama3);
  EXPECT_EQ(detect_chat_family("{{'<|im_start|>' + message['role'] + '\n' + message['content']}}"),
            ChatFamily::ChatML);
  EXPECT_EQ(detect_chat_family("{{ '[INST] ' + message['content'] + ' [/INST]' }}"),
            ChatFamily::Mistral);
  expect_error([] { detect_chat_family("{{ messages }}"); }, "--chat-template");
  expect_error([] { detect_chat_family(""); }, "--chat-template");
  EXPECT_EQ(chat_family_from_name("llama3"), ChatFamily::Llama3);
  EXPECT_EQ(chat_family_from_name("chatml"), ChatFamily::ChatML);
  EXPECT_EQ(chat_family_from_name("mistral"), ChatFamily::Mistral);
  expect_error([] { chat_family_from_name("vicuna"); },
               "'vicuna' (known: llama3, chatml, mistral)");
}

TEST(ChatTemplate, RolesAndConversationsAFamilyForbids) {
  expect_error([] { render_chat(ChatFamily::Llama3, {{"narrator", "x"}}, true); }, "'narrator'");
  expect_error([] { render_chat(ChatFamily::ChatML, {{"narrator", "x"}}, true); }, "'narrator'");
  expect_error([] { render_chat(ChatFamily::ChatML, {}, true); }, "no messages");
  expect_error(
      [] {
        render_chat(ChatFamily::Mistral, {{"user", "a"}, {"user", "b"}}, true);
      },
      "alternate");
  expect_error([] { render_chat(ChatFamily::Mistral, {{"assistant", "a"}}, true); }, "alternate");
  expect_error(
      [] {
        render_chat(ChatFamily::Mistral, {{"user", "a"}, {"system", "b"}}, true);
      },
      "alternate");
  expect_error([] { render_chat(ChatFamily::Mistral, {{"system", "a"}}, true); }, "user turn");
  expect_error([] { render_chat(ChatFamily::Mistral, {{"tool", "a"}}, true); }, "'tool'");
}

}  // namespace
}  // namespace tc::llm
