// The config schema (apps/common/config.h): the shipped configs, overrides, defaults, the
// round trip through to_yaml, and each kind of mistake with the message it gives.
#include "apps/common/config.h"

#include <gtest/gtest.h>

#include "apps/common/build_model.h"
#include "tinycore/error.h"

namespace {

using tc::config::Config;
using tc::config::load_config;
using tc::config::parse_config;

const std::string kRoot = TC_FIXTURE_DIR "/../..";

// The smallest config that names everything required.
const char* kMinimal = R"(model:
  name: resnet
data:
  name: fashion_mnist
optim:
  name: sgd
  lr: 0.1
train:
  batch_size: 32
)";

std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_config(text, "cfg/run.yaml", overrides);
  } catch (const tc::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Config, ShippedConfigsParseAndBuild) {
  Config mnist = load_config(kRoot + "/configs/mnist.yaml");
  EXPECT_EQ(mnist.model.name, "mnist_convnet");
  EXPECT_EQ(mnist.data.name, "fashion_mnist");
  EXPECT_EQ(mnist.optim.name, "adam");
  EXPECT_DOUBLE_EQ(mnist.optim.lr, 1e-3);
  EXPECT_EQ(mnist.train.batch_size, 512);
  EXPECT_EQ(mnist.log.name, "mnist");

  Config resnet = load_config(kRoot + "/configs/resnet.yaml");
  EXPECT_EQ(resnet.model.name, "resnet");
  EXPECT_EQ(resnet.model.depth, 8);
  EXPECT_EQ(resnet.model.in_channels, 1);
  int64_t params = 0;
  for (const tc::Tensor& p : tc::config::build_model(resnet.model)->parameters())
    params += p.numel();
  EXPECT_EQ(params,
            77754);  // torch: the CifarResNet of gen_resnet.py (n=1, width 16, 1 in, 10 out)

  Config gpt = load_config(kRoot + "/configs/gpt.yaml");
  EXPECT_EQ(gpt.model.name, "gpt");
  EXPECT_EQ(gpt.model.layers, 4);
  EXPECT_EQ(gpt.model.dim, 256);
  EXPECT_EQ(gpt.model.heads, 4);
  EXPECT_EQ(gpt.model.context, 128);
  EXPECT_EQ(gpt.train.batch_size, 16);
  EXPECT_EQ(gpt.optim.name, "adamw");
  EXPECT_DOUBLE_EQ(gpt.optim.weight_decay, 0.01);
  EXPECT_EQ(gpt.data.vocab, "bytes");
  EXPECT_EQ(gpt.model.vocab, 0);  // train sets the data's
}

TEST(Config, DefaultsFillWhatTheFileLeavesOut) {
  Config c = parse_config(kMinimal, "cfg/run.yaml");
  Config d;
  EXPECT_EQ(c.model.style, d.model.style);
  EXPECT_EQ(c.train.epochs, 1);
  EXPECT_DOUBLE_EQ(c.optim.momentum, 0.9);
  EXPECT_TRUE(c.data.normalize);
  EXPECT_EQ(c.log.dir, "runs");
  EXPECT_EQ(c.log.name, "run");  // the file's stem
}

TEST(Config, OverridesWinOverTheFile) {
  Config c = parse_config(kMinimal, "cfg/run.yaml",
                          {"optim.lr=3e-4", "train.batch_size=64", "data.normalize=false",
                           "model.style=imagenet", "log.name=exp 1", "model.depth=18"});
  EXPECT_DOUBLE_EQ(c.optim.lr, 3e-4);
  EXPECT_EQ(c.train.batch_size, 64);
  EXPECT_FALSE(c.data.normalize);
  EXPECT_EQ(c.model.style, "imagenet");
  EXPECT_EQ(c.model.depth, 18);
  EXPECT_EQ(c.log.name, "exp 1");
}

TEST(Config, OverridesCanGiveRequiredKeys) {
  Config c =
      parse_config("model:\n  name: gpt\n", "x.yaml",
                   {"data.name=text", "optim.name=adamw", "optim.lr=1e-3", "train.batch_size=8"});
  EXPECT_EQ(c.data.name, "text");
  EXPECT_EQ(c.train.batch_size, 8);
}

TEST(Config, EffectiveConfigRoundTrips) {
  Config c = parse_config(kMinimal, "cfg/run.yaml",
                          {"optim.lr=0.1234567891234", "log.name=a \"quoted\" \\ name",
                           "data.path=/tmp/x y", "optim.eps=1e-300", "train.seed=12345678901"});
  std::string yaml = tc::config::to_yaml(c);
  Config back = parse_config(yaml, "elsewhere.yaml");
  EXPECT_EQ(tc::config::to_yaml(back), yaml);
  EXPECT_DOUBLE_EQ(back.optim.lr, 0.1234567891234);
  EXPECT_EQ(back.log.name, "a \"quoted\" \\ name");
  EXPECT_EQ(back.data.path, "/tmp/x y");
  EXPECT_EQ(back.train.seed, 12345678901);
  EXPECT_NE(yaml.find("  lr: 0.1234567891234\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  momentum: 0.9\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  epochs: 1\n"), std::string::npos) << yaml;
}

