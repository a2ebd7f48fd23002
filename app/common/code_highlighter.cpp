// One table row per language (names, keywords, comment and string rules) and one lexer loop for
// all of them: the languages differ in those rules, not in how text is scanned. Tokens are only
// what a reader's eye groups (keywords, strings, comments, numbers); no parsing, so any text,
// however broken, gives tokens and never an error.
#include "app/common/code_highlighter.h"

#include <QSet>
#include <QStringList>

namespace hearth {

namespace {

struct LanguageRules {
    QString name = {};
    QStringList aliases = {};
    QSet<QString> keywords = {};  // lower case when caseInsensitive
    QStringList lineComments = {};
    bool blockComments = false;  // /* … */
    bool caseInsensitive = false;  // SQL
    bool preprocessor = false;  // C and C++: "#include" at a line's start is a keyword
    bool lifetimes = false;  // Rust: 'a is a lifetime, not a character literal
    bool tripleQuotes = false;  // Python: """ … """ spans lines
    bool backtickStrings = false;  // JavaScript templates, Go raw strings: ` … ` spans lines
    bool hashAtWordStart = false;  // shell: # starts a comment only at a word's start ($# is not one)
};

QSet<QString> words(const char* list) {
    const QStringList split = QString::fromLatin1(list).split(QLatin1Char(' '), Qt::SkipEmptyParts);
    return QSet<QString>(split.begin(), split.end());
}

const char* const kC =
    "auto break case char const continue default do double else enum extern float for goto if inline "
    "int long register restrict return short signed sizeof static struct switch typedef union "
    "unsigned void volatile while bool true false NULL _Bool ";
const char* const kCpp =
    "alignas alignof and asm catch class concept consteval constexpr constinit co_await co_return co_yield decltype "
    "delete explicit export friend mutable namespace new noexcept not nullptr operator or override final private "
    "protected public requires static_assert static_cast dynamic_cast reinterpret_cast const_cast template this "
    "thread_local throw try typeid typename using virtual wchar_t char8_t char16_t char32_t";
const char* const kJs =
    "async await break case catch class const continue debugger default delete do else export "
    "extends false finally for from function if import in instanceof let new null of return "
    "static super switch this throw true try typeof undefined var void while with yield ";
const char* const kTs =
    "abstract any as boolean declare enum implements interface keyof namespace never number "
    "private protected public readonly string symbol type unknown";

std::vector<LanguageRules> makeLanguages() {
    const QStringList slashes = {QStringLiteral("//")}, hash = {QStringLiteral("#")};
    std::vector<LanguageRules> l;
    l.push_back({.name = "c",
                 .aliases = {"c", "h"},
                 .keywords = words(kC),
                 .lineComments = slashes,
                 .blockComments = true,
                 .preprocessor = true});
    l.push_back({.name = "cpp",
                 .aliases = {"cpp", "c++", "cc", "cxx", "hpp", "hxx", "hh", "cplusplus"},
                 .keywords = words(kC) + words(kCpp),
                 .lineComments = slashes,
                 .blockComments = true,
                 .preprocessor = true});
    l.push_back({.name = "csharp",
                 .aliases = {"csharp", "cs", "c#"},
                 .keywords = words("abstract as async await base bool break byte case catch char checked class const "
                                   "continue decimal default delegate do double else enum event explicit extern false "
                                   "finally fixed float for foreach goto if implicit in int interface internal is lock "
                                   "long namespace new null object operator out override params private protected "
                                   "public readonly ref return sbyte sealed short sizeof stackalloc static string "
                                   "struct switch this throw true try typeof uint ulong unchecked unsafe ushort using "
                                   "var virtual void volatile while"),
                 .lineComments = slashes,
                 .blockComments = true,
                 .preprocessor = true});
    l.push_back({.name = "go",
                 .aliases = {"go", "golang"},
                 .keywords = words("break case chan const continue default defer else fallthrough for func go goto if "
                                   "import interface map package range return select struct switch type var true "
                                   "false nil iota"),
                 .lineComments = slashes,
                 .blockComments = true,
                 .backtickStrings = true});
    l.push_back({.name = "java",
                 .aliases = {"java"},
                 .keywords = words("abstract assert boolean break byte case catch char class const continue default "
                                   "do double else enum extends final finally float for goto if implements import "
                                   "instanceof int interface long native new package private protected public "
                                   "record return short static strictfp super switch synchronized this throw throws "
                                   "transient try var void volatile while true false null"),
                 .lineComments = slashes,
                 .blockComments = true});
    l.push_back({.name = "javascript",
                 .aliases = {"javascript", "js", "jsx", "mjs", "cjs", "node"},
                 .keywords = words(kJs),
                 .lineComments = slashes,
                 .blockComments = true,
                 .backtickStrings = true});
    l.push_back({.name = "typescript",
                 .aliases = {"typescript", "ts", "tsx"},
                 .keywords = words(kJs) + words(kTs),
                 .lineComments = slashes,
                 .blockComments = true,
                 .backtickStrings = true});
    l.push_back({.name = "json",
                 .aliases = {"json", "jsonc", "json5"},
                 .keywords = words("true false null"),
                 .lineComments = slashes,
                 .blockComments = true});
    l.push_back({.name = "python",
                 .aliases = {"python", "py", "python3", "py3", "ipython"},
                 .keywords = words("False None True and as assert async await break case class continue def del elif "
                                   "else except finally for from global if import in is lambda match nonlocal not or "
                                   "pass raise return self try while with yield"),
                 .lineComments = hash,
                 .tripleQuotes = true});
    l.push_back({.name = "rust",
                 .aliases = {"rust", "rs"},
                 .keywords = words("as async await break const continue crate dyn else enum extern false fn for if "
                                   "impl in let loop match mod move mut pub ref return self Self static struct super "
                                   "trait true type unsafe use where while"),
                 .lineComments = slashes,
                 .blockComments = true,
                 .lifetimes = true});
    l.push_back({.name = "shell",
                 .aliases = {"shell", "sh", "bash", "zsh", "ksh", "console", "shellscript"},
                 .keywords = words("if then else elif fi for while until do done case esac in function return export "
                                   "local select break continue readonly declare unset shift exit"),
                 .lineComments = hash,
                 .hashAtWordStart = true});
    l.push_back({.name = "sql",
                 .aliases = {"sql", "sqlite", "postgresql", "postgres", "mysql", "plsql"},
                 .keywords = words("select from where and or not insert into values update set delete create table "
                                   "drop alter index primary key foreign references join inner left right outer full "
                                   "on as group by order having limit offset distinct union all null is in like "
                                   "between exists case when then else end begin commit rollback transaction view if "
                                   "default unique check with asc desc integer int text varchar real boolean true "
                                   "false"),
                 .lineComments = {QStringLiteral("--")},
                 .blockComments = true,
                 .caseInsensitive = true});
    return l;
}

const LanguageRules* rulesFor(QStringView fenceLabel) {
    static const std::vector<LanguageRules> languages = makeLanguages();
    // "python title=x" or "{.rust}": the first word, without braces and a leading dot.
    QString word = fenceLabel.trimmed().toString().toLower();
    word = word.section(QLatin1Char(' '), 0, 0);
    word.remove(QLatin1Char('{')).remove(QLatin1Char('}'));
    if (word.startsWith(QLatin1Char('.'))) word.remove(0, 1);
    for (const LanguageRules& l : languages)
        if (l.aliases.contains(word)) return &l;
    return nullptr;
}

bool isIdentStart(QChar c) { return c.isLetter() || c == QLatin1Char('_'); }
bool isIdentPart(QChar c) { return c.isLetterOrNumber() || c == QLatin1Char('_'); }

// The lexer's state over one code text: where it is and the tokens so far.
class Lexer {
public:
    Lexer(QStringView code, const LanguageRules& rules) : code_(code), rules_(rules) {}

