#include "tinycore/schedule/multi.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/device.h"
#include "tinycore/schedule/schedule.h"

namespace tc::schedule {

Sharding sharding_of(const UOp& multi) {
  const std::string& arg = std::get<std::string>(multi.arg);
  size_t semi = arg.find(';');
  Sharding s;
  s.axis = std::stoi(arg.substr(0, semi));
  s.devices = absl::StrSplit(arg.substr(semi + 1), ',');
  return s;
}

UOpRef make_multi(std::vector<UOpRef> pieces, const Sharding& s) {
  DType dtype = pieces[0]->dtype;
  return UOp::make(Ops::MULTI, dtype, std::move(pieces),
                   std::to_string(s.axis) + ";" + absl::StrJoin(s.devices, ","));
}

std::vector<std::pair<int64_t, int64_t>> split_bounds(int64_t n, int parts) {
  int64_t size = (n + parts - 1) / parts;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int i = 0; i < parts; i++)
    out.push_back({std::min(n, i * size), std::min(n, (i + 1) * size)});
  return out;
}

void check_shard_devices(const std::vector<std::string>& devices) {
  for (const std::string& d : devices) {
    std::string index = d.find(':') == std::string::npos ? "" : d.substr(d.find(':') + 1);
    if (!std::all_of(index.begin(), index.end(), ::isdigit))
      fail("Tensor.shard: device '%s': a device is a name with an optional :N (CPU:1, CL)", d);
    try {
      runtime::get_device(d);
    } catch (const Error& e) {
      fail("Tensor.shard: device '%s': %s", d, e.what());
    }
  }
}

UOpRef placed(const UOpRef& x, const std::string& device, bool constants) {
  std::string to = runtime::get_device(device).name();  // "CPU:1" is the CPU
  // constants (no device read) are computed where they are read, unless `constants`
  std::optional<std::string> at = device_read(x);
  return at.value_or(constants ? runtime::default_device() : to) == to
             ? x
             : UOp::make(Ops::COPY, x->dtype, {x}, to);
}

namespace {

UOpRef movement(Ops op, const UOpRef& x, std::vector<int64_t> arg) {
  return UOp::make(op, x->dtype, {x}, std::move(arg));
}

// Where each piece of a MULTI begins and ends along its axis.
std::vector<std::pair<int64_t, int64_t>> bounds_of(const UOp& multi, int axis) {
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t at = 0;
  for (const UOpRef& p : multi.src) {
    out.push_back({at, at + p->shape()[axis]});
    at += p->shape()[axis];
  }
  return out;
}

// x cut to [begin, end) along `axis`.
UOpRef cut(const UOpRef& x, int axis, std::pair<int64_t, int64_t> range) {
  std::vector<int64_t> arg;
  for (int d = 0; d < static_cast<int>(x->shape().size()); d++) {
    arg.push_back(d == axis ? range.first : 0);
    arg.push_back(d == axis ? range.second : x->shape()[d]);
  }
  return movement(Ops::SHRINK, x, std::move(arg));
}

std::string where(const Sharding& s) {
  return absl::StrFormat("a tensor split along axis %d over (%s)", s.axis,
                         absl::StrJoin(s.devices, ", "));
}

class Lowering {
 public:
  UOpRef lower(const UOpRef& n) {
    if (auto it = memo_.find(n.get()); it != memo_.end()) return it->second;
    UOpRef out = lower_node(n);
    memo_[n.get()] = out;
    keep_.push_back(n);
    return out;
  }

