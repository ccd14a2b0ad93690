#include "tinycore/schedule/schedule.h"

#include <algorithm>
#include <functional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/device.h"
#include "tinycore/schedule/layout.h"
#include "tinycore/schedule/split_reduce.h"
#include "tinycore/schedule/write_order.h"

namespace tc::schedule {

namespace {

bool expands(const UOp& u) {
  if (u.op != Ops::EXPAND) return false;
  const Shape& in = u.src[0]->shape();
  for (size_t i = 0; i < in.size(); i++)
    if (in[i] != u.shape()[i]) return true;
  return false;
}

class Scheduler {
 public:
  // `roots` are every value this schedule computes. A reduce read in more than one place (by two
  // nodes, or from two roots) is shared: it gets its own kernel instead of being recomputed by
  // each reader.
  Scheduler(const std::vector<UOpRef>& roots, std::vector<UOpRef>* marked) : marked_(marked) {
    for (const UOpRef& r : roots) {
      users_[r.get()]++;
      for (const UOp* u : r->toposort()) {
        if (++reaching_roots_[u] > 1) continue;  // its sources are counted already
        uint64_t w = u->op == Ops::BUFFER ? u->buffer->version() : 0;
        for (const UOpRef& s : u->src) w = std::max(w, last_write_[s.get()]);  // seen already
        last_write_[u] = w;
        absl::flat_hash_set<const UOp*> srcs;
        // a custom gradient's other sources are for its gradient rule: never computed here
        size_t read = u->op == Ops::CUSTOM_GRAD ? 1 : u->src.size();
        for (size_t i = 0; i < read; i++)
          if (srcs.insert(u->src[i].get()).second)
            users_[u->src[i].get()]++, readers_[u->src[i].get()].push_back(u);
      }
    }
    for (const UOpRef& r : roots) roots_.insert(r.get());
  }

  // The buffer view holding `n`'s value, scheduling the kernels that compute it.
  UOpRef realize(const UOpRef& n) {
    if (UOpRef r = fresh_realized(n)) return r;
    if (is_contiguous_buffer(n)) return n;
    if (n->op == Ops::CUSTOM || n->op == Ops::COPY) return run_on_host(n);
    if (n->op == Ops::CONTIGUOUS || n->op == Ops::CUSTOM_GRAD || n->op == Ops::DETACH) {
      // the source's kernel writes the (contiguous) result itself, and other readers of the
      // source (conv's detached input beside a residual add) read that buffer too
      UOpRef view = realize(n->src[0]);
      mark_realized(n, view);
      return view;
    }
    // a view of a value decoded from packed bytes is copied from the value decoded in its own
    // layout, into a buffer of this schedule's: not marked realized, so the decoded weight is not
    // kept (the model's stays packed)
    UOpRef value = n;
    if (UOpRef base = decoded_under_views(n)) value = rebased(n, base, computed(base));
    UOpRef view = computed(value);
    if (view->op != Ops::PERMUTE) mark_realized(n, view);  // (a permuted store's permutes are)
    forget_fused();
    return view;
  }

  // A kernel of its own computing `n` into a new buffer: the buffer's view in n's shape.
  UOpRef computed(const UOpRef& n) {
    const UOp* row = std::exchange(row_, nullptr);  // no row or gather around it
    const bool gather = std::exchange(gather_, false);
    size_t kernels = items_.size();
    UOpRef value = compute(n, /*top=*/true);
    if (split_contractions(n) || items_.size() > kernels) {
      // what it realized on the way (a softmax's input, for its max) may be inlined in the parts
      // fused before: fused again, they read its buffer instead of computing it twice
      forget_fused();
      value = compute(n, /*top=*/true);
    }
    row_ = row, gather_ = gather;
    UOpRef out = new_buffer(device_of(value), n->dtype, shape_numel(n->shape()));
    if (auto [order, permutes] = read_order(n.get()); !order.empty()) {
      // the permutes read the buffer as it is laid out, and are what is marked realized: a
      // tensor holding n itself (a keepdim max) finds it unrealized, not a view of other bytes
      UOpRef stored = UOp::make(Ops::PERMUTE, n->dtype, {value}, order);
      emit(out, stored);
      for (const UOp* p : permutes)
        mark_realized(p->ref(), UOp::make(Ops::RESHAPE, n->dtype, {out}, p->shape()));
      std::vector<int64_t> back(order.size());
      for (size_t j = 0; j < order.size(); j++) back[order[j]] = static_cast<int64_t>(j);
      UOpRef view = UOp::make(Ops::RESHAPE, n->dtype, {out}, stored->shape());
      return UOp::make(Ops::PERMUTE, n->dtype, {view}, back);
    }
    emit(out, value);
    return n->shape() == out->shape() ? out : UOp::make(Ops::RESHAPE, n->dtype, {out}, n->shape());
  }

