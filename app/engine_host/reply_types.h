// What a reply is asked with and what it reports, for every ReplyEngine (reply_engine.h): the
// local engine host and a remote endpoint alike. Plain values, copied across threads.
#pragma once

#include <QList>
#include <QMetaType>
#include <QString>

#include "app/chat/chat_settings.h"
#include "app/store/conversation_store.h"
#include "engine/snapshot/kv_snapshot.h"
#include "engine/spec/spec_options.h"
#include "engine/tokenizer/chat_role.h"

namespace hearth {

struct ChatTurn {
    ChatRole role = ChatRole::User;
    QString content;
};

struct ReplyRequest {
    quint64 ticket = 0;  // the caller's id for this reply, echoed in every signal
    QList<ChatTurn> turns;  // the conversation, oldest first, ending with the user's message
    ChatSettings settings;  // settings.systemPrompt, when set, goes first as a system turn
    qint64 conversationId = 0;  // the stored conversation: its KV is restored and saved (0: none)
    SpecOptions spec;  // speculative decoding (drafter Off: none), GenerateRequest::spec
};

// Sent once the prompt is built: how much of the context it uses and whether old turns were
// left out to make it fit (the system prompt and the latest turns always stay).
struct ReplyStarted {
    quint64 ticket = 0;
    int promptTokens = 0;
    int contextLength = 0;
    int omittedTurns = 0;
};

struct ReplyStats {
    quint64 ticket = 0;
    QString finishReason;  // "eos", "length", "stop", "context", "timeout", "cancelled"
    int promptTokens = 0, generatedTokens = 0, reusedTokens = 0, contextLength = 0;
    double tokensPerSecond = 0, ttftMs = 0;
    int kvRestoredTokens = 0;  // prompt tokens whose KV came from the store (not in reusedTokens)
    double kvSavedSeconds = -1;  // estimated prefill time the restore saved; < 0: unknown
    QString kvNote = {};  // why nothing was restored (a refusal, a store error), for people debugging
    KvRefusal kvRefusal = KvRefusal::None;  // a refusal's kind, for the words a user reads
    int specDrafted = -1, specAccepted = 0;  // speculation's drafted and accepted tokens; -1: not reported
    GenerationStats stored;  // what the reply's message row records (Turn::stats())
    QString remoteEndpoint = {};  // the server a remote reply ran on (e.g. "gpu-box:8000"); empty: local
};

}  // namespace hearth

Q_DECLARE_METATYPE(hearth::ReplyRequest)
Q_DECLARE_METATYPE(hearth::ReplyStarted)
Q_DECLARE_METATYPE(hearth::ReplyStats)