TEST(Config, ValuesAreStoredWithoutSurroundingWhitespace) {
  // shell quoting keeps the spaces of an override; YAML keeps them inside quotes
  Config c = parse_config(std::string(kMinimal) + "log:\n  dir: \" out \"\n", "cfg/run.yaml",
                          {"train.dtype=bfloat16 ", "model.style= imagenet", "log.name=\texp 1 ",
                           "train.epochs= 3 ", "optim.lr=0.5 ", "data.flip= true"});
  EXPECT_EQ(c.train.dtype, "bfloat16");
  EXPECT_EQ(c.model.style, "imagenet");
  EXPECT_EQ(c.log.name, "exp 1");
  EXPECT_EQ(c.log.dir, "out");
  EXPECT_EQ(c.train.epochs, 3);
  EXPECT_DOUBLE_EQ(c.optim.lr, 0.5);
  EXPECT_TRUE(c.data.flip);
  EXPECT_EQ(tc::config::to_yaml(parse_config(tc::config::to_yaml(c), "back.yaml")),
            tc::config::to_yaml(c));
}

TEST(Config, QuotedNumbersAndBoolsAreStringsSoErrors) {
  std::string lr = kMinimal;
  lr.replace(lr.find("lr: 0.1"), 7, "lr: '0.1'");
  EXPECT_EQ(error_of(lr), "cfg/run.yaml:7: optim.lr: expected a number, got the string \"0.1\"");
  EXPECT_EQ(error_of(std::string(kMinimal) + "model:\n  depth: \"8\"\n"),
            "cfg/run.yaml:11: model.depth: expected an integer, got the string \"8\"");
  EXPECT_EQ(error_of(std::string(kMinimal) + "data:\n  flip: \"true\"\n"),
            "cfg/run.yaml:11: data.flip: expected true or false, got the string \"true\"");
  EXPECT_EQ(error_of(std::string(kMinimal) + "  epochs: ''\n"),
            "cfg/run.yaml:10: train.epochs: expected an integer, got the string \"\"");
  // quoted strings, plain numbers and command-line text are what they were
  Config c = parse_config(std::string(kMinimal) + "  epochs: 8\nmodel:\n  style: \"imagenet\"\n",
                          "cfg/run.yaml", {"model.depth=18", "optim.lr=0.25"});
  EXPECT_EQ(c.train.epochs, 8);
  EXPECT_EQ(c.model.style, "imagenet");
  EXPECT_EQ(c.model.depth, 18);
  EXPECT_DOUBLE_EQ(c.optim.lr, 0.25);
}

TEST(Config, UnknownKeysNameTheKeyFileAndLine) {
  EXPECT_EQ(error_of(std::string(kMinimal) + "  bacth_size: 3\n"),
            "cfg/run.yaml:10: train.bacth_size: unknown key (train has batch_size, epochs, "
            "max_steps, eval_every, eval_batch_size, checkpoint_every, seed, dtype, loss_scale, "
            "stop_after)");
  EXPECT_EQ(error_of(std::string(kMinimal) + "logging:\n  name: x\n"),
            "cfg/run.yaml:10: unknown section 'logging' (sections are model, data, optim, "
            "train, log, dist)");
}

TEST(Config, WrongTypesNameTheKeyFileAndLine) {
  EXPECT_EQ(error_of(std::string(kMinimal) + "  epochs: many\n"),
            "cfg/run.yaml:10: train.epochs: expected an integer, got 'many'");
  EXPECT_EQ(error_of(std::string(kMinimal) + "  epochs: 1.5\n"),
            "cfg/run.yaml:10: train.epochs: expected an integer, got '1.5'");
  EXPECT_EQ(error_of(std::string(kMinimal) + "log:\n  print_every:\n"),
            "cfg/run.yaml:11: log.print_every: expected an integer, got nothing");
  EXPECT_EQ(error_of(std::string(kMinimal) + "data:\n  normalize: maybe\n"),
            "cfg/run.yaml:11: data.normalize: expected true or false, got 'maybe'");
  EXPECT_EQ(error_of(std::string(kMinimal) + "  seed: [1, 2]\n"),
            "cfg/run.yaml:10: train.seed: expected an integer, got a list");
  EXPECT_EQ(error_of("model: resnet\n"),
            "cfg/run.yaml:1: model: expected a mapping of keys (name, classes, in_channels, "
            "depth, style, width, vocab, context, layers, dim, heads)");
  EXPECT_EQ(
      error_of("- 1\n- 2\n"),
      "cfg/run.yaml:1: expected a mapping of sections (model, data, optim, train, log, dist)");
}

