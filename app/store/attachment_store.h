// AttachmentStore: the documents attached to conversations, in the store's database - each
// split into passages (app/docs/passages.h) in attachment_passages, indexed by an FTS5 table
// with the trigram tokenizer (so Chinese and Japanese text, which has no spaces, is searchable)
// - and the documents each user turn carried (turn_documents, as a sources JSON array), so that
// regenerating or reopening renders the same prompt. Deleting a conversation deletes its
// attachments (foreign keys; a trigger keeps the index in step). Plain C++; the store's thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/docs/passages.h"
#include "engine/error.h"

namespace hearth {

class SqliteDb;

struct Attachment {
    int64_t id = 0;
    int64_t conversationId = 0;
    std::string name;  // the file name
    std::string kind;  // "pdf", "markdown", "code" or "text"
    int32_t tokens = 0;  // estimated (estimateTokens)
    int32_t passages = 0;
    int64_t createdMs = 0;
    bool whole() const { return tokens <= kWholeDocumentTokens; }  // fits a prompt whole
};

// A passage a search found, best first.
struct FoundPassage {
    int64_t attachmentId = 0;
    std::string name;
    int32_t ordinal = 0;  // 1-based within its document
    std::string text;
    double score = 0;  // FTS5 bm25(): lower is a better match
};

class AttachmentStore {
public:
    explicit AttachmentStore(SqliteDb& db) : db_(db) {}

    // Stores a document (split into passages and indexed) in one transaction. createdMs 0: now.
    // Errors: InvalidArgument (no such conversation, empty text), SQLite's.
    Result<Attachment> add(int64_t conversationId, const std::string& name, const std::string& kind,
                           const std::string& text, int64_t createdMs = 0);
    Result<std::vector<Attachment>> list(int64_t conversationId) const;  // oldest first
    Result<std::string> text(int64_t attachmentId) const;  // the passages joined: the document's text
    Result<void> remove(int64_t attachmentId);

    // The conversation's passages that best match question (passageQuery, bm25), best first, at
    // most limit, from the attachments in among (all of the conversation's when empty).
    Result<std::vector<FoundPassage>> search(int64_t conversationId, const std::string& question, int limit,
                                             const std::vector<int64_t>& among = {}) const;

    // The documents a user turn carried (sourcesToJson), recorded once when it is sent.
    Result<void> setTurnSources(int64_t messageId, const std::string& sourcesJson);

    // Bytes the FTS5 index takes: its shadow tables' pages (dbstat).
    Result<int64_t> indexBytes() const;

private:
    SqliteDb& db_;
};

}  // namespace hearth
