// What counts as English left in the Chinese interface (issue 27): an ASCII word of three letters
// or more that is not a name or a unit. The allow-list holds the names (Hearth, GGUF, the model
// sources, sampler names) and units (tok/s, MB) the Chinese interface keeps as they are; paths,
// URLs and file patterns ("*.gguf") are names too. Shared by the catalogue test and the test
// that walks the window and its dialogs.
#pragma once

#include <QRegularExpression>
#include <QSet>
#include <QString>
#include <QStringList>

namespace hearth::test {

inline const QSet<QString>& allowedNames() {
    static const QSet<QString> names = [] {
        QSet<QString> s;
        for (const char* w :
             {// the app, its formats and its parts
              "hearth", "gguf", "json", "markdown", "sqlite", "pdf", "api", "http", "https", "url", "openai", "bos",
              "eos",
              // hardware and backends
              "kv", "cuda", "cpu", "gpu", "avx2", "avx-512", "avx512", "nvidia", "cublas",
              // units
              "tok", "tok/s", "mb", "gb", "kb", "mib", "gib", "kib", "ms",
              // keys
              "ctrl", "shift", "alt", "esc", "enter", "return", "tab",
              // the model sources and other apps
              "lm", "studio", "ollama", "gpt4all", "jan", "hugging", "face", "llama.cpp", "chatgpt", "claude",
              // sampler names (as llama.cpp and the model cards write them)
              "top-k", "top-p", "min-p", "typical-p",
              // model families, architectures and chat formats (names, shown as the files say)
              "llama", "llama2", "llama3", "gemma", "gemma3", "qwen", "qwen2", "qwen3", "phi3", "mistral", "chatml",
              "zephyr", "deepseek", "deepseek-r1", "smollm2", "n-gram",
              // programs, systems and encodings named in instructions
              "pdftotext", "poppler-utils", "debian", "ubuntu", "sudo", "apt", "install", "gnome", "keyring", "kwallet",
              // a language named in its own words (the settings' language choice)
              "english", "utf-8", "python", "vllm", "sglang", "llama-server"}) {
            s.insert(QString::fromLatin1(w));
        }
        return s;
    }();
    return names;
}

// Quantization and element type names: Q4_1, Q4_K_M, IQ3_XS, F16, BF16, Q8_0.
inline bool isTypeName(const QString& word) {
    static const QRegularExpression re(QStringLiteral("^(I?Q[0-9]+(_[0-9A-Z]+)*|B?F(16|32)|Q8_0)$"),
                                       QRegularExpression::CaseInsensitiveOption);
    return re.match(word).hasMatch();
}

// The English words of text that are neither names nor units. extra: names of the moment (the
// model's, a folder's), compared case-insensitively like the allow-list.
inline QStringList englishWords(QString text, const QSet<QString>& extra = {}) {
    static const QRegularExpression tags(QStringLiteral("<[^>]*>")), entities(QStringLiteral("&[a-zA-Z]+;"));
    static const QRegularExpression paths(
        QString::fromUtf8("(\\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\\s()\\x{3000}-\\x{303F}\\x{FF00}-\\x{FFEF}]*)|"
                          "((^|[\\s(（:：“\"'])[~.]?/[^\\s()\\x{3000}-\\x{303F}\\x{FF00}-\\x{FFEF}]*)"));
    static const QRegularExpression patterns(QStringLiteral("\\*\\.[A-Za-z0-9]+"));
    static const QRegularExpression files(QStringLiteral("\\b\\S+\\.(gguf|sqlite|json|md|txt|pdf|qm)\\b"),
                                          QRegularExpression::CaseInsensitiveOption);
    static const QRegularExpression tokens(QStringLiteral("[A-Za-z0-9][A-Za-z0-9_.+/-]*"));
    static const QRegularExpression word(QStringLiteral("[A-Za-z]{3,}"));
    text.replace(tags, QStringLiteral(" ")).replace(entities, QStringLiteral(" "));
    text.replace(paths, QStringLiteral(" ")).replace(patterns, QStringLiteral(" ")).replace(files, QStringLiteral(" "));
    text.remove(QLatin1Char('&'));  // mnemonics: "&Hearth"
    QStringList out;
    for (auto it = tokens.globalMatch(text); it.hasNext();) {
        QString t = it.next().captured();
        while (!t.isEmpty() && QStringLiteral(".+-/_").contains(t.back())) t.chop(1);
        if (!word.match(t).hasMatch()) continue;
        const QString key = t.toLower();
        if (allowedNames().contains(key) || extra.contains(key) || isTypeName(t)) continue;
        // "CPU/AVX2", "Shift+Enter": each part a name or a unit
        bool allParts = true;
        for (const QString& part : key.split(QRegularExpression(QStringLiteral("[/_+]")), Qt::SkipEmptyParts))
            allParts = allParts &&
                (allowedNames().contains(part) || extra.contains(part) || isTypeName(part) ||
                 !word.match(part).hasMatch());
        if (!allParts) out << t;
    }
    return out;
}

// The words of a name, lower-cased, for `extra`: "SmolLM2-135M-Instruct" gives itself and
// "smollm2", "135m", "instruct".
inline QSet<QString> nameWords(const QString& name) {
    QSet<QString> out{name.toLower()};
    for (const QString& p : name.toLower().split(QRegularExpression(QStringLiteral("[^a-z0-9.]+")), Qt::SkipEmptyParts))
        out.insert(p);
    return out;
}

}  // namespace hearth::test