TEST(Config, ValuesOutOfRangeOrChoicesAreErrors) {
  EXPECT_EQ(error_of(kMinimal, {"train.batch_size=0"}),
            "command line override 'train.batch_size=0': train.batch_size: must be at least 1, "
            "got 0");
  EXPECT_EQ(error_of(kMinimal, {"optim.name=adagrad"}),
            "command line override 'optim.name=adagrad': optim.name: 'adagrad' is not one of "
            "sgd, adam, adamw, lamb, muon");
  EXPECT_EQ(error_of(kMinimal, {"train.dtype=float8"}),
            "command line override 'train.dtype=float8': train.dtype: 'float8' is not one of "
            "float32, float16, bfloat16");
  EXPECT_EQ(error_of(kMinimal, {"train.loss_scale=0.5"}),
            "command line override 'train.loss_scale=0.5': train.loss_scale: must be at least 1, "
            "got 0.5");
  EXPECT_EQ(error_of(std::string(kMinimal) + "  batch_size: 4\n"),
            "cfg/run.yaml:10: train.batch_size: given twice");
}

TEST(Config, MissingRequiredKeysNameTheKeyAndSection) {
  std::string no_lr = kMinimal;
  no_lr.erase(no_lr.find("  lr: 0.1\n"), 10);
  EXPECT_EQ(error_of(no_lr),
            "cfg/run.yaml:5: optim.lr: required, but not given (learning rate (the peak of a "
            "schedule))");
  EXPECT_EQ(error_of(""), "cfg/run.yaml: model.name: required, but not given (the network)");
}

TEST(Config, BadOverridesAndFilesAreErrors) {
  EXPECT_EQ(error_of(kMinimal, {"optim.lr"}),
            "command line override 'optim.lr': expected key.path=value");
  EXPECT_EQ(error_of(kMinimal, {"optim.rl=1"}),
            "command line override 'optim.rl=1': optim.rl: unknown key (optim has name, lr, "
            "momentum, nesterov, weight_decay, b1, b2, eps, grad_clip, schedule, warmup, min_lr, "
            "step_size, gamma)");
  EXPECT_EQ(error_of(kMinimal, {"opt.lr=1"}),
            "command line override 'opt.lr=1': opt.lr: unknown key (sections are model, data, "
            "optim, train, log, dist)");
  EXPECT_EQ(error_of(kMinimal, {"optim.lr=fast"}),
            "command line override 'optim.lr=fast': optim.lr: expected a number, got 'fast'");
  EXPECT_EQ(error_of("model:\n  name: [unclosed\n"),
            "cfg/run.yaml:3: invalid YAML: end of sequence flow not found");
  try {
    load_config("/nonexistent/x.yaml");
    FAIL() << "no error";
  } catch (const tc::Error& e) {
    EXPECT_EQ(std::string(e.what()), "config: cannot read /nonexistent/x.yaml");
  }
}

TEST(Config, ModelsThatCannotBeBuiltNameTheKey) {
  auto error_building = [](const std::vector<std::string>& overrides) {
    try {
      tc::config::build_model(parse_config(kMinimal, "r.yaml", overrides).model);
    } catch (const tc::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_building({"model.depth=10"}),
            "model.depth / model.style: ResNet: a cifar-style depth is 6n+2 (8, 20, 32, 44, 56, "
            "110), got 10");
  EXPECT_EQ(error_building({"model.name=mnist_convnet", "model.in_channels=3"}),
            "model.in_channels: mnist_convnet takes 1 input channel (28x28), got 3");
  EXPECT_EQ(error_building({"model.name=gpt", "model.dim=30", "model.heads=4"}),
            "model.heads: 4 heads do not divide model.dim 30");
  EXPECT_EQ(error_building({"model.name=gpt"}),
            "model.vocab: 0 (the data's) is only known to train, give the vocabulary size");
}

TEST(Config, HelpListsEveryKeyWithItsDefault) {
  std::string help = tc::config::describe_keys();
  Config d;
  for (const char* key :
       {"model.name", "model.depth", "data.limit", "data.crop", "optim.lr", "optim.schedule",
        "train.batch_size", "train.stop_after", "log.print_every"})
    EXPECT_NE(help.find(std::string("  ") + key + " ("), std::string::npos) << key;
  EXPECT_NE(help.find("  optim.lr (a number; required)"), std::string::npos) << help;
  EXPECT_NE(help.find("  train.epochs (an integer; default 1)"), std::string::npos) << help;
  EXPECT_NE(help.find("  optim.schedule (constant|cosine|step|onecycle; default \"constant\")"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("  data.name (fashion_mnist|cifar10|cifar100|image_folder|text; required)"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("  data.flip (true or false; default false)"), std::string::npos) << help;
  EXPECT_NE(
      help.find("  data.vocab (bytes|chars; default \"bytes\")\n      text: tokens are bytes"),
      std::string::npos)
      << help;
  EXPECT_NE(help.find("  model.vocab (an integer; default 0)\n      gpt: vocabulary size"),
            std::string::npos)
      << help;
}

}  // namespace
