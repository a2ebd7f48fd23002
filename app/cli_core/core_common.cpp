// Shared pieces of the hearth-cli commands without Qt (see core_common.h).
#include "app/cli_core/core_common.h"

#include <charconv>
#include <cmath>
#include <cctype>
#include <cstdio>

#include "app/cli_core/text.h"
#include "engine/util/file_path.h"

namespace hearth::cli::core {

namespace {

std::string_view trimmed(std::string_view s) {
    const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
    while (!s.empty() && space(s.front())) s.remove_prefix(1);
    while (!s.empty() && space(s.back())) s.remove_suffix(1);
    return s;
}

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

// --logit-bias ID=BIAS, each occurrence one pair.
bool readLogitBias(const OptionView& p, std::vector<LogitBias>& out, std::string& error) {
    for (const std::string& item : p.values("logit-bias")) {
        const size_t eq = item.find('=');
        const bool hasEq = eq != std::string::npos && eq > 0;
        long long id = 0;
        double biasValue = 0;
        const bool idOk = hasEq && parseLongLong(std::string_view(item).substr(0, eq), id);
        const std::string_view biasText = hasEq ? trimmed(std::string_view(item).substr(eq + 1)) : std::string_view();
        bool biasOk = false;
        float bias = 0;
        if (equalsIgnoringCase(biasText, "-inf")) {
            bias = -std::numeric_limits<float>::infinity();
        } else {
            biasOk = parseDouble(biasText, biasValue);
            bias = static_cast<float>(biasOk ? biasValue : 0.0);
        }
        if (!hasEq) id = 0;
        if (!idOk || (!biasOk && !std::isinf(bias)) || id < 0 || id > std::numeric_limits<int32_t>::max()) {
            error = "--logit-bias: '" + item + "' is not ID=BIAS (e.g. 42=-1.5 or 42=-inf)";
            return false;
        }
        out.push_back({static_cast<int32_t>(id), bias});
    }
    return true;
}

bool readStops(const OptionView& p, std::vector<std::string>& out, std::string& error) {
    for (const std::string& stop : p.values("stop")) {
        if (stop.empty()) {
            error = "--stop: the text must not be empty";
            return false;
        }
        out.push_back(stop);
    }
    return true;
}

}  // namespace

int usageError(const std::string& message) {
    std::fprintf(stderr, "hearth-cli: %s\n(try hearth-cli --help)\n", message.c_str());
    return 2;
}

std::string describeError(const Error& error) {
    std::string lead;
    switch (error.code) {
    case ErrorCode::Io: lead = "cannot read or write the file"; break;
    case ErrorCode::InvalidFormat: lead = "the file is not a valid model"; break;
    case ErrorCode::Unsupported: lead = "not supported"; break;
    case ErrorCode::InvalidArgument: lead = "invalid setting"; break;
    case ErrorCode::OutOfMemory: lead = "not enough memory"; break;
    case ErrorCode::Cancelled: lead = "cancelled"; break;
    case ErrorCode::Device: lead = "the GPU failed"; break;
    }
    // One line, whatever the file put in names or strings.
    return lead + ": " + withoutControls(error.message);
}

int failWith(const Error& error) {
    std::fprintf(stderr, "hearth-cli: %s\n", describeError(error).c_str());
    return 1;
}

void writeOut(std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

Json toJson(const std::vector<TokenId>& ids) {
    Json::Array a;
    a.reserve(ids.size());
    for (TokenId id : ids) a.emplace_back(static_cast<int64_t>(id));
    return a;
}

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::vector<OptionSpec> commonOptionSpecs() {
    return {
        {"model", "GGUF model file.", "path"},
        {"prompt", "Prompt text.", "text"},
        {"prompt-file", "Read the prompt from a file.", "file"},
        {"raw", "Use the prompt as it is (no chat format).", ""},
        {"system", "System prompt.", "text"},
        {"max-tokens", "Most tokens to generate.", "n", "256"},
        {"temp", "Temperature (0 = greedy).", "t", "0.8"},
        {"top-k", "Top-k (0 = off).", "k", "40"},
        {"top-p", "Top-p (1 = off).", "p", "0.95"},
        {"seed", "Random seed.", "s", "0"},
        {"json", "One JSON object on stdout.", ""},
        {"text", "Text to tokenize.", "text"},
        {"no-bos", "Do not add BOS.", ""},
        {"ctx", "Context length (0 = the model's).", "n", "0"},
        {"top-logits", "With --json: the N highest logits behind each generated token.", "n", "0"},
        {"min-p", "Min-p (0 = off).", "p", "0.05"},
        {"typical-p", "Typical-p (1 = off).", "p", "1"},
        {"repeat-penalty", "Repetition penalty (1 = off).", "r", "1"},
        {"repeat-last-n", "Tokens the penalties look back over (0 = off, -1 = all).", "n", "64"},
        {"presence-penalty", "Presence penalty (0 = off).", "p", "0"},
        {"frequency-penalty", "Frequency penalty (0 = off).", "f", "0"},
        {"logit-bias", "Add BIAS to token ID's logit (repeatable; -inf bans it).", "id=bias"},
        {"stop", "Stop before this text (repeatable; never shown).", "text"},
        {"timeout-ms", "Stop after this many milliseconds (0 = no limit).", "n", "0"},
        {"requests", "batch: a JSON Lines file of requests.", "file"},
        {"sequential", "batch: one request after another.", ""},
        {"kv-type", "KV cache element type: f16 or q8_0 (half the memory).", "type", "f16"},
        {"beams", "generate: beam search with K beams (1 = off; greedy beams, no sampling).", "k", "1"},
        {"beam-length-norm", "generate --beams: rank beams by sum of log-probs / length^A (0 = off).", "a", "0"},
        {"spec",
         "generate: speculative decoding with the n-gram drafter, the window's Default (n-gram trees) or a draft "
         "model.",
         "ngram|auto|draft:PATH"},
        {"spec-max", "generate --spec: most tokens drafted per step (1..32).", "n", "8"},
        {"no-think", "chat, generate: a thinking model that can skip its reasoning (Qwen 3) answers at once.", ""},
    };
}

std::vector<OptionSpec> storeOptionSpecs() {
    return {{"db", "Conversation database (SQLite).", "path"},
            {"conversation", "Conversation: its id or any name (created when absent).", "id"},
            {"no-kv-restore", "Recompute the conversation's KV instead of restoring it from the database.", ""},
            {"disk-budget-mb", "Disk budget of the database in MiB (KV blocks are evicted beyond it).", "mb", "2048"}};
}

bool parseDouble(std::string_view s, double& out) {
    s = trimmed(s);
    bool plus = false;
    if (!s.empty() && s.front() == '+') {
        s.remove_prefix(1);
        plus = true;
    }
    if (s.empty() || s.front() == '+' || (plus && s.front() == '-')) return false;
    // Of the words, Qt reads "inf" (signed or not) and an unsigned "nan", in any case; not "infinity".
    const std::string_view word = !s.empty() && s.front() == '-' ? s.substr(1) : s;
    if (!word.empty() && std::isalpha(static_cast<unsigned char>(word.front()))) {
        if (equalsIgnoringCase(word, "inf")) {
            out = s.front() == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
            return true;
        }
        if (equalsIgnoringCase(s, "nan") && !plus) {
            out = std::numeric_limits<double>::quiet_NaN();
            return true;
        }
        return false;
    }
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out, std::chars_format::general);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parseLongLong(std::string_view s, long long& out) {
    s = trimmed(s);
    bool plus = false;
    if (!s.empty() && s.front() == '+') {
        s.remove_prefix(1);
        plus = true;
    }
    if (s.empty() || s.front() == '+' || (plus && s.front() == '-')) return false;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parseULongLong(std::string_view s, unsigned long long& out) {
    s = trimmed(s);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    if (s.empty() || s.front() == '+' || s.front() == '-') return false;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool readSampling(const OptionView& p, GenerateRequest& req, std::string& error) {
    SamplingParams& s = req.sampling;
    return number(p, "max-tokens", req.maxTokens, error) && number(p, "top-logits", req.nTopLogits, error) &&
        number(p, "temp", s.temperature, error) && number(p, "top-k", s.topK, error) &&
        number(p, "top-p", s.topP, error) && number(p, "min-p", s.minP, error) &&
        number(p, "typical-p", s.typicalP, error) && number(p, "repeat-penalty", s.repeatPenalty, error) &&
        number(p, "repeat-last-n", s.repeatLastN, error) && number(p, "presence-penalty", s.presencePenalty, error) &&
        number(p, "frequency-penalty", s.frequencyPenalty, error) && number(p, "seed", s.seed, error) &&
        number(p, "timeout-ms", req.timeoutMs, error) && readLogitBias(p, s.logitBias, error) &&
        readStops(p, req.stop, error);
}

Result<EngineOptions> readEngineOptions(const OptionView& p) {
    EngineOptions options;
    long long ctx = 0;
    if (!parseLongLong(p.value("ctx"), ctx) || ctx < std::numeric_limits<int>::min() ||
        ctx > std::numeric_limits<int>::max())
        return fail(ErrorCode::InvalidArgument, "--ctx must be a number");
    options.contextLength = static_cast<int>(ctx);
    const auto kvType = parseKvElementType(p.value("kv-type"));
    if (!kvType) return fail(ErrorCode::InvalidArgument, "--kv-type must be f16 or q8_0");
    options.kvType = *kvType;
    return options;
}

Result<std::unique_ptr<Engine>> loadEngine(const OptionView& p, bool packWeights) {
    auto options = readEngineOptions(p);
    if (!options) return std::unexpected(options.error());
    options->packWeights = packWeights;
    auto engine = Engine::load(p.value("model"), *options);
    // A packed-weights cache file that failed its checks was ignored and rewritten: said once.
    if (engine && !(*engine)->packCacheReport().note.empty())
        std::fprintf(stderr, "%s\n", (*engine)->packCacheReport().note.c_str());
    return engine;
}

// The prompt text of generate's options (--prompt or --prompt-file); usage errors as text.
bool readPromptText(const OptionView& p, std::string& prompt, std::string& error) {
    if (p.isSet("prompt") == p.isSet("prompt-file")) {
        error = "needs --prompt or --prompt-file";
        return false;
    }
    prompt = p.value("prompt");
    if (!p.isSet("prompt-file")) return true;
    const std::string path = p.value("prompt-file");
    if (!readWholeFile(path, prompt)) {
        error = "cannot open " + path;
        return false;
    }
    return true;
}

bool thinks(const OptionView& p) { return !p.isSet("no-think"); }

bool readRequest(const OptionView& p, const Engine& e, GenerateRequest& req, std::string& error) {
    std::string prompt;
    if (!readSampling(p, req, error) || !readPromptText(p, prompt, error)) return false;
    if (req.maxTokens < 0) {
        error = "--max-tokens must be >= 0";
        return false;
    }
    if (p.isSet("raw")) {
        req.prompt = e.rawPrompt(prompt);
        return true;
    }
    std::vector<ChatMessage> messages;
    if (p.isSet("system")) messages.push_back({ChatRole::System, p.value("system")});
    messages.push_back({ChatRole::User, prompt});
    req.prompt = e.chatPrompt(messages, {.enableThinking = thinks(p)});
    return true;
}

std::string_view record(Outcome& o, const EngineEvent& e) {
    if (e.kind == EngineEvent::Kind::Token) {
        o.tokens.push_back(e.token);
        if (!e.topLogits.empty()) o.topLogits.push_back(e.topLogits);
    } else {
        o.reason = e.reason;
        o.timings = e.timings;
        o.error = e.error;
        o.finished = true;
    }
    o.text += e.text;
    return e.text;
}

Json generateJson(const GenerateRequest& req, const Outcome& o, double loadMs) {
    const GenerateTimings& t = o.timings;
    Json timings = Json::Object{{"load_ms", loadMs},
                                {"prefix_cache_hit_tokens", t.prefixCacheHitTokens},
                                {"prefill_tokens", t.prefillTokens},
                                {"prefill_ms", t.prefillMs},
                                {"ttft_ms", t.ttftMs},
                                {"decode_tokens", t.decodeTokens},
                                {"decode_ms", t.decodeMs}};
    Json obj = Json::Object{{"prompt_tokens", toJson(req.prompt)},
                            {"tokens", toJson(o.tokens)},
                            {"text", o.text},
                            {"finish_reason", finishReasonName(o.reason)},
                            {"timings", timings}};
    if (o.error) obj.insert("error", describeError(*o.error));
    if (req.nTopLogits > 0) {
        Json::Array perToken;
        for (const auto& top : o.topLogits) {
            Json::Array pairs;
            for (const auto& [id, logit] : top)
                pairs.push_back(Json::Array{Json(static_cast<int64_t>(id)), Json(logit)});
            perToken.push_back(std::move(pairs));
        }
        obj.insert("top_logits", std::move(perToken));
    }
    return obj;
}

void printStats(const Outcome& o) {
    const GenerateTimings& t = o.timings;
    const double tps = t.decodeTokensPerSecond();
    std::fprintf(stderr,
                 "[%d prompt tokens (%d cached) in %.0f ms; first token after %.0f ms; decode %.2f tokens/s (%d tokens "
                 "in %.0f ms); %s]\n",
                 t.prefixCacheHitTokens + t.prefillTokens, t.prefixCacheHitTokens, t.prefillMs, t.ttftMs, tps,
                 t.decodeTokens, t.decodeMs, finishReasonName(o.reason));
}

}  // namespace hearth::cli::core
