// One walk over a linear program (codegen/linearize.h) for every renderer: each op goes to the
// rule its renderer's table holds for it, and what the rule returns is the text the op's users
// read, as tinygrad's cstyle.py renders through its string_rewrite table. A renderer is its table
// and what it writes around the walk (a kernel's signature, its declarations).
#pragma once

#include <array>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "tinycore/uop/uop.h"

namespace tc::renderer {

// The unary ops that are a math function of the same name in C (expf) and in LLVM (llvm.exp).
inline constexpr std::pair<Ops, const char*> kMathFunctions[] = {
    {Ops::EXP2, "exp2"}, {Ops::EXP, "exp"},   {Ops::LOG2, "log2"},
    {Ops::SIN, "sin"},   {Ops::SQRT, "sqrt"}, {Ops::TRUNC, "trunc"}};

class Walk {
 public:
  // How an op renders: writes its lines and returns the text its users read (a variable, a
  // register). `operands` are the texts of an ALU op's sources; other ops (loops, loads,
  // stores) read their sources their own way and get none.
  using Operands = std::vector<std::string>;
  using Rule = std::function<std::string(const UOp& u, const Operands& operands)>;
  // How an op whose users read nothing of it renders (a loop's end, a store).
  using Statement = std::function<void(const UOp& u)>;

  // Renders `u` through its rule; its users read what the rule returned.
  void render(const UOp& u);

 protected:
  explicit Walk(std::string renderer) : renderer_(std::move(renderer)) {}
  virtual ~Walk() = default;

  // The table: `rule` renders each of `ops`, or each op of a group (group::is_binary).
  void rule(std::initializer_list<Ops> ops, const Rule& rule);
  void rule(std::initializer_list<Ops> ops, const Statement& statement);
  void rule(bool (*in_group)(Ops), const Rule& rule);
  // The text an ALU op `user` reads for its source `x`.
  virtual std::string operand(const UOp& user, const UOpRef& x) = 0;
  // The text a rendered op's users read; throws for an op not rendered yet.
  const std::string& value(const UOp& u) const;

  absl::flat_hash_map<const UOp*, std::string> values_;  // of the ops rendered

 private:
  std::string renderer_;  // names the renderer in errors
  std::array<Rule, kNumOps> rules_;
};

}  // namespace tc::renderer
