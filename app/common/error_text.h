// The one place that turns engine errors into the words a user reads: describe() is the one-line
// technical text (English, what hearth-cli prints and what "Details…" shows); userSummary() and
// kvRefusalSummary() are the plain, translated words the window leads with, chosen from the
// error's code and fields (ErrorCode, ErrorCause, KvRefusal), never from its English message.
#pragma once

#include <QString>

#include "engine/error.h"
#include "engine/snapshot/kv_snapshot.h"

namespace hearth {

QString describe(const Error& error);

// E.g. "This file is incomplete — download it again." for a GGUF cut off mid-way.
QString userSummary(const Error& error);

// Why the saved KV of a conversation was not used, with the tokens then read again (computed);
// empty for KvRefusal::None.
QString kvRefusalSummary(KvRefusal refusal, int recomputedTokens);

}  // namespace hearth
