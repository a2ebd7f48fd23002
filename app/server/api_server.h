// The local server: an OpenAI-compatible HTTP API over the engine host. Its requests are
// sink replies of the one EngineWorker (app/engine_host), so they share the engine thread,
// the scheduler's batches and the KV prefix cache with every other front end.
//
// HTTP is cpp-httplib (Debian's libcpp-httplib-dev): a thread pool of blocking handlers. A
// handler parses the body, waits for one of --parallel engine slots (AdmissionGate; a full
// queue is 429), submits, and streams the ReplyStream's items; a client that goes away is
// seen by the next poll of its socket (every 20 ms) and its request cancelled.
// Threads: construct, bind, start and stop on one thread (hearth-cli's main thread);
// setModel from any thread; the handlers run on the pool's threads.
#pragma once

#include <QString>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "app/server/api_request.h"
#include "app/server/reply_stream.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace hearth {
class EngineHost;
}

namespace hearth::server {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8080;  // 0: any free port (bind() returns it)
    std::string apiKey;  // non-empty: every request needs "Authorization: Bearer KEY"
    int parallel = 4;  // server requests in the engine at once
    int queue = 16;  // requests waiting for a slot; more are turned away (429)
    size_t maxBodyBytes = 4u << 20;  // larger bodies are refused (413)
};

struct ServedModel {
    std::string name;  // reported as "model"; a request may send any string
    ApiLimits limits;
};

class ApiServer {
public:
    ApiServer(EngineHost& host, ServerOptions options);
    ~ApiServer();  // stop()

    // Errors: the address cannot be bound (taken, not local, not an address). Returns the port.
    Result<int> bind();
    void start();  // serves on a thread of its own until stop()
    // Until this is called, requests are answered 503 (loading).
    void setModel(ServedModel model);
    void stop();  // ends streams, closes the socket and joins the threads

private:
    void complete(ApiKind kind, const httplib::Request& req, httplib::Response& res);
    void stream(const ApiRequest& request, RequestId id, std::shared_ptr<ReplyStream> replies, httplib::Response& res);
    void health(httplib::Response& res);
    void models(httplib::Response& res);
    std::optional<ServedModel> model() const;

    EngineHost& host_;
    ServerOptions options_;
    std::unique_ptr<httplib::Server> http_;
    AdmissionGate gate_;
    mutable std::mutex modelMutex_;
    std::optional<ServedModel> model_;
    std::thread listener_;
};

}  // namespace hearth::server
