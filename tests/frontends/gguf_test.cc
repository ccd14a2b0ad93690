// The GGUF parser on files written by tests/fixtures/gen_gguf_quant.py (every metadata type,
// versions 2 and 3, a non-default alignment, a split set), every accessor, and hostile files made
// here from valid ones: each truncation, and each lying field, must be a FormatError naming what
// is wrong, never a crash.
#include "frontends/llm/gguf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

namespace {

namespace gguf = tc::gguf;
using Bytes = std::vector<uint8_t>;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return std::string(TC_FIXTURE_DIR) + "/llm_quant/" + name;
}

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

void write_file(const std::string& path, const Bytes& b) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// The FormatError parse() gives for `b`, or "(no error)".
std::string parse_error(const Bytes& b, size_t size) {
  try {
    gguf::parse(b.data(), size);
  } catch (const gguf::FormatError& e) {
    return e.what();
  }
  return "(no error)";
}
std::string parse_error(const Bytes& b) { return parse_error(b, b.size()); }

// Where the bytes after the string `s` (as the file writes it: uint64 length, then bytes) start.
size_t after_string(const Bytes& b, const std::string& s) {
  Bytes pattern(8 + s.size());
  uint64_t n = s.size();
  std::memcpy(pattern.data(), &n, 8);
  std::memcpy(pattern.data() + 8, s.data(), s.size());
  auto it = std::find_end(b.begin(), b.end(), pattern.begin(), pattern.end());  // the last
  EXPECT_NE(it, b.end()) << s;
  return static_cast<size_t>(it - b.begin()) + pattern.size();
}