 private:
  UOpRef lower_node(const UOpRef& n) {
    if (n->op == Ops::MULTI) return n;  // its pieces are plain graphs (Tensor::shard)
    if (n->op == Ops::CUSTOM_GRAD) return lower(n->src[0]);  // the value; its rule is for autograd
    std::vector<UOpRef> src;
    const UOp* first = nullptr;  // the first source split along an axis, else the first MULTI
    for (const UOpRef& s : n->src) {
      src.push_back(lower(s));
      if (src.back()->op == Ops::MULTI &&
          (!first || (sharding_of(*first).axis < 0 && sharding_of(*src.back()).axis >= 0)))
        first = src.back().get();
    }
    if (!first) return n->replace(std::move(src));
    Sharding s = sharding_of(*first);
    for (const UOpRef& x : src)
      if (x->op == Ops::MULTI && sharding_of(*x).devices != s.devices)
        fail("%s: its sources are on different devices (%s) and (%s)", op_name(n->op),
             absl::StrJoin(s.devices, ", "), absl::StrJoin(sharding_of(*x).devices, ", "));
    // a copy of a multi-device value (a piece's gradient, sent back where it came from): whole
    if (n->op == Ops::COPY) return gathered(src[0], std::get<std::string>(n->arg));
    if (n->op == Ops::REDUCE_AXIS) return reduce(n, src[0], s);
    if (group::is_movement(n->op)) return move(n, src[0], s);
    if (n->op == Ops::CUSTOM)
      fail("host function '%s' on %s: not supported", std::get<std::string>(n->arg), where(s));
    // elementwise (ALU, casts, contiguous, detach): piece by piece, split as `first` is
    std::vector<std::pair<int64_t, int64_t>> bounds;
    if (s.axis >= 0) bounds = bounds_of(*first, s.axis);
    std::vector<std::vector<UOpRef>> per_device(s.devices.size());
    for (const UOpRef& x : src) {
      std::vector<UOpRef> p = pieces(x, s, bounds);
      for (size_t d = 0; d < p.size(); d++) per_device[d].push_back(p[d]);
    }
    std::vector<UOpRef> out;
    for (std::vector<UOpRef>& p : per_device) out.push_back(n->replace(std::move(p)));
    return make_multi(std::move(out), s);
  }

  // x's pieces for sharding `s` with pieces at `bounds` along s.axis.
  std::vector<UOpRef> pieces(const UOpRef& x, const Sharding& s,
                             const std::vector<std::pair<int64_t, int64_t>>& bounds) {
    const size_t k = s.devices.size();
    if (x->op == Ops::MULTI) {
      Sharding xs = sharding_of(*x);
      if (xs.axis == s.axis && (s.axis < 0 || bounds_of(*x, s.axis) == bounds)) return x->src;
      if (xs.axis < 0) {  // a whole copy on each device: cut each to its piece
        std::vector<UOpRef> out;
        for (size_t d = 0; d < k; d++) out.push_back(cut(x->src[d], s.axis, bounds[d]));
        return out;
      }
      // split another way: whole on the first device, then split again
      return pieces(gathered(x, s.devices[0]), s, bounds);
    }
    std::vector<UOpRef> out;
    for (size_t d = 0; d < k; d++)
      out.push_back(placed(s.axis < 0 ? x : cut(x, s.axis, bounds[d]), s.devices[d]));
    return out;
  }

  // A reduce of a MULTI: per piece; over the split axis, the pieces' results then all-reduced.
  UOpRef reduce(const UOpRef& n, const UOpRef& x, const Sharding& s) {
    std::vector<UOpRef> partial;
    for (const UOpRef& p : x->src) partial.push_back(n->replace({p}));
    const std::vector<int64_t>& arg = n->arg_ints();
    if (s.axis < 0 || std::find(arg.begin() + 1, arg.end(), s.axis) == arg.end())
      return make_multi(std::move(partial), s);
    return make_multi(allreduce(partial, static_cast<Ops>(arg[0]), s.devices), {-1, s.devices});
  }

