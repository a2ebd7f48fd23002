// ModelCatalog (model_catalog.h). Work on the thread pool reports back with a queued call to the
// application object carrying a QPointer, checked on the owner's thread: a catalog destroyed
// meanwhile drops it. A generation number drops what a superseded scan reports.
#include "app/models/model_catalog.h"

#include <QCoreApplication>
#include <QPointer>
#include <QThreadPool>

namespace hearth {

ModelCatalog::ModelCatalog(Options options, QObject* parent) : QObject(parent), options_(std::move(options)) {}

ModelCatalog::Options ModelCatalog::userOptions() {
    Options options;
    options.roots = defaultModelSourceRoots();
    options.saveUserFolders = true;
    return options;
}

const CatalogEntry* ModelCatalog::entry(const QString& path) const {
    for (const CatalogEntry& e : entries_)
        if (e.found.path == path) return &e;
    return nullptr;
}

void ModelCatalog::rescan() {
    const int generation = ++generation_;
    scanning_ = true;
    QThreadPool::globalInstance()->start(
        [roots = options_.roots, availableMemory = options_.availableMemory, catalog = QPointer(this), generation] {
            const ModelScan scan = discoverModels(roots);
            const qint64 available = availableMemory ? availableMemory() : -1;
            QMetaObject::invokeMethod(QCoreApplication::instance(), [catalog, generation, scan, available] {
                if (catalog) catalog->takeList(generation, scan, available);
            });
        });
}

void ModelCatalog::takeList(int generation, const ModelScan& scan, qint64 available) {
    if (generation != generation_) return;
    options_.memory.availableBytes = available;
    entries_.clear();
    notes_ = scan.notes;
    pending_ = 0;
    for (const FoundModel& found : scan.models) {
        entries_.append({found, std::nullopt});
        CatalogEntry& e = entries_.back();
        const auto cached = cache_.constFind(found.path);
        if (cached != cache_.constEnd() && cached->bytes == found.bytes && cached->modifiedMs == found.modifiedMs) {
            setFacts(e, cached->info);
            continue;
        }
        ++pending_;
        ++nInspections_;
        QThreadPool::globalInstance()->start(
            [path = found.path, memory = options_.memory, catalog = QPointer(this), generation] {
                Result<ModelFileInfo> info = inspectModel(path, memory);
                QMetaObject::invokeMethod(QCoreApplication::instance(),
                                          [catalog, generation, path, info = std::move(info)] {
                                              if (catalog) catalog->takeFacts(generation, path, info);
                                          });
            });
    }
    emit listed();
    finishIfDone();
}

void ModelCatalog::takeFacts(int generation, const QString& path, const Result<ModelFileInfo>& info) {
    if (generation != generation_) return;
    for (CatalogEntry& e : entries_) {
        if (e.found.path != path) continue;
        cache_.insert(path, {e.found.bytes, e.found.modifiedMs, info});
        setFacts(e, info);
    }
    --pending_;
    emit inspected(path);
    finishIfDone();
}

// The entry's facts with its source and a memory estimate for the current options.
void ModelCatalog::setFacts(CatalogEntry& entry, const Result<ModelFileInfo>& info) {
    entry.info = info;
    if (!*entry.info) return;
    (*entry.info)->source = modelSourceName(entry.found.source);
    (*entry.info)->memory = estimateMemory(**entry.info, options_.memory);
}

void ModelCatalog::finishIfDone() {
    if (pending_ > 0 || !scanning_) return;
    scanning_ = false;
    emit scanFinished();
}

void ModelCatalog::setMemoryOptions(const MemoryOptions& memory) {
    const qint64 available = options_.memory.availableBytes;
    options_.memory = memory;
    if (memory.availableBytes < 0) options_.memory.availableBytes = available;
    for (CatalogEntry& e : entries_)
        if (e.info && *e.info) (*e.info)->memory = estimateMemory(**e.info, options_.memory);
}

void ModelCatalog::addUserFolder(const QString& folder) {
    if (folder.isEmpty() || options_.roots.userFolders.contains(folder)) return;
    options_.roots.userFolders.append(folder);
    if (options_.saveUserFolders) setUserModelFolders(options_.roots.userFolders);
    rescan();
}

}  // namespace hearth
