#include "apps/common/config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tinycore/error.h"
#include "yaml-cpp/yaml.h"

namespace tc::config {
namespace {

enum class Kind { kString, kInt, kNumber, kBool };

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kString:
      return "a string";
    case Kind::kInt:
      return "an integer";
    case Kind::kNumber:
      return "a number";
    case Kind::kBool:
      return "true or false";
  }
  return "?";
}

template <typename T>
constexpr Kind kind_of() {
  if constexpr (std::is_same_v<T, std::string>) {
    return Kind::kString;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return Kind::kInt;
  } else if constexpr (std::is_same_v<T, double>) {
    return Kind::kNumber;
  } else {
    static_assert(std::is_same_v<T, bool>, "config fields are strings, integers, numbers or bools");
    return Kind::kBool;
  }
}

// One key of the schema: where its value lives in Config, how it is typed and checked.
struct Field {
  std::string key;  // "section.name"
  Kind kind;
  bool required;
  std::string help;
  std::vector<std::string> choices;  // strings: the allowed values (empty: any)
  double min;                        // numbers: the smallest allowed value
  std::function<void*(Config&)> ref;
};

struct Spec {
  bool required = false;
  std::vector<std::string> choices = {};
  double min = -std::numeric_limits<double>::infinity();
};

template <typename S, typename T>
Field field(const char* key, S Config::*section, T S::*member, const char* help, Spec spec = {}) {
  return {key, kind_of<T>(), spec.required, help, spec.choices, spec.min, [=](Config& c) -> void* {
            return &(c.*section.*member);
          }};
}

