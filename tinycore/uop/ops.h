// The one instruction set of tinycore: every Tensor op, kernel AST and generated program is UOps.
#pragma once

#include <cstdint>
#include <string>

namespace tc {

// clang-format off
#define TC_OPS(X)                                                                      \
  /* graph structure */                                                                \
  X(SINK) X(NOOP)                                                                      \
  /* memory and constants; IOTA (arg {n}) is 0 .. n-1, each element its own index;    \
     DETACH is the value of its source, a wall for gradients;                         \
     CUSTOM_GRAD is the value of its first source, its gradient a registered rule's;  \
     CUSTOM (arg: a name) runs that host function (runtime/host_function.h);          \
     MULTI (arg: "axis;dev,dev..") is one tensor in pieces on several devices, its   \
     sources, split along axis (-1: each a whole copy; schedule/multi.h);             \
     COPY (arg: a device's name) is its source's value copied to that device (in a    \
     scheduled kernel, run on the destination, its arg names the source's device) */  \
  X(BUFFER) X(CONST) X(IOTA) X(DEFINE_VAR) X(CONTIGUOUS) X(DETACH) X(CUSTOM_GRAD)      \
  X(CUSTOM) X(MULTI) X(COPY)                                                           \
  /* movement: change how a kernel indexes, never copy */                              \
  X(RESHAPE) X(PERMUTE) X(EXPAND) X(PAD) X(SHRINK) X(FLIP)                             \
  /* reductions: REDUCE_AXIS on tensors, REDUCE over RANGEs in kernels */              \
  X(REDUCE_AXIS) X(REDUCE)                                                             \
  /* unary ALU */                                                                      \
  X(EXP2) X(EXP) X(LOG2) X(SIN) X(SQRT) X(RECIP) X(NEG) X(TRUNC)                      \
  /* casts */                                                                          \
  X(CAST) X(BITCAST)                                                                   \
  /* binary ALU */                                                                     \
  X(ADD) X(SUB) X(MUL) X(FDIV) X(IDIV) X(MOD) X(MAX) X(CMPLT) X(CMPNE) X(CMPEQ) X(AND) \
  X(OR) X(XOR) X(SHL) X(SHR)                                                           \
  /* ternary ALU; DOT4(a, b, c) is c plus the four products of a's bytes, unsigned,    \
     with b's, signed (int32 words: x86's vpdpbusd, a quantized matvec's inner step) */ \
  X(WHERE) X(MULACC) X(DOT4)                                                           \
  /* codegen: kernel arguments, loops, SIMD lanes (HREDUCE combines a vector's lanes  \
     with its reduce op), memory access; STASH(index, v) is v, stored at index as it  \
     is computed (codegen/stash.h), and PREFETCH(index, v) is v, with index's line    \
     fetched into the cache, to write when its arg is 1 (codegen/prefetch.h) */       \
  X(DEFINE_GLOBAL) X(RANGE) X(LANE) X(HREDUCE) X(END) X(INDEX) X(LOAD) X(STORE)         \
  X(STASH) X(PREFETCH) X(DEFINE_ACC) X(ASSIGN)
// clang-format on

enum class Ops : uint8_t {
#define TC_OP_ENUM(name) name,
  TC_OPS(TC_OP_ENUM)
#undef TC_OP_ENUM
};

#define TC_OP_COUNT(name) +1
inline constexpr int kNumOps = 0 TC_OPS(TC_OP_COUNT);
#undef TC_OP_COUNT

const char* op_name(Ops op);

namespace group {
bool is_unary(Ops op);
bool is_binary(Ops op);
bool is_ternary(Ops op);
inline bool is_alu(Ops op) { return is_unary(op) || is_binary(op) || is_ternary(op); }
bool is_movement(Ops op);
bool is_commutative(Ops op);
bool is_comparison(Ops op);  // ops whose result is bool
}  // namespace group

}  // namespace tc
