#include "frontends/onnx/proto.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "tinycore/error.h"

namespace tc::onnx {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("ONNX: cannot open %s", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

template <typename Message>
Message parse(const std::string& path, const char* what) {
  Message m;
  if (!m.ParseFromString(read_file(path)))
    fail("ONNX: %s is not a valid %s (truncated or not a protobuf)", path, what);
  return m;
}

// The typed field's values converted to T, checked against the element count.
template <typename T, typename Field>
std::vector<T> values(const Field& field, int64_t n, const std::string& name) {
  if (static_cast<int64_t>(field.size()) != n)
    fail("ONNX: tensor '%s' holds %d values for %d elements", name, field.size(), n);
  return std::vector<T>(field.begin(), field.end());
}

namespace fs = std::filesystem;

// The external file's bytes for tensor t (its external_data's location, offset and length).
std::string external_bytes(const ::onnx::TensorProto& t, const std::string& folder) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() == "offset" || kv.key() == "length") {
      char* end = nullptr;
      long long v = std::strtoll(kv.value().c_str(), &end, 10);
      if (kv.value().empty() || *end != 0 || v < 0)
        fail("ONNX: tensor '%s' has a bad external %s '%s'", t.name(), kv.key(), kv.value());
      (kv.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty())
    fail("ONNX: tensor '%s' keeps its data externally but names no location", t.name());
  if (folder.empty())
    fail(
        "ONNX: tensor '%s' keeps its data in external file '%s', but the model has no folder to "
        "read it from",
        t.name(), location);
  fs::path rel = fs::path(location).lexically_normal();
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory() || rel.empty() ||
      *rel.begin() == "..")
    fail("ONNX: tensor '%s': external data location '%s' is not inside the model's folder",
         t.name(), location);
  std::error_code base_ec, file_ec, size_ec;
  fs::path base = fs::canonical(folder, base_ec);
  fs::path file = fs::weakly_canonical(fs::path(folder) / rel, file_ec);
  auto inside = std::mismatch(base.begin(), base.end(), file.begin(), file.end()).first;
  if (base_ec || file_ec || inside != base.end())  // a symlink that leads out
    fail("ONNX: tensor '%s': external data location '%s' is not inside the model's folder",
         t.name(), location);
  uintmax_t size = fs::file_size(file, size_ec);
  std::ifstream in(file, std::ios::binary);
  if (size_ec || !fs::is_regular_file(file) || !in)
    fail("ONNX: tensor '%s': cannot open external data file '%s'", t.name(), location);
  if (length < 0) length = static_cast<int64_t>(size) - offset;
  if (static_cast<uintmax_t>(offset) + static_cast<uintmax_t>(length) > size || length < 0)
    fail(
        "ONNX: tensor '%s': external data file '%s' holds %d bytes, short of offset %d + length %d",
        t.name(), location, size, offset, length);
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  if (!in) fail("ONNX: tensor '%s': cannot read external data file '%s'", t.name(), location);
  return bytes;
}

void read_external(::onnx::TensorProto& t, const std::string& folder) {
  if (t.data_location() != ::onnx::TensorProto::EXTERNAL) return;
  t.set_raw_data(external_bytes(t, folder));
  t.clear_external_data();
  t.set_data_location(::onnx::TensorProto::DEFAULT);
}

}  // namespace

void read_external_data(::onnx::GraphProto& g, const std::string& folder) {
  for (::onnx::TensorProto& t : *g.mutable_initializer()) read_external(t, folder);
  for (::onnx::NodeProto& n : *g.mutable_node())
    for (::onnx::AttributeProto& a : *n.mutable_attribute()) {
      if (a.has_t()) read_external(*a.mutable_t(), folder);
      for (::onnx::TensorProto& t : *a.mutable_tensors()) read_external(t, folder);
      if (a.has_g()) read_external_data(*a.mutable_g(), folder);
      for (::onnx::GraphProto& sub : *a.mutable_graphs()) read_external_data(sub, folder);
    }
}

Value to_value(const ::onnx::SequenceProto& s) {
  if (s.sequence_values_size() || s.map_values_size() || s.optional_values_size() ||
      s.sparse_tensor_values_size())
    fail("ONNX: sequence '%s' holds values that are not tensors (only tensors are read)", s.name());
  Sequence out;
  for (const ::onnx::TensorProto& t : s.tensor_values()) out.push_back(to_tensor(t));
  return out;
}

