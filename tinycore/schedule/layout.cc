#include "tinycore/schedule/layout.h"

#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

namespace tc::schedule {
namespace {

// The node Tensor.reshape builds (a reshape of a reshape is one, an identity is none), so a copy
// made here is the very graph the Tensor ops would make.
UOpRef reshape(const UOpRef& u, const Shape& s) {
  if (u->shape() == s) return u;
  const UOpRef& base = u->op == Ops::RESHAPE ? u->src[0] : u;
  return base->shape() == s ? base : UOp::make(Ops::RESHAPE, u->dtype, {base}, s);
}

// `t` read from a contiguous copy laid out as (size/block, the other axes in order, block) for
// axis `axis` of length `size` (block divides it; block == size moves the axis last), viewed back
// in t's shape: a kernel's SIMD lanes along that axis read one stream of memory per block (not one
// element every row), whatever t's own layout.
UOpRef blocked_copy(const UOpRef& t, int axis, int64_t block) {
  const int64_t size = t->shape()[axis];
  const bool split = block != size;  // else the axis only moves last
  Shape cut = t->shape();
  if (split) cut[axis] = size / block, cut.insert(cut.begin() + axis + 1, block);
  const int inner = split ? axis + 1 : axis, cut_nd = static_cast<int>(cut.size());
  std::vector<int64_t> order;  // the block index outermost, the other axes, the block innermost
  if (split) order.push_back(axis);
  for (int j = 0; j < cut_nd; j++)
    if (j != inner && !(split && j == axis)) order.push_back(j);
  order.push_back(inner);
  std::vector<int64_t> back(order.size());
  for (int j = 0; j < cut_nd; j++) back[order[j]] = j;
  // (the rules never make an identity order, which Tensor.permute would skip)
  UOpRef in = UOp::make(Ops::PERMUTE, t->dtype, {reshape(t, cut)}, order);
  UOpRef copy = UOp::make(Ops::CONTIGUOUS, t->dtype, {in});
  return reshape(UOp::make(Ops::PERMUTE, t->dtype, {copy}, back), t->shape());
}

// A walk down from a reduce, first to the product it sums (under its casts), then to one of the
// product's operands, remembering the source taken at each step, so that the reduce can be rebuilt
// with the node reached replaced.
class Path {
 public:
  explicit Path(UOpRef r) : at_(std::move(r)) {
    for (down(); skip(Ops::CAST);) continue;
  }
  const UOpRef& at() const { return at_; }
  void down(size_t i = 0) { steps_.push_back({at_, i}), at_ = at_->src[i]; }
  bool skip(Ops op) { return at_->op == op && (down(), true); }
  UOpRef rebuild(UOpRef to) const {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      std::vector<UOpRef> src = it->first->src;
      src[it->second] = std::move(to);
      to = it->first->replace(std::move(src));
    }
    return to;
  }

