// API keys of remote endpoints in the system keychain (qtkeychain: the Secret Service on
// Linux, the Keychain on macOS, the Credential Store on Windows), one entry per endpoint
// address. Never anywhere else: qtkeychain's plaintext fallback is off, so where no keychain
// runs (a headless machine without a Secret Service) the answer is NoKeychain and nothing is
// stored. Asynchronous: each call answers once, later, on the calling (GUI) thread.
#pragma once

#include <QObject>
#include <QString>
#include <functional>

namespace hearth {

struct KeyResult {
    enum class Status { Ok, NotFound, NoKeychain, Failed } status = Status::Ok;
    QString key = {};  // Ok on read: the key
    QString detail = {};  // NoKeychain, Failed: the keychain's own words
};

class ApiKeyStore : public QObject {
    Q_OBJECT
public:
    // service: the keychain's service name ("Hearth"; tests use their own).
    explicit ApiKeyStore(QString service = QStringLiteral("Hearth"), QObject* parent = nullptr);

    void read(const QString& endpoint, std::function<void(const KeyResult&)> done);
    // An empty key deletes the entry (NotFound when there was none counts as done).
    void write(const QString& endpoint, const QString& key, std::function<void(const KeyResult&)> done);

private:
    QString service_;
};

}  // namespace hearth
