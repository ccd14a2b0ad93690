#include "frontends/llm/gguf.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include "tinycore/error.h"

namespace tc::gguf {
namespace {

constexpr int kMaxDims = 4;                        // GGML_MAX_DIMS
constexpr int kMaxArrayDepth = 8;                  // arrays of arrays nest at most this deep
constexpr uint64_t kMaxNumel = uint64_t{1} << 56;  // keeps bytes and offsets far from overflow
// A Value takes ~100 bytes in memory for as little as 1 in the file: all metadata values together
// (array elements included) are bounded. The largest vocabularies hold ~1M (tokens, scores, types).
constexpr uint64_t kMaxValues = uint64_t{1} << 22;

[[noreturn]] void bad(const std::string& what) { throw FormatError("gguf: " + what); }

std::string str(uint64_t v) { return std::to_string(v); }

// Reads little-endian fields in order; every read checks the bytes left first.
struct Reader {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
  uint64_t values = 0;  // metadata values read so far

  size_t left() const { return size - pos; }
  void need(uint64_t n, const std::string& what) const {
    if (n > left())
      bad("truncated: " + what + " at offset " + str(pos) + " needs " + str(n) + " bytes, " +
          str(left()) + " left");
  }
  uint64_t uint(int bytes, const std::string& what) {
    need(bytes, what);
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | data[pos + i];
    pos += bytes;
    return v;
  }
  std::string string(const std::string& what) {
    uint64_t n = uint(8, what + "'s length");
    need(n, what + " of " + str(n) + " bytes");
    std::string s(reinterpret_cast<const char*>(data + pos), n);
    pos += n;
    return s;
  }
};

const TypeInfo* find_type(uint32_t type) {
  static const std::map<uint32_t, TypeInfo> types = {
      {F32, {"f32", 1, 4}},       {F16, {"f16", 1, 2}},       {BF16, {"bf16", 1, 2}},
      {Q4_0, {"q4_0", 32, 18}},   {Q4_1, {"q4_1", 32, 20}},   {Q5_0, {"q5_0", 32, 22}},
      {Q5_1, {"q5_1", 32, 24}},   {Q8_0, {"q8_0", 32, 34}},   {Q4_K, {"q4_K", 256, 144}},
      {Q5_K, {"q5_K", 256, 176}}, {Q6_K, {"q6_K", 256, 210}},
  };
  auto it = types.find(type);
  return it == types.end() ? nullptr : &it->second;
}

// The fewest bytes a value of `type` takes in a file (0 for an unknown type).
uint64_t min_value_bytes(uint32_t type) {
  switch (type) {
    case UINT8:
    case INT8:
    case BOOL:
      return 1;
    case UINT16:
    case INT16:
      return 2;
    case UINT32:
    case INT32:
    case FLOAT32:
      return 4;
    case UINT64:
    case INT64:
    case FLOAT64:
    case STRING:
      return 8;  // a string: its length
    case ARRAY:
      return 12;  // element type and count
    default:
      return 0;
  }
}

Value read_value(Reader& r, uint32_t type, const std::string& key, int depth) {
  if (++r.values > kMaxValues)
    bad("metadata '" + key + "': more than " + str(kMaxValues) + " metadata values in all");
  Value v;
  v.type = type;
  switch (type) {
    case UINT8:
    case UINT16:
    case UINT32:
    case UINT64:
      v.u = r.uint(static_cast<int>(min_value_bytes(type)), "'" + key + "'");
      break;
    case INT8:
    case INT16:
    case INT32:
    case INT64: {
      int bytes = static_cast<int>(min_value_bytes(type));
      uint64_t u = r.uint(bytes, "'" + key + "'");
      int shift = 64 - 8 * bytes;  // sign-extend
      v.i = static_cast<int64_t>(u << shift) >> shift;
      break;
    }
    case BOOL: {
      uint64_t b = r.uint(1, "'" + key + "'");
      if (b > 1) bad("metadata '" + key + "': bool of value " + str(b) + " (must be 0 or 1)");
      v.i = static_cast<int64_t>(b);
      break;
    }
    case FLOAT32: {
      uint32_t bits = static_cast<uint32_t>(r.uint(4, "'" + key + "'"));
      float f;
      std::memcpy(&f, &bits, 4);
      v.f = f;
      break;
    }
    case FLOAT64: {
      uint64_t bits = r.uint(8, "'" + key + "'");
      std::memcpy(&v.f, &bits, 8);
      break;
    }
    case STRING:
      v.s = r.string("'" + key + "'");
      break;
    case ARRAY: {
      if (depth >= kMaxArrayDepth)
        bad("metadata '" + key + "': arrays nest deeper than " + str(kMaxArrayDepth));
      v.elem_type = static_cast<uint32_t>(r.uint(4, "'" + key + "' array type"));
      uint64_t each = min_value_bytes(v.elem_type);
      if (each == 0) bad("metadata '" + key + "': unknown array element type " + str(v.elem_type));
      uint64_t n = r.uint(8, "'" + key + "' array length");
      if (n > r.left() / each)
        bad("metadata '" + key + "': array of " + str(n) + " elements cannot fit in the " +
            str(r.left()) + " bytes left at offset " + str(r.pos));
      if (n > kMaxValues - r.values)
        bad("metadata '" + key + "': array of " + str(n) + " elements makes more than " +
            str(kMaxValues) + " metadata values in all");
      v.items.reserve(n);
      for (uint64_t i = 0; i < n; i++)
        v.items.push_back(read_value(r, v.elem_type, key, depth + 1));
      break;
    }
    default:
      bad("metadata '" + key + "': unknown value type " + str(type));
  }
  return v;
}

bool is_unsigned(uint32_t t) { return t == UINT8 || t == UINT16 || t == UINT32 || t == UINT64; }
bool is_signed(uint32_t t) { return t == INT8 || t == INT16 || t == INT32 || t == INT64; }

[[noreturn]] void wrong_type(const std::string& key, const Value& v, const char* wanted) {
  std::string got = value_type_name(v.type);
  if (v.type == ARRAY) got += " of " + std::string(value_type_name(v.elem_type));
  bad("metadata '" + key + "' is " + got + ", not " + wanted);
}

int64_t as_int(const Value& v, const std::string& key) {
  if (is_signed(v.type)) return v.i;
  if (!is_unsigned(v.type)) wrong_type(key, v, "an integer");
  if (v.u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    bad("metadata '" + key + "': " + str(v.u) + " is out of int64's range");
  return static_cast<int64_t>(v.u);
}

double as_float(const Value& v, const std::string& key) {
  if (v.type == FLOAT32 || v.type == FLOAT64) return v.f;
  if (is_signed(v.type)) return static_cast<double>(v.i);
  if (is_unsigned(v.type)) return static_cast<double>(v.u);
  wrong_type(key, v, "a number");
}

// The elements of an array value, converted by `one`.
template <typename T, typename F>
std::vector<T> array_of(const Metadata& m, const std::string& key, const char* wanted, F one) {
  const Value& v = m.get(key);
  if (v.type != ARRAY) wrong_type(key, v, wanted);
  std::vector<T> out;
  out.reserve(v.items.size());
  for (const Value& item : v.items) out.push_back(one(item, key));
  return out;
}

// Reads one tensor info and checks what it claims on its own (alignment and ranges come later).
TensorInfo read_tensor_info(Reader& r, uint64_t index) {
  TensorInfo t;
  t.name = r.string("tensor " + str(index) + "'s name");
  const std::string where = "tensor '" + t.name + "'";
  uint64_t n_dims = r.uint(4, where + "'s n_dims");
  if (n_dims < 1 || n_dims > kMaxDims)
    bad(where + ": " + str(n_dims) + " dims (must be 1 to " + str(kMaxDims) + ")");
  uint64_t numel = 1;
  for (uint64_t i = 0; i < n_dims; i++) {
    uint64_t d = r.uint(8, where + "'s dims");
    if (d == 0 || d > kMaxNumel)
      bad(where + ": dims[" + str(i) + "] is " + std::to_string(static_cast<int64_t>(d)) +
          " (must be 1 to 2^56)");
    if (numel > kMaxNumel / d) bad(where + ": its element count overflows (more than 2^56)");
    numel *= d;
    t.dims.push_back(static_cast<int64_t>(d));
  }
  t.type = static_cast<uint32_t>(r.uint(4, where + "'s type"));
  const TypeInfo* info = find_type(t.type);
  if (!info) bad(where + ": unknown or unsupported ggml type " + str(t.type));
  if (t.dims[0] % info->block_elems != 0)
    bad(where + ": dims[0] " + str(t.dims[0]) + " is not a multiple of " + info->name +
        "'s block of " + str(info->block_elems));
  t.bytes = numel / info->block_elems * info->block_bytes;
  t.offset = r.uint(8, where + "'s offset");
  return t;
}

}  // namespace

const TypeInfo& type_info(uint32_t type) {
  const TypeInfo* info = find_type(type);
  if (!info) bad("unknown or unsupported ggml type " + str(type));
  return *info;
}

const char* value_type_name(uint32_t type) {
  static const char* names[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                "int32",  "float32", "bool",   "string", "array",
                                "uint64", "int64",   "float64"};
  return type < 13 ? names[type] : "unknown";
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

const Value& Metadata::get(const std::string& key) const {
  auto it = values.find(key);
  if (it == values.end()) bad("metadata '" + key + "' is missing");
  return it->second;
}

std::string Metadata::get_string(const std::string& key) const {
  const Value& v = get(key);
  if (v.type != STRING) wrong_type(key, v, "a string");
  return v.s;
}

int64_t Metadata::get_int(const std::string& key) const { return as_int(get(key), key); }

double Metadata::get_float(const std::string& key) const { return as_float(get(key), key); }

bool Metadata::get_bool(const std::string& key) const {
  const Value& v = get(key);
  if (v.type != BOOL) wrong_type(key, v, "a bool");
  return v.i != 0;
}

std::vector<std::string> Metadata::get_strings(const std::string& key) const {
  return array_of<std::string>(*this, key, "an array of strings",
                               [&](const Value& v, const std::string& k) {
                                 if (v.type != STRING) wrong_type(k, get(k), "an array of strings");
                                 return v.s;
                               });
}

std::vector<int64_t> Metadata::get_ints(const std::string& key) const {
  return array_of<int64_t>(*this, key, "an array of integers",
                           [&](const Value& v, const std::string& k) {
                             if (!is_signed(v.type) && !is_unsigned(v.type))
                               wrong_type(k, get(k), "an array of integers");
                             return as_int(v, k);
                           });
}

std::vector<double> Metadata::get_floats(const std::string& key) const {
  return array_of<double>(*this, key, "an array of numbers",
                          [&](const Value& v, const std::string& k) {
                            if (v.type == STRING || v.type == ARRAY || v.type == BOOL)
                              wrong_type(k, get(k), "an array of numbers");
                            return as_float(v, k);
                          });
}

std::string Metadata::get_string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}
int64_t Metadata::get_int_or(const std::string& key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}
double Metadata::get_float_or(const std::string& key, double fallback) const {
  return has(key) ? get_float(key) : fallback;
}
bool Metadata::get_bool_or(const std::string& key, bool fallback) const {
  return has(key) ? get_bool(key) : fallback;
}

File parse(const uint8_t* data, size_t size) {
  Reader r{data, size};
  r.need(4, "the magic");
  if (std::memcmp(data, "GGUF", 4) != 0) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "%02x%02x%02x%02x", data[0], data[1], data[2], data[3]);
    bad(std::string("not a GGUF file: its magic is 0x") + hex + ", not \"GGUF\"");
  }
  r.pos = 4;
  File f;
  f.version = static_cast<uint32_t>(r.uint(4, "the version"));
  if (f.version == 1)
    bad("GGUF version 1 (32-bit counts) is not supported; convert the file to version 3");
  if (f.version != 2 && f.version != 3)
    bad("unsupported GGUF version " + str(f.version) +
        (f.version > 0xffff ? " (a big-endian file?)" : "") + "; only 2 and 3 are read");
  uint64_t n_tensors = r.uint(8, "the tensor count");
  uint64_t n_kv = r.uint(8, "the metadata count");
  // Each key/value takes at least 13 bytes and each tensor info 32: a count the bytes left
  // cannot hold is rejected before anything is allocated for it.
  if (n_kv > r.left() / 13 || n_tensors > r.left() / 32 || n_kv * 13 + n_tensors * 32 > r.left())
    bad(str(n_kv) + " metadata entries and " + str(n_tensors) + " tensors cannot fit in " +
        str(r.left()) + " bytes");