const std::vector<Field>& schema() {
  using C = Config;
  const Spec positive{.min = 1};
  const Spec non_negative{.min = 0};
  static const std::vector<Field> fields = {
      field("model.name", &C::model, &ModelConfig::name, "the network",
            {.required = true, .choices = {"mnist_convnet", "resnet", "gpt"}}),
      field("model.classes", &C::model, &ModelConfig::classes, "image models: output classes",
            positive),
      field("model.in_channels", &C::model, &ModelConfig::in_channels,
            "image models: input channels (resnet)", positive),
      field("model.depth", &C::model, &ModelConfig::depth,
            "resnet: layers (cifar: 6n+2 such as 8, 20, 32; imagenet: 18, 34, 50)", positive),
      field("model.style", &C::model, &ModelConfig::style,
            "resnet: cifar (3 stages of width, 2x, 4x channels) or imagenet (torchvision's)",
            {.choices = {"cifar", "imagenet"}}),
      field("model.width", &C::model, &ModelConfig::width,
            "resnet cifar: channels of the first stage", positive),
      field("model.vocab", &C::model, &ModelConfig::vocab,
            "gpt: vocabulary size, at least the data's (0: the data's: 256 for data.vocab bytes, "
            "the corpus's characters for chars; the run's config.yaml records the number)",
            non_negative),
      field("model.context", &C::model, &ModelConfig::context, "gpt: tokens per sequence",
            positive),
      field("model.layers", &C::model, &ModelConfig::layers, "gpt: transformer blocks", positive),
      field("model.dim", &C::model, &ModelConfig::dim, "gpt: embedding width", positive),
      field("model.heads", &C::model, &ModelConfig::heads, "gpt: attention heads", positive),

      field("data.name", &C::data, &DataConfig::name, "the data set",
            {.required = true,
             .choices = {"fashion_mnist", "cifar10", "cifar100", "image_folder", "text"}}),
      field("data.path", &C::data, &DataConfig::path,
            "where the data is (empty: the data set's default location; cifar10, cifar100: the "
            "folder of the .bin files; image_folder: a folder of train/<class>/ and val/<class>/ "
            "or test/<class>/)"),
      field("data.vocab", &C::data, &DataConfig::vocab,
            "text: tokens are bytes (all 256) or chars (the bytes the corpus holds, sorted; the "
            "run keeps them in vocab.bin for infer)",
            {.choices = {"bytes", "chars"}}),
      field("data.limit", &C::data, &DataConfig::limit, "training samples used (0: all)",
            non_negative),
      field("data.eval_limit", &C::data, &DataConfig::eval_limit, "test samples used (0: all)",
            non_negative),
      field("data.workers", &C::data, &DataConfig::workers, "data loader threads", positive),
      field("data.normalize", &C::data, &DataConfig::normalize,
            "images: scale to (x / 255 - mean) / std (false: raw 0..255)"),
      field("data.mean", &C::data, &DataConfig::mean,
            "images: pixel mean of x / 255, every channel (default: Fashion-MNIST's)"),
      field("data.std", &C::data, &DataConfig::std, "images: pixel deviation of x / 255",
            {.min = 1e-12}),
      field("data.size", &C::data, &DataConfig::size,
            "images: resize to size x size (bilinear) before cropping (0: keep the size)",
            non_negative),
      field("data.crop", &C::data, &DataConfig::crop,
            "images: crop size x size, at random in training, in the center for evaluation (0: "
            "no crop)",
            non_negative),
      field("data.pad", &C::data, &DataConfig::pad,
            "images: zeros added on each side before training's random crop (CIFAR: 4)",
            non_negative),
      field("data.flip", &C::data, &DataConfig::flip,
            "images: mirror left-right with probability 1/2 in training"),

      field("optim.name", &C::optim, &OptimConfig::name, "the optimizer",
            {.required = true, .choices = {"sgd", "adam", "adamw", "lamb", "muon"}}),
      field("optim.lr", &C::optim, &OptimConfig::lr, "learning rate (the peak of a schedule)",
            {.required = true, .min = 0}),
      field("optim.momentum", &C::optim, &OptimConfig::momentum, "sgd, muon: momentum",
            non_negative),
      field("optim.nesterov", &C::optim, &OptimConfig::nesterov, "sgd: Nesterov momentum"),
      field("optim.weight_decay", &C::optim, &OptimConfig::weight_decay,
            "weight decay (adamw, lamb: decoupled)", non_negative),
      field("optim.b1", &C::optim, &OptimConfig::b1, "adam, adamw, lamb: beta1", non_negative),
      field("optim.b2", &C::optim, &OptimConfig::b2, "adam, adamw, lamb: beta2", non_negative),
      field("optim.eps", &C::optim, &OptimConfig::eps, "adam, adamw, lamb: epsilon", non_negative),
      field("optim.grad_clip", &C::optim, &OptimConfig::grad_clip,
            "clip the global gradient norm to this (0: off)", non_negative),
      field("optim.schedule", &C::optim, &OptimConfig::schedule, "learning-rate schedule",
            {.choices = {"constant", "cosine", "step", "onecycle"}}),
      field("optim.warmup", &C::optim, &OptimConfig::warmup, "cosine: linear warm-up steps",
            non_negative),
      field("optim.min_lr", &C::optim, &OptimConfig::min_lr, "cosine: the final learning rate",
            non_negative),
      field("optim.step_size", &C::optim, &OptimConfig::step_size, "step: steps between decays",
            positive),
      field("optim.gamma", &C::optim, &OptimConfig::gamma, "step: decay factor", non_negative),

      field("train.batch_size", &C::train, &TrainConfig::batch_size, "samples per step",
            {.required = true, .min = 1}),
      field("train.epochs", &C::train, &TrainConfig::epochs, "passes over the training data",
            positive),
      field("train.max_steps", &C::train, &TrainConfig::max_steps,
            "steps in all (0: epochs x batches per epoch)", non_negative),
      field("train.eval_every", &C::train, &TrainConfig::eval_every,
            "steps between evaluations (0: at the end of each epoch)", non_negative),
      field("train.eval_batch_size", &C::train, &TrainConfig::eval_batch_size,
            "samples per evaluation step", positive),
      field("train.checkpoint_every", &C::train, &TrainConfig::checkpoint_every,
            "steps between checkpoints (0: at the end of each epoch); always at the end",
            non_negative),
      field("train.seed", &C::train, &TrainConfig::seed,
            "seed of the weights, the data order and random ops", non_negative),
      field("train.dtype", &C::train, &TrainConfig::dtype,
            "mixed precision: matmuls and convolutions in float16 or bfloat16, float32 master "
            "weights, losses and norms (float32: off)",
            {.choices = {"float32", "float16", "bfloat16"}}),
      field("train.loss_scale", &C::train, &TrainConfig::loss_scale,
            "float16: the first loss scale; it halves on a step with inf/NaN gradients (skipped) "
            "and doubles after 2000 good steps",
            {.min = 1}),
      field("train.stop_after", &C::train, &TrainConfig::stop_after,
            "testing --resume: stop as if killed (SIGKILL) right after this step (0: off; not "
            "saved in the run's config.yaml)",
            non_negative),

      field("log.name", &C::log, &LogConfig::name,
            "the run's name: outputs go to <dir>/<name> (empty: the config file's stem)"),
      field("log.dir", &C::log, &LogConfig::dir, "the folder of runs"),
      field("log.print_every", &C::log, &LogConfig::print_every,
            "steps between progress lines when stderr is not a terminal", positive),

      field("dist.timeout_s", &C::dist, &DistConfig::timeout_s,
            "mpirun: a collective that takes longer (a rank died, a link went silent) ends every "
            "rank with a message naming it",
            {.min = 1e-3}),
      field("dist.sync_batchnorm", &C::dist, &DistConfig::sync_batchnorm,
            "mpirun: batchnorm statistics over the whole batch, every rank's share (false: each "
            "rank's own, as tinygrad's shards)"),
      field("dist.bucket_mb", &C::dist, &DistConfig::bucket_mb,
            "mpirun: gradients are averaged over the ranks in all-reduces of at most this many "
            "MB (PyTorch DDP's 25)",
            {.min = 1e-3}),
      field("dist.check_replicas", &C::dist, &DistConfig::check_replicas,
            "mpirun: after each step, check that every rank holds the same weights (slower; a "
            "debug aid)"),
  };
  return fields;
}

