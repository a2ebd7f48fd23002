// Splitting, querying and rendering documents. Sizes are counted in quarter tokens so that the
// estimate (4 ASCII bytes per token, 1 token per other character) stays an integer sum.
#include "app/docs/passages.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <algorithm>

namespace hearth {

namespace {

// The length in bytes of the UTF-8 sequence that starts with lead (1 for a stray byte, so that
// invalid text still advances).
size_t sequenceLength(unsigned char lead) {
    if (lead < 0xC0) return 1;
    if (lead < 0xE0) return 2;
    if (lead < 0xF0) return 3;
    return 4;
}

int quarterTokens(unsigned char lead) { return lead < 0x80 ? 1 : 4; }

bool isCjk(char32_t c) {
    return (c >= 0x3040 && c <= 0x30FF) ||  // Hiragana, Katakana
        (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||  // CJK ideographs
        (c >= 0xAC00 && c <= 0xD7AF) ||  // Hangul syllables
        (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x20000 && c <= 0x2FFFF);
}

// Where a sentence ends: ". ", "? ", "! " (the space kept with the sentence), a CJK full stop,
// question or exclamation mark, or a line end.
bool endsSentence(std::string_view text, size_t at, size_t len) {
    const std::string_view s = text.substr(at, len);
    if (s == "\n" || s == "\xE3\x80\x82" || s == "\xEF\xBC\x9F" || s == "\xEF\xBC\x81") return true;  // \n 。？！
    return (s == "." || s == "?" || s == "!") && at + 1 < text.size() && text[at + 1] == ' ';
}

const QSet<QString>& stopWords() {
    static const QSet<QString> words{
        "the",   "and",  "are",  "was",  "were", "what", "which", "who",  "whom",  "whose", "when",   "where",
        "why",   "how",  "does", "did",  "for",  "from", "with",  "that", "this",  "these", "those",  "there",
        "their", "has",  "have", "had",  "its",  "you",  "your",  "can",  "could", "would", "should", "about",
        "into",  "than", "then", "them", "they", "not",  "but",   "all",  "any",   "tell",  "please", "document"};
    return words;
}

}  // namespace

int turnDocumentBudget(int contextLength) {
    return contextLength > 0 ? std::min(kTurnDocumentBudgetTokens, contextLength / 4) : kTurnDocumentBudgetTokens;
}

int estimateTokens(std::string_view utf8) {
    int64_t quarters = 0;
    for (size_t i = 0; i < utf8.size(); i += sequenceLength(static_cast<unsigned char>(utf8[i])))
        quarters += quarterTokens(static_cast<unsigned char>(utf8[i]));
    return static_cast<int>((quarters + 3) / 4);
}

std::vector<std::string> splitPassages(std::string_view text, int maxTokens) {
    std::vector<std::string> out;
    const int64_t limit = int64_t{maxTokens} * 4;
    struct Cut {
        size_t at = 0;  // the passage ends before this byte
        int64_t size = 0;  // its size up to there, in quarter tokens
    };
    Cut paragraph, sentence, space;
    size_t start = 0;
    int64_t size = 0;
    for (size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        const size_t len = std::min(sequenceLength(lead), text.size() - i);
        if (size + quarterTokens(lead) > limit && i > start) {
            // Cut at the latest good boundary that keeps the passage at least half full.
            Cut cut{i, size};
            const auto usable = [&](const Cut& c, int64_t fraction) {
                return c.at > start && c.at <= i && c.size * fraction >= limit;
            };
            if (usable(paragraph, 2)) cut = paragraph;
            else if (usable(sentence, 2)) cut = sentence;
            else if (usable(space, 4)) cut = space;
            out.emplace_back(text.substr(start, cut.at - start));
            start = cut.at;
            size -= cut.size;
            paragraph = sentence = space = Cut{};
        }
        size += quarterTokens(lead);
        const size_t next = i + len;
        if (text[i] == '\n' && next < text.size() && text[next] == '\n') paragraph = {next + 1, size + 1};
        else if (endsSentence(text, i, len)) {
            const size_t withSpace = len == 1 && text[i] != '\n' ? 1 : 0;  // ". ": the space stays with it
            sentence = {next + withSpace, size + static_cast<int64_t>(withSpace)};
        } else if (text[i] == ' ') space = {next, size};
        i = next;
    }
    if (start < text.size()) out.emplace_back(text.substr(start));
    return out;
}

std::string passageQuery(std::string_view question) {
    const QString q = QString::fromUtf8(question.data(), static_cast<qsizetype>(question.size())).toLower();
    QStringList terms;
    const auto add = [&terms](const QString& term) {
        if (!terms.contains(term)) terms.append(term);
    };
    const QList<uint> codePoints = q.toUcs4();
    const auto flush = [&](qsizetype from, qsizetype to) {
        const qsizetype n = to - from;
        if (n < 3) return;  // a trigram index cannot match fewer than 3 characters
        bool cjk = false;
        for (qsizetype i = from; i < to; ++i) cjk = cjk || isCjk(codePoints[i]);
        const auto slice = [&](qsizetype a, qsizetype len) {
            return QString::fromUcs4(reinterpret_cast<const char32_t*>(codePoints.constData() + a), len);
        };
        if (!cjk) {
            const QString word = slice(from, n);
            if (!stopWords().contains(word)) add(word);
            return;
        }
        for (qsizetype i = from; i + 3 <= to; ++i) add(slice(i, 3));  // CJK has no spaces: every window
    };
    qsizetype runStart = 0;
    for (qsizetype i = 0; i <= codePoints.size(); ++i) {
        const bool inWord = i < codePoints.size() && QChar::isLetterOrNumber(static_cast<char32_t>(codePoints[i]));
        if (inWord) continue;
        flush(runStart, i);
        runStart = i + 1;
    }
    QStringList quoted;
    for (const QString& t : terms.mid(0, 48)) quoted.append('"' + QString(t).replace('"', "\"\"") + '"');
    return quoted.join(QStringLiteral(" OR ")).toStdString();
}

std::string sourcesToJson(const std::vector<TurnSource>& sources) {
    if (sources.empty()) return {};
    QJsonArray a;
    for (const TurnSource& s : sources)
        a.append(QJsonObject{{"name", QString::fromStdString(s.name)},
                             {"passage", s.passage},
                             {"text", QString::fromStdString(s.text)},
                             {"tokens", s.tokens}});
    return QJsonDocument(a).toJson(QJsonDocument::Compact).toStdString();
}

std::vector<TurnSource> sourcesFromJson(std::string_view json) {
    std::vector<TurnSource> out;
    if (json.empty()) return out;
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray(json.data(), static_cast<qsizetype>(json.size())));
    for (const QJsonValue& v : doc.array()) {
        const QJsonObject o = v.toObject();
        out.push_back({.name = o.value("name").toString().toStdString(),
                       .passage = o.value("passage").toInt(),
                       .text = o.value("text").toString().toStdString(),
                       .tokens = o.value("tokens").toInt()});
    }
    return out;
}

std::string userTurnText(std::string_view words, const std::vector<TurnSource>& sources) {
    if (sources.empty()) return std::string(words);
    std::string out;
    for (const TurnSource& s : sources) {
        std::string name = s.name;
        for (size_t i = 0; (i = name.find('"', i)) != std::string::npos;) name.replace(i, 1, "&quot;");
        out += "<document name=\"" + name + "\"";
        if (s.passage > 0) out += " passage=\"" + std::to_string(s.passage) + "\"";
        out += ">\n" + s.text;
        if (!s.text.empty() && s.text.back() != '\n') out += '\n';
        out += "</document>\n";
    }
    out += "\n";
    out += words;
    return out;
}

std::string userTurnText(std::string_view words, std::string_view sourcesJson) {
    return userTurnText(words, sourcesFromJson(sourcesJson));
}

}  // namespace hearth
