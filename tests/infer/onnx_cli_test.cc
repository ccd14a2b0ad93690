// infer --model on ONNX models built in the test: outputs saved as .npy equal a naive double loop
// over the .npy inputs, printed outputs show name, dtype, shape and values, an image arrives as
// the normalized NCHW batch of one, and every wrong input (name, shape, dtype, file) exits 2 with
// a message naming it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include <cstring>

#include "apps/infer/npy.h"
#include "tests/infer/onnx_models.h"
#include "tests/infer/run_infer.h"

namespace {

using infertest::infer;
using infertest::Ran;
using tc::infer::HostArray;
using ::testing::HasSubstr;

template <typename T>
HostArray array(tc::DType dtype, std::vector<int64_t> shape, const std::vector<T>& v) {
  return {dtype, std::move(shape),
          std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T))};
}

template <typename T>
std::vector<T> values(const HostArray& a) {
  std::vector<T> v(a.data.size() / sizeof(T));
  std::memcpy(v.data(), a.data.data(), a.data.size());
  return v;
}

std::vector<float> inputs(int rows) {
  std::vector<float> x;
  for (int i = 0; i < rows * onnxmodels::kIn; i++)
    x.push_back(0.5f * static_cast<float>(i % 9) - 1.8f);
  return x;
}

TEST(InferOnnxCli, SavedOutputsEqualTheReference) {
  const std::string model = onnxmodels::gemm_relu(), dir = tinyrun::fresh_dir("onnx_cli_npy");
  for (int rows : {1, 5}) {
    std::vector<float> x = inputs(rows);
    tc::infer::write_npy(dir + "/x.npy", array(tc::dtypes::float32, {rows, 4}, x));
    Ran r = infer({"--model", model, "--input", dir + "/x.npy", "--output", dir + "/out"});
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_THAT(r.out,
                HasSubstr("y: float32 [" + std::to_string(rows) + ", 3] -> " + dir + "/out/y.npy"));
    HostArray y = tc::infer::read_npy(dir + "/out/y.npy");
    ASSERT_EQ(y.dtype, tc::dtypes::float32);
    ASSERT_EQ(y.shape, (std::vector<int64_t>{rows, 3}));
    std::vector<double> want = onnxmodels::gemm_relu_reference(x);
    std::vector<float> got = values<float>(y);
    for (size_t i = 0; i < want.size(); i++) EXPECT_NEAR(got[i], want[i], 1e-5) << i;
  }
}

TEST(InferOnnxCli, PrintsOutputsByNameWithTheirValues) {
  const std::string model = onnxmodels::add_mul_int64(), dir = tinyrun::fresh_dir("onnx_cli_print");
  tc::infer::write_npy(dir + "/a.npy",
                       array<int64_t>(tc::dtypes::int64, {2, 3}, {1, 2, 3, 4, 5, 6}));
  tc::infer::write_npy(dir + "/b.npy",
                       array<int64_t>(tc::dtypes::int64, {2, 3}, {10, -20, 30, 5000000000, 0, -1}));
  Ran r =
      infer({"--model", model, "--input", "b=" + dir + "/b.npy", "--input", "a=" + dir + "/a.npy"});
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out,
            "sum: int64 [2, 3]\n[[11, -18, 33],\n [5000000004, 5, 5]]\n"
            "prod: int64 [2, 3]\n[[10, -40, 90],\n [20000000000, 0, -6]]\n");
  // Past 20 values the middle is left out, as NumPy does.
  std::vector<float> x = inputs(30);
  tc::infer::write_npy(dir + "/x.npy", array(tc::dtypes::float32, {30, 4}, x));
  Ran big = infer({"--model", onnxmodels::gemm_relu(), "--input", "x=" + dir + "/x.npy"});
  ASSERT_EQ(big.rc, 0) << big.out;
  EXPECT_THAT(big.out, HasSubstr("y: float32 [30, 3]\n[[")) << big.out;
  EXPECT_THAT(big.out, HasSubstr(" ...,\n")) << big.out;
}

TEST(InferOnnxCli, AnImageIsTheNormalizedNchwBatchOfOne) {
  const std::string model = onnxmodels::identity_image(),
                    dir = tinyrun::fresh_dir("onnx_cli_image");
  std::vector<uint8_t> rgb(4 * 5 * 3);
  for (size_t i = 0; i < rgb.size(); i++) rgb[i] = static_cast<uint8_t>(i * 13 % 256);
  const std::string png = dir + "/picture.png";
  ASSERT_TRUE(stbi_write_png(png.c_str(), 5, 4, 3, rgb.data(), 5 * 3));
  const double mean[3] = {0.5, 0.25, 0}, std[3] = {0.5, 2, 1};
  Ran r = infer({"--model", model, "--image", png, "--mean", "0.5,0.25,0", "--std", "0.5,2,1",
                 "--output", dir});
  ASSERT_EQ(r.rc, 0) << r.out;
  HostArray out = tc::infer::read_npy(dir + "/out.npy");
  ASSERT_EQ(out.shape, (std::vector<int64_t>{1, 3, 4, 5}));
  std::vector<float> got = values<float>(out);
  for (int c = 0; c < 3; c++)
    for (int p = 0; p < 20; p++)
      EXPECT_NEAR(got[c * 20 + p], (rgb[p * 3 + c] / 255.0 - mean[c]) / std[c], 1e-6);
  // A larger picture is resized to the input's declared 4x5.
  std::vector<uint8_t> big(40 * 30 * 3, 200);
  ASSERT_TRUE(stbi_write_png((dir + "/big.png").c_str(), 40, 30, 3, big.data(), 40 * 3));
  Ran resized = infer({"--model", model, "--image", dir + "/big.png", "--size", "4x5"});
  ASSERT_EQ(resized.rc, 0) << resized.out;
  EXPECT_THAT(resized.out, HasSubstr("out: float32 [1, 3, 4, 5]\n[[[[0.78431374, 0.78431374"));
}

