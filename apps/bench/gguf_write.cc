#include "apps/bench/gguf_write.h"

#include <functional>

#include "tinycore/error.h"

namespace bench {

namespace {

constexpr uint64_t kAlignment = 32;

}  // namespace

int64_t GgufTensor::bytes() const {
  const tc::gguf::TypeInfo& t = tc::gguf::type_info(type);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n / t.block_elems * t.block_bytes;
}

void GgufWriter::put(const void* p, size_t n) {
  out_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
  written_ += n;
  if (!out_) tc::fail("GGUF writer: cannot write %s (disk full?)", path_);
}

void GgufWriter::pad() {
  static const char zeros[kAlignment] = {};
  put(zeros, (kAlignment - written_ % kAlignment) % kAlignment);
}

GgufWriter::GgufWriter(const std::string& path, const tc::gguf::Metadata& metadata,
                       std::vector<GgufTensor> tensors)
    : path_(path), out_(path, std::ios::binary | std::ios::trunc), tensors_(std::move(tensors)) {
  if (!out_) tc::fail("GGUF writer: cannot create %s", path);
  auto u32 = [&](uint32_t v) { put(&v, 4); };
  auto u64 = [&](uint64_t v) { put(&v, 8); };
  auto str = [&](const std::string& s) { u64(s.size()), put(s.data(), s.size()); };
  std::function<void(const tc::gguf::Value&)> value = [&](const tc::gguf::Value& v) {
    using namespace tc::gguf;
    switch (v.type) {
      case UINT8:
      case INT8:
      case BOOL: {
        uint8_t b = static_cast<uint8_t>(v.type == UINT8 ? v.u : v.i);
        return put(&b, 1);
      }
      case UINT32:
        return u32(static_cast<uint32_t>(v.u));
      case INT32:
        return u32(static_cast<uint32_t>(static_cast<int32_t>(v.i)));
      case UINT64:
        return u64(v.u);
      case INT64:
        return u64(static_cast<uint64_t>(v.i));
      case FLOAT32: {
        float f = static_cast<float>(v.f);
        return put(&f, 4);
      }
      case FLOAT64:
        return put(&v.f, 8);
      case STRING:
        return str(v.s);
      case ARRAY:
        u32(v.elem_type), u64(v.items.size());
        for (const Value& item : v.items) value(item);
        return;
      default:
        tc::fail("GGUF writer: GGUF value type %s is not written", value_type_name(v.type));
    }
  };
  put("GGUF", 4);
  u32(3);
  u64(tensors_.size()), u64(metadata.values.size());
  for (const auto& [key, v] : metadata.values) str(key), u32(v.type), value(v);
  uint64_t offset = 0;
  for (const GgufTensor& t : tensors_) {
    str(t.name);
    u32(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) u64(static_cast<uint64_t>(d));
    u32(t.type), u64(offset);
    offset += (static_cast<uint64_t>(t.bytes()) + kAlignment - 1) / kAlignment * kAlignment;
  }
  pad();  // the data section starts aligned
}

void GgufWriter::write(const std::vector<uint8_t>& data) {
  if (next_ >= tensors_.size())
    tc::fail("GGUF writer: %s: more tensors written than declared", path_);
  const GgufTensor& t = tensors_[next_++];
  if (static_cast<int64_t>(data.size()) != t.bytes())
    tc::fail("GGUF writer: %s: tensor %s has %d bytes, not %d", path_, t.name, data.size(),
             t.bytes());
  put(data.data(), data.size());
  pad();
}

void GgufWriter::close() {
  if (next_ != tensors_.size())
    tc::fail("GGUF writer: %s: %d of %d tensors written", path_, next_, tensors_.size());
  out_.close();
  if (!out_) tc::fail("GGUF writer: cannot write %s", path_);
}

}  // namespace bench
