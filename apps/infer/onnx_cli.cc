#include "apps/infer/onnx_cli.h"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "apps/infer/array_text.h"
#include "apps/infer/image_input.h"
#include "apps/infer/npy.h"
#include "apps/infer/onnx_model.h"
#include "tinycore/error.h"

namespace tc::infer {
namespace {

// "r,g,b" (or one value for every channel) as `channels` numbers.
std::vector<double> per_channel(const std::string& flag, const std::string& text, int64_t channels,
                                double dflt) {
  if (text.empty()) return std::vector<double>(static_cast<size_t>(channels), dflt);
  std::vector<double> v;
  for (const std::string& part : std::vector<std::string>(absl::StrSplit(text, ','))) {
    double x = 0;
    if (!absl::SimpleAtod(part, &x) || !std::isfinite(x))
      fail("%s: expected numbers separated by commas, got '%s'", flag, text);
    v.push_back(x);
  }
  if (v.size() == 1) v.resize(static_cast<size_t>(channels), v[0]);
  if (static_cast<int64_t>(v.size()) != channels)
    fail("%s: %d values for an input of %d channels", flag, v.size(), channels);
  return v;
}

// The image's height and width: --size "HxW" or "N", else the input's declared ones.
std::pair<int64_t, int64_t> image_size(const std::string& size, const onnx::TensorSpec& spec) {
  if (size.empty()) {
    if (spec.shape[2] < 1 || spec.shape[3] < 1)
      fail("--size: needed, as input '%s' (%s) does not declare its height and width", spec.name,
           describe(spec));
    return {spec.shape[2], spec.shape[3]};
  }
  std::vector<std::string> parts = absl::StrSplit(size, 'x');
  int64_t h = 0, w = 0;
  bool ok = parts.size() <= 2 && absl::SimpleAtoi(parts[0], &h) &&
            absl::SimpleAtoi(parts.back(), &w) && h >= 1 && w >= 1 && h <= 8192 && w <= 8192;
  if (!ok) fail("--size: expected HxW or N (sides 1..8192), got '%s'", size);
  if ((spec.shape[2] > 0 && spec.shape[2] != h) || (spec.shape[3] > 0 && spec.shape[3] != w))
    fail("--size: %dx%d does not fit input '%s' (%s)", h, w, spec.name, describe(spec));
  return {h, w};
}

// The image as the NCHW float32 batch of one that input `spec` takes.
Tensor image_input(const OnnxCliArgs& a, const onnx::TensorSpec& spec) {
  if (!spec.ranked || spec.shape.size() != 4 ||
      (spec.dtype != dtypes::float32 && spec.dtype != dtypes::void_))
    fail("--image: input '%s' is %s, not an NCHW float32 image batch", spec.name, describe(spec));
  int64_t channels = spec.shape[1] > 0 ? spec.shape[1] : 3;
  auto [h, w] = image_size(a.size, spec);
  std::vector<double> mean = per_channel("--mean", a.mean, channels, 0),
                      std = per_channel("--std", a.std, channels, 1);
  for (double s : std)
    if (s == 0) fail("--std: a channel's value is 0");
  std::ifstream in(a.image, std::ios::binary);
  if (!in) fail("--image: cannot read '%s'", a.image);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> x;
  try {
    x = decode_image(bytes, channels, h, w, {.max_bytes = int64_t{1} << 30, .max_side = 1 << 15});
  } catch (const Error& e) {
    fail("%s: %s", a.image, e.what());
  }
  const size_t plane = static_cast<size_t>(h * w);
  for (size_t i = 0; i < x.size(); i++)
    x[i] = static_cast<float>((x[i] / 255.0 - mean[i / plane]) / std[i / plane]);
  return Tensor::from_vector<float>(x, Shape{1, channels, h, w});
}

// A file name for an output: characters a path would take apart become '_'.
std::string file_name(const std::string& output) {
  std::string s = output;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return s.empty() || s[0] == '.' ? "_" + s : s;
}

std::string fmt_dims(const std::vector<int64_t>& shape) {
  return "[" + absl::StrJoin(shape, ", ") + "]";
}

}  // namespace

void run_onnx_cli(const OnnxCliArgs& a, FILE* out) {
  OnnxModel model(a.model);
  std::map<std::string, Tensor> in;
  for (const std::string& arg : a.inputs) {
    size_t eq = arg.find('=');
    std::string name, path = arg;
    if (eq != std::string::npos) {
      name = arg.substr(0, eq), path = arg.substr(eq + 1);
    } else if (model.inputs().size() == 1) {
      name = model.inputs()[0].name;
    } else {
      std::vector<std::string> names;
      for (const onnx::TensorSpec& s : model.inputs()) names.push_back(s.name);
      fail("--input: '%s' needs the input's name (name=file.npy): the model's inputs are %s", arg,
           absl::StrJoin(names, ", "));
    }
    model.input(name);  // an unknown name fails before its file is read
    if (in.contains(name)) fail("--input: input '%s' is given twice", name);
    HostArray x = read_npy(path);
    model.check_input(name, x.dtype, x.shape);
    in.emplace(name, x.to_tensor());
  }
  if (!a.image.empty()) {
    const onnx::TensorSpec* free = nullptr;
    for (const onnx::TensorSpec& s : model.inputs())
      if (!in.contains(s.name) && !free) free = &s;
    if (!free) fail("--image: every input of the model is already given by --input");
    in.emplace(free->name, image_input(a, *free));
  }
  std::vector<std::pair<std::string, HostArray>> outputs = model.run(in);
  std::error_code error;
  if (!a.output_dir.empty() && !std::filesystem::is_directory(a.output_dir) &&
      !std::filesystem::create_directories(a.output_dir, error))
    fail("--output: cannot make the folder '%s': %s", a.output_dir, error.message());
  for (const auto& [name, x] : outputs) {
    std::string head = name + ": " + numpy_name(x.dtype) + " " + fmt_dims(x.shape);
    if (a.output_dir.empty()) {
      std::fprintf(out, "%s\n%s\n", head.c_str(), array_text(x).c_str());
      continue;
    }
    std::string path = (std::filesystem::path(a.output_dir) / (file_name(name) + ".npy")).string();
    write_npy(path, x);
    std::fprintf(out, "%s -> %s\n", head.c_str(), path.c_str());
  }
}

}  // namespace tc::infer