    std::vector<CodeToken> run() {
        bool lineStart = true;
        while (i_ < code_.size()) {
            const QChar c = code_[i_];
            if (c == QLatin1Char('\n')) {
                lineStart = true, ++i_;
                continue;
            }
            if (c.isSpace()) {
                ++i_;
                continue;
            }
            if (!comment() && !(lineStart && directive()) && !string() && !number() && !word()) ++i_;
            lineStart = false;
        }
        return std::move(out_);
    }

private:
    qsizetype lineEnd(qsizetype from) const {
        const qsizetype nl = code_.indexOf(QLatin1Char('\n'), from);
        return nl < 0 ? code_.size() : nl;
    }
    void push(qsizetype end, CodeTokenKind kind) {
        out_.push_back({static_cast<int>(i_), static_cast<int>(end - i_), kind});
        i_ = end;
    }
    bool at(QLatin1StringView s) const { return code_.sliced(i_).startsWith(s); }

    bool comment() {
        if (rules_.blockComments && at(QLatin1StringView("/*"))) {
            const qsizetype close = code_.indexOf(QLatin1StringView("*/"), i_ + 2);
            push(close < 0 ? code_.size() : close + 2, CodeTokenKind::Comment);
            return true;
        }
        for (const QString& marker : rules_.lineComments) {
            if (!code_.sliced(i_).startsWith(marker)) continue;
            if (rules_.hashAtWordStart && i_ > 0 && !code_[i_ - 1].isSpace()) continue;
            push(lineEnd(i_), CodeTokenKind::Comment);
            return true;
        }
        return false;
    }