TEST(InferOnnxCli, WrongInputsExit2NamingThem) {
  const std::string gemm = onnxmodels::gemm_relu(), add_mul = onnxmodels::add_mul_int64(),
                    image = onnxmodels::identity_image(), dir = tinyrun::fresh_dir("onnx_cli_bad");
  tc::infer::write_npy(dir + "/x.npy", array(tc::dtypes::float32, {2, 4}, inputs(2)));
  tc::infer::write_npy(dir + "/x5.npy", array(tc::dtypes::float32, {2, 5}, std::vector<float>(10)));
  tc::infer::write_npy(dir + "/x64.npy",
                       array(tc::dtypes::float64, {2, 4}, std::vector<double>(8)));
  std::string whole = tc::infer::npy_bytes(array(tc::dtypes::float32, {2, 4}, inputs(2)));
  std::ofstream(dir + "/cut.npy", std::ios::binary) << whole.substr(0, whole.size() - 3);
  std::string fortran = whole;
  fortran.replace(fortran.find("False"), 5, "True ");
  std::ofstream(dir + "/fortran.npy", std::ios::binary) << fortran;
  std::ofstream(dir + "/notes.png") << "not pixels";
  std::ofstream(dir + "/garbage.onnx") << "not a model";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"--model", gemm, "--input", "nope=" + dir + "/x.npy"},
       "input 'nope': the model has no such input (its inputs: 'x')"},
      {{"--model", gemm, "--input", dir + "/x5.npy"},
       "input 'x': expected float32 [-1, 4], got shape [2, 5]"},
      {{"--model", gemm, "--input", dir + "/x64.npy"},
       "input 'x': expected float32 [-1, 4], got dtype float64"},
      {{"--model", gemm, "--input", dir + "/cut.npy"},
       dir + "/cut.npy: npy: truncated: 29 bytes of data for float32 (2, 4), which needs 32"},
      {{"--model", gemm, "--input", dir + "/fortran.npy"},
       "fortran.npy: npy: Fortran-ordered arrays are not supported"},
      {{"--model", gemm, "--input", dir + "/missing.npy"}, "missing.npy: cannot read the file"},
      {{"--model", gemm, "--input", "x=" + dir + "/x.npy", "--input", "x=" + dir + "/x.npy"},
       "--input: input 'x' is given twice"},
      {{"--model", add_mul, "--input", dir + "/x.npy"},
       "needs the input's name (name=file.npy): the model's inputs are a, b"},
      {{"--model", add_mul, "--input", "a=" + dir + "/x.npy"},
       "input 'a': expected int64 [2, 3], got dtype float32"},
      {{"--model", gemm, "--image", dir + "/notes.png", "--size", "4"},
       "--image: input 'x' is float32 [-1, 4], not an NCHW float32 image batch"},
      {{"--model", image, "--image", dir + "/notes.png"},
       "notes.png: image: not a decodable image"},
      {{"--model", image, "--image", dir + "/none.png"}, "--image: cannot read"},
      {{"--model", image, "--image", dir + "/notes.png", "--size", "7x5"},
       "--size: 7x5 does not fit input 'image' (float32 [1, 3, 4, 5])"},
      {{"--model", image, "--image", dir + "/notes.png", "--size", "big"},
       "--size: expected HxW or N"},
      {{"--model", image, "--image", dir + "/notes.png", "--mean", "1,2"},
       "--mean: 2 values for an input of 3 channels"},
      {{"--model", dir + "/garbage.onnx", "--input", dir + "/x.npy"},
       "garbage.onnx is not a valid ONNX model"},
      {{"--model", dir + "/none.onnx", "--input", dir + "/x.npy"}, "cannot open"},
      {{"--model", gemm}, "give --model FILE with --input"},
  };
  for (const Case& c : cases) {
    Ran r = infer(c.args);
    EXPECT_EQ(r.rc, 2) << c.message << ": " << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.message));
  }
  // add_mul with only one of its inputs
  tc::infer::write_npy(dir + "/a.npy",
                       array<int64_t>(tc::dtypes::int64, {2, 3}, {1, 2, 3, 4, 5, 6}));
  Ran missing = infer({"--model", add_mul, "--input", "a=" + dir + "/a.npy"});
  EXPECT_EQ(missing.rc, 2);
  EXPECT_THAT(missing.out, HasSubstr("input 'b' (int64 [2, 3]) is not given (the model's inputs: "
                                     "'a', 'b')"));
}

}  // namespace
