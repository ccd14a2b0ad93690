#!/usr/bin/env python3
"""Prints non-blank, non-comment lines of tinycore/ per folder, and the number of UOp ops; exits 1
when the core passes its line budget. The budget is today's size plus a little: raising it is a
change of its own, reviewed as one (tools/test.sh checks it in CI)."""
import os
import re
import sys

BUDGET = 17052  # code lines in tinycore/ (14,193 at the tensor/ split; 14,481 with the UOp spec; 14,613 with
# the fuzz fixes; 14,806 with three passes of issue 30: opts as rewrites, loops merged, operand layouts;
# 14,866 with gathers that read only the rows they name: IOTA, one-hot narrowing, issue 33; 15,217
# with issue 31's processes: the dist/ stage (MPI world, watchdog, collectives: 229) and host
# functions as graph nodes, which its all-reduce is (Ops::CUSTOM: registry, schedule, kernel,
# gradient: about 110); 15,609 with its multi-device tensors: MULTI, the lowering pass
# (schedule/multi.cc, 270), shard and the realize, assign, autograd and JIT parts (about 120); 15,654
# with TinyJit's sharded inputs (each piece an input, about 35); 15,704 with issue 34's spinning
# thread pool (about 25) and the split reduce's kernel-local one-hot test (about 20); 15,765 with
# strided transposed convs (a strided conv's input gradient) as one conv per phase (about 50);
# 15,863 with max_pool2d's own gradient for overlapping windows (about 80, with the strided views
# every/spread/unspread it shares with the polyphase conv, and keyed gradient rules); 15,968 with
# row reduces fused into their readers (a softmax or layernorm as one kernel: the scheduler's row
# rule and memo generations, row opts sharing one LANE, nested reduces lowered: about 105); 16,000
# with in-place writes at one position narrowed to it (a KV cache's slot per token instead of the
# whole cache: codegen's store narrowing, its call in lower, an in-place write's reads of its own
# buffer as argument 0: about 30); 16,020 with a matmul's transposed rows operand read from a
# blocked copy (a weight gradient's dyᵀ whose rows, 4 KB apart, missed every cache: about 16); 16,060
# with the core's cache size as a device fact the heuristic reads (a reduce's lane-block loop inside
# where the operand it blocks fits in L2: ResNet's 1x1 convs; the size in the kernel caches' keys);
# 16,070 with that rule's byte count of the other operands (a strided 1x1 conv's input read once
# per block) and a reduce's positions merged into one axis where that fills the lanes; 16,090 with
# buffers that adopt host memory (a GGUF file's weights read in place from its mapping, no copy:
# about 12) and a gather's operand computed only at the rows it reads (an embedding of dequantized
# rows, which was realized whole, 1 GB of float32 kept for a Llama-3.2-1B-shaped Q4_0 model: about 6);
# 16,115 with views of values decoded from packed bytes copied from the value decoded in its own
# layout (a Q4_0 weight's transposed copies ran scalar: the scheduler's decoded_under_views, about 20)
# ... 16,170 (few_copies, run_of_lanes); 16,270 with a row reduce's costly operand stashed into the
# output and loaded back by the row's loop (a softmax's exp once an element: codegen/stash, the
# STASH op, its opt and LLVM rule, about 100); 16,330 with gated loads' indices narrowed to their
# gate's blocks of lanes (a cat of transposed heads copied element by element: codegen/narrow's
# narrow_gated_loads and its call in simplify_kernel, about 55); 16,380 with products over operands of
# their own that one output adds split into kernels of their own (the scheduler's split_contractions,
# about 35) and a strided 1x1 conv's input read from a compact copy (a layout rule, about 15); 16,420
# with a stashing sum's prefetch of the next row (the PREFETCH op, its place in codegen/stash and its
# LLVM rule, about 40: softmax 4096x1024 went from 0.67 to 0.84-0.98 of the STREAM bandwidth); 16,465
# with a matvec's weight rows prefetched 4 KB ahead (codegen/prefetch: the pass, the opt and its cache
# field, about 45: a Llama decode's F16 weights went from 20.6 to 29.6 GB/s); 16,545 with DOT4, bytes
# multiplied four to an int32 (the op, Tensor.dot4, the CPU's vpdpbusd and generic LLVM forms, the C
# form, the device fact: about 80), on which a Q4_0 matvec multiplies its nibbles with int8 inputs;
# 16,575 with that matvec's kernel rules: a reduce over several loops prefetches its weight stream, and
# a gather's index test keeps lanes off what it narrows (about 15), plus room; 16,600 with loads of
# one buffer side by side prefetched as one run (a block's words, each its own load, once each block
# became one chain of DOT4s: about 15) and Tensor::data's whole copy where no conversion is needed
# ... 16,770 with loops over a KV cache that stop at each row's position (issue 33's one decode capture
# for every position): codegen/narrow's output loops narrowed where their stores are numbers past a
# bound, with a loop after them that stores those (value_where_false, narrow_output_loops: about 70),
# reduce loops narrowed for a max and over lanes and unrolled terms (identity gates, a bound's
# coefficient and lanes, the union of the terms' ranges: about 60), the linearizer's stores in runs of
# their own loops (about 20) and the renderer splitting the rest loop across cores (about 5); 16,890
# with issue 31's multi-device tensors over devices that do not share memory (CPU beside CL, GPUs):
# the COPY op (schedule, kernel, host program, gradient: about 40), pieces placed on their devices,
# the naive and ring all-reduces and gathers onto a device (schedule/multi.cc: about 80); 16,900 with
# the review's mends to it (gradients placed on each piece's device, constants not copied: about 10); 16,915
# with a shared elementwise value that reads many buffers realized once (the scheduler's reads_many,
# about 10: a ResNet-50 step's kernels moved 7.1 GB, 5.3 after) and a conv's input gradient computing
# the input's positions alone (its padding and output padding, each phase of a strided one cropped
# in its own conv: about 15; 4.9 GB and 2% fewer FLOPs); 16,920 with Tensor::shard_axis (tinygrad's
# uop.axis, which nn's batchnorm asks to normalize each device's piece of a split batch: about 5); 16,925 with
# the review's mends (a reader count and no gather for reads_many, a phase cropped to nothing cut by
# its pad, a rest loop of 0 or 1 trips not narrowed: about 5); 16,980 with the order of in-place
# writes (schedule/write_order.cc, about 50: a target whose value holds another's new value, SGD's
# weight beside its momentum, is written after it instead of computed and copied; a ResNet-50 step
# ran 1864 kernels and moved 5.1 GB, 1542 and 4.5 GB after); 16,990 with schedule.cc's buffer helpers
# in a file of their own (schedule/buffers.cc, its includes and namespace: about 10); 16,995 with
# the review's mends to the write order (a swap's values set aside before either is written, a
# constant not read across devices: about 8); 16,996 with a conv's input gradient for an input with a
# side of 0 padded into an output (the tensor fuzzer's find: an empty gradient, not a transposed conv
# that refused to make it: 1); 17,052 with values read only through one permutation stored in that
# order (the scheduler's readers of each node and read_order, about 45, and base_buffer walking a
# permuted view, about 5: a weight's gradient, which its matmul sums transposed, is stored as the
# weight is laid out, and the optimizer's updates read it contiguous: ResNet-50's 3x3 conv weights'
# updates were scalar, GPT's gathered across rows at 3x the time)

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tinycore")


