#include "tinycore/uop/ops.h"

namespace tc {

const char* op_name(Ops op) {
  static const char* const names[] = {
#define TC_OP_NAME(name) #name,
      TC_OPS(TC_OP_NAME)
#undef TC_OP_NAME
  };
  return names[static_cast<int>(op)];
}

namespace group {
bool is_unary(Ops op) {
  switch (op) {
    case Ops::EXP2: case Ops::EXP: case Ops::LOG2: case Ops::SIN: case Ops::SQRT: case Ops::RECIP:
    case Ops::NEG: case Ops::TRUNC: case Ops::CAST: case Ops::BITCAST: return true;
    default: return false;
  }
}
bool is_binary(Ops op) {
  switch (op) {
    case Ops::ADD: case Ops::SUB: case Ops::MUL: case Ops::FDIV: case Ops::IDIV: case Ops::MOD:
    case Ops::MAX: case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ: case Ops::AND: case Ops::OR:
    case Ops::XOR: case Ops::SHL: case Ops::SHR: return true;
    default: return false;
  }
}
bool is_ternary(Ops op) { return op == Ops::WHERE || op == Ops::MULACC || op == Ops::DOT4; }
bool is_movement(Ops op) {
  switch (op) {
    case Ops::RESHAPE: case Ops::PERMUTE: case Ops::EXPAND: case Ops::PAD: case Ops::SHRINK:
    case Ops::FLIP: return true;
    default: return false;
  }
}
bool is_commutative(Ops op) {
  switch (op) {
    case Ops::ADD: case Ops::MUL: case Ops::MAX: case Ops::CMPNE: case Ops::CMPEQ: case Ops::AND:
    case Ops::OR: case Ops::XOR: return true;
    default: return false;
  }
}
bool is_comparison(Ops op) { return op == Ops::CMPLT || op == Ops::CMPNE || op == Ops::CMPEQ; }
}  // namespace group

}  // namespace tc
