#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a bounded time.
# Usage: tools/fuzz.sh [seconds for the safetensors parser, default 60; the GGUF parser, infer's
# parsers and the ONNX importer get half]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
out=out/fuzz
flags=(-std=c++20 -O1 -g -I. -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)

# run TARGET CORPUS MAX_LEN SECONDS [FLAGS...]: runs out/fuzz/TARGET on out/fuzz/corpus/CORPUS.
run() {
  "$out/$1" -max_total_time="$4" -max_len="$3" -timeout=10 -print_final_stats=1 "${@:5}" \
    "$out/corpus/$2" 2>&1 | tail -n 12
}

mkdir -p "$out/corpus/safetensors"
cp tests/fixtures/torch_state.safetensors "$out/corpus/safetensors/" 2>/dev/null || true
clang++ "${flags[@]}" nn/safetensors.cc tests/fuzz/safetensors_fuzz.cc -o "$out/safetensors_fuzz"
run safetensors_fuzz safetensors 4096 "$secs"

# the GGUF parser (frontends/llm/gguf.cc, with the mapped file it opens), seeded with the fixtures' GGUF files
mkdir -p "$out/corpus/gguf"
cp tests/fixtures/llm_quant/*.gguf "$out/corpus/gguf/"
clang++ "${flags[@]}" frontends/llm/gguf.cc nn/mapped_file.cc tests/fuzz/gguf_fuzz.cc \
  $(pkg-config --libs absl_str_format) -o "$out/gguf_fuzz"
run gguf_fuzz gguf 4096 $((secs / 2 > 0 ? secs / 2 : 1)) -seed="${FUZZ_SEED:-1}"

# infer serve's request bodies; the first byte picks the parser (its value mod 5): 0 classify JSON,
# 1 classify raw bytes, 2 completion JSON, 3 base64, 4 v2 infer JSON (see the target).
seeds="$out/corpus/infer_request"
mkdir -p "$seeds"
printf '\0{"image": "iVBORw0KGgo=", "topk": 3}' >"$seeds/classify_json"
printf '\0{"image": "data:image/png;base64,Zm9vYmE=", "topk": null, "model": "m"}' >"$seeds/classify_data_url"
printf '\6\x89PNG\r\n\x1a\n' >"$seeds/classify_raw"
printf '\2{"prompt": "the quick", "max_tokens": 8, "temperature": 0.7, "top_k": 40, "top_p": 0.9, "seed": 7, "stream": true}' >"$seeds/completion"
printf '\2{"prompt": "a", "n": 1, "stop": [], "logit_bias": {}, "echo": false}' >"$seeds/completion_neutral"
printf '\3Zm9vYmFy\r\nZm8=' >"$seeds/base64"
printf '\4{"id": "a", "inputs": [{"name": "x", "shape": [2, 4], "datatype": "FP32", "data": [[1, 2, 3, 4], [5, 6, 7, 8.5]]}, {"name": "ids", "shape": [2], "datatype": "INT64", "data": [-1, 9007199254740993]}, {"name": "mask", "shape": [], "datatype": "BOOL", "data": [true]}], "outputs": [{"name": "z"}]}' >"$seeds/v2_infer"
# requests.cc's errors are formatted by absl (tinycore/error.h).
clang++ "${flags[@]}" apps/infer/requests.cc tests/fuzz/infer_request_fuzz.cc \
  $(pkg-config --libs absl_str_format) -o "$out/infer_request_fuzz"
run infer_request_fuzz infer_request 2048 $((secs / 2 > 0 ? secs / 2 : 1))

# the ONNX importer (frontends/onnx, instrumented) over the release build of the core (not
# instrumented: the target watches the importer). clang 15: clang 14 lacks x86's _Float16.
seeds="$out/corpus/onnx"
mkdir -p "$seeds"
for t in add relu reshape_reduced_dims gather_0 slice conv_with_strides_padding \
  constantofshape_int_zeros expand_dim_changed matmul_2d maxpool_2d_default concat_2d_axis_0 \
  transpose_default split_equal_parts_1d reduce_sum_keepdims_example; do
  model=/usr/share/libonnx-testdata/data/node/test_$t/model.onnx
  [[ -f $model ]] && cp "$model" "$seeds/$t.onnx"
done
bash tools/build.sh release onnx_test >/dev/null
libs=$(ninja -C out/release -t commands tests/onnx_test | tail -n 1 | tr ' ' '\n' |
  grep -E '^-(l|L)' | grep -vE 'gtest|gmock' | tr '\n' ' ')
# shellcheck disable=SC2086 # $libs is a list of flags
clang++-15 "${flags[@]}" -DONNX_ML=1 -DONNX_NAMESPACE=onnx frontends/onnx/*.cc \
  tests/fuzz/onnx_import_fuzz.cc out/release/obj/libtinycore.a -Wl,--start-group $libs \
  -Wl,--end-group -o "$out/onnx_import_fuzz"
# seeded (FUZZ_SEED, default 1) as the Tensor fuzzer is: a run repeats the last one's inputs
run onnx_import_fuzz onnx 4096 $((secs / 2 > 0 ? secs / 2 : 1)) -seed="${FUZZ_SEED:-1}"
