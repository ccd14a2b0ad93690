// Checkpoints: safetensors round trips for every dtype, the exact bytes the reference writer
// produces, a file written by the fixture script from PyTorch tensors, every way a file can be
// damaged (each a clear error, never a crash), atomic saves that survive a failing write, and
// load_state_dict's strict and non-strict reports.
#include "nn/state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "nn/safetensors.h"
#include "tests/tensor/fixture.h"
#include "tinycore/error.h"

namespace {

using tc::Tensor;
using tc::nn::StateDict;
using ::testing::HasSubstr;
namespace fs = std::filesystem;
namespace dt = tc::dtypes;

class StateFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tinycore-state-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), {}};
  }
  static void write(const std::string& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
  }
  std::string load_error(const std::string& bytes) {
    write(path("bad.safetensors"), bytes);
    try {
      tc::nn::safe_load(path("bad.safetensors"));
    } catch (const tc::Error& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
};

// A file with one header (padded as the reference pads it) and `data` bytes.
std::string file_with(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; i++) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

TEST_F(StateFiles, EveryDtypeRoundTrips) {
  StateDict s;
  for (tc::DType d : {dt::bool_, dt::int8, dt::int16, dt::int32, dt::int64, dt::uint8, dt::uint16,
                      dt::uint32, dt::uint64, dt::float16, dt::bfloat16, dt::float32, dt::float64})
    s.emplace("t_" + d.name(), Tensor::arange(0, 6).reshape({2, 3}).cast(d));
  s.emplace("scalar", Tensor::full({}, 2.5));
  s.emplace("empty", Tensor::zeros({0, 4}));
  tc::nn::safe_save(s, path("all.safetensors"), {{"format", "pt"}});
  StateDict back = tc::nn::safe_load(path("all.safetensors"));
  ASSERT_EQ(back.size(), s.size());
  for (const auto& [name, t] : s) {
    ASSERT_TRUE(back.count(name)) << name;
    EXPECT_EQ(back.at(name).dtype(), t.dtype()) << name;
    EXPECT_EQ(back.at(name).shape(), t.shape()) << name;
    EXPECT_EQ(back.at(name).data<double>(), t.data<double>()) << name;
  }
  for (const auto& e : fs::directory_iterator(dir_))  // no temporary file left behind
    EXPECT_EQ(e.path().filename(), "all.safetensors");
}

TEST_F(StateFiles, BytesAreLaidOutAsTheReferenceWriterDoes) {
  // by alignment (8-byte before 4-byte before 1-byte), then by name; metadata first; the header
  // padded with spaces to a multiple of 8
  StateDict s;
  s.emplace("b", Tensor(std::vector<float>{1, 2}));
  s.emplace("a", Tensor(std::vector<float>{3}));
  s.emplace("z", Tensor::from_vector<int64_t>({7}));
  s.emplace("m", Tensor::from_vector<uint8_t>({9, 8}));
  tc::nn::safe_save(s, path("golden.safetensors"), {{"format", "pt"}});
  std::string header =
      R"({"__metadata__":{"format":"pt"},"z":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},)"
      R"("a":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]},)"
      R"("m":{"dtype":"U8","shape":[2],"data_offsets":[20,22]}})";
  std::string data;
  int64_t z = 7;
  float a = 3, b[2] = {1, 2};
  data.append(reinterpret_cast<const char*>(&z), 8);
  data.append(reinterpret_cast<const char*>(&a), 4);
  data.append(reinterpret_cast<const char*>(b), 8);
  data += std::string("\x09\x08", 2);
  EXPECT_EQ(read(path("golden.safetensors")), file_with(header, data));
}

TEST_F(StateFiles, ReadsTheFileWrittenFromPyTorchTensors) {
  // tests/fixtures/gen_safetensors.py wrote torch tensors in the format; the values are also in
  // its fixture file
  StateDict s = tc::nn::safe_load(std::string(TC_FIXTURE_DIR) + "/torch_state.safetensors");
  const tcfix::Case& c = tcfix::fixture("safetensors", "torch_state");
  for (const char* name : {"conv.weight", "conv.bias", "bn.running_var", "steps", "half", "bf16"}) {
    ASSERT_TRUE(s.count(name)) << name;
    tcfix::expect_matches(s.at(name), c[name], 0, 0);
    EXPECT_EQ(s.at(name).dtype(), c[name].tensor().dtype()) << name;
  }
}

TEST_F(StateFiles, DamagedFilesGiveClearErrors) {
  std::string good_header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string good = file_with(good_header, std::string(8, '\1'));
  // every truncation of a good file
  for (size_t n = 0; n < good.size(); n++)
    EXPECT_THAT(load_error(good.substr(0, n)), HasSubstr("safe_load")) << "cut at " << n;
  EXPECT_THAT(load_error("1234567"), HasSubstr("too short for a header length"));
  std::string huge(8, '\xff');
  EXPECT_THAT(load_error(huge + "{}"), HasSubstr("larger than 100 MiB"));
  EXPECT_THAT(load_error(file_with("{\"w\": [1, 2", "")), HasSubstr("not valid JSON"));
  EXPECT_THAT(load_error(file_with("[1, 2]", "")), HasSubstr("not a JSON object"));
  EXPECT_THAT(
      load_error(file_with(R"({"w":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}})", "x")),
      HasSubstr("unknown dtype 'Q7'"));
  EXPECT_THAT(load_error(file_with(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,80]}})",
                                   std::string(8, '\0'))),
              HasSubstr("past the data section"));
  EXPECT_THAT(load_error(file_with(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",
                                   std::string(8, '\0'))),
              HasSubstr("its dtype and shape need 12"));
  EXPECT_THAT(load_error(file_with(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,8],)"
                                   R"("data_offsets":[0,8]}})",
                                   std::string(8, '\0'))),
              HasSubstr("overflows"));
  EXPECT_THAT(load_error(file_with(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                   R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                   std::string(8, '\0'))),
              HasSubstr("overlaps"));
  EXPECT_THAT(load_error(file_with(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                   std::string(8, '\0'))),
              HasSubstr("leaves a hole"));
  EXPECT_THAT(load_error(file_with(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})",
                                   std::string(8, '\0'))),
              HasSubstr("not a size"));
  EXPECT_THAT(load_error(file_with(R"({"w":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})",
                                   std::string(2, '\0'))),
              HasSubstr("which tinycore does not support"));
  EXPECT_THAT([&] { tc::nn::safe_load(path("missing.safetensors")); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr("cannot open")));
  EXPECT_THAT([&] { tc::nn::safe_load(dir_.string()); },
              ::testing::ThrowsMessage<tc::Error>(HasSubstr("not a regular file")));
}