  for (uint64_t i = 0; i < n_kv; i++) {
    std::string key = r.string("metadata key " + str(i));
    uint32_t type = static_cast<uint32_t>(r.uint(4, "'" + key + "' value type"));
    Value v = read_value(r, type, key, 0);
    if (!f.metadata.values.emplace(key, std::move(v)).second)
      bad("duplicate metadata key '" + key + "'");
  }
  if (f.metadata.has("general.alignment")) {
    int64_t a = f.metadata.get_int("general.alignment");
    if (a <= 0 || a > (int64_t{1} << 30) || (a & (a - 1)) != 0)
      bad("metadata 'general.alignment' is " + std::to_string(a) +
          " (must be a power of two up to 2^30)");
    f.alignment = static_cast<uint64_t>(a);
  }

  std::set<std::string> names;
  for (uint64_t i = 0; i < n_tensors; i++) {
    TensorInfo t = read_tensor_info(r, i);
    if (!names.insert(t.name).second) bad("duplicate tensor name '" + t.name + "'");
    f.tensors.push_back(std::move(t));
  }
  f.data_offset = (r.pos + f.alignment - 1) / f.alignment * f.alignment;
  if (!f.tensors.empty() && f.data_offset > size)
    bad("truncated: the data section starts at offset " + str(f.data_offset) + ", past the end (" +
        str(size) + " bytes)");

