#!/usr/bin/env bash
# Installs what tinycore's build needs on Debian 12, skipping what is present.
# CUDA is optional: used when /usr/local/cuda exists, never installed here.
set -euo pipefail

packages=(
  generate-ninja ninja-build g++ clang-format pkg-config python3
  libabsl-dev libeigen3-dev libyaml-cpp-dev libstb-dev
  libgtest-dev libgmock-dev llvm-19-dev libopenblas-dev nlohmann-json3-dev libcpp-httplib-dev libmicrohttpd-dev clang libclang-rt-14-dev clang-15 zlib1g-dev dataset-fashion-mnist fortunes
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  # OpenCV's DNN module: the ONNX anchor of bench's onnx suite (bench builds without it too)
  libopencv-dnn-dev
  # bench's CPU anchors beside Eigen and OpenBLAS: oneDNN (conv, matmul) and BLIS (GEMM)
  libdnnl-dev libblis-dev
  python3-pytest python3-numpy python3-dev pybind11-dev
  # ONNX models (frontends/onnx) and ONNX's backend test data (tests/frontends)
  libonnx-dev libprotobuf-dev libonnx-testdata
  # data-parallel training across processes (tinycore/dist): mpirun and its library
  libopenmpi-dev openmpi-bin
  # the reference of tinygrad's test_ops.py (tests/conformance); torchvision exports bench's
  # onnx suite's models and made the ONNX model fixtures
  python3-torch python3-torchvision
  # GPU languages without a GPU: OpenCL runs on PoCL (the CPU), HIP compiles with ROCm's hiprtc
  pocl-opencl-icd ocl-icd-libopencl1 opencl-c-headers libamdhip64-dev rocm-device-libs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all packages present"
fi

# The Python package: tools/build.sh release builds it into out/release/python, and this .pth
# file puts that folder on the path of Debian's python3 (`import tinycore` from anywhere).
sudo_cmd=()
[[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
python_dir="$(cd "$(dirname "$0")/.." && pwd)/out/release/python"
site_dir=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
if [[ "$(cat "$site_dir/tinycore.pth" 2>/dev/null)" != "$python_dir" ]]; then
  "${sudo_cmd[@]}" mkdir -p "$site_dir"
  echo "$python_dir" | "${sudo_cmd[@]}" tee "$site_dir/tinycore.pth" >/dev/null
  echo "setup: $site_dir/tinycore.pth -> $python_dir"
fi

if [[ -d /usr/local/cuda ]]; then
  echo "setup: CUDA toolkit found at /usr/local/cuda (optional)"
fi