void put(Bytes& b, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// Field positions in tensor `name`'s info.
struct InfoAt {
  size_t n_dims, dims, type, offset;
};
InfoAt info_at(const Bytes& b, const std::string& name) {
  size_t p = after_string(b, name);
  uint32_t nd;
  std::memcpy(&nd, &b[p], 4);
  return {p, p + 4, p + 4 + 8 * nd, p + 8 + 8 * nd};
}

TEST(Gguf, TypeInfoOfEveryTypeAndAnUnknownOne) {
  struct {
    uint32_t type;
    const char* name;
    int64_t elems, bytes;
  } want[] = {
      {gguf::F32, "f32", 1, 4},       {gguf::F16, "f16", 1, 2},      {gguf::BF16, "bf16", 1, 2},
      {gguf::Q4_0, "q4_0", 32, 18},   {gguf::Q4_1, "q4_1", 32, 20},  {gguf::Q5_0, "q5_0", 32, 22},
      {gguf::Q5_1, "q5_1", 32, 24},   {gguf::Q8_0, "q8_0", 32, 34},  {gguf::Q4_K, "q4_K", 256, 144},
      {gguf::Q5_K, "q5_K", 256, 176}, {gguf::Q6_K, "q6_K", 256, 210}};
  for (const auto& w : want) {
    const gguf::TypeInfo& t = gguf::type_info(w.type);
    EXPECT_STREQ(t.name, w.name);
    EXPECT_EQ(t.block_elems, w.elems) << w.name;
    EXPECT_EQ(t.block_bytes, w.bytes) << w.name;
  }
  for (uint32_t unknown : {4u, 5u, 10u, 15u, 29u, 31u, 1000000u}) {
    try {
      gguf::type_info(unknown);
      ADD_FAILURE() << unknown;
    } catch (const gguf::FormatError& e) {
      EXPECT_THAT(e.what(), HasSubstr("ggml type " + std::to_string(unknown)));
    }
  }
}

// meta_v3.gguf and meta_v2.gguf hold the same metadata and tensors.
class GgufMeta : public ::testing::TestWithParam<const char*> {};

TEST_P(GgufMeta, EveryValueTypeAndAccessor) {
  Bytes b = read_file(fixture(GetParam()));
  gguf::File f = gguf::parse(b.data(), b.size());
  EXPECT_EQ(f.version, std::string(GetParam()) == "meta_v2.gguf" ? 2u : 3u);
  const gguf::Metadata& m = f.metadata;
  EXPECT_EQ(m.values.size(), 20u);
  EXPECT_EQ(m.get_string("general.architecture"), "llama");
  EXPECT_EQ(m.get_int("t.u8"), 200);
  EXPECT_EQ(m.get_int("t.i8"), -100);
  EXPECT_EQ(m.get_int("t.u16"), 60000);
  EXPECT_EQ(m.get_int("t.i16"), -30000);
  EXPECT_EQ(m.get_int("t.u32"), 4000000000);
  EXPECT_EQ(m.get_int("t.i32"), -2000000000);
  EXPECT_EQ(m.get_int("t.i64"), INT64_MIN);
  EXPECT_EQ(m.get("t.u64").u, UINT64_MAX);
  EXPECT_EQ(m.get_float("t.f32"), 1.5);
  EXPECT_EQ(m.get_float("t.f64"), 2.5e300);
  EXPECT_EQ(m.get_float("t.i16"), -30000.0);  // an integer read as a float
  EXPECT_TRUE(m.get_bool("t.bool"));
  EXPECT_EQ(m.get_string("t.str"), "h\xc3\xa9llo");
  EXPECT_EQ(m.get_strings("t.arr.str"), (std::vector<std::string>{"a", "bc", ""}));
  EXPECT_EQ(m.get_ints("t.arr.i32"), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(m.get_ints("t.arr.u64"), (std::vector<int64_t>{7, int64_t{1} << 40}));
  EXPECT_EQ(m.get_floats("t.arr.f32"), (std::vector<double>{0.5, -1.25}));
  EXPECT_EQ(m.get_floats("t.arr.i32"), (std::vector<double>{1, -2, 3}));
  EXPECT_TRUE(m.get_ints("t.arr.empty").empty());
  const gguf::Value& nested = m.get("t.arr.nested");
  ASSERT_EQ(nested.type, gguf::ARRAY);
  ASSERT_EQ(nested.elem_type, gguf::ARRAY);
  ASSERT_EQ(nested.items.size(), 2u);
  EXPECT_EQ(nested.items[0].elem_type, gguf::UINT8);
  ASSERT_EQ(nested.items[0].items.size(), 2u);
  EXPECT_EQ(nested.items[0].items[1].u, 2u);
  ASSERT_EQ(nested.items[1].items.size(), 1u);
  EXPECT_EQ(nested.items[1].items[0].u, 3u);
  const gguf::Value& bools = m.get("t.arr.bool");
  ASSERT_EQ(bools.items.size(), 2u);
  EXPECT_EQ(bools.items[0].i, 1);
  EXPECT_EQ(bools.items[1].i, 0);

  EXPECT_TRUE(m.has("t.u8"));
  EXPECT_FALSE(m.has("t.nothing"));
  EXPECT_EQ(m.get_string_or("t.nothing", "x"), "x");
  EXPECT_EQ(m.get_int_or("t.nothing", 7), 7);
  EXPECT_EQ(m.get_float_or("t.nothing", 0.25), 0.25);
  EXPECT_FALSE(m.get_bool_or("t.nothing", false));
  EXPECT_EQ(m.get_int_or("t.u8", 7), 200);
  EXPECT_EQ(m.get_string_or("t.str", "x"), "h\xc3\xa9llo");

  // Each wrong use names the key (and what it is).
  auto error = [&](auto f) -> std::string {
    try {
      f();
    } catch (const gguf::FormatError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_THAT(error([&] { m.get_int("t.nothing"); }), HasSubstr("'t.nothing' is missing"));
  EXPECT_THAT(error([&] { m.get_string("t.u8"); }), HasSubstr("'t.u8' is uint8, not a string"));
  EXPECT_THAT(error([&] { m.get_int("t.f32"); }), HasSubstr("'t.f32' is float32, not an integer"));
  EXPECT_THAT(error([&] { m.get_int("t.u64"); }), HasSubstr("'t.u64': 18446744073709551615 is"));
  EXPECT_THAT(error([&] { m.get_bool("t.i8"); }), HasSubstr("'t.i8' is int8, not a bool"));
  EXPECT_THAT(error([&] { m.get_float("t.str"); }), HasSubstr("'t.str' is string, not a number"));
  EXPECT_THAT(error([&] { m.get_strings("t.arr.i32"); }),
              HasSubstr("'t.arr.i32' is array of int32, not an array of strings"));
  EXPECT_THAT(error([&] { m.get_ints("t.arr.str"); }),
              HasSubstr("'t.arr.str' is array of string, not an array of integers"));
  EXPECT_THAT(error([&] { m.get_floats("t.arr.nested"); }),
              HasSubstr("'t.arr.nested' is array of array, not an array of numbers"));
  EXPECT_THAT(error([&] { m.get_ints("t.u8"); }), HasSubstr("'t.u8' is uint8, not an array"));
  EXPECT_THAT(error([&] { m.get_int_or("t.str", 1); }), HasSubstr("'t.str' is string"));

  // The tensors: dims in GGUF order, offsets absolute and aligned, the bytes where they say.
  ASSERT_EQ(f.tensors.size(), 3u);
  EXPECT_EQ(f.alignment, 32u);
  EXPECT_EQ(f.data_offset % 32, 0u);
  const gguf::TensorInfo &a = f.tensors[0], &q = f.tensors[1], &c = f.tensors[2];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dims, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(a.type, gguf::F32);
  EXPECT_EQ(a.offset, f.data_offset);
  EXPECT_EQ(a.bytes, 24u);
  EXPECT_EQ(a.numel(), 6);
  EXPECT_EQ(q.name, "b");
  EXPECT_EQ(q.type, gguf::Q8_0);
  EXPECT_EQ(q.bytes, 34u);
  EXPECT_EQ(q.offset, f.data_offset + 32);
  EXPECT_EQ(c.name, "c");
  EXPECT_EQ(c.type, gguf::F16);
  EXPECT_EQ(c.bytes, 10u);
  EXPECT_EQ(c.offset, f.data_offset + 96);
  float av[6];
  std::memcpy(av, b.data() + a.offset, sizeof av);
  for (int i = 0; i < 6; i++) EXPECT_EQ(av[i], i);
}

INSTANTIATE_TEST_SUITE_P(Versions, GgufMeta, ::testing::Values("meta_v3.gguf", "meta_v2.gguf"));

TEST(Gguf, NonDefaultAlignment) {
  Bytes b = read_file(fixture("align64.gguf"));
  gguf::File f = gguf::parse(b.data(), b.size());
  EXPECT_EQ(f.alignment, 64u);
  EXPECT_EQ(f.data_offset % 64, 0u);
  ASSERT_EQ(f.tensors.size(), 2u);
  EXPECT_EQ(f.tensors[1].offset, f.data_offset + 64);  // x's 12 bytes padded to 64
  float x[3];
  std::memcpy(x, b.data() + f.tensors[0].offset, sizeof x);
  EXPECT_EQ(x[2], 3.0f);
  // An alignment that is not a power of two, and a tensor aligned to 32 but not 64.
  Bytes bad = b;
  put(bad, after_string(bad, "general.alignment") + 4, 48, 4);
  EXPECT_THAT(parse_error(bad), HasSubstr("'general.alignment' is 48 (must be a power of two"));
  bad = b;
  put(bad, after_string(bad, "general.alignment") + 4, 0, 4);
  EXPECT_THAT(parse_error(bad), HasSubstr("'general.alignment' is 0"));
  bad = b;
  put(bad, info_at(bad, "y").offset, 32, 8);
  EXPECT_THAT(parse_error(bad),
              HasSubstr("tensor 'y': offset 32 is not a multiple of the alignment 64"));
}

TEST(Gguf, EveryTruncationIsAnError) {
  for (const char* name :
       {"meta_v3.gguf", "align64.gguf", "blocks.gguf", "split-00002-of-00002.gguf"}) {
    Bytes b = read_file(fixture(name));
    ASSERT_GT(b.size(), 100u) << name;
    ASSERT_EQ(parse_error(b), "(no error)") << name;
    for (size_t n = 0; n < b.size(); n++) {
      // a copy of exactly n bytes, so that ASan sees a read past them
      Bytes cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
      std::string e = parse_error(cut);
      ASSERT_THAT(e, HasSubstr("gguf: ")) << name << " cut at " << n;
      if (n < 24) {
        ASSERT_THAT(e, HasSubstr("truncated")) << n;
      }
    }
  }
}

TEST(Gguf, HeaderErrors) {
  const Bytes good = read_file(fixture("meta_v3.gguf"));
  Bytes b = good;
  b[0] = 'X';
  EXPECT_THAT(parse_error(b), HasSubstr("not a GGUF file: its magic is 0x58475546"));
  b = good;
  put(b, 4, 1, 4);
  EXPECT_THAT(parse_error(b), HasSubstr("GGUF version 1 (32-bit counts) is not supported"));
  put(b, 4, 4, 4);
  EXPECT_THAT(parse_error(b), HasSubstr("unsupported GGUF version 4"));
  put(b, 4, 0x03000000, 4);
  EXPECT_THAT(parse_error(b), HasSubstr("(a big-endian file?)"));
  b = good;
  put(b, 8, uint64_t{1} << 60, 8);  // tensor count
  EXPECT_THAT(parse_error(b), HasSubstr("1152921504606846976 tensors cannot fit in"));
  b = good;
  put(b, 16, UINT64_MAX, 8);  // metadata count
  EXPECT_THAT(parse_error(b), HasSubstr("18446744073709551615 metadata entries"));
  b = good;
  put(b, 16, 21, 8);  // one more key than there is: the tensor infos are read as one
  EXPECT_THAT(parse_error(b), HasSubstr("gguf: "));
  EXPECT_THAT(parse_error(good, 3), HasSubstr("truncated: the magic at offset 0 needs 4 bytes"));
}

TEST(Gguf, MetadataErrors) {
  const Bytes good = read_file(fixture("meta_v3.gguf"));
  Bytes b = good;
  put(b, after_string(b, "t.u8"), 13, 4);
  EXPECT_THAT(parse_error(b), HasSubstr("metadata 't.u8': unknown value type 13"));
  b = good;
  put(b, after_string(b, "t.arr.i32") + 4, 99, 4);
  EXPECT_THAT(parse_error(b), HasSubstr("metadata 't.arr.i32': unknown array element type 99"));
  b = good;
  put(b, after_string(b, "t.arr.i32") + 8, uint64_t{1} << 62, 8);
  EXPECT_THAT(parse_error(b),
              HasSubstr("metadata 't.arr.i32': array of 4611686018427387904 elements cannot fit"));
  b = good;
  put(b, after_string(b, "t.str") + 4, uint64_t{1} << 62, 8);
  EXPECT_THAT(parse_error(b), HasSubstr("truncated: 't.str' of 4611686018427387904 bytes"));
  b = good;
  put(b, after_string(b, "t.bool") + 4, 2, 1);
  EXPECT_THAT(parse_error(b), HasSubstr("metadata 't.bool': bool of value 2"));
  b = good;
  std::memcpy(&b[after_string(b, "t.i8") - 2], "u8", 2);  // t.i8 renamed t.u8
  EXPECT_THAT(parse_error(b), HasSubstr("duplicate metadata key 't.u8'"));
  b = good;
  put(b, after_string(b, "t.arr.str") - 9 - 8, uint64_t{1} << 40, 8);  // a key's length
  EXPECT_THAT(parse_error(b), HasSubstr("truncated: metadata key 13 of 1099511627776 bytes"));

  // 2^22 values in all at most, the array counted (each takes ~100 bytes in memory, 1 in a file)
  for (uint64_t n : {(uint64_t{1} << 22) - 1, uint64_t{1} << 22}) {
    Bytes big = {'G', 'G', 'U', 'F'};
    big.resize(24 + 8 + 3 + 4 + 4 + 8 + n);
    put(big, 4, 3, 4);
    put(big, 16, 1, 8);               // one key
    put(big, 24, 3, 8);               // its name's length
    std::memcpy(&big[32], "big", 3);  // its name
    put(big, 35, gguf::ARRAY, 4);     // an array
    put(big, 39, gguf::UINT8, 4);     // of uint8
    put(big, 43, n, 8);               // of n elements (zeros)
    EXPECT_EQ(parse_error(big), n < (uint64_t{1} << 22)
                                    ? "(no error)"
                                    : "gguf: metadata 'big': array of 4194304 elements makes more "
                                      "than 4194304 metadata values in all");
  }

  Bytes deep = read_file(fixture("deep.gguf"));  // "ok" nests 8 arrays, "deep" 9
  EXPECT_THAT(parse_error(deep), HasSubstr("metadata 'deep': arrays nest deeper than 8"));
}

TEST(Gguf, TensorInfoErrors) {
  const Bytes good = read_file(fixture("meta_v3.gguf"));
  Bytes b = good;
  put(b, info_at(b, "c").type, 5, 4);
  EXPECT_THAT(parse_error(b), HasSubstr("tensor 'c': unknown or unsupported ggml type 5"));
  b = good;
  put(b, info_at(b, "a").n_dims, 5, 4);
  EXPECT_THAT(parse_error(b), HasSubstr("tensor 'a': 5 dims (must be 1 to 4)"));
  b = good;
  put(b, info_at(b, "a").n_dims, 0, 4);
  EXPECT_THAT(parse_error(b), HasSubstr("tensor 'a': 0 dims"));
  b = good;
  put(b, info_at(b, "a").dims + 8, 0, 8);
  EXPECT_THAT(parse_error(b), HasSubstr("tensor 'a': dims[1] is 0"));
  b = good;
  put(b, info_at(b, "a").dims, UINT64_MAX, 8);
  EXPECT_THAT(parse_error(b), HasSubstr("tensor 'a': dims[0] is -1"));
  b = good;
  put(b, info_at(b, "a").dims, uint64_t{1} << 40, 8);
  put(b, info_at(b, "a").dims + 8, uint64_t{1} << 40, 8);
  EXPECT_THAT(parse_error(b), HasSubstr("tensor 'a': its element count overflows"));
  b = good;
  put(b, info_at(b, "b").dims, 16, 8);
  EXPECT_THAT(parse_error(b),
              HasSubstr("tensor 'b': dims[0] 16 is not a multiple of q8_0's block of 32"));
  b = good;
  std::memcpy(&b[after_string(b, "c") - 1], "a", 1);
  EXPECT_THAT(parse_error(b), HasSubstr("duplicate tensor name 'a'"));
}

TEST(Gguf, TensorRangeErrors) {
  const Bytes good = read_file(fixture("meta_v3.gguf"));
  Bytes b = good;
  put(b, info_at(b, "c").offset, 100, 8);
  EXPECT_THAT(parse_error(b),
              HasSubstr("tensor 'c': offset 100 is not a multiple of the alignment 32"));
  b = good;
  put(b, info_at(b, "c").offset, 128, 8);  // 10 bytes at 128 of a 128-byte data section
  EXPECT_THAT(parse_error(b),
              HasSubstr("tensor 'c': its 10 bytes (padded to 32) at data offset 128 run past"));
  b = good;
  put(b, info_at(b, "c").offset, uint64_t{1} << 63, 8);
  EXPECT_THAT(
      parse_error(b),
      HasSubstr("tensor 'c': its 10 bytes (padded to 32) at data offset 9223372036854775808"));
  b = good;
  put(b, info_at(b, "c").offset, 32, 8);  // onto b's 34 bytes
  EXPECT_THAT(parse_error(b), HasSubstr("tensors 'b' and 'c' overlap"));
  b = good;
  put(b, info_at(b, "a").dims, 16, 8);  // a: 16x2 floats = 128 bytes, over b and c
  EXPECT_THAT(parse_error(b), HasSubstr("tensors 'a' and 'b' overlap"));
}

class GgufFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tinycore-gguf-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Copies the split set into the temp dir as m-0000N-of-00002.gguf, each changed by `edit`.
  void copy_split(const std::function<void(int, Bytes&)>& edit) {
    for (int i = 1; i <= 2; i++) {
      Bytes b = read_file(fixture("split-0000" + std::to_string(i) + "-of-00002.gguf"));
      edit(i, b);
      write_file(path("m-0000" + std::to_string(i) + "-of-00002.gguf"), b);
    }
  }
  std::string open_error(const std::string& p) {
    try {
      gguf::open(p);
    } catch (const gguf::FormatError& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
};

TEST_F(GgufFiles, OpensOneFile) {
  gguf::Model m = gguf::open(fixture("meta_v3.gguf"));
  ASSERT_EQ(m.files.size(), 1u);
  EXPECT_EQ(m.metadata.get_int("t.u8"), 200);
  const gguf::TensorInfo& c = m.tensor("c");
  EXPECT_EQ(c.file, 0);
  Bytes b = read_file(fixture("meta_v3.gguf"));
  EXPECT_EQ(std::memcmp(m.data(c), b.data() + c.offset, c.bytes), 0);
  EXPECT_EQ(m.find("nothing"), nullptr);
  EXPECT_THAT(open_error(fixture("nothing.gguf")), HasSubstr("cannot open '"));
  EXPECT_THAT(open_error(fixture("nothing.gguf")), HasSubstr("nothing.gguf': No such file"));
  try {
    m.tensor("nothing");
    ADD_FAILURE();
  } catch (const gguf::FormatError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no tensor 'nothing'"));
  }
  write_file(path("empty.gguf"), {});
  EXPECT_THAT(open_error(path("empty.gguf")), HasSubstr("truncated: the magic"));
  EXPECT_THAT(open_error(dir_.string()), HasSubstr("is not a regular file"));
}

TEST_F(GgufFiles, OpensASplitSet) {
  gguf::Model m = gguf::open(fixture("split-00001-of-00002.gguf"));
  ASSERT_EQ(m.files.size(), 2u);
  EXPECT_EQ(m.metadata.get_string("general.architecture"), "llama");
  EXPECT_EQ(m.metadata.get_int("split.no"), 0);
  ASSERT_EQ(m.tensors.size(), 3u);
  float want[] = {1, 2, 3, 4, 5, 6};
  int at = 0;
  for (const char* name : {"x", "y", "z"}) {
    const gguf::TensorInfo& t = m.tensor(name);
    EXPECT_EQ(t.file, std::string(name) == "z" ? 1 : 0) << name;
    std::vector<float> v(t.bytes / 4);
    std::memcpy(v.data(), m.data(t), t.bytes);
    for (float x : v) EXPECT_EQ(x, want[at++]) << name;
  }
  EXPECT_EQ(at, 6);
  EXPECT_THAT(open_error(fixture("split-00002-of-00002.gguf")),
              HasSubstr("is split 1 of a split set: open the first one"));
}

TEST_F(GgufFiles, SplitSetErrors) {
  copy_split([](int, Bytes&) {});
  EXPECT_EQ(open_error(path("m-00001-of-00002.gguf")), "(no error)");
  fs::copy_file(path("m-00001-of-00002.gguf"), path("renamed.gguf"));
  EXPECT_THAT(
      open_error(path("renamed.gguf")),
      HasSubstr("renamed.gguf' has split.count 2 but is not named <prefix>-00001-of-00002"));
  fs::remove(path("m-00002-of-00002.gguf"));
  EXPECT_THAT(open_error(path("m-00001-of-00002.gguf")),
              HasSubstr("cannot open '" + path("m-00002-of-00002.gguf")));

  copy_split([](int i, Bytes& b) {
    if (i == 2) put(b, after_string(b, "split.no") + 4, 5, 2);
  });
  EXPECT_THAT(open_error(path("m-00001-of-00002.gguf")),
              HasSubstr("m-00002-of-00002.gguf': split.no is 5, not 1"));
  copy_split([](int i, Bytes& b) {
    if (i == 2) put(b, after_string(b, "split.count") + 4, 3, 2);
  });
  EXPECT_THAT(open_error(path("m-00001-of-00002.gguf")), HasSubstr("split.count is 3, not 2"));
  copy_split([](int i, Bytes& b) {
    if (i == 1) put(b, after_string(b, "split.tensors.count") + 4, 4, 4);
  });
  EXPECT_THAT(open_error(path("m-00001-of-00002.gguf")),
              HasSubstr("split.tensors.count is 4 but the 2 splits hold 3 tensors"));
  copy_split([](int i, Bytes& b) {
    if (i == 2) std::memcpy(&b[after_string(b, "z") - 1], "x", 1);
  });
  EXPECT_THAT(open_error(path("m-00001-of-00002.gguf")),
              HasSubstr("tensor 'x' of '" + path("m-00002-of-00002.gguf") +
                        "' is also in an earlier split"));
}

}  // namespace