  const uint64_t data_size = f.tensors.empty() ? 0 : size - f.data_offset;
  for (TensorInfo& t : f.tensors) {
    const std::string where = "tensor '" + t.name + "'";
    if (t.offset % f.alignment != 0)
      bad(where + ": offset " + str(t.offset) + " is not a multiple of the alignment " +
          str(f.alignment));
    // as llama.cpp reads it: each tensor padded to the alignment, the last one too
    const uint64_t padded = (t.bytes + f.alignment - 1) / f.alignment * f.alignment;
    if (t.offset > data_size || padded > data_size - t.offset)
      bad(where + ": its " + str(t.bytes) + " bytes (padded to " + str(padded) +
          ") at data offset " + str(t.offset) + " run past the end of the data section (" +
          str(data_size) + " bytes)");
    t.offset += f.data_offset;
  }
  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& t : f.tensors) by_offset.push_back(&t);
  std::stable_sort(by_offset.begin(), by_offset.end(),
                   [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); i++) {
    const TensorInfo &a = *by_offset[i - 1], &b = *by_offset[i];
    if (a.offset + a.bytes > b.offset)
      bad("tensors '" + a.name + "' and '" + b.name + "' overlap (at file offset " + str(b.offset) +
          ")");
  }
  return f;
}

namespace {

// The file mapped, its errors as the parser's.
std::shared_ptr<nn::MappedFile> mapped(const std::string& path) {
  try {
    return std::make_shared<nn::MappedFile>(path);
  } catch (const Error& e) {
    bad(e.what());
  }
}

}  // namespace

