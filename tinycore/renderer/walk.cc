#include "tinycore/renderer/walk.h"

#include "tinycore/error.h"

namespace tc::renderer {

void Walk::render(const UOp& u) {
  const Rule& rule = rules_[static_cast<size_t>(u.op)];
  TC_CHECK(rule != nullptr, renderer_, ": cannot render ", op_name(u.op));
  Operands operands;
  if (group::is_alu(u.op))
    for (const UOpRef& x : u.src) operands.push_back(operand(u, x));
  std::string value = rule(u, operands);
  if (!value.empty()) values_[&u] = std::move(value);
}

void Walk::rule(std::initializer_list<Ops> ops, const Rule& rule) {
  for (Ops op : ops) rules_[static_cast<size_t>(op)] = rule;
}

void Walk::rule(std::initializer_list<Ops> ops, const Statement& statement) {
  rule(ops, [statement](const UOp& u, const Operands&) {
    statement(u);
    return "";
  });
}

void Walk::rule(bool (*in_group)(Ops), const Rule& rule) {
  for (int op = 0; op < kNumOps; op++)
    if (in_group(static_cast<Ops>(op))) rules_[static_cast<size_t>(op)] = rule;
}

const std::string& Walk::value(const UOp& u) const {
  auto it = values_.find(&u);
  TC_CHECK(it != values_.end(), renderer_, ": ", op_name(u.op), " used before it was defined");
  return it->second;
}

}  // namespace tc::renderer
