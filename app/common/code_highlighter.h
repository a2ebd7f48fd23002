// Syntax highlighting for the code blocks of replies: a small lexer of our own (Debian 12 has no
// Qt 6 build of KSyntaxHighlighting) that finds keywords, strings, comments and numbers in the
// common languages. No widgets: the message delegate turns the tokens into colours.
#pragma once

#include <QString>
#include <QStringView>
#include <vector>

namespace hearth {

enum class CodeTokenKind { Keyword, String, Comment, Number };

struct CodeToken {
    int start = 0, length = 0;  // in UTF-16 code units of the code given
    CodeTokenKind kind = CodeTokenKind::Keyword;
};

// The language a fence label names ("C++", "py", "tsx" …), as one of: c, cpp, csharp, go, java,
// javascript, json, python, rust, shell, sql, typescript; empty when Hearth does not know it.
QString canonicalCodeLanguage(QStringView fenceLabel);

// The tokens of code (a whole block, lines joined by '\n'), in order and not overlapping; text
// between them is plain. An unknown language gives none. A string left open ends at its line's
// end (a Python triple-quoted string, a JavaScript template or a Go raw string at the code's
// end); a block comment left open runs to the code's end. Never fails, whatever the input.
std::vector<CodeToken> highlightCode(QStringView code, QStringView fenceLabel);

}  // namespace hearth