  // The nodes of this schedule's graph that read u (each once).
  std::vector<const UOp*> readers_of(const UOp* u) const {
    return readers_.contains(u) ? readers_.at(u) : std::vector<const UOp*>{};
  }
  // The order of n's axes its readers all read it in, when that is one permutation of them
  // (through reshapes that only add or drop axes of 1) read as it is (not moved on), and n is no
  // root: a weight's gradient, which its matmul sums transposed, stored as the weight is laid out,
  // so that the optimizer's updates read it contiguous rather than gather it (ResNet-50's 3x3 conv
  // weights, GPT's linear ones); and those permutes. Empty when n is read in its own order.
  std::pair<std::vector<int64_t>, std::vector<const UOp*>> read_order(const UOp* n) const {
    if (n->op != Ops::REDUCE_AXIS) return {};  // (a decoded weight is decoded in its own order)
    auto kept = [](const Shape& s, bool sizes = false) {  // the axes of more than 1, or sizes
      std::vector<int64_t> out;
      for (size_t i = 0; i < s.size(); i++)
        if (s[i] != 1) out.push_back(sizes ? s[i] : static_cast<int64_t>(i));
      return out;
    };
    const std::vector<int64_t> axes = kept(n->shape());
    const UOp *r = n, *q;  // on through nodes that pass the value on unchanged
    for (; readers_of(r).size() == 1 && !roots_.contains(r); r = q) {
      q = readers_of(r)[0];
      if ((q->op != Ops::RESHAPE && q->op != Ops::CUSTOM_GRAD && q->op != Ops::DETACH) ||
          kept(q->shape(), true) != kept(n->shape(), true))
        break;
    }
    const std::vector<const UOp*> readers = readers_of(r);
    if (readers.empty() || roots_.contains(r)) return {};
    for (const UOp* p : readers) {  // each read as it is: not moved on (heads merged, say),
      // and not realized itself (a root, a copy), which would compute n again
      if (p->op != Ops::PERMUTE || p->arg_ints() != readers[0]->arg_ints() || roots_.contains(p))
        return {};
      for (const UOp* q : readers_of(p))
        if (group::is_movement(q->op) || q->op == Ops::CONTIGUOUS || q->op == Ops::COPY ||
            q->op == Ops::CUSTOM)
          return {};
    }
    // n's axes in the order the permutation reads r's, then n's axes of 1
    std::vector<int64_t> order, of_r = kept(r->shape());
    for (int64_t i : readers[0]->arg_ints())
      if (auto k = std::find(of_r.begin(), of_r.end(), i); k != of_r.end())
        order.push_back(axes[k - of_r.begin()]);
    if (std::is_sorted(order.begin(), order.end())) return {};  // the same bytes
    for (size_t j = 0; j < n->shape().size(); j++)
      if (n->shape()[j] == 1) order.push_back(static_cast<int64_t>(j));
    return {order, readers};
  }

  // The views `v` down to `base`, over `value` instead.
  static UOpRef rebased(const UOpRef& v, const UOpRef& base, const UOpRef& value) {
    return v == base ? value : v->replace({rebased(v->src[0], base, value)});
  }

  // Writes `n`'s value into the buffer behind the contiguous view `target`.
  void realize_into(const UOpRef& n, const UOpRef& target) {
    auto aside = aside_.find(n.get());
    UOpRef value = aside != aside_.end() ? aside->second : fresh_realized(n);
    if (!value) value = fuse(n, /*top=*/true);
    if (value == target) return;  // already there
    if (!reads_elementwise(value, target)) {
      // computed into its own buffer first: the kernel would overwrite what it still reads
      value = realize(n);
    }
    emit(base_buffer(target), value);
    base_buffer(target)->buffer->bump_version();  // values cached from the old contents are stale
    // later roots holding n read its new value there; a constant (no buffer read) is computed
    // where it is read: the same node may be a piece on each of several devices
    if (device_read(n)) written_[n.get()] = target;
    forget_fused();  // fused reads of the old contents are stale too
  }

