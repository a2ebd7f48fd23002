// hearth-cli synth: writes a synthetic model (engine/model/synth.h) of a named shape in one
// weight type, for benchmarks and tests.
#include <QFileInfo>
#include <cstdio>
#include <optional>

#include "app/cli/cli_commands.h"
#include "app/cli/cli_common.h"
#include "engine/model/synth.h"
#include "engine/str_cat.h"

namespace hearth::cli {
namespace {

// The weight type called name ("Q4_0", case-insensitive).
std::optional<DType> weightTypeNamed(const QString& name) {
    for (uint32_t id = 0; id < 64; ++id) {
        const DTypeInfo info = dtypeInfo(id);
        if (info.name != nullptr && isWeightType(static_cast<DType>(id)) &&
            name.compare(QLatin1String(info.name), Qt::CaseInsensitive) == 0)
            return static_cast<DType>(id);
    }
    return std::nullopt;
}

int cmdSynth(const QCommandLineParser& p) {
    if (!p.isSet("shape") || !p.isSet("type") || !p.isSet("out"))
        return usageError("synth needs --shape, --type and --out");
    auto shape = findSynthShape(p.value("shape").toStdString());
    if (!shape) return usageError(QString::fromStdString(shape.error().message));
    const std::optional<DType> type = weightTypeNamed(p.value("type"));
    if (!type)
        return usageError("--type: '" + p.value("type") +
                          "' is not a weight type (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)");
    SynthOptions options;
    options.type = *type;
    QString error;
    if (p.isSet("seed") && !number(p, "seed", options.seed, error)) return usageError(error);
    if (p.isSet("vocab")) options.vocabFrom = p.value("vocab").toStdString();
    const auto t0 = Clock::now();
    if (auto ok = writeSynthModel(*shape, options, p.value("out").toStdString()); !ok) return failWith(ok.error());
    std::fprintf(stderr, "%s\n",
                 strCat("wrote ", p.value("out").toStdString(), ": ", shape->name, " ", dtypeInfo(*type).name, ", ",
                        QFileInfo(p.value("out")).size() / 1000000, " MB in ", static_cast<int64_t>(msSince(t0)), " ms")
                     .c_str());
    return 0;
}

QList<QCommandLineOption> synthOptions() {
    return {
        {"shape", "Model shape (see the usage text).", "name"},
        {"type", "Weight type (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K).", "type"},
        {"out", "Output GGUF file.", "path"},
        {"vocab", "A GGUF whose vocabulary (tokenizer.* keys) the model takes, e.g. llama.cpp's ggml-vocab-qwen2.gguf.",
         "path"}};
}

}  // namespace

Command synthCommand() {
    return {"synth",
            "  synth    --shape NAME --type TYPE --out PATH [--seed S] [--vocab GGUF]\n"
            "           a model with random weights in a family's layout (shapes: tiny, tiny-gemma3,\n"
            "           tiny-qwen2, tiny-qwen3, tiny-phi3, tiny-gemma2, llama-110m, smollm2-135m,\n"
            "           gemma3-270m, tinyllama-1.1b, llama-8b, llama3.2-1b, qwen2.5-0.5b, qwen3-0.6b,\n"
            "           phi3-mini, gemma2-2b); --vocab copies a real vocabulary from another GGUF\n",
            synthOptions, cmdSynth};
}

}  // namespace hearth::cli
