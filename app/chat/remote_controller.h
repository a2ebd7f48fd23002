// Replies on a remote OpenAI-compatible server instead of the local engine: the endpoint the
// user chose (address, model, timeout in the app's settings; the API key in the system
// keychain only, through ApiKeyStore), the model list of the server (GET /v1/models), and
// the RemoteEngine that runs the replies. Whether it is in use: active(). GUI thread only.
#pragma once

#include <QObject>
#include <QStringList>
#include <optional>

#include "app/chat/app_settings.h"
#include "app/remote/api_key_store.h"
#include "app/remote/remote_engine.h"

namespace hearth {

struct RemoteSettings {
    bool enabled = false;  // replies go to the remote server
    QString baseUrl;
    QString model;
    int timeoutSeconds = 120;
    bool operator==(const RemoteSettings&) const = default;
};

class RemoteController : public QObject {
    Q_OBJECT
public:
    // Reads the settings and, when an address is set, its key from keys (asynchronously).
    RemoteController(AppSettings& settings, ApiKeyStore& keys, QObject* parent = nullptr);

    RemoteSettings settings() const { return settings_; }
    // Replies go to the remote server (switched on; a missing address or model is then the
    // reply's error, not a silent fall back to the local engine).
    bool active() const { return settings_.enabled; }
    RemoteEngine& engine() { return engine_; }
    bool hasKey() const { return !key_.isEmpty(); }
    // Why the key is not kept (no keychain on this machine, or its error); empty when it is.
    QString keyNote() const { return keyNote_; }

    // Saves s in the settings; key, when given, replaces the endpoint's key in the keychain
    // (empty: removes it). Emits changed() at once and keyChecked() when the keychain answers.
    void apply(const RemoteSettings& s, const std::optional<QString>& key);
    // The server's models for baseUrl with key (nullopt: the saved one): modelsListed or modelsFailed.
    void listModels(const QString& baseUrl, const std::optional<QString>& key);

signals:
    void changed();
    void keyChecked(const QString& note);  // the keychain answered a read or a write: keyNote()
    void modelsListed(const QStringList& ids);
    void modelsFailed(const QString& message);

private:
    void loadKey();
    void setKeyNote(const KeyResult& r);
    void updateEngine();
    QString keychainEntry() const;  // the API base the key belongs to

    AppSettings& appSettings_;
    ApiKeyStore& keys_;
    RemoteEngine engine_;
    RemoteSettings settings_;
    QString key_;  // in memory only
    QString keyNote_;
    quint64 keySerial_ = 0;  // a read answered after a newer apply is dropped
};

}  // namespace hearth
