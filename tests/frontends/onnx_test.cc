// The ONNX importer against ONNX's own backend tests (Debian's libonnx-testdata: a model, its
// inputs and the outputs ONNX's reference computed): every node test whose operators the importer
// maps must match at ONNX's tolerances (rtol 1e-3, atol 1e-7), but for those listed with a reason
// in onnx_node_failures.txt. Bad files and unsupported operators are clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "frontends/onnx/graph.h"
#include "frontends/onnx/ops.h"
#include "frontends/onnx/proto.h"
#include "frontends/onnx/runner.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

namespace fs = std::filesystem;
const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

// The known failures: a test name a line, then its reason.
std::set<std::string> known_failures() {
  std::set<std::string> out;
  std::ifstream in(fs::path(TC_FIXTURE_DIR).parent_path() / "frontends/onnx_node_failures.txt");
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.insert(line.substr(0, line.find(' ')));
  return out;
}

// Where `got` differs from `want` beyond ONNX's tolerances, a message saying where; else empty.
std::string mismatch(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape())
    return "shape " + fmt_shape(got.shape()) + ", want " + fmt_shape(want.shape());
  if (got.dtype() != want.dtype())
    return "dtype " + got.dtype().name() + ", want " + want.dtype().name();
  std::vector<double> g = got.cast(dtypes::float64).data<double>();
  std::vector<double> w = want.cast(dtypes::float64).data<double>();
  for (size_t i = 0; i < g.size(); i++) {
    bool same = (std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i] ||
                std::abs(g[i] - w[i]) <= 1e-7 + 1e-3 * std::abs(w[i]);
    if (!same)
      return "element " + std::to_string(i) + ": " + std::to_string(g[i]) + ", want " +
             std::to_string(w[i]);
  }
  return "";
}

// The same for values of any kind: sequences element by element, optionals by what they hold.
std::string mismatch(const Value& got, const Value& want) {
  if (got.kind() != want.kind()) return got.kind() + ", want " + want.kind();
  if (got.tensor()) return mismatch(*got.tensor(), *want.tensor());
  if (!got.sequence()) return "";  // empty optionals
  if (got.sequence()->size() != want.sequence()->size())
    return std::to_string(got.sequence()->size()) + " tensors, want " +
           std::to_string(want.sequence()->size());
  for (size_t i = 0; i < got.sequence()->size(); i++)
    if (std::string m = mismatch((*got.sequence())[i], (*want.sequence())[i]); !m.empty())
      return "tensor " + std::to_string(i) + ": " + m;
  return "";
}

// The declared type of the graph's input or output `name`.
const ::onnx::TypeProto& type_of(const OnnxRunner& r, const std::string& name) {
  for (const auto* list : {&r.model().graph().input(), &r.model().graph().output()})
    for (const auto& v : *list)
      if (v.name() == name) return v.type();
  fail("no input or output %s", name);
}

