// Loopback HTTP peers that real servers cannot be made to be on demand, for the remote
// engine's failure paths: one that accepts and never answers, one that streams a few chunks
// (reasoning_content, then content) and then either ends properly or goes silent.
#pragma once

#include <QByteArray>
#include <QList>
#include <QTcpServer>
#include <QTcpSocket>

namespace hearth::test {

class FakeSseServer : public QObject {
public:
    enum class Mode { Silent, StallAfterChunks, Complete };

    // chunks: the JSON of each data event; Complete adds "data: [DONE]" and closes.
    FakeSseServer(Mode mode, QList<QByteArray> chunks) : mode_(mode), chunks_(std::move(chunks)) {
        server_.listen(QHostAddress::LocalHost, 0);
        connect(&server_, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket* s = server_.nextPendingConnection()) {
                sockets_.append(s);
                connect(s, &QTcpSocket::readyRead, s, [this, s] { onRequest(s); });
            }
        });
    }
    QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(server_.serverPort()); }
    QByteArray lastRequest() const { return request_; }

private:
    void onRequest(QTcpSocket* s) {
        request_ += s->readAll();
        if (!request_.contains("\r\n\r\n") || answered_ || mode_ == Mode::Silent) return;
        answered_ = true;
        s->write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
        for (const QByteArray& c : chunks_) s->write("data: " + c + "\n\n");
        if (mode_ == Mode::Complete) {
            s->write("data: [DONE]\n\n");
            s->disconnectFromHost();
        }
        s->flush();
    }

    Mode mode_;
    QList<QByteArray> chunks_;
    QTcpServer server_;
    QList<QTcpSocket*> sockets_;
    QByteArray request_;
    bool answered_ = false;
};

inline QByteArray contentChunk(const char* text) {
    return QByteArray(R"({"choices":[{"index":0,"delta":{"content":")") + text + R"("},"finish_reason":null}]})";
}
inline QByteArray reasoningChunk(const char* text) {
    return QByteArray(R"({"choices":[{"index":0,"delta":{"reasoning_content":")") + text +
        R"("},"finish_reason":null}]})";
}

}  // namespace hearth::test