  // `n`'s value now, kept for realize_into: in a buffer of its own when it is a view of one of
  // `targets` (a swap's), which a write before n's would change.
  void set_aside(const UOpRef& n, const absl::flat_hash_set<const UOp*>& targets) {
    UOpRef view = realize(n);
    aside_[n.get()] = targets.contains(base_buffer(view).get()) ? computed(n) : view;
  }

  std::vector<ScheduleItem> take() { return std::move(items_); }

 private:
  // A host function (Ops::CUSTOM) or a copy between devices (Ops::COPY, into a buffer on its
  // arg's device) as a kernel of its own: STORE(out, n(sources)), each source a whole buffer,
  // realized contiguous first.
  UOpRef run_on_host(const UOpRef& n) {
    std::vector<UOpRef> src;
    for (const UOpRef& s : n->src) {
      if (s->dtype != n->dtype || shape_numel(s->shape()) != shape_numel(n->shape()))
        fail("host function '%s': its sources differ in size or dtype (%s %s and %s %s)",
             std::get<std::string>(n->arg), n->dtype.name(), fmt_shape(n->shape()), s->dtype.name(),
             fmt_shape(s->shape()));
      src.push_back(base_buffer(realize(s)));
    }
    const std::string& from = src[0]->buffer->device().name();
    const bool copy = n->op == Ops::COPY;
    UOpRef out =
        new_buffer(copy ? std::get<std::string>(n->arg) : from, n->dtype, shape_numel(n->shape()));
    // a copy's kernel runs on its destination: its arg says where the bytes come from
    emit(out,
         copy ? UOp::make(Ops::COPY, n->dtype, std::move(src), from) : n->replace(std::move(src)));
    UOpRef view =
        n->shape() == out->shape() ? out : UOp::make(Ops::RESHAPE, n->dtype, {out}, n->shape());
    mark_realized(n, view);
    forget_fused();
    return view;
  }

  // The kernel writing `value` into `out`, unless `out` has no element: such a kernel does
  // nothing, and its index arithmetic (modulo a size of 0) is undefined in LLVM.
  void emit(const UOpRef& out, const UOpRef& value) {
    if (shape_numel(value->shape()) == 0) return;
    items_.push_back(build_item(out, value));
  }
  void mark_realized(const UOpRef& n, const UOpRef& view) {
    n->realized = view;
    n->realized_clock = runtime::Buffer::clock();
    if (marked_) marked_->push_back(n);
  }

  // A CONST or IOTA, or a movement of one: cheaper to compute than to load.
  static bool is_constant_view(const UOpRef& n) {
    if (n->op == Ops::CONST || n->op == Ops::IOTA) return true;
    return group::is_movement(n->op) && is_constant_view(n->src[0]);
  }

  // n's realized value, unless its buffer, or a buffer it was computed from, was written in
  // place since. Writes by this schedule (its assigns) are ordered by the schedule itself: a
  // value realized before one of them keeps the old contents it was computed from.
  UOpRef fresh_realized(const UOpRef& n) const {
    if (auto w = written_.find(n.get()); w != written_.end()) return w->second;
    if (!n->realized || base_buffer(n->realized)->buffer->version() > n->realized_clock ||
        n->realized_clock < runtime::Buffer::cache_floor())
      return nullptr;
    auto it = last_write_.find(n.get());
    if (it != last_write_.end() && it->second > n->realized_clock) return nullptr;
    return n->realized;
  }

  // `n` with every part that needs its own kernel replaced by that kernel's buffer. `top` is
  // true while every element of `n` is computed once per output element (no expand above it,
  // and no reduce above it).
  UOpRef fuse(const UOpRef& n, bool top) {
    auto key = std::make_tuple(n.get(), top, row_, gather_);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    const int64_t forgotten = forgotten_;
    UOpRef out;
    // a constant stays one even when it was realized: computing it is cheaper than loading it,
    // and the simplifier folds it
    if (UOpRef r = is_constant_view(n) ? nullptr : fresh_realized(n))
      out = r;
    else if (n->op == Ops::BUFFER || n->op == Ops::CONST || n->op == Ops::IOTA)
      out = n;
    else if (n->op == Ops::CONTIGUOUS || n->op == Ops::CUSTOM || n->op == Ops::COPY)
      out = realize(n->op == Ops::CONTIGUOUS ? n->src[0] : n);
    else if (n->op == Ops::CUSTOM_GRAD)  // only the value is computed
      out = fuse(n->src[0], top);
    else if (n->op == Ops::REDUCE_AXIS && (!top || shared(n)))
      out = realize(n);
    else if (UOpRef f = compute(n, top); group::is_alu(n->op) && reads_many(n, f))
      out = realize(n);
    else
      out = f;
    if (forgotten == forgotten_) memo_[key] = out;  // else it may hold what was realized since
    keep_.push_back(n);
    return out;
  }

