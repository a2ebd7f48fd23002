// Routes, the key check, the limits and the two ways a reply leaves: streamed as server-sent
// events ("data: {chunk}\n\n" ... "data: [DONE]\n\n", OpenAI's streaming format) or whole.
// Both are written by a chunked content provider, so that even a client waiting for a whole
// reply is watched for disconnection while the engine works on it.
#include "app/server/api_server.h"

#include <httplib.h>

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>

#include "app/engine_host/engine_host.h"
#include "app/server/api_reply.h"

namespace hearth::server {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(20);  // how often a waiting reply checks its client
constexpr int kSpareThreads = 8;  // beyond slots and queue: health, models, errors

std::string json(const QJsonObject& o) { return QJsonDocument(o).toJson(QJsonDocument::Compact).toStdString(); }

void sendError(httplib::Response& res, const ApiError& e) {
    res.status = e.status;
    res.set_content(json(errorBody(e)), "application/json");
}

// The status and words for an error the engine returned when it was handed the request.
ApiError engineError(const Error& e) {
    if (e.code == ErrorCode::InvalidArgument) return {400, "invalid_request_error", e.message, {}, {}};
    if (e.code == ErrorCode::Cancelled) return {503, "server_error", e.message, {}, "model_changed"};
    return {500, "server_error", e.message, {}, {}};
}

ApiError defaultError(int status) {
    switch (status) {
    case 401:
        return {401,
                "authentication_error",
                "a valid API key is needed (Authorization: Bearer KEY)",
                {},
                "invalid_api_key"};
    case 404: return {404, "not_found_error", "no such endpoint", {}, "not_found"};
    case 413: return {413, "invalid_request_error", "the request body is too large", {}, "request_too_large"};
    default:
        return {status,
                status >= 500 ? "server_error" : "invalid_request_error",
                "HTTP status " + std::to_string(status),
                {},
                {}};
    }
}

std::string replyId(ApiKind kind) {
    return (kind == ApiKind::Chat ? "chatcmpl-" : "cmpl-") +
        QString::number(QRandomGenerator::global()->generate64(), 16).toStdString();
}

bool writeEvent(httplib::DataSink& sink, const std::string& data) {
    const std::string line = "data: " + data + "\n\n";
    return sink.write(line.data(), line.size());
}

}  // namespace

ApiServer::ApiServer(EngineHost& host, ServerOptions options)
    : host_(host),
      options_(std::move(options)),
      http_(std::make_unique<httplib::Server>()),
      gate_(options_.parallel, options_.queue) {
    const size_t nThreads = static_cast<size_t>(options_.parallel + options_.queue + kSpareThreads);
    http_->new_task_queue = [nThreads] { return new httplib::ThreadPool(nThreads); };
    http_->set_payload_max_length(options_.maxBodyBytes);
    http_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        if (options_.apiKey.empty() || req.get_header_value("Authorization") == "Bearer " + options_.apiKey)
            return httplib::Server::HandlerResponse::Unhandled;
        sendError(res, defaultError(401));
        res.set_header("Connection", "close");  // its body was not read
        return httplib::Server::HandlerResponse::Handled;
    });
    http_->set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        sendError(res, defaultError(res.status));
        return httplib::Server::HandlerResponse::Handled;
    }));
    http_->set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, std::exception_ptr) { sendError(res, defaultError(500)); });
    http_->Post("/v1/chat/completions", [this](const auto& req, auto& res) { complete(ApiKind::Chat, req, res); });
    http_->Post("/v1/completions", [this](const auto& req, auto& res) { complete(ApiKind::Completion, req, res); });
    http_->Get("/v1/models", [this](const auto&, auto& res) { models(res); });
    http_->Get("/health", [this](const auto&, auto& res) { health(res); });
}

ApiServer::~ApiServer() { stop(); }