  UOpRef move(const UOpRef& n, const UOpRef& x, const Sharding& s) {
    const int a = s.axis;
    const Shape& in = n->src[0]->shape();
    auto per_piece = [&](auto arg_of, int axis) {
      std::vector<UOpRef> out;
      for (size_t d = 0; d < x->src.size(); d++)
        out.push_back(movement(n->op, x->src[d], arg_of(x->src[d]->shape())));
      return make_multi(std::move(out), {axis, s.devices});
    };
    if (a < 0) return per_piece([&](const Shape&) { return n->arg_ints(); }, -1);
    const std::vector<int64_t>& arg = n->arg_ints();
    auto refuse = [&](const char* why) -> UOpRef {
      fail("%s of %s: %s", op_name(n->op), where(s), why);
    };
    switch (n->op) {
      case Ops::PERMUTE:
        return per_piece([&](const Shape&) { return arg; },
                         static_cast<int>(std::find(arg.begin(), arg.end(), a) - arg.begin()));
      case Ops::EXPAND:
        if (arg[a] != in[a]) refuse("the split axis cannot be expanded");
        return per_piece(
            [&](const Shape& p) {
              std::vector<int64_t> t = arg;
              t[a] = p[a];
              return t;
            },
            a);
      case Ops::FLIP:
        if (std::find(arg.begin(), arg.end(), a) != arg.end())
          refuse("the split axis cannot be flipped (the pieces would change devices)");
        return per_piece([&](const Shape&) { return arg; }, a);
      case Ops::PAD:
        if (arg[2 * a] != 0 || arg[2 * a + 1] != 0) refuse("the split axis cannot be padded");
        return per_piece([&](const Shape&) { return arg; }, a);
      case Ops::SHRINK: {
        std::pair<int64_t, int64_t> range = {arg[2 * a], arg[2 * a + 1]};
        if (range == std::pair<int64_t, int64_t>{0, in[a]})
          return per_piece(
              [&](const Shape& p) {
                std::vector<int64_t> t = arg;
                t[2 * a + 1] = p[a];
                return t;
              },
              a);
        std::vector<std::pair<int64_t, int64_t>> b = bounds_of(*x, a);
        for (size_t d = 0; d < b.size(); d++)
          if (b[d] == range) {  // exactly one piece: that piece, on its device
            std::vector<int64_t> t = arg;
            t[2 * a] = 0, t[2 * a + 1] = range.second - range.first;
            return movement(Ops::SHRINK, x->src[d], t);
          }
        return refuse("a shrink of the split axis must keep all of it or exactly one piece");
      }
      case Ops::RESHAPE:
        return reshape(n, x, s);
      default:
        return refuse("not supported");
    }
  }

  // A reshape keeps each piece's elements together when the split axis maps to a new axis b with
  // as many elements before it, and each piece fills whole rows of what follows b.
  UOpRef reshape(const UOpRef& n, const UOpRef& x, const Sharding& s) {
    const Shape &in = n->src[0]->shape(), &to = n->arg_ints();
    const int a = s.axis;
    int64_t outer = shape_numel(Shape(in.begin(), in.begin() + a)), inner = shape_numel(in, a + 1);
    for (int b = 0; b < static_cast<int>(to.size()); b++) {
      if (shape_numel(Shape(to.begin(), to.begin() + b)) != outer) continue;
      int64_t rest = shape_numel(to, b + 1);
      bool fits = to[b] * rest == in[a] * inner;
      for (const UOpRef& p : x->src) fits = fits && (p->shape()[a] * inner) % rest == 0;
      if (!fits) continue;
      std::vector<UOpRef> out;
      for (const UOpRef& p : x->src) {
        std::vector<int64_t> t = to;
        t[b] = p->shape()[a] * inner / rest;
        out.push_back(movement(Ops::RESHAPE, p, t));
      }
      return make_multi(std::move(out), {b, s.devices});
    }
    fail("RESHAPE %s -> %s of %s: it would move elements between the devices' pieces",
         fmt_shape(in), fmt_shape(to), where(s));
  }

  absl::flat_hash_map<const UOp*, UOpRef> memo_;
  std::vector<UOpRef> keep_;  // the keys stay alive while their addresses are
};

}  // namespace

UOpRef lower_multi(const UOpRef& root) {
  UOpRef l = Lowering().lower(root);
  if (l->op != Ops::MULTI) return l;
  // each piece computed on its device (a piece of constants alone would be on the default one)
  Sharding s = sharding_of(*l);
  std::vector<UOpRef> pieces;
  for (size_t d = 0; d < l->src.size(); d++)
    pieces.push_back(placed(l->src[d], s.devices[d], /*constants=*/true));
  return make_multi(std::move(pieces), s);
}