const std::vector<std::string>& sections() {
  static const std::vector<std::string> names = {"model", "data", "optim", "train", "log", "dist"};
  return names;
}

const Field* find_field(const std::string& key) {
  for (const Field& f : schema())
    if (f.key == key) return &f;
  return nullptr;
}

std::string keys_of(const std::string& section) {
  std::vector<std::string> keys;
  for (const Field& f : schema())
    if (absl::StartsWith(f.key, section + ".")) keys.push_back(f.key.substr(section.size() + 1));
  return absl::StrJoin(keys, ", ");
}

std::string format_number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);  // shortest that reads back equal
  std::string s(buf, end);
  // keep it a YAML float (1 -> 1.0) so a reader sees the type
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string value_text(const Field& f, Config& c) {
  void* p = f.ref(c);
  switch (f.kind) {
    case Kind::kString:
      return quote(*static_cast<std::string*>(p));
    case Kind::kInt:
      return std::to_string(*static_cast<int64_t*>(p));
    case Kind::kNumber:
      return format_number(*static_cast<double*>(p));
    case Kind::kBool:
      return *static_cast<bool*>(p) ? "true" : "false";
  }
  return "";
}

// "file:line: key: expected <kind>, got <got>".
Error wrong_type(const Field& f, const std::string& where, const std::string& got) {
  return Error(absl::StrCat(where, ": ", f.key, ": expected ", kind_name(f.kind), ", got ", got));
}

// Sets field `f` of `c` from the scalar `text`; `where` ("file:line") prefixes any error. Every
// kind of value is stored without surrounding whitespace (an override "key=value " has it).
void assign(const Field& f, Config& c, const std::string& text, const std::string& where) {
  auto bad = [&](const std::string& why) {
    throw Error(absl::StrCat(where, ": ", f.key, ": ", why));
  };
  auto wrong = [&] { throw wrong_type(f, where, absl::StrCat("'", text, "'")); };
  void* p = f.ref(c);
  std::string t(absl::StripAsciiWhitespace(text));
  switch (f.kind) {
    case Kind::kString:
      if (!f.choices.empty() && std::find(f.choices.begin(), f.choices.end(), t) == f.choices.end())
        bad(absl::StrCat("'", t, "' is not one of ", absl::StrJoin(f.choices, ", ")));
      *static_cast<std::string*>(p) = t;
      return;
    case Kind::kInt: {
      int64_t v;
      if (!absl::SimpleAtoi(t, &v)) wrong();
      if (static_cast<double>(v) < f.min)
        bad(absl::StrCat("must be at least ", f.min, ", got ", v));
      *static_cast<int64_t*>(p) = v;
      return;
    }
    case Kind::kNumber: {
      double v;
      if (!absl::SimpleAtod(t, &v) || !std::isfinite(v)) wrong();
      if (v < f.min) bad(absl::StrCat("must be at least ", f.min, ", got ", t));
      *static_cast<double*>(p) = v;
      return;
    }
    case Kind::kBool: {
      std::string l = absl::AsciiStrToLower(t);
      if (l == "true" || l == "yes" || l == "on" || l == "1")
        *static_cast<bool*>(p) = true;
      else if (l == "false" || l == "no" || l == "off" || l == "0")
        *static_cast<bool*>(p) = false;
      else
        wrong();
      return;
    }
  }
}

std::string at(const std::string& source, const YAML::Mark& mark) {
  return mark.is_null() ? source : absl::StrCat(source, ":", mark.line + 1);
}

}  // namespace

