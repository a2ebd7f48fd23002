// Shared pieces of the hearth-cli commands (see cli_common.h).
#include "app/cli/cli_common.h"

#include <QFile>
#include <cmath>
#include <cstdio>

#include "app/common/error_text.h"

namespace hearth::cli {

int usageError(const QString& message) {
    std::fprintf(stderr, "hearth-cli: %s\n(try hearth-cli --help)\n", qPrintable(message));
    return 2;
}

int failWith(const Error& error) {
    std::fprintf(stderr, "hearth-cli: %s\n", describe(error).toUtf8().constData());
    return 1;
}

void writeOut(std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

QJsonArray toJson(const std::vector<TokenId>& ids) {
    QJsonArray a;
    for (TokenId id : ids) a.append(id);
    return a;
}

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

QList<QCommandLineOption> commonOptions() {
    return {
        {"model", "GGUF model file.", "path"},
        {"prompt", "Prompt text.", "text"},
        {"prompt-file", "Read the prompt from a file.", "file"},
        {"raw", "Use the prompt as it is (no chat format)."},
        {"system", "System prompt.", "text"},
        {"max-tokens", "Most tokens to generate.", "n", "256"},
        {"temp", "Temperature (0 = greedy).", "t", "0.8"},
        {"top-k", "Top-k (0 = off).", "k", "40"},
        {"top-p", "Top-p (1 = off).", "p", "0.95"},
        {"seed", "Random seed.", "s", "0"},
        {"json", "One JSON object on stdout."},
        {"text", "Text to tokenize.", "text"},
        {"no-bos", "Do not add BOS."},
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
        {"sequential", "batch: one request after another."},
        {"kv-type", "KV cache element type: f16 or q8_0 (half the memory).", "type", "f16"},
        {"beams", "generate: beam search with K beams (1 = off; greedy beams, no sampling).", "k", "1"},
        {"beam-length-norm", "generate --beams: rank beams by sum of log-probs / length^A (0 = off).", "a", "0"},
        {"spec", "generate: speculative decoding with the n-gram drafter or a draft model.", "ngram|draft:PATH"},
        {"spec-max", "generate --spec: most tokens drafted per step (1..32).", "n", "8"},
        {"no-think", "chat, generate: a thinking model that can skip its reasoning (Qwen 3) answers at once."},
    };
}

bool parseOptions(QCommandLineParser& p, const QStringList& args, QString& error,
                  const QList<QCommandLineOption>& extra) {
    p.addOptions(commonOptions());
    p.addOptions(extra);
    if (!p.parse(args)) {
        error = p.errorText();
        return false;
    }
    return true;
}

// --logit-bias ID=BIAS, each occurrence one pair.
bool readLogitBias(const QCommandLineParser& p, std::vector<LogitBias>& out, QString& error) {
    for (const QString& item : p.values("logit-bias")) {
        const qsizetype eq = item.indexOf('=');
        bool idOk = false, biasOk = false;
        const qlonglong id = eq > 0 ? item.left(eq).toLongLong(&idOk) : 0;
        const QString biasText = eq > 0 ? item.mid(eq + 1).trimmed() : QString();
        const float bias = biasText.compare("-inf", Qt::CaseInsensitive) == 0
            ? -std::numeric_limits<float>::infinity()
            : static_cast<float>(biasText.toDouble(&biasOk));
        if (!idOk || (!biasOk && !std::isinf(bias)) || id < 0 || id > std::numeric_limits<int32_t>::max()) {
            error = QStringLiteral("--logit-bias: '%1' is not ID=BIAS (e.g. 42=-1.5 or 42=-inf)").arg(item);
            return false;
        }
        out.push_back({static_cast<int32_t>(id), bias});
    }
    return true;
}

bool readStops(const QCommandLineParser& p, std::vector<std::string>& out, QString& error) {
    for (const QString& stop : p.values("stop")) {
        if (stop.isEmpty()) {
            error = "--stop: the text must not be empty";
            return false;
        }
        out.push_back(stop.toStdString());
    }
    return true;
}

bool readSampling(const QCommandLineParser& p, GenerateRequest& req, QString& error) {
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

Result<EngineOptions> readEngineOptions(const QCommandLineParser& p) {
    EngineOptions options;
    bool ok = false;
    options.contextLength = p.value("ctx").toInt(&ok);
    if (!ok) return fail(ErrorCode::InvalidArgument, "--ctx must be a number");
    const auto kvType = parseKvElementType(p.value("kv-type").toStdString());
    if (!kvType) return fail(ErrorCode::InvalidArgument, "--kv-type must be f16 or q8_0");
    options.kvType = *kvType;
    return options;
}

Result<std::unique_ptr<Engine>> loadEngine(const QCommandLineParser& p) {
    auto options = readEngineOptions(p);
    if (!options) return std::unexpected(options.error());
    return Engine::load(p.value("model").toStdString(), *options);
}

// The prompt text of generate's options (--prompt or --prompt-file); usage errors as text.
bool readPromptText(const QCommandLineParser& p, std::string& prompt, QString& error) {
    if (p.isSet("prompt") == p.isSet("prompt-file")) {
        error = "needs --prompt or --prompt-file";
        return false;
    }
    prompt = p.value("prompt").toStdString();
    if (!p.isSet("prompt-file")) return true;
    QFile f(p.value("prompt-file"));
    if (!f.open(QIODevice::ReadOnly)) {
        error = "cannot open " + f.fileName();
        return false;
    }
    prompt = f.readAll().toStdString();
    return true;
}

bool thinks(const QCommandLineParser& p) { return !p.isSet("no-think"); }

// A request from generate's options: sampling, limits, and the prompt (chat-formatted
// unless --raw).
bool readRequest(const QCommandLineParser& p, const Engine& e, GenerateRequest& req, QString& error) {
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
    if (p.isSet("system")) messages.push_back({ChatRole::System, p.value("system").toStdString()});
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

QJsonObject resultJson(const GenerateRequest& req, const Outcome& o, double loadMs) {
    const GenerateTimings& t = o.timings;
    QJsonObject timings{{"load_ms", loadMs},
                        {"prefix_cache_hit_tokens", t.prefixCacheHitTokens},
                        {"prefill_tokens", t.prefillTokens},
                        {"prefill_ms", t.prefillMs},
                        {"ttft_ms", t.ttftMs},
                        {"decode_tokens", t.decodeTokens},
                        {"decode_ms", t.decodeMs}};
    QJsonObject obj{{"prompt_tokens", toJson(req.prompt)},
                    {"tokens", toJson(o.tokens)},
                    {"text", QString::fromStdString(o.text)},
                    {"finish_reason", finishReasonName(o.reason)},
                    {"timings", timings}};
    if (o.error) obj.insert("error", describe(*o.error));
    if (req.nTopLogits > 0) {
        QJsonArray perToken;
        for (const auto& top : o.topLogits) {
            QJsonArray pairs;
            for (const auto& [id, logit] : top) pairs.append(QJsonArray{id, logit});
            perToken.append(pairs);
        }
        obj.insert("top_logits", perToken);
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

}  // namespace hearth::cli
