#include "apps/train/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "apps/common/build_model.h"
#include "apps/common/run_vocab.h"
#include "apps/train/checkpoint.h"
#include "apps/train/data_source.h"
#include "apps/train/metrics.h"
#include "apps/train/optimizer.h"
#include "apps/train/progress.h"
#include "apps/train/replace_file.h"
#include "nn/grad_scaler.h"
#include "nn/layers.h"
#include "tinycore/dist/collectives.h"
#include "tinycore/error.h"
#include "tinycore/jit/jit.h"
#include "tinycore/runtime/device.h"

namespace tc::train {
namespace {

namespace fs = std::filesystem;

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

int64_t parameter_count(const nn::Module& model) {
  int64_t n = 0;
  for (const Tensor& p : model.parameters()) n += p.numel();
  return n;
}

// Sparse cross-entropy over the last axis and whether the top class is right, per sample
// (averaged over the positions of a sequence): (B,) each.
std::vector<Tensor> per_sample_loss_and_hits(const Tensor& logits, const Tensor& y) {
  Tensor loss = logits.sparse_categorical_crossentropy(y, {.reduction = "none"});
  Tensor hits = logits.argmax(-1).eq(y).cast(dtypes::float32);
  if (loss.ndim() > 1) {
    std::vector<int> rest;
    for (int a = 1; a < loss.ndim(); a++) rest.push_back(a);
    loss = loss.mean(rest);
    hits = hits.mean(rest);
  }
  return {loss, hits};
}

// Data-parallel runs (under mpirun): the ranks and this process's place among them.
struct Replicas {
  int rank = dist::rank(), size = dist::world_size();
  bool lead() const { return rank == 0; }  // rank 0 alone writes the run's files and prints
};

// Every rank's model, optimizer state and position made rank 0's (its fresh weights, or the
// checkpoint it resumed from).
void start_from_rank_zero(nn::Module& model, const nn::StateDict& run_state, Position& pos) {
  std::vector<Tensor> state;
  for (const auto& [name, t] : model.state_dict()) state.push_back(t);
  for (const auto& [name, t] : run_state) state.push_back(t);
  dist::broadcast(state);
  int64_t p[5] = {pos.step, pos.epoch, pos.batch, static_cast<int64_t>(pos.rng.seed),
                  static_cast<int64_t>(pos.rng.counter)};
  dist::broadcast(p, sizeof p, 0, "the run's position");
  pos = {p[0], p[1], p[2], {static_cast<uint64_t>(p[3]), static_cast<uint64_t>(p[4])}};
}

// Throws unless every rank holds the same weights, bit for bit (dist.check_replicas).
void check_replicas(nn::Module& model, int64_t step) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over every parameter's bytes
  for (const Tensor& p : model.parameters())
    for (uint8_t b : p.raw_bytes()) h = (h ^ b) * 1099511628211ull;
  std::vector<double> all = dist::allgather(static_cast<double>(h >> 11), "the weights' hashes");
  for (size_t r = 1; r < all.size(); r++)
    if (all[r] != all[0])
      fail("dist.check_replicas: after step %d, rank %d's weights differ from rank 0's", step, r);
}

}  // namespace

std::string fresh_run_dir(const config::Config& c) {
  const std::string base = c.log.dir + "/" + c.log.name;
  auto taken = [](const std::string& d) { return fs::exists(d) && !fs::is_empty(d); };
  if (!taken(base)) return base;
  for (int i = 2;; i++)
    if (std::string d = absl::StrFormat("%s-%d", base, i); !taken(d)) return d;
}