Value to_value(const ::onnx::OptionalProto& o) {
  switch (o.elem_type()) {
    case ::onnx::OptionalProto::UNDEFINED:
      return Value::none();
    case ::onnx::OptionalProto::TENSOR:
      return o.has_tensor_value() ? Value::optional(to_tensor(o.tensor_value())) : Value::none();
    case ::onnx::OptionalProto::SEQUENCE:
      return o.has_sequence_value() ? Value::optional(to_value(o.sequence_value())) : Value::none();
    default:
      fail("ONNX: optional '%s' holds a value of type %d (only tensors and sequences are read)",
           o.name(), o.elem_type());
  }
}

Value read_value(const std::string& path, const ::onnx::TypeProto& type) {
  if (type.has_sequence_type())
    return to_value(parse<::onnx::SequenceProto>(path, "ONNX sequence"));
  if (type.has_optional_type())
    return to_value(parse<::onnx::OptionalProto>(path, "ONNX optional"));
  return to_tensor(read_tensor(path));
}

::onnx::ModelProto read_model(const std::string& path) {
  return parse<::onnx::ModelProto>(path, "ONNX model");
}
::onnx::TensorProto read_tensor(const std::string& path) {
  return parse<::onnx::TensorProto>(path, "ONNX tensor");
}

DType dtype_of_onnx(int data_type) {
  using T = ::onnx::TensorProto;
  switch (data_type) {
    case T::FLOAT:
      return dtypes::float32;
    case T::UINT8:
      return dtypes::uint8;
    case T::INT8:
      return dtypes::int8;
    case T::UINT16:
      return dtypes::uint16;
    case T::INT16:
      return dtypes::int16;
    case T::INT32:
      return dtypes::int32;
    case T::INT64:
      return dtypes::int64;
    case T::BOOL:
      return dtypes::bool_;
    case T::FLOAT16:
      return dtypes::float16;
    case T::DOUBLE:
      return dtypes::float64;
    case T::UINT32:
      return dtypes::uint32;
    case T::UINT64:
      return dtypes::uint64;
    case T::BFLOAT16:
      return dtypes::bfloat16;
    default:
      break;
  }
  fail("ONNX: data type %d (%s) has no tinycore dtype", data_type,
       T::DataType_IsValid(data_type) ? T::DataType_Name(static_cast<T::DataType>(data_type))
                                      : std::string("unknown"));
}

Tensor to_tensor(const ::onnx::TensorProto& t) {
  if (t.data_location() == ::onnx::TensorProto::EXTERNAL)
    fail("ONNX: tensor '%s' keeps its data in an external file (read_external_data reads it)",
         t.name());
  Shape shape(t.dims().begin(), t.dims().end());
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > (int64_t{1} << 40) / d))
      fail("ONNX: tensor '%s' has a bad shape %s", t.name(), fmt_shape(shape));
    n *= d;
  }
  DType dt = dtype_of_onnx(t.data_type());
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != n * dt.itemsize())
      fail("ONNX: tensor '%s' has %d bytes of data for %s %s", t.name(), t.raw_data().size(),
           dt.name(), fmt_shape(shape));
    return Tensor::from_blob(t.raw_data().data(), shape, dt);
  }
  // the typed fields: floats in float_data; the narrow ints, bools and halves in int32_data
  // (halves as their bits); int64 in int64_data; doubles in double_data; uint32/64 in uint64_data
  auto blob = [&](const auto& v, DType as) {
    return Tensor::from_blob(v.data(), shape, as).cast(dt);
  };
  switch (t.data_type()) {
    case ::onnx::TensorProto::FLOAT:
      return blob(values<float>(t.float_data(), n, t.name()), dt);
    case ::onnx::TensorProto::DOUBLE:
      return blob(values<double>(t.double_data(), n, t.name()), dt);
    case ::onnx::TensorProto::INT64:
      return blob(values<int64_t>(t.int64_data(), n, t.name()), dt);
    case ::onnx::TensorProto::UINT32:
    case ::onnx::TensorProto::UINT64:
      return blob(values<uint64_t>(t.uint64_data(), n, t.name()), dtypes::uint64);
    case ::onnx::TensorProto::FLOAT16:
    case ::onnx::TensorProto::BFLOAT16: {
      std::vector<uint16_t> bits = values<uint16_t>(t.int32_data(), n, t.name());
      return Tensor::from_blob(bits.data(), shape, dt);
    }
    default:
      return blob(values<int32_t>(t.int32_data(), n, t.name()), dtypes::int32);
  }
}

}  // namespace tc::onnx
