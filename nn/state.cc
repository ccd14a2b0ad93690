#include "nn/state.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "absl/strings/str_join.h"
#include "nn/mapped_file.h"
#include "nn/safetensors.h"
#include "tinycore/error.h"

namespace tc::nn {
namespace {

const std::vector<std::pair<DType, std::string>>& dtype_names() {
  static const std::vector<std::pair<DType, std::string>> m = {
      {dtypes::bool_, "BOOL"},    {dtypes::uint8, "U8"},   {dtypes::int8, "I8"},
      {dtypes::int16, "I16"},     {dtypes::uint16, "U16"}, {dtypes::float16, "F16"},
      {dtypes::bfloat16, "BF16"}, {dtypes::int32, "I32"},  {dtypes::uint32, "U32"},
      {dtypes::float32, "F32"},   {dtypes::int64, "I64"},  {dtypes::uint64, "U64"},
      {dtypes::float64, "F64"}};
  return m;
}

void write_all(int fd, const void* p, size_t n, const std::string& path) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("safe_save: writing %s: %s", path, std::strerror(errno));
    c += w, n -= static_cast<size_t>(w);
  }
}

}  // namespace

StateDict safe_load(const std::string& path) {
  std::optional<MappedFile> mapped;
  try {
    mapped.emplace(path);
  } catch (const Error& e) {
    fail("safe_load: %s", e.what());
  }
  const MappedFile& f = *mapped;
  safetensors::Header h;
  try {
    h = safetensors::parse_header(f.data(), f.size());
  } catch (const safetensors::FormatError& e) {
    fail("safe_load: %s: %s", path, e.what());
  }
  StateDict out;
  for (const safetensors::TensorInfo& t : h.tensors) {
    auto it = std::find_if(dtype_names().begin(), dtype_names().end(),
                           [&](const auto& p) { return p.second == t.dtype; });
    if (it == dtype_names().end())
      fail("safe_load: %s: tensor '%s' has dtype %s, which tinycore does not support", path, t.name,
           t.dtype);
    out.emplace(t.name, Tensor::from_blob(f.data() + h.data_offset + t.begin, t.shape, it->first));
  }
  return out;
}

void safe_save(const StateDict& state, const std::string& path,
               const std::map<std::string, std::string>& metadata) {
  std::vector<safetensors::TensorInfo> infos;
  std::map<std::string, std::vector<uint8_t>> bytes;
  for (const auto& [name, t] : state) {
    auto it = std::find_if(dtype_names().begin(), dtype_names().end(),
                           [&](const auto& p) { return p.first == t.dtype(); });
    if (it == dtype_names().end())
      fail("safe_save: tensor '%s' has dtype %s, which safetensors cannot hold", name,
           t.dtype().name());
    infos.push_back({name, it->second, t.shape(), 0, 0});
    bytes[name] = t.raw_bytes();
  }
  std::string header;
  try {
    header = safetensors::write_header(infos, metadata);
  } catch (const safetensors::FormatError& e) {
    fail("safe_save: %s: %s", path, e.what());
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail("safe_save: cannot create %s: %s", tmp, std::strerror(errno));
  try {
    write_all(fd, header.data(), header.size(), tmp);
    for (const safetensors::TensorInfo& t : infos) {
      const std::vector<uint8_t>& b = bytes[t.name];
      write_all(fd, b.data(), b.size(), tmp);
    }
    if (::fsync(fd) != 0) fail("safe_save: fsync %s: %s", tmp, std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail("safe_save: cannot rename %s to %s: %s", tmp, path, std::strerror(err));
  }
}

LoadReport load_state_dict(StateDict& model, const StateDict& loaded, bool strict) {
  LoadReport r;
  for (const auto& [name, t] : model) {
    auto it = loaded.find(name);
    if (it == loaded.end()) {
      r.missing.push_back(name);
    } else if (it->second.shape() != t.shape() || it->second.dtype() != t.dtype()) {
      r.mismatched.push_back(name + ": file " + fmt_shape(it->second.shape()) + " " +
                             it->second.dtype().name() + ", model " + fmt_shape(t.shape()) + " " +
                             t.dtype().name());
    }
  }
  for (const auto& [name, t] : loaded)
    if (!model.count(name)) r.unexpected.push_back(name);
  if (strict && !r.ok())
    fail("load_state_dict: missing [%s], unexpected [%s], mismatched [%s]",
         absl::StrJoin(r.missing, ", "), absl::StrJoin(r.unexpected, ", "),
         absl::StrJoin(r.mismatched, "; "));
  std::vector<Tensor> assigned;
  for (auto& [name, t] : model) {
    auto it = loaded.find(name);
    if (it == loaded.end() || it->second.shape() != t.shape() || it->second.dtype() != t.dtype())
      continue;
    t.assign(it->second);
    assigned.push_back(t);
  }
  realize_all(assigned);
  return r;
}

StateDict with_prefix(const StateDict& d, const std::string& prefix) {
  StateDict out;
  for (const auto& [name, t] : d) out.emplace(prefix + name, t);
  return out;
}

StateDict strip_prefix(const StateDict& d, const std::string& prefix) {
  StateDict out;
  for (const auto& [name, t] : d)
    if (name.rfind(prefix, 0) == 0) out.emplace(name.substr(prefix.size()), t);
  return out;
}

Tensor state_tensor(const Shape& shape, double value) {
  Tensor t = Tensor::empty(shape);
  t.assign(Tensor::full(shape, value)).realize();
  return t;
}

}  // namespace tc::nn