RunResult run_training(const config::Config& given, const RunOptions& opts) {
  const bool resuming = !opts.resume_dir.empty();
  RunResult result;
  dist::init(given.dist.timeout_s);
  const Replicas replicas;
  result.dir = resuming ? opts.resume_dir : fresh_run_dir(given);

  // each step's batch is the one a single process would take; rank r trains on its r-th share
  config::Config whole = given;
  whole.train.batch_size *= replicas.size;
  std::unique_ptr<DataSource> data = make_data_source(whole);
  const datasets::Vocab* vocab = data->vocab();  // text only
  const bool char_vocab = vocab && given.data.vocab == "chars";
  config::Config c = given;
  if (vocab && c.model.vocab == 0) c.model.vocab = vocab->size();  // the data's, as run and saved
  Tensor::manual_seed(static_cast<uint64_t>(c.train.seed));
  std::unique_ptr<nn::Module> model = config::build_model(c.model);
  const int64_t per_epoch = data->batches_per_epoch();
  const int64_t total = c.train.max_steps > 0 ? c.train.max_steps : c.train.epochs * per_epoch;
  std::unique_ptr<nn::Optimizer> opt = make_optimizer(c.optim, model->parameters());
  std::unique_ptr<nn::LRScheduler> schedule = make_schedule(c.optim, *opt, total);
  // mixed precision: products in the narrow dtype; float16 also scales the loss
  std::optional<DType> narrow;
  if (c.train.dtype != "float32") narrow = dtypes::from_name(c.train.dtype);
  std::optional<nn::GradScaler> scaler;
  if (narrow == dtypes::float16)
    scaler.emplace(nn::GradScalerOpts{.init_scale = c.train.loss_scale});
  nn::StateDict run_state = nn::with_prefix(opt->state_dict(), "optim.");
  if (scaler) run_state.merge(nn::with_prefix(scaler->state_dict(), "scaler."));
  if (!resuming && replicas.lead()) {  // made once the config is known to describe a run
    std::error_code ec;
    fs::create_directories(result.dir, ec);
    if (ec) fail("train: cannot create %s: %s", result.dir, ec.message());
  }
  Metrics metrics(result.dir);
  Position pos;
  if (resuming && replicas.lead()) pos = load_checkpoint(result.dir, *model, run_state);
  start_from_rank_zero(*model, run_state, pos);
  // batchnorm statistics over every rank's share, for this run only
  struct SyncedBatchnorm {
    explicit SyncedBatchnorm(int ranks) {
      nn::BatchNorm::sync_statistics(
          {[ranks](const Tensor& t) { return dist::allreduce(t) / ranks; }, ranks});
    }
    ~SyncedBatchnorm() { nn::BatchNorm::sync_statistics({}); }
  };
  std::optional<SyncedBatchnorm> synced;
  if (c.dist.sync_batchnorm && replicas.size > 1) synced.emplace(replicas.size);
  if (resuming) {
    if (schedule) schedule->resume(pos.step);
    Tensor::set_rng_state(pos.rng);
  }
  if (resuming && replicas.lead()) {  // the run's files, which other hosts may not see
    metrics.resume(pos.step);
    if (char_vocab && config::load_run_vocab(result.dir, c).symbols() != vocab->symbols())
      fail("data.path: the text's characters differ from those the run trained on (%s/%s)",
           result.dir, config::kVocabFile);
  }
  config::Config saved = c;
  saved.train.stop_after = 0;  // a one-shot test hook, not part of what the run is
  if (replicas.lead()) {
    replace_file(
        result.dir + "/config.yaml",
        "# the effective config of this run (train --resume reads it)\n" + config::to_yaml(saved));
    // infer maps a chars run's text to tokens with it
    if (char_vocab) replace_file(result.dir + "/" + config::kVocabFile, vocab->symbols());
  }

  Progress progress({.quiet = opts.quiet || !replicas.lead(),
                     .tty = opts.tty.value_or(isatty(fileno(opts.bar)) != 0),
                     .print_every = c.log.print_every,
                     .bar = opts.bar,
                     .log = replicas.lead() ? opts.log : nullptr});
  progress.log(absl::StrFormat("train: %s %s at step %d of %d", resuming ? "resuming" : "run",
                               result.dir, pos.step, total));
  std::string yaml = config::to_yaml(c);
  yaml.pop_back();  // the last newline
  progress.log("config:\n  " + absl::StrReplaceAll(yaml, {{"\n", "\n  "}}));
  progress.log(absl::StrFormat("model %s: %d parameters; data %s: %d batches of %d per epoch",
                               c.model.name, parameter_count(*model), c.data.name, per_epoch,
                               whole.train.batch_size));
  if (replicas.size > 1)
    progress.log(absl::StrFormat(
        "data parallel: %d ranks x %d samples a step; gradients averaged in buckets of %g MB%s",
        replicas.size, c.train.batch_size, c.dist.bucket_mb,
        c.dist.sync_batchnorm ? "; batchnorm statistics over all ranks" : ""));
  if (narrow && runtime::default_device() == "CPU")
    progress.log(absl::StrFormat(
        "train.dtype %s: the CPU stores %s but computes in float32, so this checks mixed "
        "precision rather than speeding it up (expect it slower than float32 here)",
        narrow->name(), narrow->name()));

  const double grad_clip = c.optim.grad_clip;
  TinyJit train_step([&](const std::vector<Tensor>& in) {
    Tensor::Train train;
    Tensor::Autocast precision(narrow);
    opt->zero_grad();
    Tensor loss = (*model)(in[0]).sparse_categorical_crossentropy(in[1]);
    (scaler ? scaler->scale(loss) : loss).backward();
    if (replicas.size > 1) {
      dist::average_gradients(opt->params(), static_cast<int64_t>(c.dist.bucket_mb * (1 << 20)));
      loss = dist::allreduce(loss.detach()) / replicas.size;  // the whole batch's
    }
    std::optional<Tensor> finite;  // a float16 step with inf/NaN gradients is skipped
    if (scaler) finite = scaler->unscale(opt->params());
    if (grad_clip > 0) nn::clip_grad_norm(opt->params(), grad_clip);
    std::vector<Tensor> to_realize = opt->schedule_step(finite);
    if (scaler)
      for (const Tensor& t : scaler->update(*finite)) to_realize.push_back(t);
    for (const Tensor& b : model->buffers()) to_realize.push_back(b);  // batchnorm statistics
    to_realize.push_back(loss);
    realize_all(to_realize);
    return std::vector<Tensor>{loss};
  });
  TinyJit eval_step([&](const std::vector<Tensor>& in) {
    Tensor::Train eval(false);
    Tensor::Autocast precision(narrow);
    std::vector<Tensor> out = per_sample_loss_and_hits((*model)(in[0]), in[1]);
    realize_all(out);
    return out;
  });
  auto evaluate = [&] {
    double t0 = now_seconds();
    double totals[3] = {0, 0, 0};  // loss, hits, samples: over every rank's share of the batches
    for (int64_t i = replicas.rank; i < data->eval_batches(); i += replicas.size) {
      StepBatch b = data->eval_batch(i);
      std::vector<Tensor> out = eval_step({b.x, b.y});
      std::vector<float> l = out[0].data<float>(), h = out[1].data<float>();
      for (int64_t k = 0; k < b.valid; k++) totals[0] += l[k], totals[1] += h[k];
      totals[2] += static_cast<double>(b.valid);
    }
    dist::allreduce(totals, totals, 3, dtypes::float64, dist::ReduceOp::kSum, "the eval totals");
    result.eval_loss = totals[0] / totals[2];
    result.eval_accuracy = totals[1] / totals[2];
    metrics.set_eval(*result.eval_loss, *result.eval_accuracy);
    progress.log(absl::StrFormat("eval step %d (epoch %d): loss %.4f  accuracy %.2f%%  (%.1f s)",
                                 pos.step, pos.epoch + (pos.batch == 0 ? 0 : 1), *result.eval_loss,
                                 100 * *result.eval_accuracy, now_seconds() - t0));
  };
  auto every = [](int64_t step, int64_t n, bool otherwise) {
    return n > 0 ? step % n == 0 : otherwise;
  };

  const double start = now_seconds();
  bool new_epoch = true;
  while (pos.step < total) {
    if (new_epoch) {
      data->seek(pos.epoch, pos.batch);
      // the bar ends where this epoch's steps do: its end, or train.max_steps inside it
      progress.start_epoch(pos.epoch + 1, std::min(per_epoch, pos.batch + total - pos.step),
                           pos.batch);
      new_epoch = false;
    }
    const double lr = schedule ? schedule->lr_at(pos.step) : c.optim.lr;
    const double t0 = now_seconds();
    StepBatch b = data->next_train();
    const int64_t whole_batch = b.y.shape()[0];
    if (replicas.size > 1) {  // this rank's share
      const int64_t share = whole_batch / replicas.size, at = replicas.rank * share;
      auto rows = [&](const Tensor& t) {
        std::vector<std::pair<int64_t, int64_t>> r = {{at, at + share}};
        for (int d = 1; d < t.ndim(); d++) r.push_back({0, t.shape()[d]});
        return t.shrink(r);
      };
      b.x = rows(b.x), b.y = rows(b.y);
    }
    result.loss = train_step({b.x, b.y})[0].item<float>();
    const double seconds = now_seconds() - t0;
    if (c.dist.check_replicas && replicas.size > 1) check_replicas(*model, pos.step + 1);
    if (!std::isfinite(result.loss))
      fail("train: the loss is %f at step %d (learning rate too high?)", result.loss, pos.step + 1);
    pos.step++;
    pos.batch++;
    if (schedule) schedule->step();
    MetricRow row;
    row.step = pos.step;
    row.epoch = pos.epoch + 1;
    row.loss = result.loss;
    row.lr = lr;
    row.samples_per_s = static_cast<double>(whole_batch) / seconds;
    if (vocab)  // y: (B, T)
      row.tokens_per_s = static_cast<double>(whole_batch * b.y.shape()[1]) / seconds;
    metrics.add(row);
    progress.step(pos.step, pos.batch, result.loss, row.samples_per_s, row.tokens_per_s, seconds);
    const bool epoch_end = pos.batch == per_epoch, last = pos.step == total;
    if (epoch_end) {  // the position of the next step: the start of the next epoch
      progress.end_epoch();
      pos.epoch++;
      pos.batch = 0;
      new_epoch = true;
    }
    if (every(pos.step, c.train.eval_every, epoch_end) || last) evaluate();
    bool interrupted = opts.interrupt && opts.interrupt->load();
    if (replicas.size > 1) {  // every rank stops after the same step
      int32_t any = interrupted;
      dist::allreduce(&any, &any, 1, dtypes::int32, dist::ReduceOp::kMax, "the interrupt flag");
      interrupted = any != 0;
    }
    if (replicas.lead() &&
        (every(pos.step, c.train.checkpoint_every, epoch_end) || last || interrupted)) {
      // metrics first: a kill between the two leaves rows past the checkpoint, which a resume
      // drops and writes again, never a checkpoint past the rows
      metrics.write();
      pos.rng = Tensor::rng_state();
      save_checkpoint(result.dir, *model, run_state, pos);
    }
    result.steps = pos.step;
    if (interrupted) {
      progress.log(absl::StrFormat(
          "interrupted: checkpoint at step %d in %s; continue with: train --resume %s", pos.step,
          result.dir, result.dir));
      result.outcome = Outcome::kInterrupted;
      return result;
    }
    if (c.train.stop_after > 0 && pos.step == c.train.stop_after && !last) {
      progress.end_epoch();
      result.outcome = Outcome::kStopped;
      return result;
    }
  }
  result.steps = pos.step;
  std::string accuracy =
      result.eval_accuracy ? absl::StrFormat(", test accuracy %.2f%%", 100 * *result.eval_accuracy)
                           : "";
  progress.log(absl::StrFormat("done: %d steps in %s%s; model %s/%s", pos.step,
                               format_duration(now_seconds() - start), accuracy, result.dir,
                               kModelFile));
  return result;
}

}  // namespace tc::train
