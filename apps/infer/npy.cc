#include "apps/infer/npy.h"

#include <cctype>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

#include "tinycore/error.h"
#include "tinycore/helpers.h"

namespace tc::infer {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

// NumPy's type codes (the descr without its byte-order mark) and their dtypes.
const std::map<std::string, DType>& codes() {
  static const std::map<std::string, DType> m = {
      {"b1", dtypes::bool_},   {"i1", dtypes::int8},    {"i2", dtypes::int16},
      {"i4", dtypes::int32},   {"i8", dtypes::int64},   {"u1", dtypes::uint8},
      {"u2", dtypes::uint16},  {"u4", dtypes::uint32},  {"u8", dtypes::uint64},
      {"f2", dtypes::float16}, {"f4", dtypes::float32}, {"f8", dtypes::float64},
  };
  return m;
}

// The header: a Python dict literal such as {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }. Only strings, True/False and tuples of integers occur as values.
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view s) : s_(s) {}

  struct Value {
    std::optional<std::string> text;
    std::optional<bool> flag;
    std::optional<std::vector<int64_t>> tuple;
  };

  std::map<std::string, Value> dict() {
    std::map<std::string, Value> out;
    expect('{');
    while (!take('}')) {
      std::string key = string();
      expect(':');
      out[key] = value();
      if (!take(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (at_ < s_.size()) bad("text after the dict");
    return out;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    fail("npy: malformed header at character %d (%s): %s", at_, what, s_);
  }
  void skip_space() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) at_++;
  }
  bool take(char c) {
    skip_space();
    if (at_ < s_.size() && s_[at_] == c) return ++at_, true;
    return false;
  }
  void expect(char c) {
    if (!take(c)) bad(std::string("expected '") + c + "'");
  }
  std::string string() {
    skip_space();
    if (at_ >= s_.size() || (s_[at_] != '\'' && s_[at_] != '"')) bad("expected a string");
    char quote = s_[at_++];
    size_t end = s_.find(quote, at_);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string out(s_.substr(at_, end - at_));
    at_ = end + 1;
    return out;
  }
  int64_t integer() {
    skip_space();
    int64_t x = 0;
    size_t start = at_;
    while (at_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[at_]))) {
      if (x > (int64_t{1} << 48)) bad("dimension too large");
      x = x * 10 + (s_[at_++] - '0');
    }
    if (at_ == start) bad("expected a non-negative integer");
    return x;
  }
  Value value() {
    skip_space();
    Value v;
    if (at_ < s_.size() && (s_[at_] == '\'' || s_[at_] == '"')) {
      v.text = string();
    } else if (s_.substr(at_, 4) == "True" || s_.substr(at_, 5) == "False") {
      v.flag = s_[at_] == 'T';
      at_ += *v.flag ? 4 : 5;
    } else if (take('(')) {
      v.tuple.emplace();
      while (!take(')')) {
        v.tuple->push_back(integer());
        if (!take(',')) {
          expect(')');
          break;
        }
      }
    } else {
      bad("expected a string, True, False or a tuple");
    }
    return v;
  }

  std::string_view s_;
  size_t at_ = 0;
};

uint32_t little_endian(std::string_view b) {
  uint32_t x = 0;
  for (size_t i = b.size(); i-- > 0;) x = (x << 8) | static_cast<unsigned char>(b[i]);
  return x;
}

}  // namespace

HostArray parse_npy(std::string_view bytes) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic)
    fail("npy: not a .npy file (it does not start with \\x93NUMPY)");
  int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) fail("npy: format version %d is not supported (1, 2 or 3)", major);
  size_t len_size = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + len_size) fail("npy: truncated in its header");
  size_t header_len = little_endian(bytes.substr(8, len_size)), start = 8 + len_size;
  if (bytes.size() - start < header_len)
    fail("npy: truncated in its header (%d header bytes announced, %d there)", header_len,
         bytes.size() - start);
  std::map<std::string, HeaderReader::Value> dict =
      HeaderReader(bytes.substr(start, header_len)).dict();
  auto descr = dict.find("descr"), fortran = dict.find("fortran_order"), shape = dict.find("shape");
  if (descr == dict.end() || !descr->second.text)
    fail("npy: the header has no 'descr' string (the dtype)");
  if (fortran == dict.end() || !fortran->second.flag)
    fail("npy: the header has no 'fortran_order' True/False");
  if (shape == dict.end() || !shape->second.tuple) fail("npy: the header has no 'shape' tuple");
  if (*fortran->second.flag)
    fail("npy: Fortran-ordered arrays are not supported (save with np.ascontiguousarray)");
  const std::string& d = *descr->second.text;
  auto code = d.size() == 3 ? codes().find(d.substr(1)) : codes().end();
  if (code == codes().end() ||
      (d[0] != '<' && d[0] != '|' && d[0] != '=' && !(d[0] == '>' && code->second.itemsize() == 1)))
    fail(
        "npy: dtype '%s' is not supported (little-endian bool, int8..int64, uint8..uint64, "
        "float16, float32, float64)",
        d);
  HostArray a{code->second, *shape->second.tuple, {}};
  int64_t n = 1;
  for (int64_t dim : a.shape) {
    if (dim > 0 && n > (int64_t{1} << 40) / dim)
      fail("npy: shape %s is too large", fmt_shape(a.shape));
    n *= dim;
  }
  size_t want = static_cast<size_t>(n * a.dtype.itemsize()),
         have = bytes.size() - start - header_len;
  if (have != want)
    fail("npy: %s: %d bytes of data for %s %s, which needs %d",
         have < want ? "truncated" : "too long", have, numpy_name(a.dtype), fmt_shape(a.shape),
         want);
  a.data = std::string(bytes.substr(start + header_len));
  return a;
}

HostArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("%s: cannot read the file", path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return parse_npy(bytes);
  } catch (const Error& e) {
    fail("%s: %s", path, e.what());
  }
}

std::string npy_bytes(const HostArray& a) {
  std::string code;
  for (const auto& [c, dt] : codes())
    if (dt == a.dtype) code = c;
  if (code.empty()) fail("npy: %s has no NumPy dtype", numpy_name(a.dtype));
  std::string header =
      absl::StrFormat("{'descr': '%c%s', 'fortran_order': False, 'shape': %s, }",
                      a.dtype.itemsize() == 1 ? '|' : '<', code, fmt_shape(a.shape));
  // NumPy pads the header with spaces and a newline so that the data starts 64-byte aligned.
  bool v1 = header.size() + 11 <= 65535;
  size_t prefix = v1 ? 10 : 12, total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string out(kMagic);
  out += static_cast<char>(v1 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < (v1 ? 2u : 4u); i++)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + a.data;
}

void write_npy(const std::string& path, const HostArray& a) {
  std::string bytes = npy_bytes(a);
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    fail("%s: cannot write the file", path);
}

}  // namespace tc::infer