  // `node` computed in the kernel being built, its sources fused into it. The source of an expand
  // that does arithmetic gets its own kernel (tinygrad's realize-before-expand): fused, each of
  // its elements would be recomputed once per broadcast copy. A reduce first gets the layouts of
  // its operands (layout.h): chosen here, per reduce, not by rewriting the graph before scheduling,
  // so that values realized stay marked on the graph's own nodes, which later schedules reuse.
  UOpRef compute(const UOpRef& node, bool top) {
    // a gather's operand is read at one position of its reduce per output (an embedding's row):
    // it takes no layout copy, and the work under its expands is done once per element read, not
    // once per copy
    const bool gather = node->op == Ops::REDUCE_AXIS ? gathering(node) : gather_;
    UOpRef laid = gather ? nullptr : choose_layouts().rewrite(node);
    const UOpRef& n = laid ? laid : node;
    if (n->op == Ops::REDUCE_AXIS)
      if (UOpRef s = split_reduces().rewrite(n)) return fuse(s, top);
    const bool outer_gather = std::exchange(gather_, gather);
    bool child_top = top && n->op != Ops::REDUCE_AXIS && !expands(*n);
    std::vector<UOpRef> src;
    for (const UOpRef& s : n->src) {
      if (expands(*n) && reads_rows(*n, s, top)) {
        const UOp* outer = std::exchange(row_, n.get());
        src.push_back(fuse(s, /*top=*/true));
        row_ = outer;
        continue;
      }
      // judged on s fused as a kernel of its own would be (parts that get kernels of their own
      // anyway are buffers there); a padded buffer is copied padded once rather than have every
      // broadcast copy check its bounds per load (a conv's input windows), unless its pads are
      // wide enough that the kernel narrows its loops to them instead (pads_widely)
      bool own = expands(*n) && !gather_ &&
                 (computes(fuse(s, /*top=*/true)) || (pads_a_buffer(s) && !pads_widely(s))) &&
                 !few_copies(*n, s);
      src.push_back(own ? realize_under_views(s) : fuse(s, child_top));
    }
    gather_ = outer_gather;
    return n->replace(std::move(src));
  }

  // Contractions (sums of products: matmuls, convs) that one output adds or multiplies, each over
  // operands of its own (a ResNet downsample block's last conv plus its strided shortcut conv):
  // all but the longest get kernels of their own, which the output's kernel reads. Fused, their
  // loop nests share one choice of lanes and tiles, made for neither (ResNet-50's at batch 8 took
  // 14-23 ms; split, 3-10 each). Two over one operand (SwiGLU's gate and up projections of x) stay
  // fused, sharing its loads; so do gathers (a one-hot's product). Asked of the kernel once fused,
  // so that what it realized on the way (an activation a conv reads through its windows) ends the
  // search. True when it realized any.
  bool split_contractions(const UOpRef& root) {
    std::vector<UOpRef> found;
    absl::flat_hash_set<const UOp*> seen;
    std::function<void(const UOpRef&)> walk = [&](const UOpRef& u) {
      if (!seen.insert(u.get()).second || fresh_realized(u)) return;
      if (u->op == Ops::REDUCE_AXIS) {
        if (!gathering(u) && contraction_operands(*u).size() == 2) found.push_back(u);
      } else if (u->op == Ops::CUSTOM_GRAD) {  // its value alone
        walk(u->src[0]);
      } else if (group::is_alu(u->op) || u->op == Ops::CAST || u->op == Ops::DETACH ||
                 u->op == Ops::RESHAPE || u->op == Ops::PERMUTE) {
        for (const UOpRef& s : u->src) walk(s);
      }
    };
    walk(root);
    if (found.size() < 2) return false;
    absl::flat_hash_set<const UOp*> read;
    for (const UOpRef& c : found)
      for (const UOp* o : contraction_operands(*c))
        if (!read.insert(o).second) return false;
    auto length = [](const UOpRef& c) {
      return shape_numel(c->src[0]->shape()) / shape_numel(c->shape());
    };
    std::stable_sort(found.begin(), found.end(),
                     [&](const UOpRef& a, const UOpRef& b) { return length(a) > length(b); });
    for (size_t i = 1; i < found.size(); i++) realize(found[i]);
    return true;
  }