def code_lines(path):
    n, in_block = 0, False
    for line in open(path, encoding="utf-8"):
        s = line.strip()
        if in_block:
            in_block = "*/" not in s
            continue
        if not s or s.startswith("//"):
            continue
        if s.startswith("/*"):
            in_block = "*/" not in s
            continue
        n += 1
    return n


folders = {}
for dirpath, _, files in os.walk(root):
    for f in files:
        if f.endswith((".h", ".cc")):
            rel = os.path.relpath(dirpath, root)
            folders[rel] = folders.get(rel, 0) + code_lines(os.path.join(dirpath, f))

ops_h = open(os.path.join(root, "uop", "ops.h"), encoding="utf-8").read()
ops = re.findall(r"X\((\w+)\)", ops_h.split("#define TC_OPS(X)")[1].split("enum class")[0])
print("%-20s %6s" % ("tinycore/", "lines"))
for name in sorted(folders):
    print("%-20s %6d" % ("." if name == "." else name + "/", folders[name]))
print("%-20s %6d" % ("total", sum(folders.values())))
print("ops: %d" % len(ops))
total = sum(folders.values())
if total > BUDGET:
    print("sz: tinycore/ has %d code lines, over its budget of %d: make room, or raise BUDGET in tools/sz.py "
          "in a change of its own that says why" % (total, BUDGET))
    sys.exit(1)
print("budget: %d of %d lines" % (total, BUDGET))
