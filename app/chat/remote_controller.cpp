// The key's entry is named by the normalised API base, so "http://h:8000" and
// "http://h:8000/v1/" share one.
#include "app/chat/remote_controller.h"

#include "app/remote/remote_protocol.h"

namespace hearth {

RemoteController::RemoteController(AppSettings& settings, ApiKeyStore& keys, QObject* parent)
    : QObject(parent), appSettings_(settings), keys_(keys) {
    QSettings& raw = appSettings_.raw();
    settings_.enabled = raw.value("remote/enabled", false).toBool();
    settings_.baseUrl = raw.value("remote/url").toString();
    settings_.model = raw.value("remote/model").toString();
    settings_.timeoutSeconds = std::clamp(raw.value("remote/timeoutSeconds", 120).toInt(), 1, 3600);
    connect(&engine_, &RemoteEngine::modelsListed, this, &RemoteController::modelsListed);
    connect(&engine_, &RemoteEngine::modelsFailed, this, &RemoteController::modelsFailed);
    updateEngine();
    if (!settings_.baseUrl.isEmpty()) loadKey();
}

QString RemoteController::keychainEntry() const {
    const auto base = remote::apiBase(settings_.baseUrl);
    return base ? base->toString() : settings_.baseUrl.trimmed();
}

void RemoteController::updateEngine() {
    engine_.setEndpoint(RemoteEndpoint{.baseUrl = settings_.baseUrl,
                                       .model = settings_.model,
                                       .apiKey = key_,
                                       .timeoutSeconds = settings_.timeoutSeconds});
}

void RemoteController::loadKey() {
    const quint64 serial = ++keySerial_;
    keys_.read(keychainEntry(), [this, serial](const KeyResult& r) {
        if (serial != keySerial_) return;
        key_ = r.status == KeyResult::Status::Ok ? r.key : QString();
        updateEngine();
        setKeyNote(r);
    });
}

void RemoteController::setKeyNote(const KeyResult& r) {
    QString note;
    if (r.status == KeyResult::Status::NoKeychain)
        note = tr("No system keychain is available (%1), so the API key is not saved: it is used until Hearth "
                  "quits. Start a keychain (GNOME Keyring, KWallet) to keep it.")
                   .arg(r.detail);
    else if (r.status == KeyResult::Status::Failed)
        note = tr("The keychain refused the API key (%1), so it is not saved: it is used until Hearth quits.")
                   .arg(r.detail);
    keyNote_ = note;
    emit keyChecked(note);
}

void RemoteController::apply(const RemoteSettings& s, const std::optional<QString>& key) {
    const bool addressChanged = remote::apiBase(s.baseUrl) != remote::apiBase(settings_.baseUrl);
    settings_ = s;
    settings_.timeoutSeconds = std::clamp(s.timeoutSeconds, 1, 3600);
    QSettings& raw = appSettings_.raw();
    raw.setValue("remote/enabled", settings_.enabled);
    raw.setValue("remote/url", settings_.baseUrl);
    raw.setValue("remote/model", settings_.model);
    raw.setValue("remote/timeoutSeconds", settings_.timeoutSeconds);
    if (key) {
        key_ = *key;  // used at once, whatever the keychain answers
        const quint64 serial = ++keySerial_;
        keys_.write(keychainEntry(), *key, [this, serial](const KeyResult& r) {
            if (serial == keySerial_) setKeyNote(r);
        });
    } else if (addressChanged) {
        key_.clear();
        if (!settings_.baseUrl.isEmpty()) loadKey();
    }
    updateEngine();
    emit changed();
}

void RemoteController::listModels(const QString& baseUrl, const std::optional<QString>& key) {
    // The saved key goes only to the address it was saved for.
    const bool sameServer = remote::apiBase(baseUrl) == remote::apiBase(settings_.baseUrl);
    engine_.listModels(RemoteEndpoint{.baseUrl = baseUrl,
                                      .model = {},
                                      .apiKey = key.value_or(sameServer ? key_ : QString()),
                                      .timeoutSeconds = settings_.timeoutSeconds});
}

}  // namespace hearth