 private:
  std::vector<std::pair<UOpRef, size_t>> steps_;
  UOpRef at_;
};

// Whether the reduce `r` sums over exactly the axes [from, from + count).
bool sums(const UOp& r, int64_t from, int64_t count) {
  std::vector<int64_t> want = {static_cast<int64_t>(Ops::ADD)};
  for (int64_t a = from; a < from + count; a++) want.push_back(a);
  return r.arg_ints() == want;
}
bool multiplies(const UOp& u) { return u.op == Ops::MUL || u.op == Ops::AND; }  // AND: of bools

// A reshape that only puts 1s before its source's shape (the first step of a broadcast).
bool leading_ones(const UOp& u) {
  if (u.op != Ops::RESHAPE) return false;
  Shape out = u.shape();
  while (out.size() > u.src[0]->shape().size() && out[0] == 1) out.erase(out.begin());
  return out == u.src[0]->shape();
}

// Whether u is the transpose of its source's last two axes (the others in place).
bool transposes_last_two(const UOp& u) {
  const int nd = static_cast<int>(u.shape().size());
  if (u.op != Ops::PERMUTE || nd < 2) return false;
  std::vector<int64_t> swap(nd - 2);
  std::iota(swap.begin(), swap.end(), 0), swap.insert(swap.end(), {nd - 1, nd - 2});
  return u.arg_ints() == swap;
}

// ---------------------------------------------------------------- the rules

// The product of matmul_columns with x read from a copy blocked by 32 rows, (M/32, K, 32), when x
// is a transpose (a weight gradient's dyᵀ or xᵀ) of M a multiple of 32: a register tile of rows
// then reads one run of memory per step of k, not a few elements from each of K rows M elements
// apart (rows 4 KB apart share one cache set, and missed every cache: dyᵀ x at 0.3 of peak).
UOpRef transposed_rows(const UOpRef& r) {
  Path p(r);
  p.down(0);  // x as the multiply broadcast it: (..., M, 1, K) expanded
  p.skip(Ops::EXPAND);
  p.skip(Ops::RESHAPE);
  p.skip(Ops::CAST);
  p.skip(Ops::DETACH);
  const int xn = static_cast<int>(p.at()->shape().size());
  if (!transposes_last_two(*p.at()) || p.at()->shape()[xn - 2] % 32 != 0) return r;
  return p.rebuild(blocked_copy(p.at(), xn - 2, 32));
}

// matmul (dot, linear, attention, and the gradients of a product, products too): x (..., M, K)
// times w (..., K, N) is x[..., m, 1, k] * wᵀ[..., 1, n, k] summed over k. w is read from a copy
// blocked by 32 columns, (..., N/32, K, 32), when K and N are at least 64, N is a multiple of 32
// and at least 64 rows stream past each block (M, or every row of x when w is one matrix): the 32
// columns a kernel's lanes read are one run of memory per panel, which stays in cache (and in the
// TLB) while every row of x streams past it, instead of K rows a page apart, and which the lanes
// read whole whatever w's own layout (a transposed weight, attention's keys). Small products read
// w as it is: the copy would cost more than it saves.
UOpRef matmul_columns(const UOpRef& r) {
  Path p(r);
  const Shape s = p.at()->shape();  // (..., M, N, K)
  const int nd = static_cast<int>(s.size());
  if (!multiplies(*p.at()) || nd < 3 || !sums(*r, nd - 1, 1)) return nullptr;
  p.down(1);  // wᵀ as the multiply broadcast it
  p.skip(Ops::EXPAND);
  if (leading_ones(*p.at())) p.down();
  p.skip(Ops::CAST);
  const int wn = static_cast<int>(p.at()->shape().size());
  if (wn < 3 || !transposes_last_two(*p.at())) return nullptr;
  p.down();
  const Shape& ws = p.at()->shape();  // w's batch axes, 1, K, N
  const int64_t k = ws[wn - 2], n = ws[wn - 1];
  if (ws[wn - 3] != 1 || k < 64 || n < 64 || n % 32 != 0) return nullptr;
  Shape w(ws);
  w.erase(w.end() - 3);
  if ((w.size() > 2 ? s[nd - 3] : shape_numel(s) / (n * k)) < 64) return nullptr;
  return transposed_rows(p.rebuild(reshape(blocked_copy(reshape(p.at(), w), wn - 2, 32), ws)));
}

// conv of a 1x1 window with a stride (a ResNet downsample block's shortcut): its windows read x at
// a quarter of x's positions, so a kernel reading x in place pulls 4x the memory through its cache
// once per block of output channels (ResNet-50's at batch 8 ran at 0.4-0.6 of the same conv
// unstrided). x is read from a compact copy of the positions its windows read: the view of x
// with the fewest elements, below its broadcast over the output channels.
UOpRef strided_pointwise_input(const UOpRef& r) {
  Path p(r);
  const Shape s = p.at()->shape();
  const int nd = static_cast<int>(s.size()), n = (nd - 4) / 2;
  if (!multiplies(*p.at()) || nd < 6 || nd % 2 != 0 || !sums(*r, n + 3, n + 1)) return r;
  for (int i = nd - n; i < nd; i++)
    if (s[i] != 1) return r;
  p.down(0);  // x's windows as the multiply broadcast them
  int steps = 0, fewest_at = 0;
  int64_t fewest = shape_numel(p.at()->shape());
  UOpRef x = p.at();
  for (; group::is_movement(x->op); x = x->src[0], steps++)
    if (shape_numel(x->shape()) < fewest) fewest = shape_numel(x->shape()), fewest_at = steps;
  if (shape_numel(x->shape()) < 2 * fewest) return r;
  for (int i = 0; i < fewest_at; i++) p.down();
  return p.rebuild(UOp::make(Ops::CONTIGUOUS, p.at()->dtype, {p.at()}));
}

// conv (conv_transpose and the input gradient are convs): the window view of x, (bs, groups, rcout,
// *oyx, cin, *HW), times the weight as (1, groups, rcout, 1.., cin, *HW), summed over (cin, *HW).
// With at least 8 output channels per group, enough to fill SIMD lanes, the weight (cout, cin, *HW)
// is read from a copy in blocks of 32 output channels, (cout/32, cin, *HW, 32) (or (cin, *HW,
// cout) when the channels per group are not a multiple of 32): consecutive output channels are
// adjacent, so the conv kernel may put its lanes on cout whatever the spatial size or stride, and
// the block its lanes read is one stream of memory (not a row every cout floats, which would touch
// a page per step of the reduce).
UOpRef conv_output_channels(const UOpRef& r) {
  Path p(r);
  const Shape s = p.at()->shape();
  const int nd = static_cast<int>(s.size()), n = (nd - 4) / 2;  // n spatial axes
  if (!multiplies(*p.at()) || nd < 6 || nd % 2 != 0 || !sums(*r, n + 3, n + 1)) return nullptr;
  p.down(1);  // the weight as the multiply broadcast it
  p.skip(Ops::EXPAND);
  p.skip(Ops::CAST);
  const Shape& ws = p.at()->shape();
  bool weight = ws.size() == s.size() && ws[0] == 1;
  for (int i = 1; i < nd; i++) weight = weight && ws[i] == (i >= 3 && i < 3 + n ? 1 : s[i]);
  if (!weight || ws[2] < 8) return nullptr;
  Shape w = {ws[1] * ws[2]};
  w.insert(w.end(), ws.begin() + 3 + n, ws.end());
  return strided_pointwise_input(
      p.rebuild(reshape(blocked_copy(reshape(p.at(), w), 0, ws[2] % 32 == 0 ? 32 : w[0]), ws)));
}

// conv's weight gradient (ungrouped): the gradient (bs, cout, *oyx) times the input's windows, as
// (*HW, cin, cout, bs, *oyx), summed over (bs, *oyx) in the order (*HW, other channels, bs, *oyx,
// lane channels): the Tensor op puts cin on the kernel's SIMD lanes, or cout with fewer than 8
// input channels (a first conv on images), and a register tile over the other channels shares each
// load. The operand carrying the lane channels, the input or the gradient (bs, c, *spatial), is
// read from a copy blocked by 32 channels, (c/32, bs, *spatial, 32), or channels-last, (bs,
// *spatial, c), when c is not a multiple of 32: the block the lanes read is one stream of memory
// over the whole sum (channels-last reads 128 bytes every c floats, which at 256-512 channels share
// a few cache sets: ResNet-50's 1x1 weight gradients at batch 8 ran at 0.3 of oneDNN, 0.6-0.9 now).
UOpRef conv_weight_gradient_channels(const UOpRef& r) {
  Path p(r);
  if (p.at()->op != Ops::PERMUTE) return nullptr;
  const std::vector<int64_t> to_sum = p.at()->arg_ints();
  p.down();
  const Shape s = p.at()->shape();
  const int nd = static_cast<int>(s.size()), n = (nd - 3) / 2;  // n spatial axes
  if (!multiplies(*p.at()) || nd < 5 || nd % 2 == 0 || !sums(*r, n + 1, n + 1)) return nullptr;
  const int64_t lane = to_sum.back();  // n (cin) or n + 1 (cout)
  if (lane != n && lane != n + 1) return nullptr;
  std::vector<int64_t> order(nd), cout_first = {1, 0};
  std::iota(order.begin(), order.end(), 0);
  order.erase(order.begin() + lane), order.push_back(lane);
  for (int j = 0; j < n; j++) cout_first.push_back(2 + j);
  if (to_sum != order) return nullptr;
  if (lane == n) {  // the input under its windows' views
    p.down(0);
    while (group::is_movement(p.at()->op) || p.at()->op == Ops::CAST) p.down();
  } else {  // the gradient, as (1.., 1, cout, bs, *oyx)
    p.down(1);
    p.skip(Ops::EXPAND);
    p.skip(Ops::CAST);
    if (!p.skip(Ops::RESHAPE) || p.at()->op != Ops::PERMUTE || p.at()->arg_ints() != cout_first)
      return nullptr;
    p.down();
  }
  const Shape& t = p.at()->shape();  // (bs, lane channels, *spatial)
  if (static_cast<int>(t.size()) != n + 2 || t[0] != s[n + 2] || t[1] != s[lane]) return nullptr;
  return p.rebuild(blocked_copy(p.at(), 1, t[1] % 32 == 0 ? 32 : t[1]));
}

}  // namespace

const PatternMatcher& choose_layouts() {
  auto on_reduce = [](UOpRef (*rule)(const UOpRef&)) {
    return PatternMatcher::Rule{UPat::op(Ops::REDUCE_AXIS).no_src_check().named("r"),
                                [rule](const Captures& c) { return rule(c["r"]); }};
  };
  static const PatternMatcher pm({on_reduce(matmul_columns), on_reduce(conv_output_channels),
                                  on_reduce(conv_weight_gradient_channels)});
  return pm;
}

std::vector<const UOp*> contraction_operands(const UOp& r) {
  if (static_cast<Ops>(r.arg_ints()[0]) != Ops::ADD) return {};
  UOpRef m = r.src[0];
  while (m->op == Ops::CAST) m = m->src[0];
  if (m->op != Ops::MUL) return {};
  std::vector<const UOp*> out;
  for (UOpRef s : m->src) {
    while (group::is_movement(s->op) || s->op == Ops::CAST || s->op == Ops::DETACH) s = s->src[0];
    out.push_back(s.get());
  }
  return out;
}

}  // namespace tc::schedule
