// The ONNX importer against ONNX's own backend tests (Debian's libonnx-testdata: a model, its
// inputs and the outputs ONNX's reference computed): every node test whose operators the importer
// maps must match at ONNX's tolerances (rtol 1e-3, atol 1e-7), but for those listed with a reason
// in onnx_backend_skips.txt. Bad files and unsupported operators are clear errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_join.h"
#include "frontends/onnx/graph.h"
#include "frontends/onnx/ops.h"
#include "frontends/onnx/proto.h"
#include "frontends/onnx/runner.h"
#include "tinycore/error.h"

namespace tc::onnx {
namespace {

namespace fs = std::filesystem;
const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

// The tests skipped: a test name a line, then its reason.
std::set<std::string> skipped_tests() {
  std::set<std::string> out;
  std::ifstream in(fs::path(TC_FIXTURE_DIR).parent_path() / "frontends/onnx_backend_skips.txt");
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.insert(line.substr(0, line.find(' ')));
  return out;
}

// Where `got` differs from `want` beyond ONNX's tolerances (a relative `rtol`), a message saying
// where; else empty.
std::string mismatch(const Tensor& got, const Tensor& want, double rtol = 1e-3) {
  if (got.shape() != want.shape())
    return "shape " + fmt_shape(got.shape()) + ", want " + fmt_shape(want.shape());
  if (got.dtype() != want.dtype())
    return "dtype " + got.dtype().name() + ", want " + want.dtype().name();
  std::vector<double> g = got.cast(dtypes::float64).data<double>();
  std::vector<double> w = want.cast(dtypes::float64).data<double>();
  for (size_t i = 0; i < g.size(); i++) {
    bool same = (std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i] ||
                std::abs(g[i] - w[i]) <= 1e-7 + rtol * std::abs(w[i]);
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

// The names of the graph's inputs and outputs declared bfloat16: ONNX 1.12's data stores their
// values as UINT16 (the bits), which the test reads back as bfloat16. Its reference truncates
// float to bfloat16 where tinycore rounds to nearest: they compare within one bfloat16 step.
std::set<std::string> declared_bfloat16(const fs::path& model) {
  ::onnx::ModelProto m = read_model(model.string());
  std::set<std::string> out;
  for (const auto* values : {&m.graph().input(), &m.graph().output()})
    for (const auto& v : *values)
      if (v.type().tensor_type().elem_type() == ::onnx::TensorProto::BFLOAT16) out.insert(v.name());
  return out;
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
    std::set<std::string> bf16 = declared_bfloat16(dir / "model.onnx");
    auto bits_of = [&](const std::string& name, const Value& v) {
      return bf16.contains(name) && v.tensor() && v.tensor()->dtype() == dtypes::uint16;
    };
    for (const auto& set : fs::directory_iterator(dir)) {
      if (!set.is_directory()) continue;
      // input_N.pb and output_N.pb: a TensorProto, SequenceProto or OptionalProto as declared
      auto read = [&](const char* what, size_t i, const std::string& name) {
        fs::path file = set.path() / (what + std::to_string(i) + ".pb");
        Value v = read_value(file.string(), type_of(runner, name));
        return bits_of(name, v) ? Value(v.tensor()->bitcast(dtypes::bfloat16)) : v;
      };
      std::map<std::string, Value> inputs;
      for (size_t i = 0; i < runner.input_names().size(); i++)
        inputs.emplace(runner.input_names()[i], read("input_", i, runner.input_names()[i]));
      std::map<std::string, Value> outputs = runner.run(inputs);
      for (size_t i = 0; i < runner.output_names().size(); i++) {
        const std::string& name = runner.output_names()[i];
        Value want = read("output_", i, name);
        std::string m = bf16.contains(name) && want.tensor() && outputs.at(name).tensor()
                            ? mismatch(*outputs.at(name).tensor(), *want.tensor(), 1.0 / 128)
                            : mismatch(outputs.at(name), want);
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

// Runs every test in `folder`: each must match, but for those listed in the skips file (with
// their reason), which must not; prints the counts and returns how many passed.
int run_folder(const fs::path& folder) {
  std::set<std::string> listed = skipped_tests();
  int passed = 0, failed = 0, skipped = 0;
  std::vector<std::string> unexpected_passes;
  for (const auto& entry : fs::directory_iterator(folder)) {
    std::string name = entry.path().filename().string();
    if (!fs::exists(entry.path() / "model.onnx")) continue;
    std::string error;
    if (std::set<std::string> ops = unmapped(entry.path()); !ops.empty())
      error = "uses operators not mapped: " + absl::StrJoin(ops, ", ");
    else
      error = run_test(entry.path());
    if (listed.contains(name)) {
      if (error.empty()) unexpected_passes.push_back(name);
      skipped++;
      continue;
    }
    EXPECT_EQ(error, "") << name << " (list it in onnx_backend_skips.txt with a reason?)";
    error.empty() ? passed++ : failed++;
  }
  std::printf(
      "ONNX %s tests: %d passed, %d failed, %d skipped (tests/frontends/"
      "onnx_backend_skips.txt says why)\n",
      folder.filename().c_str(), passed, failed, skipped);
  EXPECT_TRUE(unexpected_passes.empty())
      << "listed as skipped but passing: " << unexpected_passes[0];
  return passed;
}

TEST(OnnxBackend, NodeTestsOfSupportedOperatorsMatchOnnxsReference) {
  if (!fs::exists(kNodeTests))
    GTEST_SKIP() << kNodeTests << " is absent (apt install libonnx-testdata)";
  // 903 of the 932 pass today: fewer means something that worked broke
  EXPECT_GE(run_folder(kNodeTests), 903);
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

// A constant input of a one-node model (an initializer); one without a name is an omitted input.
::onnx::TensorProto constant(const std::string& name, const Shape& shape,
                             const std::vector<float>& floats,
                             const std::vector<int64_t>& ints = {}) {
  ::onnx::TensorProto t;
  t.set_name(name);
  for (int64_t d : shape) t.add_dims(d);
  t.set_data_type(ints.empty() ? ::onnx::TensorProto::FLOAT : ::onnx::TensorProto::INT64);
  for (float f : floats) t.add_float_data(f);
  for (int64_t i : ints) t.add_int64_data(i);
  return t;
}
::onnx::TensorProto ints(const std::string& name, const std::vector<int64_t>& v) {
  return constant(name, {static_cast<int64_t>(v.size())}, {}, v);
}
::onnx::TensorProto floats(const std::string& name, const std::vector<float>& v) {
  return constant(name, {static_cast<int64_t>(v.size())}, v);
}

// A one-node model `op` of input x (float, shape `shape`) and the constants `more` to y, with
// `attrs` filled by the caller, of the default domain's `opset`, written to a temporary file.
fs::path one_node_model(const std::string& op, const Shape& shape,
                        const std::function<void(::onnx::NodeProto&)>& attrs,
                        const std::vector<::onnx::TensorProto>& more = {}, int opset = 13) {
  ::onnx::ModelProto m = model_of(shape);
  m.mutable_opset_import(0)->set_version(opset);
  ::onnx::NodeProto* n = add_node(m.mutable_graph(), op, {"x"}, {"y"});
  for (const ::onnx::TensorProto& t : more) {
    n->add_input(t.name());
    if (!t.name().empty()) *m.mutable_graph()->add_initializer() = t;
  }
  attrs(*n);
  return write_model(m, op);
}

// Runs `model` on x = ones(shape): it must throw an error that contains `want`.
void expect_error(const fs::path& model, const Shape& shape, const std::string& want) {
  try {
    OnnxRunner r(model.string());
    r({{"x", Tensor::full(shape, 1.0f)}}).at("y").realize();
    ADD_FAILURE() << "ran " << model << ", want an error with " << want;
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
TEST(OnnxErrors, ALoopThatNeverEndsBadSequencesAndMissingInputsAreErrors) {
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

  m = model_of({2});  // a variadic node of no inputs (the ONNX importer's fuzzer found it)
  add_node(m.mutable_graph(), "Concat", {}, {"y"});
  expect_error(write_model(m, "concat_of_none"), {2}, "node0' (Concat): input 0 is missing");
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

// Values no model means, found by the importer's fuzzer (tests/fuzz/onnx_import_fuzz.cc), are
// errors naming the node: an axis past the rank, a window of stride 0, a weight of rank 2, an
// output larger than the machine's memory. They read out of bounds, divided by zero or died of
// std::bad_alloc before.
TEST(OnnxErrors, OutOfRangeValuesAreErrorsNamingTheNode) {
  auto gather = [](::onnx::NodeProto& n) {
    n.add_input("x");
    auto* at = n.add_attribute();
    at->set_name("axis"), at->set_i(3);
  };
  expect_error(one_node_model("Gather", {2, 3}, gather), {2, 3},
               "node0' (Gather): axis 3 is out of range for rank 2");
  auto pool = [](::onnx::NodeProto& n) {
    auto* k = n.add_attribute();
    k->set_name("kernel_shape"), k->add_ints(2), k->add_ints(2);
    auto* st = n.add_attribute();
    st->set_name("strides"), st->add_ints(1), st->add_ints(0);
  };
  expect_error(one_node_model("MaxPool", {1, 1, 4, 4}, pool), {1, 1, 4, 4},
               "(MaxPool): strides holds 0, want values >= 1");
  expect_error(one_node_model("Conv", {2, 2}, [](::onnx::NodeProto& n) { n.add_input("x"); }),
               {2, 2}, "(Conv): the weight (2, 2) must have the input's rank (2)");
  // 2^40 floats: more than the machine holds, an error before anything allocates them
  expect_error(
      one_node_model("Expand", {1}, [](::onnx::NodeProto&) {}, {ints("shape", {int64_t{1} << 40})}),
      {1}, "node0' (Expand): output 0 of shape (1099511627776,) would take 4398046511104");
}

// Malformed image and box operators are errors naming the node and what is wrong.
TEST(OnnxErrors, MalformedImageOperatorsAreErrorsNamingThem) {
  auto none = [](::onnx::NodeProto&) {};
  auto text = [](const std::string& name, const std::string& value) {
    return [=](::onnx::NodeProto& n) {
      auto* at = n.add_attribute();
      at->set_name(name), at->set_s(value), at->set_type(::onnx::AttributeProto::STRING);
    };
  };
  ::onnx::TensorProto omitted;
  Shape img = {1, 1, 4, 4};
  expect_error(
      one_node_model("Resize", img, none,
                     {omitted, floats("scales", {1, 1, 2, 2}), ints("sizes", {1, 1, 8, 8})}),
      img, "node0' (Resize): both scales and sizes are given");
  expect_error(one_node_model("Resize", img, none, {omitted, floats("scales", {1, 2, 2})}), img,
               "(Resize): scales holds 3 values, want 4");
  expect_error(one_node_model("Resize", img, none, {omitted, floats("scales", {1, 1, 0, 2})}), img,
               "(Resize): scale 0 of axis 2 is not positive");
  expect_error(one_node_model("Resize", img, none, {omitted, omitted, ints("sizes", {4, 4})}), img,
               "(Resize): sizes holds 2 values, want 4");
  expect_error(one_node_model("Resize", img, none), img, "(Resize): neither scales nor sizes");
  expect_error(one_node_model("Resize", img, text("mode", "area"),
                              {omitted, floats("scales", {1, 1, 2, 2})}),
               img, "(Resize): mode 'area' is not one of nearest, linear, cubic");
  expect_error(
      one_node_model("Resize", img, text("coordinate_transformation_mode", "tf_crop_and_resize"),
                     {floats("roi", {0, 1}), floats("scales", {1, 1, 2, 2})}),
      img, "(Resize): roi holds 2 values, want 8");
  expect_error(one_node_model("Upsample", img, none, {floats("scales", {2, 2})}), img,
               "(Upsample): scales holds 2 values, want 4");
  expect_error(one_node_model("GridSample", img, none,
                              {constant("grid", {1, 2, 2, 3}, std::vector<float>(12, 0))}),
               img,
               "(GridSample): needs X (N, C, H, W) and grid (N, H_out, W_out, 2), got (1, 1, 4, 4) "
               "and (1, 2, 2, 3)");
  expect_error(one_node_model("GridSample", img, text("padding_mode", "wrap"),
                              {constant("grid", {1, 1, 1, 2}, {0, 0})}),
               img, "(GridSample): padding_mode 'wrap' is not one of zeros, border, reflection");
  expect_error(
      one_node_model("RoiAlign", img, none,
                     {constant("rois", {2, 3}, std::vector<float>(6, 0)), ints("b", {0, 0})}),
      img, "(RoiAlign): rois must be (num_rois, 4), got (2, 3)");
  expect_error(one_node_model("RoiAlign", img, none,
                              {constant("rois", {2, 4}, std::vector<float>(8, 0)), ints("b", {0})}),
               img, "(RoiAlign): batch_indices holds 1 values, want 2");
  expect_error(one_node_model("RoiAlign", img, none,
                              {constant("rois", {1, 4}, {0, 0, 1, 1}), ints("b", {3})}),
               img, "(RoiAlign): batch index 3 of box 0 is outside [0, 1)");
  // x as the boxes (1, 2, 4): scores for 3 boxes do not fit them
  expect_error(one_node_model("NonMaxSuppression", {1, 2, 4}, none,
                              {constant("scores", {1, 1, 3}, {0.5f, 0.5f, 0.5f})}),
               {1, 2, 4}, "(NonMaxSuppression): needs boxes (batches, boxes, 4) and scores");
  expect_error(one_node_model("NonMaxSuppression", {1, 2, 4}, none,
                              {constant("scores", {1, 1, 2}, {0.5f, 0.5f}), ints("max", {1, 2})}),
               {1, 2, 4}, "(NonMaxSuppression): input 2 must hold one value, got (2,)");
  expect_error(one_node_model("LRN", img, none), img, "(LRN): attribute 'size' is missing");
  expect_error(one_node_model("MaxUnpool", {1, 1, 2, 2}, none, {ints("i", {0, 1, 2, 3})}),
               {1, 1, 2, 2}, "(MaxUnpool): needs X (N, C, ...) and indices of its shape");
  expect_error(one_node_model("MaxUnpool", {1, 1, 2, 2}, none,
                              {constant("i", {1, 1, 2, 2}, {}, {0, 1, 2, 3})}),
               {1, 1, 2, 2}, "(MaxUnpool): kernel_shape holds 0 values, want 2");
}

// What ONNX's backend data leaves out: Upsample-7 (scales an attribute) and Resize-10 (asymmetric
// coordinates), RoiAlign's adaptive sampling (sampling_ratio 0) and max mode (onnxruntime's: the
// largest weighted tap of any sample), NonMaxSuppression selecting none.
TEST(OnnxImageOps, OlderResizesAdaptiveRoiAlignAndEmptyNonMaxSuppression) {
  auto run = [](const fs::path& model, const Tensor& x) {
    OnnxRunner r(model.string());
    Tensor y = r({{"x", x}}).at("y").realize();
    fs::remove(model);
    return y;
  };
  auto max_mode = [](::onnx::NodeProto& n) {
    auto* at = n.add_attribute();
    at->set_name("mode"), at->set_s("max"), at->set_type(::onnx::AttributeProto::STRING);
  };
  auto scales_attr = [](::onnx::NodeProto& n) {
    auto* at = n.add_attribute();
    at->set_name("scales"), at->set_type(::onnx::AttributeProto::FLOATS);
    for (float f : {1.0f, 1.0f, 2.0f, 2.0f}) at->add_floats(f);
  };
  Tensor square = Tensor(std::vector<float>{1, 2, 3, 4}, Shape{1, 1, 2, 2});
  EXPECT_EQ(run(one_node_model("Upsample", {1, 1, 2, 2}, scales_attr, {}, 7), square).data<float>(),
            (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  auto linear = [](::onnx::NodeProto& n) {
    auto* at = n.add_attribute();
    at->set_name("mode"), at->set_s("linear"), at->set_type(::onnx::AttributeProto::STRING);
  };
  Tensor row = Tensor(std::vector<float>{1, 2}, Shape{1, 1, 1, 2});
  EXPECT_EQ(
      run(one_node_model("Resize", {1, 1, 1, 2}, linear, {floats("s", {1, 1, 1, 2})}, 10), row)
          .data<float>(),
      (std::vector<float>{1, 1.5f, 2, 2}));  // at x / 2, the last one clamped
  // a 4x4 plane holding 4 y + x; the box (0, 0)-(3, 3) samples y, x at 0.5, 1.5, 2.5 (3 per bin)
  Tensor plane = Tensor::arange(16).cast(dtypes::float32).reshape({1, 1, 4, 4});
  std::vector<::onnx::TensorProto> box = {constant("rois", {1, 4}, {0, 0, 3, 3}), ints("b", {0})};
  auto plain = [](::onnx::NodeProto&) {};
  EXPECT_EQ(run(one_node_model("RoiAlign", {1, 1, 4, 4}, plain, box), plane).data<float>(),
            std::vector<float>{7.5f});  // bilinear is exact on a linear plane: its mean
  EXPECT_EQ(run(one_node_model("RoiAlign", {1, 1, 4, 4}, max_mode, box), plane).data<float>(),
            std::vector<float>{3.75f});  // (2.5, 2.5): a quarter of 15
  Tensor boxes = Tensor(std::vector<float>{0, 0, 1, 1, 0, 0, 1, 1}, Shape{1, 2, 4});
  Tensor none = run(one_node_model("NonMaxSuppression", {1, 2, 4}, plain,
                                   {constant("scores", {1, 1, 2}, {0.5f, 0.7f})}),
                    boxes);  // max_output_boxes_per_class defaults to 0
  EXPECT_EQ(none.shape(), (Shape{0, 3}));
  EXPECT_EQ(none.dtype(), dtypes::int64);
  Tensor one = run(one_node_model("NonMaxSuppression", {1, 2, 4}, plain,
                                  {constant("scores", {1, 1, 2}, {0.5f, 0.7f}), ints("max", {5})}),
                   boxes);  // identical boxes: the better one suppresses the other
  EXPECT_EQ(one.data<int64_t>(), (std::vector<int64_t>{0, 0, 1}));
}

// An int attribute `name` of `value`.
std::function<void(::onnx::NodeProto&)> int_attr(const std::string& name, int64_t value) {
  return [=](::onnx::NodeProto& n) {
    auto* at = n.add_attribute();
    at->set_name(name), at->set_type(::onnx::AttributeProto::INT), at->set_i(value);
  };
}

// The quantization, index, signal, linear-algebra and text operators name what does not fit in
// a malformed node: shapes, dtypes, axes.
TEST(OnnxErrors, MalformedQuantizeIndexSignalAndTextNodesAreErrorsNamingWhatIsWrong) {
  auto none = [](::onnx::NodeProto&) {};
  expect_error(one_node_model("QuantizeLinear", {2, 4}, none, {constant("s", {3}, {1, 1, 1})}),
               {2, 4}, "(QuantizeLinear): a scale or zero point of shape (3,) does not fit axis 1");
  expect_error(one_node_model("DequantizeLinear", {2}, none, {constant("s", {}, {1})}), {2},
               "(DequantizeLinear): the input must be an integer tensor, got float");
  expect_error(one_node_model("MatMulInteger", {2, 2}, none, {constant("b", {1, 2}, {1, 1})}),
               {2, 2}, "(MatMulInteger): input 0 must be uint8 or int8, got float");
  expect_error(one_node_model("GatherND", {2, 2}, none, {constant("i", {1, 3}, {}, {0, 0, 0})}),
               {2, 2}, "(GatherND): indices of shape (1, 3) do not index data of shape (2, 2)");
  expect_error(one_node_model("ScatterND", {2, 2}, none,
                              {constant("i", {1, 1}, {}, {0}), constant("u", {1, 3}, {1, 2, 3})}),
               {2, 2}, "(ScatterND): updates of shape (1, 3) do not fit indices (1, 1)");
  expect_error(
      one_node_model("Compress", {2, 3}, int_attr("axis", 0), {constant("c", {3}, {}, {1, 0, 1})}),
      {2, 3}, "(Compress): a condition of shape (3,) does not fit axis 0 of (2, 3)");
  expect_error(one_node_model("Unique", {2, 3}, int_attr("axis", 5)), {2, 3},
               "(Unique): axis 5 is out of range for rank 2");
  expect_error(one_node_model("ReverseSequence", {4, 2}, none, {constant("l", {3}, {}, {1, 2, 3})}),
               {4, 2}, "(ReverseSequence): sequence_lens (3,) does not fit axes 0 (time) and 1");
  expect_error(one_node_model("DFT", {1, 4, 3}, none), {1, 4, 3},
               "(DFT): the signal's last axis must hold 1 (real) or 2 (complex) values");
  expect_error(one_node_model("STFT", {1, 4, 1}, none,
                              {constant("step", {}, {}, {1}), ::onnx::TensorProto(),
                               constant("length", {}, {}, {8})}),
               {1, 4, 1}, "(STFT): frames of 8 (window none) do not fit a signal of shape");
  expect_error(one_node_model("Det", {2, 3}, none), {2, 3},
               "(Det): the input must be float square matrices (..., n, n), got float (2, 3)");
  expect_error(one_node_model("TfIdfVectorizer", {4}, none), {4},
               "(TfIdfVectorizer): the input must be 1-d or 2-d integers, got float");
}

// Det pivots on the largest remaining value: zeros on the diagonal, a batch of matrices, a
// singular one.
TEST(OnnxOps, DetOfMatricesThatNeedRowSwaps) {
  fs::path model = one_node_model("Det", {3, 3, 3}, [](::onnx::NodeProto&) {});
  OnnxRunner r(model.string());
  Tensor x = Tensor::from_vector(std::vector<float>{0, 2, 1, 1, 0, 3, 2, 1, 0,   // 13
                                                    0, 0, 1, 0, 1, 0, 1, 0, 0,   // -1
                                                    1, 2, 3, 2, 4, 6, 0, 1, 1},  // 0
                                 Shape{3, 3, 3});
  std::vector<float> d = r({{"x", x}}).at("y").data<float>();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_NEAR(d[0], 13, 1e-5);
  EXPECT_NEAR(d[1], -1, 1e-6);
  EXPECT_NEAR(d[2], 0, 1e-6);
  fs::remove(model);
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