  // Arithmetic on reduces over the trailing axes, read back along them (softmax's max and sum, a
  // layernorm's mean and variance), is computed in the kernel that reads it: codegen runs each
  // reduce once per row, before the row's own loop (linearize.h), and a row of at most
  // kRowElements stays in cache from one pass to the next, where a kernel of its own would have
  // its reader fetch every row from memory again. Only where the expand's position is the
  // output's (top) or within a reduce of the same rows (a variance's mean), and only on the CPU:
  // a GPU's output loops are its launch grid, where every thread would reduce the row again.
  bool reads_rows(const UOp& expand, const UOpRef& s, bool top) {
    std::vector<int64_t> axes = broadcast_axes(expand);
    const Shape& out = expand.shape();
    int64_t row = 1;
    for (int64_t a : axes) row *= out[a];
    for (size_t i = axes.empty() ? 0 : axes[0]; i < out.size(); i++)  // trailing axes only
      if (out[i] != 1 && std::find(axes.begin(), axes.end(), int64_t(i)) == axes.end())
        return false;
    if (axes.empty() || row > kRowElements) return false;
    if (!top && (!row_ || row_->shape() != out || broadcast_axes(*row_) != axes)) return false;
    // the reduces under s, through arithmetic on them and on constants or one value per row
    bool reduces = false;
    absl::flat_hash_set<const UOp*> seen;  // a node seen passed (a failure ends the walk)
    std::function<bool(const UOpRef&)> rows = [&](const UOpRef& u) {
      if (!seen.insert(u.get()).second) return true;
      if (u->op == Ops::REDUCE_AXIS) {
        // its output has s's shape (arithmetic keeps shapes): from the expand's shape, it reduces
        // exactly the broadcast axes
        reduces = true;
        return !shared(u) && u->src[0]->shape() == out;
      }
      if (group::is_alu(u->op) || u->op == Ops::CAST || u->op == Ops::DETACH)
        return std::all_of(u->src.begin(), u->src.end(), rows);
      return work(u) < 0 || is_contiguous_buffer(u);
    };
    if (!rows(s) || !reduces) return false;
    return runtime::get_device(device_of(s)).language() == runtime::Language::kLlvm;
  }
  static constexpr int64_t kRowElements = 16384;

  // The axes an expand broadcasts (from size 1).
  static std::vector<int64_t> broadcast_axes(const UOp& expand) {
    std::vector<int64_t> axes;
    const Shape& in = expand.src[0]->shape();
    for (size_t i = 0; i < in.size(); i++)
      if (in[i] == 1 && expand.shape()[i] != 1) axes.push_back(static_cast<int64_t>(i));
    return axes;
  }

  // An expand to a few copies of elementwise work (a decode step's few rows over a dequantized
  // weight) recomputes it per copy: a register tile of rows computes it once, where its own kernel
  // would write it out and read it back. A few is 8, or for a value decoded from packed bytes (a
  // bitcast) 8 times how much larger it is than the buffers it reads: a Q4_0 weight decoded to
  // float32 is 7x its blocks, so a short prompt's 16 or 32 rows read the blocks too, rather than a
  // decoded copy 7 times their size written and read back.
  bool few_copies(const UOp& e, const UOpRef& s) {
    double copies = static_cast<double>(shape_numel(e.shape())) / shape_numel(s->shape());
    UOpRef f = fuse(s, /*top=*/true);
    return (copies <= 8 || copies <= 8 * growth(f)) && work(f) < kManyOps;
  }

