// infer serve's OpenAI endpoints for a language model: /v1/completions and /v1/chat/completions,
// answered whole or streamed as server-sent events, their sequences decoded together by the model
// thread (continuous batching).
#include <random>

#include "apps/infer/server_impl.h"

namespace tc::infer {

using namespace serving;  // the parts the server's files share (server_impl.h)

namespace {

// The length of `s` without a UTF-8 character that is cut at its end (streamed text holds such a
// tail back until the next token completes it, so a character is never sent in two halves).
size_t complete_utf8_prefix(std::string_view s) {
  for (size_t back = 1; back <= std::min<size_t>(3, s.size()); back++) {
    auto c = static_cast<unsigned char>(s[s.size() - back]);
    if ((c & 0xc0) == 0x80) continue;  // a continuation byte: look further back
    size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > back ? s.size() - back : s.size();
  }
  return s.size();
}

// One choice of a completion: its text for /v1/completions; for a chat, the assistant's message
// (streamed: a delta of it).
Json choice(bool chat, const std::string& text, const Json& finish_reason, bool streamed) {
  if (!chat)
    return {{"text", text}, {"index", 0}, {"logprobs", nullptr}, {"finish_reason", finish_reason}};
  return {{"index", 0},
          {streamed ? "delta" : "message", {{"role", "assistant"}, {"content", text}}},
          {"logprobs", nullptr},
          {"finish_reason", finish_reason}};
}

}  // namespace

// Continuous batching: queued completions start whenever a slot is free, every active slot
// advances one token per step, and an abandoned one is cancelled before the next step.
void Server::Impl::generate_loop() {
  std::map<int64_t, std::shared_ptr<CompletionJob>> active;  // by slot
  std::vector<std::shared_ptr<CompletionJob>> starting;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu);
      work.wait(lock, [&] { return model_stop || !texts.empty() || !active.empty(); });
      if (model_stop) break;
      starting.clear();
      while (!texts.empty() &&
             generator->active() + static_cast<int64_t>(starting.size()) < generator->slots()) {
        if (!texts.front()->abandoned) starting.push_back(texts.front());
        texts.pop_front();
      }
      publish_queue_depth();
    }
    // Prefills run outside the lock: the HTTP thread queues requests meanwhile.
    for (const std::shared_ptr<CompletionJob>& job : starting) {
      try {
        int64_t slot = generator->start(job->prompt, job->params);
        TC_CHECK(slot >= 0, "no free slot although ", generator->active(), " of ",
                 generator->slots(), " are busy");
        active[slot] = job;
      } catch (const Error& e) {
        job->fail(400, e.what());
      }
    }
    for (auto it = active.begin(); it != active.end();) {
      if (it->second->abandoned) {
        generator->cancel(it->first);
        it = active.erase(it);
      } else {
        ++it;
      }
    }
    metrics.set_active_sequences(static_cast<int64_t>(active.size()));
    if (active.empty()) continue;
    Clock::time_point t0 = Clock::now();
    try {
      std::vector<Emitted> emitted = generator->step();
      metrics.record_step(static_cast<int64_t>(active.size()), static_cast<int64_t>(emitted.size()),
                          seconds_between(t0, Clock::now()));
      for (const Emitted& e : emitted) {
        auto it = active.find(e.slot);
        if (it == active.end()) continue;
        if (it->second->tokens == 0)
          metrics.record_first_token(seconds_between(it->second->arrival, Clock::now()));
        it->second->deliver(e);
        if (e.finished) active.erase(it);
      }
    } catch (const std::exception& e) {
      for (auto& [slot, job] : active) {
        generator->cancel(slot);
        job->fail(500, std::string("generation failed: ") + e.what());
      }
      active.clear();
    }
    metrics.set_active_sequences(static_cast<int64_t>(active.size()));
  }
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& job : texts) job->fail(503, "the server is shutting down");
  for (const auto& [slot, job] : active) job->fail(503, "the server is shutting down");
  texts.clear();
}

http::Response Server::Impl::complete(const http::Request& req) {
  CompletionRequest r = parse_completion(req.body, opt.max_tokens);
  std::vector<int32_t> prompt;
  try {
    prompt = generator->encode(r.prompt);
  } catch (const Error& e) {
    throw RequestError(400, e.what());
  }
  return answer_completion(req, r, std::move(prompt), false);
}

