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
#include <optional>
#include <string>

#include "app/error_text.h"
#include "app/info_text.h"
#include "engine/engine.h"
#include "engine/str_cat.h"
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
    "           [--max-tokens N] [--stop STR]... [--timeout-ms N] [SAMPLING] [--json [--top-logits N]]\n"
    "  batch    --model PATH --requests FILE.jsonl [--sequential] [--json]\n"
    "           each line an object of generate's options: {\"prompt\": \"...\", \"max_tokens\": 8,\n"
    "           \"raw\": true, \"stop\": [\"...\"], ...}; all submitted together, or one after\n"
    "           another with --sequential; --json prints one line per request, in input order\n"
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
        {"stop", "Stop before this text (repeatable; never shown).", "text"},
        {"timeout-ms", "Stop after this many milliseconds (0 = no limit).", "n", "0"},
        {"requests", "batch: a JSON Lines file of requests.", "file"},
        {"sequential", "batch: one request after another."},
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

Result<std::unique_ptr<Engine>> loadEngine(const QCommandLineParser& p) {
    EngineOptions options;
    bool ok = false;
    options.contextLength = p.value("ctx").toInt(&ok);
    if (!ok) return fail(ErrorCode::InvalidArgument, "--ctx must be a number");
    return Engine::load(p.value("model").toStdString(), options);
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
    if (p.isSet("system")) messages.push_back({"system", p.value("system").toStdString()});
    messages.push_back({"user", prompt});
    req.prompt = e.chatPrompt(messages);
    return true;
}

// What one request produced, gathered from step() events.
struct Outcome {
    std::vector<TokenId> tokens;
    std::string text;
    std::vector<std::vector<std::pair<TokenId, float>>> topLogits;
    FinishReason reason = FinishReason::Length;
    GenerateTimings timings;
    std::optional<Error> error;
    bool finished = false;
};

// Records an event; returns the text it shows.
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

// generate --json's object.
QJsonObject resultJson(const GenerateRequest& req, const Outcome& o, double loadMs) {
    const GenerateTimings& t = o.timings;
    QJsonObject timings{{"load_ms", loadMs}, {"prefix_cache_hit_tokens", t.prefixCacheHitTokens},
                        {"prefill_tokens", t.prefillTokens}, {"prefill_ms", t.prefillMs},
                        {"ttft_ms", t.ttftMs}, {"decode_tokens", t.decodeTokens}, {"decode_ms", t.decodeMs}};
    QJsonObject obj{{"prompt_tokens", toJson(req.prompt)}, {"tokens", toJson(o.tokens)},
                    {"text", QString::fromStdString(o.text)}, {"finish_reason", finishReasonName(o.reason)},
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
    std::fprintf(stderr, "[%d prompt tokens (%d cached) in %.0f ms; first token after %.0f ms; decode %.2f tokens/s (%d tokens in %.0f ms); %s]\n",
                 t.prefixCacheHitTokens + t.prefillTokens, t.prefixCacheHitTokens, t.prefillMs, t.ttftMs, tps, t.decodeTokens,
                 t.decodeMs, finishReasonName(o.reason));
}

int cmdGenerate(const QCommandLineParser& p) {
    if (!p.isSet("model")) return usageError("generate needs --model");
    if (p.isSet("prompt") == p.isSet("prompt-file")) return usageError("generate needs --prompt or --prompt-file");
    GenerateRequest req;
    QString error;
    if (!readSampling(p, req, error)) return usageError(error);  // before the model loads
    if (req.maxTokens < 0) return usageError("--max-tokens must be >= 0");
    const auto tLoad = Clock::now();
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    const double loadMs = std::chrono::duration<double, std::milli>(Clock::now() - tLoad).count();
    Engine& e = **engine;
    req = GenerateRequest{};
    if (!readRequest(p, e, req, error)) return failWith({ErrorCode::Io, error.toStdString()});  // the prompt file
    const bool json = p.isSet("json");
    auto id = e.submit(req);
    if (!id) return failWith(id.error());
    Outcome o;
    while (!o.finished)
        for (const EngineEvent& ev : e.step())
            if (const std::string_view shown = record(o, ev); !json) writeOut(shown);
    if (o.error) return failWith(*o.error);
    if (json) {
        writeOut(QJsonDocument(resultJson(req, o, loadMs)).toJson(QJsonDocument::Compact).toStdString() + "\n");
    } else {
        writeOut("\n");
        printStats(o);
    }
    return 0;
}

// One line of a batch file as generate's options: {"max_tokens": 8} is --max-tokens 8,
// true is a flag, an array repeats the option.
bool batchLineRequest(const QByteArray& line, const Engine& e, GenerateRequest& req, QString& error) {
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(line, &parseError);
    if (!doc.isObject()) {
        error = "not a JSON object: " + parseError.errorString();
        return false;
    }
    QStringList args{"hearth-cli"};
    const QJsonObject obj = doc.object();
    for (auto it = obj.begin(); it != obj.end(); ++it) {
        const QString option = "--" + QString(it.key()).replace('_', '-');
        const QJsonArray values = it->isArray() ? it->toArray() : QJsonArray{*it};
        for (const QJsonValue& v : values) {
            if (v.isBool()) {
                if (v.toBool()) args << option;
            } else {
                args << option << (v.isString() ? v.toString() : QString::number(v.toDouble(), 'g', 17));
            }
        }
    }
    QCommandLineParser p;
    return parseOptions(p, args, error) && readRequest(p, e, req, error);
}

bool readBatch(const QString& path, const Engine& e, std::vector<GenerateRequest>& out, QString& error) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        error = "cannot open " + path;
        return false;
    }
    int lineNo = 0;
    while (!f.atEnd()) {
        const QByteArray line = f.readLine().trimmed();
        ++lineNo;
        if (line.isEmpty()) continue;
        GenerateRequest req;
        if (!batchLineRequest(line, e, req, error)) {
            error = QStringLiteral("%1 line %2: %3").arg(path).arg(lineNo).arg(error);
            return false;
        }
        out.push_back(std::move(req));
    }
    return true;
}