  // How many times larger the fused value `f` is than the buffers it reads, where it decodes
  // packed bytes (a bitcast); else 1. Kept per node, as work() is.
  double growth(const UOpRef& f) {
    if (auto it = growth_.find(f); it != growth_.end()) return it->second;
    double read = 0, made = static_cast<double>(shape_numel(f->shape())) * f->dtype.itemsize();
    bool decodes = false;
    for (const UOp* u : f->toposort()) {
      decodes = decodes || u->op == Ops::BITCAST;
      if (u->op == Ops::BUFFER)
        read += static_cast<double>(shape_numel(u->shape())) * u->dtype.itemsize();
    }
    return growth_[f] = decodes && read > 0 ? std::max(1.0, made / read) : 1.0;
  }

  // The value `v` is a view of (through a pad, reshape, permute, flip or detach, or a pad with a
  // non-zero fill: where(padded mask, pad(x), fill)), or nullptr.
  UOpRef viewed(const UOpRef& v) {
    if (v->op == Ops::PAD || v->op == Ops::RESHAPE || v->op == Ops::PERMUTE || v->op == Ops::FLIP ||
        v->op == Ops::DETACH)
      return v->src[0];
    if (v->op == Ops::WHERE && v->src[1]->op == Ops::PAD && work(v->src[0]) < 0 &&
        work(v->src[2]) < 0)
      return v->src[1];
    return nullptr;
  }

  // Whether `s` is a view of a padded buffer.
  bool pads_a_buffer(const UOpRef& s) {
    bool padded = false;
    UOpRef v = s;
    for (UOpRef next; (next = viewed(v)); v = next) padded = padded || v->op == Ops::PAD;
    return padded && is_contiguous_buffer(v);
  }

  // Whether the pads among the views `s` is (see viewed) fill with zeros, at least 2 wide on
  // every side they pad and a fifth of the padded extent: a transposed conv's gradient, 4 wide on
  // each side of 20 rows for a 5x5 window. Read in place, under their bounds, they let the kernel
  // narrow its window's loops to where those hold (codegen/narrow.h), where a padded copy would
  // have it multiply every zero. Narrower pads (ResNet's 3 around 128 rows) waste too little to
  // pay for loops of varying length, which LLVM cannot unroll.
  bool pads_widely(const UOpRef& s) {
    bool padded = false;
    for (UOpRef v = s, next; (next = viewed(v)); v = next) {
      if (v->op == Ops::WHERE) return false;  // a fill other than zero
      if (v->op != Ops::PAD) continue;
      const std::vector<int64_t>& a = v->arg_ints();
      for (size_t i = 0; 2 * i < a.size(); i++) {
        int64_t before = a[2 * i], after = a[2 * i + 1];
        if (before + after == 0) continue;
        if (before == 1 || after == 1 || 5 * (before + after) < v->shape()[i]) return false;
      }
      padded = true;
    }
    return padded;
  }

  // realize(s) for an expand's source s. When s is a view (see viewed) of a value that others
  // read too (an activation that is the next conv's padded input and a residual add's operand),
  // or of a reduce (a conv's output), that value gets its own kernel first: every reader shares
  // its buffer instead of recomputing it, and a conv computes its plain output rather than the
  // padding around it. The padded copy is then a cheap kernel of
  // its own, so the next conv reads plain memory rather than checking bounds per load.
  UOpRef realize_under_views(const UOpRef& s) {
    bool padded = false, wide = pads_widely(s);
    UOpRef v = s;
    for (UOpRef next; (next = viewed(v)); v = next) {
      padded = padded || v->op == Ops::PAD;
      int w = work(fuse(next, /*top=*/true));
      if (!viewed(next) && ((shared(next) && w >= 2) || w >= kManyOps)) {
        realize(next);
        // the padded copy gets its kernel (unless its pads are wide); other views stay views of
        // next's buffer
        return padded && !wide ? realize(s) : fuse(s, /*top=*/true);
      }
    }
    if (!wide) return realize(s);
    realize(v);  // the value under the views, read in place through them
    return fuse(s, /*top=*/true);
  }

