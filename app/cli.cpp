// hearth-cli commands. Each command parses its own options, loads the model through the
// engine facade and prints; errors become one line on stderr and exit code 1 (2 for usage).
#include "app/cli.h"

#include <QCommandLineParser>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <type_traits>
#include <map>
#include <string>

#include "app/error_text.h"
#include "app/info_text.h"
#include "engine/engine.h"
#include "kernels/backend.h"

namespace hearth {
namespace {

using Clock = std::chrono::steady_clock;

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

const char* kUsage =
    "Usage: hearth-cli COMMAND [OPTIONS]\n"
    "Commands:\n"
    "  generate --model PATH (--prompt TEXT | --prompt-file F) [--raw] [--system TEXT]\n"
    "           [--max-tokens N] [SAMPLING] [--json [--top-logits N]]\n"
    "  tokenize --model PATH --text TEXT [--no-bos] [--json]\n"
    "  chat     --model PATH [--system TEXT] [--max-tokens N] [SAMPLING]\n"
    "  info     [--model PATH]\n"
    "Sampling (applied in this order): [--logit-bias ID=BIAS]... (BIAS in [-100, 100] or -inf)\n"
    "  [--repeat-penalty R] [--repeat-last-n N] [--presence-penalty P] [--frequency-penalty F]\n"
    "  [--top-k K] [--typical-p P] [--top-p P] [--min-p P] [--temp T] [--seed S]\n"
    "Options: --help, --version\n";

// Parses the options every command may take; commands reject what they do not use.
bool parseOptions(QCommandLineParser& p, const QStringList& args, QString& error) {
    p.addOptions({
        {"model", "GGUF model file.", "path"}, {"prompt", "Prompt text.", "text"},
        {"prompt-file", "Read the prompt from a file.", "file"}, {"raw", "Use the prompt as it is (no chat format)."},
        {"system", "System prompt.", "text"}, {"max-tokens", "Most tokens to generate.", "n", "256"},
        {"temp", "Temperature (0 = greedy).", "t", "0.8"}, {"top-k", "Top-k (0 = off).", "k", "40"},
        {"top-p", "Top-p (1 = off).", "p", "0.95"}, {"seed", "Random seed.", "s", "0"},
        {"json", "One JSON object on stdout."}, {"text", "Text to tokenize.", "text"},
        {"no-bos", "Do not add BOS."}, {"ctx", "Context length (0 = the model's).", "n", "0"},
        {"top-logits", "With --json: the N highest logits behind each generated token.", "n", "0"},
        {"min-p", "Min-p (0 = off).", "p", "0.05"}, {"typical-p", "Typical-p (1 = off).", "p", "1"},
        {"repeat-penalty", "Repetition penalty (1 = off).", "r", "1"},
        {"repeat-last-n", "Tokens the penalties look back over (0 = off, -1 = all).", "n", "64"},
        {"presence-penalty", "Presence penalty (0 = off).", "p", "0"},
        {"frequency-penalty", "Frequency penalty (0 = off).", "f", "0"},
        {"logit-bias", "Add BIAS to token ID's logit (repeatable; -inf bans it).", "id=bias"},
    });
    if (!p.parse(args)) {
        error = p.errorText();
        return false;
    }
    return true;
}

template <class T>
bool number(const QCommandLineParser& p, const char* name, T& out, QString& error) {
    bool ok = false;
    const QString s = p.value(name);
    if constexpr (std::is_floating_point_v<T>) out = static_cast<T>(s.toDouble(&ok));
    else if constexpr (std::is_unsigned_v<T>) out = static_cast<T>(s.toULongLong(&ok));
    else {
        const qlonglong v = s.toLongLong(&ok);
        ok = ok && v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
        out = static_cast<T>(v);
    }
    if (!ok) error = QStringLiteral("--%1: '%2' is not a valid number").arg(name, s);
    return ok;
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

bool readSampling(const QCommandLineParser& p, GenerateRequest& req, QString& error) {
    SamplingParams& s = req.sampling;
    return number(p, "max-tokens", req.maxTokens, error) && number(p, "top-logits", req.nTopLogits, error) &&
           number(p, "temp", s.temperature, error) && number(p, "top-k", s.topK, error) &&
           number(p, "top-p", s.topP, error) && number(p, "min-p", s.minP, error) &&
           number(p, "typical-p", s.typicalP, error) && number(p, "repeat-penalty", s.repeatPenalty, error) &&
           number(p, "repeat-last-n", s.repeatLastN, error) && number(p, "presence-penalty", s.presencePenalty, error) &&
           number(p, "frequency-penalty", s.frequencyPenalty, error) && number(p, "seed", s.seed, error) &&
           readLogitBias(p, s.logitBias, error);
}

Result<std::unique_ptr<Engine>> loadEngine(const QCommandLineParser& p) {
    EngineOptions options;
    bool ok = false;
    options.contextLength = p.value("ctx").toInt(&ok);
    if (!ok) return fail(ErrorCode::InvalidArgument, "--ctx must be a number");
    return Engine::load(p.value("model").toStdString(), options);
}

int cmdGenerate(const QCommandLineParser& p) {
    if (!p.isSet("model")) return usageError("generate needs --model");
    if (p.isSet("prompt") == p.isSet("prompt-file")) return usageError("generate needs --prompt or --prompt-file");
    GenerateRequest req;
    QString error;
    if (!readSampling(p, req, error)) return usageError(error);
    if (req.maxTokens < 0) return usageError("--max-tokens must be >= 0");
    std::string prompt = p.value("prompt").toStdString();
    if (p.isSet("prompt-file")) {
        QFile f(p.value("prompt-file"));
        if (!f.open(QIODevice::ReadOnly)) return failWith({ErrorCode::Io, "cannot open " + f.fileName().toStdString()});
        prompt = f.readAll().toStdString();
    }
    const auto tLoad = Clock::now();
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    const double loadMs = std::chrono::duration<double, std::milli>(Clock::now() - tLoad).count();
    Engine& e = **engine;
    if (p.isSet("raw")) req.prompt = e.rawPrompt(prompt);
    else {
        std::vector<ChatMessage> messages;
        if (p.isSet("system")) messages.push_back({"system", p.value("system").toStdString()});
        messages.push_back({"user", prompt});
        req.prompt = e.chatPrompt(messages);
    }
    const bool json = p.isSet("json");
    std::string text;
    auto result = e.generate(req, [&](TokenId, std::string_view piece) {
        text += piece;
        if (!json) writeOut(piece);
        return true;
    });
    if (!result) return failWith(result.error());
    const GenerateTimings& t = result->timings;
    if (json) {
        QJsonObject timings{{"load_ms", loadMs}, {"prefix_cache_hit_tokens", t.prefixCacheHitTokens},
                            {"prefill_tokens", t.prefillTokens}, {"prefill_ms", t.prefillMs},
                            {"ttft_ms", t.ttftMs}, {"decode_tokens", t.decodeTokens}, {"decode_ms", t.decodeMs}};
        QJsonObject o{{"prompt_tokens", toJson(req.prompt)}, {"tokens", toJson(result->tokens)},
                      {"text", QString::fromStdString(text)},
                      {"finish_reason", finishReasonName(result->finishReason)}, {"timings", timings}};
        if (req.nTopLogits > 0) {
            QJsonArray perToken;
            for (const auto& top : result->topLogits) {
                QJsonArray pairs;
                for (const auto& [id, logit] : top) pairs.append(QJsonArray{id, logit});
                perToken.append(pairs);
            }
            o.insert("top_logits", perToken);
        }
        writeOut(QJsonDocument(o).toJson(QJsonDocument::Compact).toStdString() + "\n");
    } else {
        writeOut("\n");
        const double tps = t.decodeMs > 0 ? t.decodeTokens / t.decodeMs * 1000.0 : 0.0;
        std::fprintf(stderr, "[%d prompt tokens (%d cached) in %.0f ms; first token after %.0f ms; decode %.2f tokens/s (%d tokens in %.0f ms); %s]\n",
                     t.prefixCacheHitTokens + t.prefillTokens, t.prefixCacheHitTokens, t.prefillMs, t.ttftMs, tps, t.decodeTokens, t.decodeMs,
                     finishReasonName(result->finishReason));
    }
    return 0;
}

int cmdTokenize(const QCommandLineParser& p) {
    if (!p.isSet("model") || !p.isSet("text")) return usageError("tokenize needs --model and --text");
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    const Tokenizer& tok = (*engine)->tokenizer();
    const std::vector<TokenId> ids =
        tok.encode(p.value("text").toStdString(), tok.addBosByDefault() && !p.isSet("no-bos"), false);
    if (p.isSet("json")) {
        writeOut(QJsonDocument(QJsonObject{{"tokens", toJson(ids)}}).toJson(QJsonDocument::Compact).toStdString() + "\n");
        return 0;
    }
    for (TokenId id : ids) {
        const QString piece = QString::fromStdString(tok.pieceText(id));
        writeOut(QStringLiteral("%1\t%2\n").arg(id).arg(piece).toStdString());
    }
    return 0;
}

int cmdChat(const QCommandLineParser& p) {
    if (!p.isSet("model")) return usageError("chat needs --model");
    GenerateRequest req;
    QString error;
    if (!readSampling(p, req, error)) return usageError(error);
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    Engine& e = **engine;
    std::vector<ChatMessage> messages;
    if (p.isSet("system")) messages.push_back({"system", p.value("system").toStdString()});
    std::fprintf(stderr, "Chatting with %s (%s). /reset starts over, /exit or Ctrl-D quits.\n",
                 e.config().name.c_str(), e.backendName().c_str());
    std::string line;
    while (true) {
        std::fprintf(stderr, "> ");
        std::fflush(stderr);
        if (!std::getline(std::cin, line) || line == "/exit") break;
        if (line == "/reset") { messages.resize(p.isSet("system") ? 1 : 0); continue; }
        if (line.empty()) continue;
        messages.push_back({"user", line});
        req.prompt = e.chatPrompt(messages);
        std::string reply;
        auto result = e.generate(req, [&](TokenId, std::string_view piece) { reply += piece; writeOut(piece); return true; });
        writeOut("\n");
        if (!result) { failWith(result.error()); messages.pop_back(); continue; }
        messages.push_back({"assistant", reply});
    }
    return 0;
}

int cmdInfo(const QCommandLineParser& p) {
    writeOut(backendsText().toStdString());
    if (!p.isSet("model")) return 0;
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    writeOut(modelInfoText(**engine).toStdString());
    return 0;
}

}  // namespace

int runCli(const QStringList& arguments) {
    if (arguments.isEmpty() || arguments.contains("--help") || arguments.contains("-h")) {
        writeOut(kUsage);
        return arguments.isEmpty() ? 2 : 0;
    }
    if (arguments.first() == "--version") {
        writeOut("hearth-cli " HEARTH_VERSION "\n");
        return 0;
    }
    const QString command = arguments.first();
    QCommandLineParser parser;
    QString error;
    if (!parseOptions(parser, QStringList{"hearth-cli"} + arguments.mid(1), error)) return usageError(error);
    if (!parser.positionalArguments().isEmpty())
        return usageError("unexpected argument: " + parser.positionalArguments().first());
    if (command == "generate") return cmdGenerate(parser);
    if (command == "tokenize") return cmdTokenize(parser);
    if (command == "chat") return cmdChat(parser);
    if (command == "info") return cmdInfo(parser);
    return usageError("unknown command: " + command);
}

}  // namespace hearth