// Submits requests [from, to) together and steps until all of them have finished.
Result<void> runTogether(Engine& e, const std::vector<GenerateRequest>& reqs, size_t from, size_t to,
                         std::vector<Outcome>& outcomes) {
    std::map<RequestId, size_t> idToIndex;
    for (size_t i = from; i < to; ++i) {
        auto id = e.submit(reqs[i]);
        if (!id) return std::unexpected(id.error());
        idToIndex[*id] = i;
    }
    while (!e.idle())
        for (const EngineEvent& ev : e.step()) record(outcomes[idToIndex.at(ev.request)], ev);
    return {};
}

int cmdBatch(const QCommandLineParser& p) {
    if (!p.isSet("model") || !p.isSet("requests")) return usageError("batch needs --model and --requests");
    const auto tLoad = Clock::now();
    auto engine = loadEngine(p);
    if (!engine) return failWith(engine.error());
    const double loadMs = std::chrono::duration<double, std::milli>(Clock::now() - tLoad).count();
    Engine& e = **engine;
    std::vector<GenerateRequest> reqs;
    QString error;
    if (!readBatch(p.value("requests"), e, reqs, error)) return usageError(error);
    std::vector<Outcome> outcomes(reqs.size());
    const size_t step = p.isSet("sequential") ? 1 : std::max<size_t>(reqs.size(), 1);
    for (size_t from = 0; from < reqs.size(); from += step)
        if (auto r = runTogether(e, reqs, from, std::min(from + step, reqs.size()), outcomes); !r) return failWith(r.error());
    for (size_t i = 0; i < reqs.size(); ++i) {
        if (p.isSet("json")) {
            writeOut(QJsonDocument(resultJson(reqs[i], outcomes[i], loadMs)).toJson(QJsonDocument::Compact).toStdString() + "\n");
            continue;
        }
        writeOut(strCat("[", i, "] ", outcomes[i].text, "\n"));
        printStats(outcomes[i]);
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
    if (command == "batch") return cmdBatch(parser);
    if (command == "info") return cmdInfo(parser);
    return usageError("unknown command: " + command);
}

}  // namespace hearth