  // The value under n's views when n is a view (a transpose, a blocked layout) of a value decoded
  // from packed bytes (a quantized weight: its blocks' scales are bitcasts of them), else null.
  // Such a view is copied from the value decoded in its own layout: decoded through the view,
  // each element's block index arithmetic leaves the copy scalar (a Q4_0 8192 x 2048 weight's
  // transposed copy took 22-29 ms).
  UOpRef decoded_under_views(const UOpRef& n) {
    UOpRef v = n;
    while (group::is_movement(v->op) || v->op == Ops::CAST || v->op == Ops::DETACH) v = v->src[0];
    if (v == n || !group::is_alu(v->op)) return nullptr;
    std::vector<const UOp*> stack = {v.get()};  // v's own kernel: down to reduces and buffers
    for (absl::flat_hash_set<const UOp*> seen; !stack.empty();) {
      const UOp* u = stack.back();
      stack.pop_back();
      if (u->op == Ops::BITCAST) return v;
      if (seen.insert(u).second && u->op != Ops::REDUCE_AXIS && u->op != Ops::CONTIGUOUS &&
          !fresh_realized(u->ref()))
        for (const UOpRef& s : u->src) stack.push_back(s.get());
    }
    return nullptr;
  }

  // Fused forms made before a realize may hold the realized value inlined (judging an expand's
  // source fuses it): forgotten, so later readers of the value read its buffer instead of
  // recomputing it.
  void forget_fused() { memo_.clear(), forgotten_++; }

  bool shared(const UOpRef& n) const {
    auto users = users_.find(n.get()), roots = reaching_roots_.find(n.get());
    return (users != users_.end() && users->second > 1) ||
           (roots != reaching_roots_.end() && roots->second > 1);
  }

  // Whether the fused form `f` of `n`, which several nodes read (each perhaps in a kernel of its
  // own), reads so many buffers of n's size or more that every reader recomputing it costs more
  // than its own kernel writing it once: a ResNet's gradient down the residual stream, each
  // block's the sum of the next one's and its branch's, fused whole into each block's batchnorm
  // reduces read 9 buffers at the last block and 30 at the first (ResNet-50's backward pass spent
  // 13% of its time there). c readers in kernels of their own, of b full-size buffers, save
  // (c - 1)b - 1 - c reads and writes of n's size, which 4 buffers pay for from 2 readers on
  // (readers in one kernel gain nothing, nor does a gather's operand, read a few rows at a time).
  bool reads_many(const UOpRef& n, const UOpRef& f) {
    if (gather_ || users_[n.get()] < 2) return false;  // (roots: their reduce may be one node)
    int big = 0;
    for (const UOp* u : f->toposort())
      big += u->op == Ops::BUFFER && u->arg_ints()[1] >= shape_numel(n->shape());
    return big >= 4;
  }

  // True when recomputing `n` per broadcast copy would cost real work: it reduces, or does a few
  // ops on buffer values. Casts and movement ops are free, and so is arithmetic on constants
  // alone (folded by codegen) or a single op (as a pad's fill value is applied).
  bool computes(const UOpRef& n) { return work(n) >= 2; }

  // Whether the reduce `n` gathers (split_reduce.h), walked once per node: compute() runs again
  // for a reduce after every realize forgets the fused forms.
  bool gathering(const UOpRef& n) {
    auto it = gathers_.find(n);
    return it != gathers_.end() ? it->second : (gathers_[n] = gathers(*n));
  }

  // How many ALU ops on buffer values `n` takes (a reduce counts as many), -1 if it reads none.
  int work(const UOpRef& n) {
    if (auto it = work_.find(n); it != work_.end()) return it->second;
    int w = -1;
    if (n->op == Ops::BUFFER)
      w = 0;
    else if (n->op == Ops::REDUCE_AXIS || n->op == Ops::CUSTOM || n->op == Ops::COPY)
      w = kManyOps;
    else if (n->op == Ops::CUSTOM_GRAD)
      w = work(n->src[0]);
    else if (n->op != Ops::CONST && n->op != Ops::IOTA && n->op != Ops::DEFINE_VAR) {
      for (const UOpRef& s : n->src)
        if (int ws = work(s); ws >= 0) w = std::min(kManyOps, std::max(w, 0) + ws);
      bool free =
          group::is_movement(n->op) || n->op == Ops::CAST || n->op == Ops::DETACH || tests_index(n);
      if (w >= 0 && !free) w = std::min(kManyOps, w + 1);
    }
    work_[n] = w;
    return w;
  }
  static constexpr int kManyOps = 1 << 20;

  // A comparison with an index (arithmetic on an IOTA alone): a one-hot's or a mask's test, which
  // codegen turns into loop bounds (codegen/narrow.h), a gather's one trip, rather than work.
  bool tests_index(const UOpRef& n) {
    if (n->op != Ops::CMPEQ && n->op != Ops::CMPLT && n->op != Ops::CMPNE) return false;
    for (const UOpRef& s : n->src)
      if (work(s) < 0)
        for (const UOp* u : s->toposort())
          if (u->op == Ops::IOTA) return true;
    return false;
  }