namespace {

// tinygrad's ring: a reduce-scatter, then an all-gather, each step a copy to the next device.
std::vector<UOpRef> ring_allreduce(const std::vector<UOpRef>& partial, Ops op,
                                   const std::vector<std::string>& devices) {
  const size_t k = partial.size();
  const Shape shape = partial[0]->shape();
  const int64_t n = shape_numel(shape);
  std::vector<std::pair<int64_t, int64_t>> chunks = split_bounds(n, static_cast<int>(k));
  auto chunk = [&](size_t d, size_t c) {
    return cut(movement(Ops::RESHAPE, partial[d], {n}), 0, chunks[c]);
  };
  std::vector<std::vector<UOpRef>> on(k, std::vector<UOpRef>(k));  // on[d][c]: chunk c on d
  for (size_t c = 0; c < k; c++) {
    // reduce-scatter: chunk c summed along the ring from device c + 1 to its owner, c
    size_t d = (c + 1) % k;
    UOpRef sum = chunk(d, c);
    for (size_t step = 1; step < k; step++) {
      d = (d + 1) % k;
      sum = alu(op, placed(sum, devices[d]), chunk(d, c));
    }
    on[c][c] = sum;
    // all-gather: the sum passed on around the ring, each device copying its neighbour's
    for (size_t step = 1; step < k; step++) {
      size_t e = (c + step) % k;
      on[e][c] = placed(on[(e + k - 1) % k][c], devices[e]);
    }
  }
  std::vector<UOpRef> out;
  for (size_t d = 0; d < k; d++)
    out.push_back(movement(Ops::RESHAPE, joined(on[d], 0), std::vector<int64_t>(shape)));
  return out;
}

}  // namespace

std::vector<UOpRef> allreduce(const std::vector<UOpRef>& partial, Ops op,
                              const std::vector<std::string>& devices) {
  const size_t k = partial.size();
  const int64_t n = shape_numel(partial[0]->shape());
  bool copies = false;
  for (const std::string& d : devices)
    copies = copies || runtime::get_device(d).name() != runtime::get_device(devices[0]).name();
  const int ring = getenv_int("RING", 1);
  if (n >= static_cast<int64_t>(k) &&
      (ring >= 2 ||
       (ring == 1 && copies && k > 2 && n > getenv_int("RING_ALLREDUCE_THRESHOLD", 256000))))
    return ring_allreduce(partial, op, devices);
  // naive: each device combines every piece, copied in, in one order (so the results are equal)
  std::vector<UOpRef> out;
  for (const std::string& device : devices) {
    UOpRef all = placed(partial[0], device);
    for (size_t j = 1; j < k; j++) all = alu(op, all, placed(partial[j], device));
    out.push_back(all);
  }
  return out;
}

UOpRef joined(const std::vector<UOpRef>& pieces, int axis) {
  int64_t total = 0, at = 0;
  for (const UOpRef& p : pieces) total += p->shape()[axis];
  UOpRef sum;
  for (const UOpRef& p : pieces) {  // each piece padded to its place, then summed
    const int64_t len = p->shape()[axis];
    std::vector<int64_t> pad;
    for (int d = 0; d < static_cast<int>(p->shape().size()); d++) {
      pad.push_back(d == axis ? at : 0);
      pad.push_back(d == axis ? total - at - len : 0);
    }
    at += len;
    UOpRef padded = movement(Ops::PAD, p, pad);
    sum = !sum ? padded : alu(dtypes::is_bool(p->dtype) ? Ops::OR : Ops::ADD, sum, padded);
  }
  return sum;
}

UOpRef gathered(const UOpRef& multi, const std::string& device) {
  Sharding s = sharding_of(*multi);
  if (s.axis < 0) {  // the copy already there, else the first
    for (const UOpRef& p : multi->src)
      if (device_read(p) == runtime::get_device(device).name()) return p;
    return placed(multi->src[0], device);
  }
  std::vector<UOpRef> pieces;
  for (const UOpRef& p : multi->src) pieces.push_back(placed(p, device));
  return joined(pieces, s.axis);
}

bool may_hold_multi(const std::vector<UOpRef>& roots) {
  if (UOp::live_count(Ops::MULTI) == 0) return false;
  for (const UOpRef& r : roots)
    for (const UOp* u : r ? r->toposort() : std::vector<const UOp*>{})
      if (u->op == Ops::MULTI) return true;
  return false;
}

}  // namespace tc::schedule