    // "#include", "# define": the directive's name with its hash.
    bool directive() {
        if (!rules_.preprocessor || code_[i_] != QLatin1Char('#')) return false;
        qsizetype end = i_ + 1;
        while (end < code_.size() && (code_[end] == QLatin1Char(' ') || code_[end] == QLatin1Char('\t'))) ++end;
        while (end < code_.size() && isIdentPart(code_[end])) ++end;
        push(end, CodeTokenKind::Keyword);
        return true;
    }

    bool string() {
        const QChar q = code_[i_];
        if (q != QLatin1Char('"') && q != QLatin1Char('\'') && q != QLatin1Char('`')) return false;
        if (q == QLatin1Char('`') && !rules_.backtickStrings) return false;
        const qsizetype n = code_.size();
        if (q == QLatin1Char('\'') && rules_.lifetimes && i_ + 1 < n && isIdentStart(code_[i_ + 1]) &&
            !(i_ + 2 < n && code_[i_ + 2] == QLatin1Char('\''))) {
            ++i_;  // a lifetime: the name after it is scanned as a word
            return true;
        }
        if (rules_.tripleQuotes && i_ + 2 < n && code_[i_ + 1] == q && code_[i_ + 2] == q) {
            const qsizetype close = code_.indexOf(QString(3, q), i_ + 3);
            push(close < 0 ? n : close + 3, CodeTokenKind::String);
            return true;
        }
        const bool multiline = q == QLatin1Char('`');
        qsizetype j = i_ + 1;
        while (j < n && code_[j] != q && (multiline || code_[j] != QLatin1Char('\n')))
            j += code_[j] == QLatin1Char('\\') ? 2 : 1;
        j = std::min(j, n);
        push(j < n && code_[j] == q ? j + 1 : j, CodeTokenKind::String);
        return true;
    }

    // 42, 0x1F, 3.14e-5, 1_000u: a digit (or a dot and a digit) and what belongs to it.
    bool number() {
        const qsizetype n = code_.size();
        const QChar c = code_[i_];
        const bool dotDigit = c == QLatin1Char('.') && i_ + 1 < n && code_[i_ + 1].isDigit() &&
            !(i_ > 0 && code_[i_ - 1] == QLatin1Char('.'));  // .5, but not the 10 of 1..10
        if (!c.isDigit() && !dotDigit) return false;
        const bool hex = c == QLatin1Char('0') && i_ + 1 < n && code_[i_ + 1].toLower() == QLatin1Char('x');
        qsizetype j = i_ + 1;
        while (j < n) {
            const QChar d = code_[j];
            const bool sign =
                (d == QLatin1Char('+') || d == QLatin1Char('-')) && !hex && code_[j - 1].toLower() == QLatin1Char('e');
            if (!isIdentPart(d) && d != QLatin1Char('.') && !sign) break;
            if (d == QLatin1Char('.') && j + 1 < n && code_[j + 1] == QLatin1Char('.')) break;  // Rust's 1..10
            ++j;
        }
        push(j, CodeTokenKind::Number);
        return true;
    }

    bool word() {
        if (!isIdentStart(code_[i_])) return false;
        qsizetype j = i_ + 1;
        while (j < code_.size() && isIdentPart(code_[j])) ++j;
        QString w = code_.sliced(i_, j - i_).toString();
        if (rules_.caseInsensitive) w = w.toLower();
        if (rules_.keywords.contains(w)) push(j, CodeTokenKind::Keyword);
        else i_ = j;
        return true;
    }

    QStringView code_;
    const LanguageRules& rules_;
    qsizetype i_ = 0;
    std::vector<CodeToken> out_;
};

}  // namespace

QString canonicalCodeLanguage(QStringView fenceLabel) {
    const LanguageRules* rules = rulesFor(fenceLabel);
    return rules ? rules->name : QString();
}

std::vector<CodeToken> highlightCode(QStringView code, QStringView fenceLabel) {
    const LanguageRules* rules = rulesFor(fenceLabel);
    if (!rules) return {};
    return Lexer(code, *rules).run();
}

}  // namespace hearth
