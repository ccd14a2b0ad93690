#include "tinycore/jit/jit.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "tinycore/engine/realize.h"
#include "tinycore/error.h"
#include "tinycore/helpers.h"
#include "tinycore/runtime/buffer.h"
#include "tinycore/runtime/device.h"
#include "tinycore/schedule/schedule.h"

namespace tc {
namespace {

using BufferRef = std::shared_ptr<runtime::Buffer>;

// The buffer behind a realized, contiguous tensor.
const BufferRef& buffer_of(const Tensor& t) { return schedule::base_buffer(t.uop())->buffer; }

// Each input as a realized, contiguous tensor (a copy kernel for views that are not).
std::vector<Tensor> realized_inputs(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  for (const Tensor& x : inputs)
    out.push_back(schedule::is_contiguous_buffer(x.uop()) ? x : x.contiguous());
  realize_all(out);
  return out;
}

struct Signature {
  Shape shape;
  DType dtype;
  std::string device;
};

}  // namespace

struct TinyJit::Plan {
  struct Slot {
    size_t launch, arg;
  };
  struct Output {
    std::vector<Slot> slots;  // empty: `fixed` is returned
    UOpRef fixed;             // an output the step does not compute (a weight)
    int input = -1;           // an output that is input `input` (assigned or not)
    Shape shape;
    DType dtype;
    std::string device;
    int64_t size = 0;
  };
  std::vector<engine::Launch> launches;
  std::vector<std::vector<void*>> args;  // prebuilt argument arrays, one per launch
  std::vector<Signature> inputs;
  // Per input: the slots reading its value at the call; for an input the step assigns, `after`
  // holds the slots of its new value (the write and every later read). A replay writes that new
  // value in place when the capture did and the input owns its buffer (Tensor::Impl), else into
  // a fresh buffer the input then holds: never into a buffer other tensors share.
  struct Input {
    std::vector<Slot> slots, after;
    bool written = false, in_place = false;
  };
  std::vector<Input> input_slots;
  std::vector<Output> outputs;
  std::vector<BufferRef> arena;  // the planned internal memory
  // what the step writes outside it (assigned weights): a replay bumps their versions, so values
  // cached from their old contents are computed again
  std::vector<BufferRef> written;
  // Launches that read only buffers from outside the step which the step does not write (a
  // weight's transposed copy in an inference step), or what other such launches wrote: a replay
  // runs them only when one of those buffers was written since their last run.
  struct Memo {
    std::vector<std::pair<BufferRef, uint64_t>> reads;  // outside buffers, version at last run
    std::vector<int> after;                             // memos whose outputs it reads
    bool ran = false;                                   // in the current replay
  };
  std::vector<Memo> memos;
  std::vector<int> memo_of;  // per launch: its memo, or -1
  int64_t planned_bytes = 0, unplanned_bytes = 0;
};

namespace {

// Which launches compute only from outside buffers the step never writes (see Plan::Memo): their
// memos, indexed by launch (-1: none). `inputs` are the step's input buffers, `outputs` its
// results, both computed afresh each replay.
void find_memos(TinyJit::Plan& plan, const absl::flat_hash_set<const runtime::Buffer*>& inputs,
                const absl::flat_hash_set<const runtime::Buffer*>& outputs) {
  const std::vector<engine::Launch>& launches = plan.launches;
  absl::flat_hash_map<const runtime::Buffer*, int> writers;
  for (const engine::Launch& l : launches) writers[l.bufs[0].get()]++;
  absl::flat_hash_map<const runtime::Buffer*, int> memo_output;  // buffer -> memo writing it
  plan.memo_of.assign(launches.size(), -1);
  for (size_t i = 0; i < launches.size(); i++) {
    const engine::Launch& l = launches[i];
    const runtime::Buffer* out = l.bufs[0].get();
    if (l.kernel->host || !l.fresh[0] || writers[out] != 1 || outputs.contains(out)) continue;
    TinyJit::Plan::Memo m;
    bool constant = true;
    for (size_t a = 1; a < l.bufs.size() && constant; a++) {
      const runtime::Buffer* b = l.bufs[a].get();
      if (auto it = memo_output.find(b); it != memo_output.end())
        m.after.push_back(it->second);
      else if (inputs.contains(b) || writers.contains(b))
        constant = false;
      else
        m.reads.push_back({l.bufs[a], b->version()});
    }
    if (!constant) continue;
    plan.memo_of[i] = static_cast<int>(plan.memos.size());
    memo_output[out] = plan.memo_of[i];
    plan.memos.push_back(std::move(m));
  }
}

// Whether a memoized launch must run: an outside buffer it reads was written since its last run,
// or a launch whose output it reads ran in this replay.
bool must_run(const TinyJit::Plan& plan, const TinyJit::Plan::Memo& m) {
  for (const auto& [buf, version] : m.reads)
    if (buf->version() != version) return true;
  for (int u : m.after)
    if (plan.memos[u].ran) return true;
  return false;
}

}  // namespace

TinyJit::TinyJit(Fn fn) : fn_(std::move(fn)) {}
TinyJit::~TinyJit() = default;

size_t TinyJit::kernel_count() const { return plan_ ? plan_->launches.size() : 0; }
int64_t TinyJit::planned_bytes() const { return plan_ ? plan_->planned_bytes : 0; }
int64_t TinyJit::unplanned_bytes() const { return plan_ ? plan_->unplanned_bytes : 0; }
void TinyJit::reset() {
  plan_.reset();
  calls_ = 0;
}

std::vector<Tensor> TinyJit::operator()(const std::vector<Tensor>& inputs) {
  if (getenv_int("JIT", 1) == 0) return run_plainly(inputs);
  bool multi = piece_layout_.has_value();
  for (const Tensor& x : inputs) multi = multi || x.uop()->op == Ops::MULTI;
  return multi ? call_with_pieces(inputs) : call(inputs);
}

std::vector<Tensor> TinyJit::call(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> in = realized_inputs(inputs);
  // one tensor as two inputs: a replay given two could not tell which slots read which
  for (size_t i = 0; i < in.size(); i++)
    for (size_t k = 0; k < i; k++)
      if (inputs[k].is_same_tensor(inputs[i]))
        jit_fail("TinyJit: inputs %d and %d are the same tensor; pass distinct tensors", k, i);
  // distinct tensors on one buffer (equal graphs realize once; views of one tensor): each gets a
  // buffer of its own, so that later calls may give them different ones
  for (size_t i = 0; i < in.size(); i++)
    for (size_t k = 0; k < i; k++)
      if (buffer_of(in[k]) == buffer_of(in[i])) {
        in[i] = in[i].clone().realize();
        break;
      }
  std::vector<UOpRef> at_call;
  for (const Tensor& t : in) at_call.push_back(t.uop());
  std::vector<Tensor> out;
  if (calls_++ == 0)
    out = run_plainly(in);
  else  // a capture that threw (the step read a value on the host) left no plan: capture again
    out = plan_ ? replay(in) : capture(in);
  // an input that was copied to be contiguous and that the step assigned: its new value
  for (size_t i = 0; i < in.size(); i++)
    if (!in[i].is_same_tensor(inputs[i]) && in[i].uop() != at_call[i])
      Tensor(inputs[i]).assign(in[i]);
  return out;
}

// A call with multi-device inputs (or of a step captured with them): each piece passed as an input
// of its own (a replay swaps each piece's buffer), the step given them put back together.
std::vector<Tensor> TinyJit::call_with_pieces(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> flat;
  std::vector<std::string> layout;
  for (const Tensor& x : inputs) {
    if (x.uop()->op != Ops::MULTI) {
      flat.push_back(x), layout.push_back("");
      continue;
    }
    Tensor whole = x.contiguous().realize();  // contiguous pieces
    for (const UOpRef& p : whole.uop()->src) flat.push_back(Tensor(p));
    layout.push_back(std::get<std::string>(whole.uop()->arg));
  }
  if (!piece_layout_) {
    piece_layout_ = layout;
    fn_ = [user = std::move(fn_), layout](const std::vector<Tensor>& pieces) {
      std::vector<Tensor> in;
      size_t at = 0;
      for (const std::string& sharding : layout) {
        if (sharding.empty()) {
          in.push_back(pieces[at++]);
          continue;
        }
        std::vector<UOpRef> src;
        size_t k = std::count(sharding.begin(), sharding.end(), ',') + 1;
        for (size_t d = 0; d < k; d++) src.push_back(pieces[at++].uop());
        DType dtype = src[0]->dtype;
        in.push_back(Tensor(UOp::make(Ops::MULTI, dtype, std::move(src), sharding)));
      }
      return user(in);
    };
  } else if (*piece_layout_ != layout) {
    auto said = [](const std::string& l) { return l.empty() ? "on one device" : "'" + l + "'"; };
    for (size_t i = 0; i < layout.size() && i < piece_layout_->size(); i++)
      if (layout[i] != (*piece_layout_)[i])
        jit_fail("TinyJit: input %d is sharded as %s, captured as %s (axis;devices)", i,
                 said(layout[i]), said((*piece_layout_)[i]));
    jit_fail("TinyJit: %d inputs, captured with %d", layout.size(), piece_layout_->size());
  }
  return call(flat);
}

// The step's outputs and the assigns it left pending, realized in one schedule.
std::vector<Tensor> TinyJit::run_plainly(const std::vector<Tensor>& in) {
  engine::FreeIntermediates frees;
  AssignLog assigns;
  std::vector<Tensor> out = fn_(in);
  realize_all(assigns.with_pending(out));
  return out;
}

std::vector<Tensor> TinyJit::capture(const std::vector<Tensor>& in) {
  auto plan = std::make_unique<Plan>();
  std::vector<BufferRef> entry;  // each input's buffer at the call (an assign may move it)
  std::vector<UOpRef> at_entry;
  for (size_t i = 0; i < in.size(); i++) {
    entry.push_back(buffer_of(in[i]));
    at_entry.push_back(in[i].uop());
    plan->inputs.push_back({in[i].shape(), in[i].dtype(), in[i].device()});
  }
  std::vector<Tensor> out;
  {
    // values cached by earlier calls (a weight's transposed copy) are computed again, so the
    // capture records their kernels rather than freezing today's result into the replays
    runtime::Buffer::invalidate_cached_values();
    std::vector<UOpRef> marked;
    engine::LaunchCapture recording(&plan->launches, &marked);
    AssignLog assigns;
    out = fn_(in);
    for (size_t i = 0; i < out.size(); i++)
      if (out[i].uop()->op == Ops::MULTI)
        jit_fail("TinyJit: output %d is on several devices; return it whole (.to(\"CPU\"))", i);
    realize_all(assigns.with_pending(out));
    // The values the step cached in its graph (tinygrad replaces them with their buffers) let go
    // of their buffers: those that nothing else holds (a gradient's graph, kept until the next
    // zero_grad, holds every activation) are the step's own, and the planner shares their memory.
    // A graph read after the step computes them again.
    for (const UOpRef& n : marked) n->realized = nullptr;
  }
  std::vector<engine::Launch>& launches = plan->launches;
  // tinygrad's "didn't JIT anything". (A step that computes nothing but returns its inputs or
  // outside tensors replays correctly: those are what it returns each time.)
  if (launches.empty() && out.empty())
    jit_fail(
        "TinyJit: the function ran no kernel and returned no tensor when captured; there is "
        "nothing to replay");
  if (debug_level() >= 1)
    std::printf("TinyJit: captured %zu kernels, %zu inputs, %zu outputs\n", launches.size(),
                in.size(), out.size());

  // where each buffer is used, and whether a captured launch created it
  struct Use {
    std::vector<Plan::Slot> slots;
    bool created = false;
  };
  absl::flat_hash_map<const runtime::Buffer*, Use> uses;
  std::vector<const runtime::Buffer*> order;  // by first use
  for (size_t l = 0; l < launches.size(); l++)
    for (size_t a = 0; a < launches[l].bufs.size(); a++) {
      const runtime::Buffer* b = launches[l].bufs[a].get();
      auto [it, fresh] = uses.try_emplace(b);
      if (fresh) order.push_back(b);
      it->second.slots.push_back({l, a});
      it->second.created = it->second.created || launches[l].fresh[a];
    }

  plan->input_slots.resize(in.size());
  absl::flat_hash_set<const runtime::Buffer*> input_bufs, output_bufs;
  for (size_t i = 0; i < in.size(); i++) {
    Plan::Input& pi = plan->input_slots[i];
    const runtime::Buffer* now = buffer_of(in[i]).get();
    // in place, the slots from the first kernel storing into its buffer on hold the new value (an
    // assign realized into the input's own buffer leaves its graph the same view)
    auto it = uses.find(entry[i].get());
    size_t first_write = launches.size();
    if (it != uses.end())
      for (const Plan::Slot& s : it->second.slots)
        if (s.arg == 0) first_write = std::min(first_write, s.launch);
    pi.written = in[i].uop() != at_entry[i] || first_write < launches.size();
    pi.in_place = pi.written && now == entry[i].get();
    if (!pi.in_place) first_write = launches.size();
    input_bufs.insert(entry[i].get());
    input_bufs.insert(now);
    if (it != uses.end()) {
      for (const Plan::Slot& s : it->second.slots)
        (s.launch < first_write || (s.launch == first_write && s.arg > 0) ? pi.slots : pi.after)
            .push_back(s);
      uses.erase(it);
    }
    if (auto it = uses.find(now); pi.written && !pi.in_place && it != uses.end()) {
      pi.after = it->second.slots;
      uses.erase(it);
    }
  }
  for (const Tensor& t : out) {
    Plan::Output o{{}, nullptr, -1, t.shape(), t.dtype(), t.device(), t.numel()};
    // an input (assigned or not) is returned as the replay's input, which holds its value then
    for (size_t i = 0; i < in.size(); i++)
      if (buffer_of(t) == buffer_of(in[i])) o.input = static_cast<int>(i);
    auto it = uses.find(buffer_of(t).get());
    if (o.input < 0 && it != uses.end() && it->second.created) {
      o.slots = it->second.slots;
      uses.erase(it);
    } else if (o.input < 0) {
      o.fixed = t.uop();
    }
    plan->outputs.push_back(std::move(o));
  }

  for (const Tensor& t : out) output_bufs.insert(buffer_of(t).get());
  find_memos(*plan, input_bufs, output_bufs);
  if (debug_level() >= 1)
    std::printf("TinyJit: %zu kernels run only when what they read changes\n", plan->memos.size());
  absl::flat_hash_set<const runtime::Buffer*> memo_outputs;
  for (size_t l = 0; l < launches.size(); l++)
    if (plan->memo_of[l] >= 0) memo_outputs.insert(launches[l].bufs[0].get());

  // memory planner: buffers the step created and nothing outside holds share memory when their
  // lifetimes (first to last launch using them) do not overlap; memoized outputs keep theirs
  struct Block {
    BufferRef buf;
    size_t free_after;
  };
  std::vector<Block> blocks;
  for (const runtime::Buffer* b : order) {
    auto it = uses.find(b);
    if (it == uses.end() || !it->second.created || memo_outputs.contains(b)) continue;
    const std::vector<Plan::Slot>& slots = it->second.slots;
    const BufferRef& ref = launches[slots[0].launch].bufs[slots[0].arg];
    if (ref.use_count() != static_cast<long>(slots.size())) continue;  // held outside the step
    size_t first = slots.front().launch, last = slots.back().launch;
    int64_t bytes = static_cast<int64_t>(ref->nbytes());
    plan->unplanned_bytes += bytes;
    Block* best = nullptr;
    for (Block& k : blocks)
      if (k.free_after < first && &k.buf->device() == &ref->device() &&
          static_cast<int64_t>(k.buf->nbytes()) >= bytes &&
          (!best || k.buf->nbytes() < best->buf->nbytes()))
        best = &k;
    if (!best) {
      blocks.push_back({std::make_shared<runtime::Buffer>(ref->device(), dtypes::uint8, bytes), 0});
      best = &blocks.back();
      plan->planned_bytes += bytes;
    }
    best->free_after = last;
    BufferRef block = best->buf;  // copied: `slots` points into `uses`, `best` into `blocks`
    for (const Plan::Slot& s : slots) launches[s.launch].bufs[s.arg] = block;
  }
  for (Block& k : blocks) plan->arena.push_back(k.buf);
  // written outside: not planned memory, a memoized output or a result (fresh each replay)
  absl::flat_hash_set<const runtime::Buffer*> seen = std::move(memo_outputs);
  seen.insert(output_bufs.begin(), output_bufs.end());
  seen.insert(input_bufs.begin(), input_bufs.end());  // a replay bumps what it writes of those
  for (const BufferRef& b : plan->arena) seen.insert(b.get());
  for (const engine::Launch& l : launches)
    if (seen.insert(l.bufs[0].get()).second) plan->written.push_back(l.bufs[0]);
  if (debug_level() >= 2)
    std::printf("TinyJit: internal memory %.2f MB planned (%.2f MB without sharing)\n",
                static_cast<double>(plan->planned_bytes) / 1e6,
                static_cast<double>(plan->unplanned_bytes) / 1e6);

  for (engine::Launch& l : launches) {
    std::vector<void*> args;
    for (const BufferRef& b : l.bufs) args.push_back(b->ensure_allocated());
    plan->args.push_back(std::move(args));
  }
  plan_ = std::move(plan);
  return out;
}

std::vector<Tensor> TinyJit::replay(const std::vector<Tensor>& in) {
  Plan& p = *plan_;
  if (in.size() != p.inputs.size())
    jit_fail("TinyJit: called with %d inputs, captured with %d", in.size(), p.inputs.size());
  for (size_t i = 0; i < in.size(); i++) {
    const Signature& s = p.inputs[i];
    if (in[i].shape() != s.shape)
      jit_fail("TinyJit: input %d has shape %s, captured with %s", i, fmt_shape(in[i].shape()),
               fmt_shape(s.shape));
    if (in[i].dtype() != s.dtype)
      jit_fail("TinyJit: input %d has dtype %s, captured with %s", i, in[i].dtype().name(),
               s.dtype.name());
    if (in[i].device() != s.device)
      jit_fail("TinyJit: input %d is on %s, captured on %s", i, in[i].device(), s.device);
  }
  std::vector<BufferRef> assigned(in.size());  // the buffer each assigned input's value goes to
  for (size_t i = 0; i < in.size(); i++) {
    const Plan::Input& pi = p.input_slots[i];
    void* ptr = buffer_of(in[i])->ensure_allocated();
    for (const Plan::Slot& s : pi.slots) p.args[s.launch][s.arg] = ptr;
    if (!pi.written) continue;
    if (pi.in_place && in[i].impl_->owns_buffer) {
      assigned[i] = buffer_of(in[i]);
    } else {
      Tensor fresh = Tensor::empty(in[i].shape(), in[i].dtype(), in[i].device());
      // written in place at the capture, its kernels read the old value where they write it
      if (pi.in_place) fresh.assign(in[i].contiguous()).realize();
      Tensor(in[i]).hold_own(fresh);
      assigned[i] = buffer_of(fresh);
    }
    void* dst = assigned[i]->ensure_allocated();
    for (const Plan::Slot& s : pi.after) p.args[s.launch][s.arg] = dst;
  }
  std::vector<Tensor> out;
  for (const Plan::Output& o : p.outputs) {
    if (o.input >= 0) {  // the input's buffer, in the output's shape (the step may reshape it)
      const Tensor& x = in[o.input];
      out.push_back(x.shape() == o.shape ? x : x.reshape(o.shape));
      continue;
    }
    if (o.fixed) {
      out.push_back(Tensor(o.fixed));
      continue;
    }
    UOpRef buf = schedule::new_buffer(o.device, o.dtype, o.size);
    void* ptr = buf->buffer->ensure_allocated();
    for (const Plan::Slot& s : o.slots) p.args[s.launch][s.arg] = ptr;
    out.push_back(Tensor(buf).reshape(o.shape));
  }
  if (getenv_int("JIT_POISON"))  // a debugging aid: stale planned memory must never be read
    for (const BufferRef& b : p.arena) {
      std::vector<uint8_t> nan_bytes(b->nbytes(), 0xFF);  // NaN in every float dtype
      b->copyin(nan_bytes.data(), nan_bytes.size());
    }
  int64_t ran = 0;
  const bool timed = debug_level() >= 2;  // each launch timed and printed, as a realize does
  for (size_t l = 0; l < p.launches.size(); l++) {
    Plan::Memo* m = p.memo_of[l] >= 0 ? &p.memos[p.memo_of[l]] : nullptr;
    if (m && !(m->ran = must_run(p, *m))) continue;
    const engine::Launch& launch = p.launches[l];
    std::chrono::steady_clock::time_point t0;
    if (timed) t0 = std::chrono::steady_clock::now();
    launch.kernel->binary->run(p.args[l].data(), launch.shares);
    if (timed) {
      runtime::Device& device = launch.bufs[0]->device();
      device.synchronize();
      std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
      engine::count_launch(*launch.kernel, device, launch.bufs.size(), took.count());
    }
    if (m)
      for (auto& [buf, version] : m->reads) version = buf->version();
    ran++;
  }
  for (const BufferRef& b : p.written) b->bump_version();
  for (size_t i = 0; i < in.size(); i++)
    if (assigned[i]) {
      assigned[i]->bump_version();
      Tensor(in[i]).update_views();  // views of the input see its new value
    }
  if (!timed) engine::GlobalCounters::kernel_count += ran;
  return out;
}

}  // namespace tc
