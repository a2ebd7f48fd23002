// The local server's reading of OpenAI-style request bodies (/v1/chat/completions,
// /v1/completions) into an engine request, and its error objects. Pure functions: no engine,
// no network, callable from any thread.
#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <expected>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace hearth::server {

// An OpenAI-style error: the HTTP status and the body's "error" object.
struct ApiError {
    int status = 400;
    std::string type = "invalid_request_error";  // also "authentication_error", "not_found_error", ...
    std::string message = {};
    std::string param = {};  // the request field at fault; empty: none
    std::string code = {};  // e.g. "model_loading"; empty: none
};
// {"error": {"message", "type", "param", "code"}} (param and code null when empty).
QJsonObject errorBody(const ApiError& error);

enum class ApiKind { Chat, Completion };

struct ApiRequest {
    ApiKind kind = ApiKind::Chat;
    std::string model;  // as sent; any string is accepted (one model is loaded)
    std::vector<ChatMessage> messages;  // Chat: oldest first
    std::string prompt;  // Completion
    GenerateRequest request;  // sampling, maxTokens, stop, logprobs (not the prompt)
    bool stream = false;
    bool includeUsage = false;  // stream_options.include_usage
    bool logprobs = false;  // report each generated token's log-probability
};

// What the request may ask for, given the loaded model.
struct ApiLimits {
    int32_t contextLength = 0;  // the default max_tokens (the reply may fill the context)
    SamplingParams defaults;  // for absent sampling fields: the model's, as the window uses
};

// Parses and checks a body. Unknown fields are ignored; a field of the wrong type or out of
// range, malformed JSON, n != 1 and what the server does not do (token-id prompts, echo,
// best_of > 1, suffix) are 400 errors naming the field. Absent sampling fields take
// limits.defaults, an absent seed a random one; max_completion_tokens wins over max_tokens.
// Logit-bias ids are checked against the vocabulary when the engine takes the request.
std::expected<ApiRequest, ApiError> parseApiRequest(ApiKind kind, const QByteArray& body, const ApiLimits& limits);

}  // namespace hearth::server