Config parse_config(const std::string& text, const std::string& source,
                    const std::vector<std::string>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(absl::StrCat(at(source, e.mark), ": invalid YAML: ", e.msg));
  }
  Config c;
  std::set<std::string> given;
  std::map<std::string, std::string> section_at;  // where each section starts, for messages
  if (root.IsDefined() && !root.IsNull()) {
    if (!root.IsMap())
      throw Error(absl::StrCat(at(source, root.Mark()), ": expected a mapping of sections (",
                               absl::StrJoin(sections(), ", "), ")"));
    for (const auto& kv : root) {
      std::string section = kv.first.Scalar();
      const std::string where = at(source, kv.first.Mark());
      if (std::find(sections().begin(), sections().end(), section) == sections().end())
        throw Error(absl::StrCat(where, ": unknown section '", section, "' (sections are ",
                                 absl::StrJoin(sections(), ", "), ")"));
      section_at[section] = where;
      if (kv.second.IsNull()) continue;
      if (!kv.second.IsMap())
        throw Error(absl::StrCat(where, ": ", section, ": expected a mapping of keys (",
                                 keys_of(section), ")"));
      for (const auto& entry : kv.second) {
        std::string key = section + "." + entry.first.Scalar();
        const std::string key_at = at(source, entry.first.Mark());
        const Field* f = find_field(key);
        if (!f)
          throw Error(absl::StrCat(key_at, ": ", key, ": unknown key (", section, " has ",
                                   keys_of(section), ")"));
        if (!given.insert(key).second)
          throw Error(absl::StrCat(key_at, ": ", key, ": given twice"));
        const YAML::Node& value = entry.second;
        const std::string value_at = at(source, value.Mark());
        if (value.IsNull() && f->kind != Kind::kString) throw wrong_type(*f, key_at, "nothing");
        if (!value.IsScalar() && !value.IsNull())
          throw wrong_type(*f, value_at, value.IsMap() ? "a mapping" : "a list");
        // quoting makes a string (tag "!"; plain scalars have "?"), so "8" is no integer
        if (f->kind != Kind::kString && value.Tag() == "!")
          throw wrong_type(*f, value_at, "the string " + quote(value.Scalar()));
        assign(*f, c, value.IsNull() ? "" : value.Scalar(), value_at);
      }
    }
  }
  for (size_t i = 0; i < overrides.size(); i++) {
    const std::string& o = overrides[i];
    const std::string where = absl::StrCat("command line override '", o, "'");
    size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(absl::StrCat(where, ": expected key.path=value"));
    std::string key = o.substr(0, eq);
    const Field* f = find_field(key);
    if (!f) {
      std::string section = key.substr(0, key.find('.'));
      bool known = std::find(sections().begin(), sections().end(), section) != sections().end();
      throw Error(absl::StrCat(where, ": ", key, ": unknown key (",
                               known ? section + " has " + keys_of(section)
                                     : "sections are " + absl::StrJoin(sections(), ", "),
                               ")"));
    }
    assign(*f, c, o.substr(eq + 1), where);
    given.insert(key);
  }
  for (const Field& f : schema()) {
    if (!f.required || given.count(f.key)) continue;
    std::string section = f.key.substr(0, f.key.find('.'));
    auto it = section_at.find(section);
    throw Error(absl::StrCat(it != section_at.end() ? it->second : source, ": ", f.key,
                             ": required, but not given (", f.help, ")"));
  }
  if (c.log.name.empty()) c.log.name = std::filesystem::path(source).stem().string();
  return c;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(absl::StrCat("config: cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path, overrides);
}

std::string to_yaml(const Config& config) {
  Config c = config;
  std::string out, section;
  for (const Field& f : schema()) {
    std::string s = f.key.substr(0, f.key.find('.'));
    if (s != section) absl::StrAppend(&out, s, ":\n");
    section = s;
    absl::StrAppend(&out, "  ", f.key.substr(s.size() + 1), ": ", value_text(f, c), "\n");
  }
  return out;
}

std::string describe_keys() {
  Config defaults;
  std::string out;
  for (const Field& f : schema()) {
    std::string type = kind_name(f.kind);
    if (!f.choices.empty()) type = absl::StrJoin(f.choices, "|");
    std::string dflt = f.required ? "required" : "default " + value_text(f, defaults);
    absl::StrAppend(&out, "  ", f.key, " (", type, "; ", dflt, ")\n      ", f.help, "\n");
  }
  return out;
}

}  // namespace tc::config
