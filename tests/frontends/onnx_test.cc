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

// Runs one backend test: "" when every data set matches, else what went wrong.
std::string run_test(const fs::path& dir) {
  try {
    OnnxRunner runner((dir / "model.onnx").string());
    std::set<std::string> bf16 = declared_bfloat16(dir / "model.onnx");
    auto bits_of = [&](const std::string& name, const Tensor& t) {
      return bf16.contains(name) && t.dtype() == dtypes::uint16;
    };
    for (const auto& set : fs::directory_iterator(dir)) {
      if (!set.is_directory()) continue;
      std::map<std::string, Tensor> inputs;
      for (size_t i = 0; i < runner.input_names().size(); i++) {
        const std::string& name = runner.input_names()[i];
        Tensor t =
            to_tensor(read_tensor((set.path() / ("input_" + std::to_string(i) + ".pb")).string()));
        inputs.emplace(name, bits_of(name, t) ? t.bitcast(dtypes::bfloat16) : t);
      }
      std::map<std::string, Tensor> outputs = runner(inputs);
      for (size_t i = 0; i < runner.output_names().size(); i++) {
        const std::string& name = runner.output_names()[i];
        Tensor want =
            to_tensor(read_tensor((set.path() / ("output_" + std::to_string(i) + ".pb")).string()));
        bool bits = bits_of(name, want);
        std::string m = bits ? mismatch(outputs.at(name), want.bitcast(dtypes::bfloat16), 1.0 / 128)
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
  for (const auto& n : m.graph().node())
    if (!(n.domain().empty() || n.domain() == "ai.onnx"))
      out.insert(n.domain() + "." + n.op_type());
    else if (!supports(n.op_type()))
      out.insert(n.op_type());
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
  // 861 of the 932 pass today: fewer means something that worked broke
  EXPECT_GE(run_folder(kNodeTests), 861);
}

TEST(OnnxBackend, PytorchAndSimpleModelsOfSupportedOperatorsMatchOnnxsReference) {
  const fs::path data = kNodeTests.parent_path();
  if (!fs::exists(data / "pytorch-converted"))
    GTEST_SKIP() << data << " is absent (apt install libonnx-testdata)";
  EXPECT_GE(run_folder(data / "pytorch-converted") + run_folder(data / "pytorch-operator") +
                run_folder(data / "simple"),
            124);
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

TEST(OnnxErrors, AnUnsupportedOperatorNamesTheNodeBeforeAnythingRuns) {
  fs::path model = kNodeTests / "test_lstm_defaults" / "model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << model << " is absent (apt install libonnx-testdata)";
  try {
    OnnxRunner r(model.string());
    ADD_FAILURE() << "a model with an LSTM node loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(LSTM, opset"), std::string::npos) << e.what();
  }
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
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(opset);
  ::onnx::GraphProto* g = m.mutable_graph();
  ::onnx::NodeProto* n = g->add_node();
  n->set_name("node0"), n->set_op_type(op), n->add_input("x"), n->add_output("y");
  for (const ::onnx::TensorProto& t : more) {
    n->add_input(t.name());
    if (!t.name().empty()) *g->add_initializer() = t;
  }
  attrs(*n);
  ::onnx::ValueInfoProto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  g->add_output()->set_name("y");
  fs::path path = fs::temp_directory_path() / ("tinycore_onnx_" + op + ".onnx");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path;
}

// Runs a one_node_model on ones of `shape`, expecting an error that holds `want`.
void expect_error(const fs::path& model, const Shape& shape, const std::string& want) {
  OnnxRunner r(model.string());
  try {
    r({{"x", Tensor::full(shape, 1.0f)}}).at("y").realize();
    ADD_FAILURE() << "ran " << model << ", want an error with " << want;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
  fs::remove(model);
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
// errors naming the node: an axis past the rank, a window of stride 0, a weight of rank 2. They
// read out of bounds or divided by zero before.
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

}  // namespace
}  // namespace tc::onnx
