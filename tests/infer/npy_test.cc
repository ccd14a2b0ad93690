// The .npy reader and writer against bytes written out by hand as NumPy lays them out (np.save's
// header, padded to 64 bytes), every supported dtype round-tripped, and every malformed file an
// error saying what is wrong; outputs printed as NumPy prints them.
#include "apps/infer/npy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "apps/infer/array_text.h"

namespace {

using tc::infer::HostArray;
using ::testing::HasSubstr;

// What np.save writes: magic, version 1.0, the header length, the dict padded with spaces and a
// newline to a multiple of 64 bytes, then the data.
std::string npy_file(const std::string& dict, const std::string& data, char major = 1) {
  std::string header = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + major + '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  if (major != 1) out += std::string(2, '\0');
  return out + header + data;
}

template <typename T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

TEST(Npy, ReadsWhatNumpyWrites) {
  std::vector<float> v = {1.5f, -2, 3, 4, 5, 6.25f};
  HostArray a = tc::infer::parse_npy(
      npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", bytes_of(v)));
  EXPECT_EQ(a.dtype, tc::dtypes::float32);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.data, bytes_of(v));
  // Version 2 (a 4-byte header length), a 1-d shape, a scalar.
  std::vector<int64_t> i = {7, -9};
  HostArray b = tc::infer::parse_npy(
      npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", bytes_of(i), 2));
  EXPECT_EQ(b.dtype, tc::dtypes::int64);
  EXPECT_EQ(b.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(b.data, bytes_of(i));
  HostArray c = tc::infer::parse_npy(
      npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (), }", std::string(1, '\1')));
  EXPECT_EQ(c.dtype, tc::dtypes::bool_);
  EXPECT_TRUE(c.shape.empty());
}

TEST(Npy, WritesWhatNumpyWrites) {
  std::vector<float> v = {1.5f, -2, 3, 4, 5, 6.25f};
  EXPECT_EQ(tc::infer::npy_bytes({tc::dtypes::float32, {2, 3}, bytes_of(v)}),
            npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", bytes_of(v)));
  EXPECT_EQ(tc::infer::npy_bytes({tc::dtypes::uint8, {3}, "abc"}),
            npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", "abc"));
}

TEST(Npy, EverySupportedDtypeRoundTrips) {
  using namespace tc::dtypes;
  for (tc::DType d : {bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16,
                      float32, float64}) {
    HostArray a{d, {2, 1, 3}, std::string(static_cast<size_t>(6 * d.itemsize()), '\0')};
    for (size_t i = 0; i < a.data.size(); i++)
      a.data[i] = static_cast<char>(d == bool_ ? i % 2 : i * 37 + 1);
    HostArray b = tc::infer::parse_npy(tc::infer::npy_bytes(a));
    EXPECT_EQ(b.dtype, d) << d.name();
    EXPECT_EQ(b.shape, a.shape) << d.name();
    EXPECT_EQ(b.data, a.data) << d.name();
  }
  EXPECT_THROW(tc::infer::npy_bytes({bfloat16, {1}, "ab"}), tc::Error);
}

TEST(Npy, MalformedFilesAreErrorsSayingWhatIsWrong) {
  const std::string f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string data(24, '\0');
  struct Case {
    std::string bytes, message;
  };
  std::string whole = npy_file(f4, data);
  std::vector<Case> cases = {
      {"", "not a .npy file"},
      {"PK\3\4 a zip, not an array", "not a .npy file"},
      {whole.substr(0, 9), "not a .npy file"},
      {whole.substr(0, 40), "truncated in its header"},
      {whole.substr(0, whole.size() - 5),
       "npy: truncated: 19 bytes of data for float32 (2, 3), "
       "which needs 24"},
      {whole + "xx", "too long: 26 bytes"},
      {npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", data),
       "Fortran-ordered arrays are not supported"},
      {npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", data),
       "dtype '>f4' is not supported"},
      {npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", data),
       "dtype '<c8' is not supported"},
      {npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", data),
       "malformed header"},
      {npy_file("{'descr': '<f4', 'shape': (2, 3), }", data), "no 'fortran_order'"},
      {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", data),
       "expected a non-negative integer"},
      {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", data),
       "malformed header"},
      {npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }",
                data),
       "too large"},
      {std::string("\x93NUMPY\x07\0", 8) + "xxxxxxxx", "format version 7 is not supported"},
  };
  for (const Case& c : cases) {
    try {
      tc::infer::parse_npy(c.bytes);
      ADD_FAILURE() << "accepted: " << c.message;
    } catch (const tc::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.message));
    }
  }
  try {
    tc::infer::read_npy("/no/such/file.npy");
    ADD_FAILURE() << "read a missing file";
  } catch (const tc::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/no/such/file.npy: cannot read the file"));
  }
}

TEST(ArrayText, PrintsAsNumpyAndAbbreviatesLongArrays) {
  std::vector<float> small = {1, 2.5f, -3, 0.125f, 5, 6};
  EXPECT_EQ(tc::infer::array_text({tc::dtypes::float32, {2, 3}, bytes_of(small)}),
            "[[1, 2.5, -3],\n [0.125, 5, 6]]");
  std::vector<int64_t> many(25);
  for (size_t i = 0; i < many.size(); i++) many[i] = static_cast<int64_t>(i);
  EXPECT_EQ(tc::infer::array_text({tc::dtypes::int64, {25}, bytes_of(many)}),
            "[0, 1, 2, ..., 22, 23, 24]");
  EXPECT_EQ(tc::infer::array_text({tc::dtypes::int64, {5, 5}, bytes_of(many)}),
            "[[0, 1, 2, 3, 4],\n [5, 6, 7, 8, 9],\n [10, 11, 12, 13, 14],\n [15, 16, 17, 18, 19],"
            "\n [20, 21, 22, 23, 24]]");
  std::vector<uint8_t> flags = {1, 0};
  EXPECT_EQ(tc::infer::array_text({tc::dtypes::bool_, {1, 1, 2}, bytes_of(flags)}),
            "[[[True, False]]]");
  EXPECT_EQ(tc::infer::array_text({tc::dtypes::float64, {}, bytes_of(std::vector<double>{2.5})}),
            "2.5");
}

}  // namespace