// Runs one backend test: "" when every data set matches, else what went wrong.
std::string run_test(const fs::path& dir) {
  try {
    OnnxRunner runner((dir / "model.onnx").string());
    for (const auto& set : fs::directory_iterator(dir)) {
      if (!set.is_directory()) continue;
      // input_N.pb and output_N.pb: a TensorProto, SequenceProto or OptionalProto as declared
      auto read = [&](const char* what, size_t i, const std::string& name) {
        fs::path file = set.path() / (what + std::to_string(i) + ".pb");
        return read_value(file.string(), type_of(runner, name));
      };
      std::map<std::string, Value> inputs;
      for (size_t i = 0; i < runner.input_names().size(); i++)
        inputs.emplace(runner.input_names()[i], read("input_", i, runner.input_names()[i]));
      std::map<std::string, Value> outputs = runner.run(inputs);
      for (size_t i = 0; i < runner.output_names().size(); i++) {
        const std::string& name = runner.output_names()[i];
        std::string m = mismatch(outputs.at(name), read("output_", i, name));
        if (!m.empty())
          return set.path().filename().string() + " output " + std::to_string(i) + ": " + m;
      }
    }
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// The operators of the test's model the importer does not map (with their domain if not ONNX's).
std::set<std::string> unmapped(const fs::path& dir) {
  ::onnx::ModelProto m = read_model((dir / "model.onnx").string());
  std::set<std::string> out;
  for_each_node(m.graph(), [&](const ::onnx::NodeProto& n) {
    if (!(n.domain().empty() || n.domain() == "ai.onnx"))
      out.insert(n.domain() + "." + n.op_type());
    else if (!supports(n.op_type()))
      out.insert(n.op_type());
  });
  return out;
}

// Runs every test in `folder` whose operators the importer maps; each must match, but for the
// known failures; prints the counts and returns how many passed.
int run_folder(const fs::path& folder) {
  std::set<std::string> known = known_failures();
  int passed = 0, failed = 0, unsupported = 0;
  std::vector<std::string> unexpected_passes;
  std::map<std::string, int> missing;  // tests per operator not mapped yet
  for (const auto& entry : fs::directory_iterator(folder)) {
    std::string name = entry.path().filename().string();
    if (!fs::exists(entry.path() / "model.onnx")) continue;
    if (std::set<std::string> ops = unmapped(entry.path()); !ops.empty()) {
      for (const std::string& op : ops) missing[op]++;
      unsupported++;
      continue;
    }
    std::string error = run_test(entry.path());
    if (known.contains(name)) {
      if (error.empty()) unexpected_passes.push_back(name);
      failed++;
      continue;
    }
    EXPECT_EQ(error, "") << name;
    error.empty() ? passed++ : failed++;
  }
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [op, n] : missing) by_count.emplace_back(-n, op);
  std::sort(by_count.begin(), by_count.end());
  std::string most;
  for (size_t i = 0; i < by_count.size() && i < 12; i++)
    most += " " + by_count[i].second + " " + std::to_string(-by_count[i].first);
  std::printf("ONNX %s tests: %d passed, %d failed, %d use an operator not mapped yet (%s )\n",
              folder.filename().c_str(), passed, failed, unsupported, most.c_str());
  EXPECT_TRUE(unexpected_passes.empty())
      << "listed as failing but passing: " << unexpected_passes[0];
  return passed;
}

TEST(OnnxBackend, NodeTestsOfSupportedOperatorsMatchOnnxsReference) {
  if (!fs::exists(kNodeTests))
    GTEST_SKIP() << kNodeTests << " is absent (apt install libonnx-testdata)";
  // 788 of the 932 pass today: fewer means something that worked broke
  EXPECT_GE(run_folder(kNodeTests), 788);
}

TEST(OnnxBackend, PytorchAndSimpleModelsOfSupportedOperatorsMatchOnnxsReference) {
  const fs::path data = kNodeTests.parent_path();
  if (!fs::exists(data / "pytorch-converted"))
    GTEST_SKIP() << data << " is absent (apt install libonnx-testdata)";
  EXPECT_GE(run_folder(data / "pytorch-converted") + run_folder(data / "pytorch-operator") +
                run_folder(data / "simple"),
            132);
}

TEST(OnnxErrors, ATruncatedModelIsAnErrorNamingTheFile) {
  fs::path model = kNodeTests / "test_add" / "model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is absent (apt install libonnx-testdata)";
  std::ifstream in(model, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::path cut = fs::temp_directory_path() / "tinycore_onnx_truncated.onnx";
  std::ofstream(cut, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  try {
    OnnxRunner r(cut.string());
    ADD_FAILURE() << "a truncated model loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(cut.string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(OnnxRunner("/nonexistent/model.onnx"), Error);
  fs::remove(cut);
}

// A model of one float input x (shape `shape`) and output y, with no nodes yet.
::onnx::ModelProto model_of(const Shape& shape) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  ::onnx::GraphProto* g = m.mutable_graph();
  ::onnx::ValueInfoProto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  g->add_output()->set_name("y");
  return m;
}

// A node `op` of graph g named node<i>, from `inputs` to `outputs`.
::onnx::NodeProto* add_node(::onnx::GraphProto* g, const std::string& op,
                            const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs) {
  ::onnx::NodeProto* n = g->add_node();
  n->set_name("node" + std::to_string(g->node_size() - 1)), n->set_op_type(op);
  for (const std::string& i : inputs) n->add_input(i);
  for (const std::string& o : outputs) n->add_output(o);
  return n;
}

// m written to a temporary file named after `name`.
fs::path write_model(const ::onnx::ModelProto& m, const std::string& name) {
  fs::path path = fs::temp_directory_path() / ("tinycore_onnx_" + name + ".onnx");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

// A one-node model `op` of input x (float, shape `shape`) to y, with `attrs` filled by the caller,
// written to a temporary file.
fs::path one_node_model(const std::string& op, const Shape& shape,
                        const std::function<void(::onnx::NodeProto&)>& attrs) {
  ::onnx::ModelProto m = model_of(shape);
  attrs(*add_node(m.mutable_graph(), op, {"x"}, {"y"}));
  return write_model(m, op);
}

// Runs `model` on x = ones(shape): it must throw an error that contains `want`.
void expect_error(const fs::path& model, const Shape& shape, const std::string& want) {
  try {
    OnnxRunner r(model.string());
    r({{"x", Tensor::full(shape, 1.0f)}}).at("y").realize();
    ADD_FAILURE() << "ran " << model;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
  fs::remove(model);
}

// A Loop node of g with the body `body` (which gets iteration and condition inputs i, c_in).
::onnx::GraphProto* add_loop(::onnx::GraphProto* g, const std::vector<std::string>& inputs,
                             const std::vector<std::string>& outputs) {
  auto* at = add_node(g, "Loop", inputs, outputs)->add_attribute();
  at->set_name("body"), at->set_type(::onnx::AttributeProto::GRAPH);
  ::onnx::GraphProto* body = at->mutable_g();
  body->set_name("body");
  body->add_input()->set_name("i"), body->add_input()->set_name("c_in");
  return body;
}

TEST(OnnxErrors, AnUnsupportedOperatorNamesTheNodeBeforeAnythingRuns) {
  ::onnx::ModelProto m = model_of({2});
  ::onnx::GraphProto* body = add_loop(m.mutable_graph(), {"", ""}, {});
  add_node(body, "NoSuchOp", {"c_in"}, {"c_out"})->set_name("deep");
  body->add_output()->set_name("c_out");
  try {
    OnnxRunner r(write_model(m, "nested_unsupported").string());
    ADD_FAILURE() << "a model with an unmapped operator in a Loop body loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'deep' (NoSuchOp, opset 13) is not supported"),
              std::string::npos)
        << e.what();
  }
  fs::remove(fs::temp_directory_path() / "tinycore_onnx_nested_unsupported.onnx");
}

// A Loop with neither trip count nor condition ends at the importer's bound, an error naming it;
// malformed sequence and optional operations are errors naming the node.
TEST(OnnxErrors, ALoopThatNeverEndsAndBadSequencesAreErrors) {
  ::onnx::ModelProto m = model_of({2});
  ::onnx::GraphProto* body = add_loop(m.mutable_graph(), {"", ""}, {});
  add_node(body, "Identity", {"c_in"}, {"c_out"});
  body->add_output()->set_name("c_out");
  add_node(m.mutable_graph(), "Identity", {"x"}, {"y"});
  expect_error(write_model(m, "endless"), {2}, "(Loop): ran past 10000 iterations");

  m = model_of({2});
  add_node(m.mutable_graph(), "SequenceConstruct", {"x", "x"}, {"s"});
  add_node(m.mutable_graph(), "Constant", {}, {"p"})->add_attribute()->set_name("value_int");
  m.mutable_graph()->mutable_node(1)->mutable_attribute(0)->set_i(2);
  m.mutable_graph()->mutable_node(1)->mutable_attribute(0)->set_type(::onnx::AttributeProto::INT);
  add_node(m.mutable_graph(), "SequenceAt", {"s", "p"}, {"y"});
  expect_error(write_model(m, "seq_at"), {2},
               "node2' (SequenceAt): position 2 is out of range for a sequence of 2 tensors");

  m = model_of({2});
  add_node(m.mutable_graph(), "SequenceAt", {"x", "x"}, {"y"});
  expect_error(write_model(m, "seq_of_tensor"), {2},
               "(SequenceAt): input 0 is a tensor, want a sequence");

  m = model_of({2});
  add_node(m.mutable_graph(), "Optional", {}, {"o"});
  add_node(m.mutable_graph(), "OptionalGetElement", {"o"}, {"y"});
  expect_error(write_model(m, "empty_optional"), {2},
               "(OptionalGetElement): the optional is empty");
}

// Attributes of the wrong length are errors naming the node and the attribute, never reads past
// them (a Transpose's perm, a MaxPool's kernel, strides and pads).
TEST(OnnxErrors, AttributesOfTheWrongLengthAreErrorsNamingThem) {
  expect_error(one_node_model("Transpose", {2, 3, 4},
                              [](::onnx::NodeProto& n) {
                                auto* at = n.add_attribute();
                                at->set_name("perm"), at->add_ints(1), at->add_ints(0);
                              }),
               {2, 3, 4}, "node0' (Transpose): perm holds 2 values, want 3");
  expect_error(one_node_model("MaxPool", {1, 1, 4, 4},
                              [](::onnx::NodeProto& n) {
                                auto* k = n.add_attribute();
                                k->set_name("kernel_shape"), k->add_ints(2), k->add_ints(2);
                                auto* p = n.add_attribute();
                                p->set_name("pads"), p->add_ints(1);
                              }),
               {1, 1, 4, 4}, "(MaxPool): pads holds 1 values, want 4");
  expect_error(one_node_model("MaxPool", {1, 1, 4, 4}, [](::onnx::NodeProto&) {}), {1, 1, 4, 4},
               "(MaxPool): kernel_shape holds 0 values, want 2");
}

TEST(OnnxRunnerApi, MissingAndUnknownInputsAreErrorsNamingThem) {
  fs::path model = kNodeTests / "test_add" / "model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is absent (apt install libonnx-testdata)";
  OnnxRunner r(model.string());
  ASSERT_EQ(r.input_names(), (std::vector<std::string>{"x", "y"}));
  Tensor x = Tensor::full({3, 4, 5}, 1.5f), y = Tensor::full({3, 4, 5}, 2.0f);
  std::vector<float> sum = r({{"x", x}, {"y", y}}).at("sum").data<float>();
  EXPECT_EQ(sum, std::vector<float>(60, 3.5f));
  try {
    r({{"x", x}});
    ADD_FAILURE() << "ran without input y";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'y'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(r({{"x", x}, {"y", y}, {"z", y}}), Error);
}

// Initializers kept in an external file are read from the model's folder at their offset and
// length; a location out of the folder (absolute, "..", a symlink) or a file too short for it is
// an error naming it, and so is external data in a ModelProto given without a folder.
TEST(OnnxExternalData, InitializersAreReadFromTheModelsFolder) {
  fs::path dir = fs::temp_directory_path() / "tinycore_onnx_external", folder = dir / "model";
  fs::remove_all(dir);
  fs::create_directories(folder);
  std::vector<float> w = {1, 2, 3, 4, 5, 6};
  std::ofstream(folder / "w.bin", std::ios::binary)
      << "01234567"  // 8 bytes before the tensor's
      << std::string(reinterpret_cast<const char*>(w.data()), 24);
  std::ofstream(dir / "outside.bin", std::ios::binary) << std::string(32, '\0');
  fs::create_symlink(dir / "outside.bin", folder / "link.bin");
  // y = x + w, w from `location` at offset 8, `length` bytes
  auto model = [](const std::string& location, int64_t length) {
    ::onnx::ModelProto m = model_of({2, 3});
    add_node(m.mutable_graph(), "Add", {"x", "w"}, {"y"});
    ::onnx::TensorProto* t = m.mutable_graph()->add_initializer();
    t->set_name("w"), t->set_data_type(::onnx::TensorProto::FLOAT), t->add_dims(2), t->add_dims(3);
    t->set_data_location(::onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
             {"location", location}, {"offset", "8"}, {"length", std::to_string(length)}}) {
      auto* e = t->add_external_data();
      e->set_key(key), e->set_value(value);
    }
    return m;
  };
  auto y_of = [](const OnnxRunner& r) {
    return r({{"x", Tensor::full({2, 3}, 1.0f)}}).at("y").data<float>();
  };
  std::ofstream((folder / "model.onnx"), std::ios::binary)
      << model("w.bin", 24).SerializeAsString();
  EXPECT_EQ(y_of(OnnxRunner((folder / "model.onnx").string())),
            (std::vector<float>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(y_of(OnnxRunner(model("w.bin", 24), folder.string())),
            (std::vector<float>{2, 3, 4, 5, 6, 7}));
  auto expect_load_error = [&](const ::onnx::ModelProto& m, const std::string& in,
                               const std::string& want) {
    try {
      OnnxRunner r(m, in);
      ADD_FAILURE() << "loaded, want an error with " << want;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  expect_load_error(model("w.bin", 24), "", "external file 'w.bin', but the model has no folder");
  for (const std::string& location :
       std::vector<std::string>{"../outside.bin", (dir / "outside.bin").string(), "link.bin"})
    expect_load_error(model(location, 24), folder.string(),
                      "location '" + location + "' is not inside the model's folder");
  expect_load_error(model("w.bin", 32), folder.string(),
                    "file 'w.bin' holds 32 bytes, short of offset 8 + length 32");
  expect_load_error(model("none.bin", 24), folder.string(), "cannot open external data file");
  fs::remove_all(dir);
}

// The backend tests run the recurrent layers forward only: a reverse layer must equal the forward
// one on the input flipped in time (its Y flipped back), a bidirectional one both, and a reverse
// layer with sequence_lens each batch entry's own steps flipped.
TEST(OnnxRecurrent, ReverseAndBidirectionalLayersMatchTheForwardLayerOnFlippedInput) {
  const int64_t seq = 3, batch = 2, input = 4, hidden = 5;
  for (const auto& [op, gates] :
       std::vector<std::pair<std::string, int64_t>>{{"RNN", 1}, {"GRU", 3}, {"LSTM", 4}}) {
    Tensor x = Tensor::randn({seq, batch, input}), w = Tensor::randn({1, gates * hidden, input}),
           r = Tensor::randn({1, gates * hidden, hidden});
    // Y of the layer `direction` on x (w and r repeated for two directions)
    auto y_of = [&](const std::string& direction, const Tensor& xs, bool lens) {
      ::onnx::ModelProto m = model_of({seq, batch, input});
      for (const char* name : {"w", "r", "lens"}) m.mutable_graph()->add_input()->set_name(name);
      ::onnx::NodeProto* n =
          add_node(m.mutable_graph(), op, {"x", "w", "r", "", lens ? "lens" : ""}, {"y"});
      auto* d = n->add_attribute();
      d->set_name("direction"), d->set_s(direction), d->set_type(::onnx::AttributeProto::STRING);
      auto* h = n->add_attribute();
      h->set_name("hidden_size"), h->set_i(hidden), h->set_type(::onnx::AttributeProto::INT);
      OnnxRunner runner(write_model(m, "recurrent").string());
      int dirs = direction == "bidirectional" ? 2 : 1;
      std::vector<int32_t> l = {2, 3};
      return runner({{"x", xs},
                     {"w", w.expand({dirs, -1, -1})},
                     {"r", r.expand({dirs, -1, -1})},
                     {"lens", Tensor::from_vector(l)}})
          .at("y");
    };
    auto expect_near = [&](const Tensor& got, const Tensor& want) {
      EXPECT_EQ(mismatch(got.contiguous(), want.contiguous()), "") << op;
    };
    Tensor forward = y_of("forward", x, false);
    expect_near(y_of("reverse", x.flip({0}), false).flip({0}), forward);
    Tensor both = y_of("bidirectional", x, false);
    expect_near(both.getitem({Slice(), Slice(0, 1)}), forward);
    expect_near(both.getitem({Slice(), Slice(1, 2)}), y_of("reverse", x, false));
    // with lengths 2 and 3: entry 0 runs steps 1, 0 and outputs zeros at step 2
    Tensor with_lens = y_of("reverse", x, true);
    Tensor first = y_of("reverse", x.getitem({Slice(0, 2)}), false);
    expect_near(with_lens.getitem({Slice(0, 2), Slice(), Slice(0, 1)}),
                first.getitem({Slice(), Slice(), Slice(0, 1)}));
    expect_near(with_lens.getitem({2L, Slice(), 0L}), Tensor::zeros({1, hidden}));
    expect_near(with_lens.getitem({Slice(), Slice(), Slice(1, 2)}),
                y_of("reverse", x, false).getitem({Slice(), Slice(), Slice(1, 2)}));
  }
  fs::remove(fs::temp_directory_path() / "tinycore_onnx_recurrent.onnx");
}

}  // namespace
}  // namespace tc::onnx