Result<int> ApiServer::bind() {
    const int port = options_.port == 0 ? http_->bind_to_any_port(options_.host)
                                        : (http_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
    if (port < 0) return fail(ErrorCode::Io, "cannot listen on " + options_.host + ":" + std::to_string(options_.port));
    return port;
}

void ApiServer::start() {
    listener_ = std::thread([this] { http_->listen_after_bind(); });
}

void ApiServer::stop() {
    gate_.close();
    http_->stop();
    if (listener_.joinable()) listener_.join();
}

void ApiServer::setModel(ServedModel model) {
    std::lock_guard lock(modelMutex_);
    model_ = std::move(model);
}

std::optional<ServedModel> ApiServer::model() const {
    std::lock_guard lock(modelMutex_);
    return model_;
}

void ApiServer::complete(ApiKind kind, const httplib::Request& req, httplib::Response& res) {
    const auto served = model();
    if (!served) return sendError(res, {503, "server_error", "the model is loading", {}, "model_loading"});
    auto request = parseApiRequest(kind, QByteArray::fromStdString(req.body), served->limits);
    if (!request) return sendError(res, request.error());
    switch (gate_.enter()) {
    case AdmissionGate::Admit::Full:
        return sendError(res, {429, "rate_limit_error", "the server's queue is full; retry later", {}, "queue_full"});
    case AdmissionGate::Admit::Closed:
        return sendError(res, {503, "server_error", "the server is shutting down", {}, "shutting_down"});
    case AdmissionGate::Admit::Now: break;
    }
    auto replies = std::make_shared<ReplyStream>([this] { gate_.leave(); });  // on the engine thread
    TurnInput input;
    input.messages = request->messages;
    if (kind == ApiKind::Completion) input.rawText = request->prompt;
    input.request = request->request;
    input.restoreKv = false;  // the server keeps no conversations; shared prefixes come from the cache
    host_.submit(replies->sinkReply(replies, std::move(input)));
    const auto id = replies->waitStarted();
    if (!id) return sendError(res, engineError(id.error()));
    stream(*request, *id, std::move(replies), res);
}

// Writes the reply as it comes: every event of a stream, or the whole object at the end.
void ApiServer::stream(const ApiRequest& request, RequestId id, std::shared_ptr<ReplyStream> replies,
                       httplib::Response& res) {
    auto format = std::make_shared<ReplyFormat>(request, replyId(request.kind), QDateTime::currentSecsSinceEpoch(),
                                                model()->name);
    auto collected = std::make_shared<std::vector<StreamItem>>();
    auto finished = std::make_shared<bool>(false);
    const bool sse = request.stream, includeUsage = request.includeUsage;
    auto roleChunk = std::make_shared<bool>(sse && request.kind == ApiKind::Chat);  // a chat stream opens with it
    if (sse) res.set_header("Cache-Control", "no-cache");
    const auto provider = [=](size_t, httplib::DataSink& sink) {
        if (!sink.is_writable()) return false;  // the client is gone: the releaser cancels
        if (std::exchange(*roleChunk, false) && !writeEvent(sink, json(format->firstChunk()))) return false;
        std::vector<StreamItem> items = replies->take(kPoll);
        for (StreamItem& item : items) {
            *finished = *finished || item.finish;
            if (!sse) {
                collected->push_back(std::move(item));
                continue;
            }
            const std::string data = item.error ? json(errorBody(engineError(*item.error))) : json(format->chunk(item));
            if (!writeEvent(sink, data)) return false;
        }
        if (!*finished) return true;
        bool ok = true;
        if (!sse) {
            const std::optional<Error>& error = collected->back().error;
            const std::string body =
                error ? json(errorBody(engineError(*error))) : json(format->whole(*collected, replies->usage()));
            ok = sink.write(body.data(), body.size());
        } else {
            if (includeUsage) ok = writeEvent(sink, json(format->usageChunk(replies->usage())));
            ok = ok && writeEvent(sink, "[DONE]");
        }
        if (ok) sink.done();
        return ok;
    };
    res.set_chunked_content_provider(sse ? "text/event-stream" : "application/json", provider,
                                     [this, id, finished](bool) {
                                         if (!*finished) host_.cancelRequest(static_cast<int64_t>(id));
                                     });
}

void ApiServer::health(httplib::Response& res) {
    const auto served = model();
    if (!served) {
        QJsonObject body = errorBody({503, "server_error", "the model is loading", {}, "model_loading"});
        body.insert("status", "loading");
        res.status = 503;
        return res.set_content(json(body), "application/json");
    }
    std::optional<EngineMetrics> m;
    EngineWorker* worker = host_.worker();
    QMetaObject::invokeMethod(
        worker, [&m, worker] { m = worker->metrics(); }, Qt::BlockingQueuedConnection);
    QJsonObject body{{"status", "ok"},
                     {"model", QString::fromStdString(served->name)},
                     {"parallel", options_.parallel},
                     {"requests", QJsonObject{{"running", gate_.running()}, {"waiting", gate_.waiting()}}}};
    if (m)
        body.insert("kv_blocks",
                    QJsonObject{{"free", m->blocksFree},
                                {"cached", m->blocksCached},
                                {"used", m->blocksUsed},
                                {"total", m->blocksTotal}});
    res.set_content(json(body), "application/json");
}

void ApiServer::models(httplib::Response& res) {
    const auto served = model();
    if (!served) return sendError(res, {503, "server_error", "the model is loading", {}, "model_loading"});
    const QJsonObject entry{{"id", QString::fromStdString(served->name)},
                            {"object", "model"},
                            {"created", QDateTime::currentSecsSinceEpoch()},
                            {"owned_by", "hearth"}};
    res.set_content(json(QJsonObject{{"object", "list"}, {"data", QJsonArray{entry}}}), "application/json");
}

}  // namespace hearth::server
