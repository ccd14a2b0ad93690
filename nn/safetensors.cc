#include "nn/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

namespace tc::safetensors {
namespace {

using Json = nlohmann::ordered_json;
constexpr uint64_t kMaxHeader = 100 << 20;  // the reference implementation's limit

const std::map<std::string, size_t>& dtype_sizes() {
  static const std::map<std::string, size_t> m = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};
  return m;
}

[[noreturn]] void bad(const std::string& what) { throw FormatError("safetensors: " + what); }

}  // namespace

size_t dtype_size(const std::string& dtype) {
  auto it = dtype_sizes().find(dtype);
  if (it == dtype_sizes().end()) bad("unknown dtype '" + dtype + "'");
  return it->second;
}

Header parse_header(const uint8_t* file, size_t size) {
  if (size < 8) bad("file of " + std::to_string(size) + " bytes is too short for a header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = (n << 8) | file[i];
  if (n > kMaxHeader) bad("header length " + std::to_string(n) + " is larger than 100 MiB");
  if (n > size - 8)
    bad("header length " + std::to_string(n) + " runs past the end of the file (" +
        std::to_string(size) + " bytes)");
  Header h;
  h.data_offset = 8 + n;
  uint64_t data_size = size - h.data_offset;
  Json j;
  try {
    j = Json::parse(file + 8, file + 8 + n);
  } catch (const Json::exception& e) {
    bad(std::string("header is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) bad("header is not a JSON object");
  for (auto& [key, v] : j.items()) {
    if (key == "__metadata__") {
      if (!v.is_object()) bad("__metadata__ is not an object");
      for (auto& [mk, mv] : v.items()) {
        if (!mv.is_string()) bad("__metadata__ entry '" + mk + "' is not a string");
        h.metadata[mk] = mv.get<std::string>();
      }
      continue;
    }
    const std::string where = "tensor '" + key + "'";
    if (!v.is_object()) bad(where + " is not an object");
    if (!v.contains("dtype") || !v["dtype"].is_string()) bad(where + " has no dtype string");
    if (!v.contains("shape") || !v["shape"].is_array()) bad(where + " has no shape array");
    if (!v.contains("data_offsets") || !v["data_offsets"].is_array() ||
        v["data_offsets"].size() != 2)
      bad(where + " has no data_offsets pair");
    TensorInfo t;
    t.name = key;
    t.dtype = v["dtype"].get<std::string>();
    size_t item = dtype_size(t.dtype);
    uint64_t numel = 1;
    for (const Json& d : v["shape"]) {
      if (!d.is_number_unsigned()) bad(where + " has a shape entry that is not a size");
      uint64_t x = d.get<uint64_t>();
      if (x > (uint64_t{1} << 62) || (x && numel > (uint64_t{1} << 62) / x))
        bad(where + " has a shape whose size overflows");
      numel *= x;
      t.shape.push_back(static_cast<int64_t>(x));
    }
    for (const Json& o : v["data_offsets"])
      if (!o.is_number_unsigned()) bad(where + " has data_offsets that are not offsets");
    t.begin = v["data_offsets"][0].get<uint64_t>();
    t.end = v["data_offsets"][1].get<uint64_t>();
    if (t.begin > t.end) bad(where + " has data_offsets that end before they begin");
    if (t.end > data_size)
      bad(where + " has data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
          ") past the data section (" + std::to_string(data_size) + " bytes): truncated file?");
    if (numel > (uint64_t{1} << 62) / item || t.end - t.begin != numel * item)
      bad(where + " holds " + std::to_string(t.end - t.begin) +
          " bytes, its dtype and shape need " + std::to_string(numel * item));
    h.tensors.push_back(std::move(t));
  }
  // the tensors tile the data section: in order, no overlap, no hole
  std::sort(h.tensors.begin(), h.tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (const TensorInfo& t : h.tensors) {
    if (t.begin < at) bad("tensor '" + t.name + "' overlaps the tensor before it");
    if (t.begin > at) bad("tensor '" + t.name + "' leaves a hole before it in the data");
    at = t.end;
  }
  if (at != data_size)
    bad("the data section has " + std::to_string(data_size - at) + " bytes no tensor covers");
  return h;
}

std::string write_header(std::vector<TensorInfo>& tensors,
                         const std::map<std::string, std::string>& metadata) {
  // larger alignments first, then by name
  std::sort(tensors.begin(), tensors.end(), [](const TensorInfo& a, const TensorInfo& b) {
    size_t sa = dtype_size(a.dtype), sb = dtype_size(b.dtype);
    return sa != sb ? sa > sb : a.name < b.name;
  });
  Json j = Json::object();
  if (!metadata.empty()) j["__metadata__"] = metadata;
  uint64_t at = 0;
  for (TensorInfo& t : tensors) {
    if (t.name == "__metadata__" || j.contains(t.name))
      bad("duplicate or reserved name '" + t.name + "'");
    uint64_t numel = 1;
    for (int64_t d : t.shape) numel *= static_cast<uint64_t>(d);
    t.begin = at;
    t.end = at + numel * dtype_size(t.dtype);
    at = t.end;
    Json e = Json::object();
    e["dtype"] = t.dtype;
    e["shape"] = t.shape;
    e["data_offsets"] = {t.begin, t.end};
    j[t.name] = e;
  }
  std::string header = j.dump();
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; i++) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header;
}

}  // namespace tc::safetensors
