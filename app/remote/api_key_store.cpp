// qtkeychain jobs delete themselves after finished(); the key text never leaves this file
// except through the callback.
#include "app/remote/api_key_store.h"

#include <qt6keychain/keychain.h>

namespace hearth {

namespace {

KeyResult resultOf(const QKeychain::Job& job) {
    switch (job.error()) {
    case QKeychain::NoError: return {};
    case QKeychain::EntryNotFound: return {.status = KeyResult::Status::NotFound};
    case QKeychain::NoBackendAvailable:
    case QKeychain::NotImplemented: return {.status = KeyResult::Status::NoKeychain, .detail = job.errorString()};
    default: break;
    }
    // Without a Secret Service on the session bus, libsecret's and the D-Bus backends' errors
    // come as OtherError naming the missing service.
    const QString detail = job.errorString();
    const bool noService = detail.contains(QLatin1String("org.freedesktop.secrets")) ||
        detail.contains(QLatin1String("ServiceUnknown")) || detail.contains(QLatin1String("D-Bus")) ||
        detail.contains(QLatin1String("DBus"));
    return {.status = noService ? KeyResult::Status::NoKeychain : KeyResult::Status::Failed, .detail = detail};
}

}  // namespace

ApiKeyStore::ApiKeyStore(QString service, QObject* parent) : QObject(parent), service_(std::move(service)) {}

void ApiKeyStore::read(const QString& endpoint, std::function<void(const KeyResult&)> done) {
    auto* job = new QKeychain::ReadPasswordJob(service_, this);
    job->setInsecureFallback(false);
    job->setKey(endpoint);
    connect(job, &QKeychain::Job::finished, this, [job, done = std::move(done)] {
        KeyResult r = resultOf(*job);
        if (r.status == KeyResult::Status::Ok) r.key = job->textData();
        done(r);
    });
    job->start();
}

void ApiKeyStore::write(const QString& endpoint, const QString& key, std::function<void(const KeyResult&)> done) {
    QKeychain::Job* job = nullptr;
    if (key.isEmpty()) {
        job = new QKeychain::DeletePasswordJob(service_, this);
    } else {
        auto* w = new QKeychain::WritePasswordJob(service_, this);
        w->setTextData(key);
        job = w;
    }
    job->setInsecureFallback(false);
    job->setKey(endpoint);
    connect(job, &QKeychain::Job::finished, this, [job, deleting = key.isEmpty(), done = std::move(done)] {
        KeyResult r = resultOf(*job);
        if (deleting && r.status == KeyResult::Status::NotFound) r = {};
        done(r);
    });
    job->start();
}

}  // namespace hearth
