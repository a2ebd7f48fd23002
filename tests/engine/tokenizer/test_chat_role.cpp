// engine/tokenizer/chat_role: every role's name parses back to it; any other text is an error
// that names it (no guessing: not the case-folded name, not OpenAI's "developer", not "").
#include <QtTest>

#include "engine/tokenizer/chat_role.h"

using namespace hearth;

class TestChatRole : public QObject {
    Q_OBJECT
private slots:
    void namesRoundTrip() {
        QCOMPARE(chatRoleName(ChatRole::System), std::string_view("system"));
        QCOMPARE(chatRoleName(ChatRole::User), std::string_view("user"));
        QCOMPARE(chatRoleName(ChatRole::Assistant), std::string_view("assistant"));
        for (ChatRole r : {ChatRole::System, ChatRole::User, ChatRole::Assistant}) {
            auto parsed = parseChatRole(chatRoleName(r));
            QVERIFY(parsed);
            QCOMPARE(*parsed, r);
        }
    }

    void unknownNamesAreErrors() {
        for (const char* name : {"", "User", "developer", "tool", "assistant ", "model"}) {
            auto parsed = parseChatRole(name);
            QVERIFY2(!parsed, name);
            QCOMPARE(parsed.error().code, ErrorCode::InvalidFormat);
            QVERIFY2(parsed.error().message.find(std::string("\"") + name + "\"") != std::string::npos,
                     parsed.error().message.c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestChatRole)
#include "test_chat_role.moc"