  // BUFFER leaves become numbered kernel arguments, so the AST does not depend on which buffers
  // it runs on (and equal computations share one compiled kernel). A read of the output (an
  // in-place write's own elements) is argument 0 too: codegen sees a store of what it read.
  ScheduleItem build_item(const UOpRef& out, const UOpRef& value) {
    ScheduleItem item;
    item.bufs.push_back(out);
    absl::flat_hash_map<const UOp*, UOpRef> args = {{out.get(), global(out, 0)}};
    std::function<UOpRef(const UOpRef&)> bind = [&](const UOpRef& u) -> UOpRef {
      if (auto it = args.find(u.get()); it != args.end()) return it->second;
      UOpRef r;
      if (u->op == Ops::BUFFER) {
        int64_t i = static_cast<int64_t>(item.bufs.size());
        item.bufs.push_back(u);
        r = global(u, i);
      } else {
        std::vector<UOpRef> src;
        for (const UOpRef& s : u->src) src.push_back(bind(s));
        r = u->replace(std::move(src));
      }
      args[u.get()] = r;
      return r;
    };
    item.ast = UOp::sink({UOp::make(Ops::STORE, dtypes::void_, {args[out.get()], bind(value)})});
    // one kernel runs on one device: its buffers must all be there (a copy's source aside)
    for (const UOpRef& b : item.bufs)
      if (value->op != Ops::COPY && &b->buffer->device() != &out->buffer->device())
        fail(
            "a computation reads tensors on different devices (%s and %s): move them to one "
            "device with .to() first",
            out->buffer->device().name(), b->buffer->device().name());
    return item;
  }

  static UOpRef global(const UOpRef& buf, int64_t i) {
    return UOp::make(Ops::DEFINE_GLOBAL, buf->dtype.as_ptr(), {},
                     std::vector<int64_t>{i, buf->arg_ints()[1]});
  }

  std::vector<ScheduleItem> items_;
  absl::flat_hash_map<std::tuple<const UOp*, bool, const UOp*, bool>, UOpRef> memo_;
  int64_t forgotten_ = 0;     // how many times forget_fused ran
  const UOp* row_ = nullptr;  // the expand of rows being fused (reads_rows), if any
  bool gather_ = false;       // fusing the operand of a reduce that gathers
  std::vector<UOpRef> keep_;
  absl::flat_hash_map<const UOp*, int> users_, reaching_roots_;
  absl::flat_hash_map<const UOp*, std::vector<const UOp*>> readers_;  // each node's, once each
  absl::flat_hash_set<const UOp*> roots_;
  // holds its nodes: a fused form dropped and its address reused would inherit a stale count
  absl::flat_hash_map<UOpRef, int> work_;
  absl::flat_hash_map<UOpRef, bool> gathers_;
  absl::flat_hash_map<UOpRef, double> growth_;
  // the latest write, before this schedule, of a buffer each node reads
  absl::flat_hash_map<const UOp*, uint64_t> last_write_;
  absl::flat_hash_map<const UOp*, UOpRef> written_;  // roots written in place: their targets
  absl::flat_hash_map<const UOp*, UOpRef> aside_;    // roots written last: their values now
  std::vector<UOpRef>* marked_;
};

}  // namespace

std::vector<ScheduleItem> create_schedule(const std::vector<UOpRef>& roots,
                                          const std::vector<UOpRef>& targets,
                                          std::vector<UOpRef>* marked) {
  TC_CHECK(targets.empty() || targets.size() == roots.size(), "one target per root");
  auto target = [&](size_t i) { return targets.empty() ? nullptr : targets[i]; };
  Scheduler s(roots, marked);
  // readers first: roots computed into new buffers see every target's old value
  for (size_t i = 0; i < roots.size(); i++)
    if (!target(i)) s.realize(roots[i]);
  WriteOrder order = write_order(roots, targets);
  for (size_t i : order.copied) s.set_aside(roots[i], order.buffers);
  for (size_t i : order.in_place) s.realize_into(roots[i], target(i));
  for (size_t i : order.copied) s.realize_into(roots[i], target(i));
  return s.take();
}

}  // namespace tc::schedule