const TensorInfo* Model::find(const std::string& name) const {
  for (const TensorInfo& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const TensorInfo& Model::tensor(const std::string& name) const {
  const TensorInfo* t = find(name);
  if (!t) bad("the model has no tensor '" + name + "'");
  return *t;
}

const uint8_t* Model::data(const TensorInfo& t) const {
  if (t.file < 0 || static_cast<size_t>(t.file) >= files.size())
    bad("tensor '" + t.name + "' names file " + std::to_string(t.file) + " of " +
        str(files.size()));
  return files[t.file]->data() + t.offset;
}

Model open(const std::string& path) {
  Model m;
  m.files.push_back(mapped(path));
  File first = parse(m.files[0]->data(), m.files[0]->size());
  m.metadata = std::move(first.metadata);
  m.tensors = std::move(first.tensors);
  int64_t count = m.metadata.get_int_or("split.count", 1);
  if (count <= 1) return m;
  if (count > 99999) bad("'" + path + "': split.count " + std::to_string(count) + " is too large");
  if (m.metadata.get_int_or("split.no", 0) != 0)
    bad("'" + path + "' is split " + std::to_string(m.metadata.get_int("split.no")) +
        " of a split set: open the first one (split.no 0)");
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "-00001-of-%05d.gguf", static_cast<int>(count));
  size_t n = std::strlen(suffix);
  if (path.size() < n || path.compare(path.size() - n, n, suffix) != 0)
    bad("'" + path + "' has split.count " + std::to_string(count) + " but is not named <prefix>" +
        suffix);
  const std::string prefix = path.substr(0, path.size() - n);
  std::set<std::string> names;
  for (const TensorInfo& t : m.tensors) names.insert(t.name);
  for (int64_t i = 1; i < count; i++) {
    std::snprintf(suffix, sizeof suffix, "-%05d-of-%05d.gguf", static_cast<int>(i + 1),
                  static_cast<int>(count));
    const std::string split = prefix + suffix;
    m.files.push_back(mapped(split));
    File f = parse(m.files.back()->data(), m.files.back()->size());
    if (f.metadata.get_int_or("split.no", -1) != i)
      bad("'" + split + "': split.no is " +
          (f.metadata.has("split.no") ? std::to_string(f.metadata.get_int("split.no"))
                                      : std::string("missing")) +
          ", not " + std::to_string(i));
    if (f.metadata.get_int_or("split.count", count) != count)
      bad("'" + split + "': split.count is " + std::to_string(f.metadata.get_int("split.count")) +
          ", not " + std::to_string(count) + " as in '" + path + "'");
    for (TensorInfo& t : f.tensors) {
      if (!names.insert(t.name).second)
        bad("tensor '" + t.name + "' of '" + split + "' is also in an earlier split");
      t.file = static_cast<int>(i);
      m.tensors.push_back(std::move(t));
    }
  }
  if (m.metadata.has("split.tensors.count") &&
      m.metadata.get_int("split.tensors.count") != static_cast<int64_t>(m.tensors.size()))
    bad("split.tensors.count is " + std::to_string(m.metadata.get_int("split.tensors.count")) +
        " but the " + std::to_string(count) + " splits hold " + str(m.tensors.size()) + " tensors");
  return m;
}

}  // namespace tc::gguf
