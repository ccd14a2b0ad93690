#include "frontends/onnx/proto.h"

#include <cstring>
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

}  // namespace

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
    fail("ONNX: tensor '%s' keeps its data in an external file (not read yet)", t.name());
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