http::Response Server::Impl::chat(const http::Request& req) {
  CompletionRequest r = parse_chat_completion(req.body, opt.max_tokens);
  std::vector<llm::ChatMessage> messages;
  for (const ChatTurn& t : r.messages) messages.push_back({t.role, t.content});
  std::vector<int32_t> prompt;
  try {
    prompt = llm->encode_chat(messages);
  } catch (const Error& e) {
    throw RequestError(400, std::string("messages: ") + e.what());
  }
  if (static_cast<int64_t>(prompt.size()) >= generator->context())
    throw RequestError(400, absl::StrFormat("messages: %d tokens do not fit the context of %d "
                                            "with room for a reply",
                                            prompt.size(), generator->context()));
  return answer_completion(req, r, std::move(prompt), true);
}

// Queues the completion of `prompt` and answers it whole, or streamed as server-sent events:
// OpenAI's text_completion objects, or chat.completion ones for a chat.
http::Response Server::Impl::answer_completion(const http::Request& req, const CompletionRequest& r,
                                               std::vector<int32_t> prompt, bool chat) {
  auto job = std::make_shared<CompletionJob>();
  job->prompt = std::move(prompt);
  job->params = {.max_tokens = r.max_tokens,
                 .temperature = r.temperature,
                 .top_k = r.top_k,
                 .top_p = r.top_p,
                 .min_p = r.min_p,
                 .repetition_penalty = r.repetition_penalty,
                 .stop = r.stop,
                 .seed = r.seed ? *r.seed : std::random_device()()};
  job->waker = req.waker;
  Clock::time_point until = deadline();
  enqueue(texts, job);
  Json head = {{"id", (chat ? "chatcmpl-" : "cmpl-") + std::to_string(next_id++)},
               {"object", chat ? "chat.completion" : "text_completion"},
               {"created", std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count()},
               {"model", model_name}};
  if (!r.stream)
    return http::Response::later_by(
        until, [this, job, head, until, chat]() -> std::optional<http::Response> {
          std::lock_guard<std::mutex> lock(job->mu);
          if (!job->done) {
            if (Clock::now() < until) return std::nullopt;
            job->abandoned = true;
            throw RequestError(504, timeout_message());
          }
          if (job->error_status) throw RequestError(job->error_status, job->error);
          Json out = head;
          out["choices"] = {choice(chat, job->text, Json(job->finish_reason), false)};
          int64_t prompt_tokens = static_cast<int64_t>(job->prompt.size());
          out["usage"] = {{"prompt_tokens", prompt_tokens},
                          {"completion_tokens", job->tokens},
                          {"total_tokens", prompt_tokens + job->tokens}};
          http::Response res;
          res.body = dump(out);
          return res;
        });
  // Server-sent events, one per token (OpenAI's chunk objects), then "data: [DONE]". The stream
  // takes the tokens generated since it last sent (its connection sleeps until the model thread
  // wakes it); the model thread never waits for a client.
  http::Response res;
  res.content_type = "text/event-stream";
  res.headers = {{"Cache-Control", "no-cache"}};
  res.deadline = until;
  if (chat) head["object"] = "chat.completion.chunk";
  auto held = std::make_shared<std::string>();  // the start of a UTF-8 character cut by a token
  res.stream = [this, job, head, until, held, chat]() -> http::Chunk {
    std::string text, finish_reason, error;
    int error_status = 0;
    bool done = false;
    {
      std::lock_guard<std::mutex> lock(job->mu);
      text = *held + std::move(job->text);
      job->text.clear();
      done = job->done, finish_reason = job->finish_reason;
      error_status = job->error_status, error = job->error;
    }
    if (!done && Clock::now() >= until) {
      job->abandoned = true;
      done = true, error_status = 504, error = timeout_message();
    }
    size_t send = done ? text.size() : complete_utf8_prefix(text);
    *held = text.substr(send);
    text.resize(send);
    std::string events;
    auto event = [&](const std::string& data) { events += "data: " + data + "\n\n"; };
    if (!text.empty() || (done && !error_status)) {
      Json chunk = head;
      chunk["choices"] = {
          choice(chat, text, done && !error_status ? Json(finish_reason) : Json(nullptr), true)};
      event(dump(chunk));
    }
    if (done) {
      if (error_status) event(error_body(error_status, error));
      event("[DONE]");
    }
    return {std::move(events), done};
  };
  // The client went away (or the stream ended): a sequence still decoding is cancelled.
  res.on_close = [job] {
    std::lock_guard<std::mutex> lock(job->mu);
    if (!job->done) job->abandoned = true;
  };
  return res;
}

}  // namespace tc::infer