TEST_F(StateFiles, AFailedSaveLeavesTheOldCheckpoint) {
  StateDict small;
  small.emplace("w", Tensor(std::vector<float>{1, 2, 3}));
  tc::nn::safe_save(small, path("ckpt.safetensors"));
  std::string before = read(path("ckpt.safetensors"));
  // the disk "fills up" mid-save: writes past 4 KiB fail
  StateDict big;
  big.emplace("w", Tensor::ones({100000}));
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit old;
  getrlimit(RLIMIT_FSIZE, &old);
  rlimit lim = old;
  lim.rlim_cur = 4096;
  setrlimit(RLIMIT_FSIZE, &lim);
  std::string err;
  try {
    tc::nn::safe_save(big, path("ckpt.safetensors"));
  } catch (const tc::Error& e) {
    err = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  EXPECT_THAT(err, HasSubstr("safe_save: writing"));
  EXPECT_EQ(read(path("ckpt.safetensors")), before);  // untouched
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);  // the temporary file is gone
  EXPECT_EQ(tc::nn::safe_load(path("ckpt.safetensors")).at("w").data<float>(),
            (std::vector<float>{1, 2, 3}));
}

TEST(LoadStateDict, StrictListsEveryProblemAndAssignsNothing) {
  StateDict model, file;
  model.emplace("a", Tensor::zeros({2}).contiguous().realize());
  model.emplace("b", Tensor::zeros({2, 3}).contiguous().realize());
  model.emplace("c", Tensor::zeros({1}).contiguous().realize());
  file.emplace("a", Tensor(std::vector<float>{5, 6}));
  file.emplace("b", Tensor::ones({3, 2}));
  file.emplace("extra", Tensor::ones({1}));
  EXPECT_THAT([&] { tc::nn::load_state_dict(model, file); },
              ::testing::ThrowsMessage<tc::Error>(
                  HasSubstr("missing [c], unexpected [extra], mismatched [b: file (3, 2) float, "
                            "model (2, 3) float]")));
  EXPECT_EQ(model.at("a").data<float>(), (std::vector<float>{0, 0}));
  tc::nn::LoadReport r = tc::nn::load_state_dict(model, file, /*strict=*/false);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.missing, (std::vector<std::string>{"c"}));
  EXPECT_EQ(model.at("a").data<float>(), (std::vector<float>{5, 6}));  // the good one loaded
}

}  // namespace
