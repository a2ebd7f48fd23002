// ModelCatalog: the models found on the machine (discoverModels) with each one's facts
// (inspectModel), kept between scans. A scan lists the folders on the thread pool, then inspects
// on the thread pool only the models that are new or whose files changed (path, size and
// modification time); the others keep their facts, and every memory estimate is made again
// against the memory available at that scan. Results arrive on the owner's thread by queued
// calls; the catalog is used from the thread that owns it (the GUI thread) only.
#pragma once

#include <QHash>
#include <QList>
#include <QObject>
#include <functional>
#include <optional>

#include "app/common/model_info.h"
#include "app/models/model_sources.h"

namespace hearth {

struct CatalogEntry {
    FoundModel found;
    std::optional<Result<ModelFileInfo>> info;  // empty until inspected; an error: not a usable GGUF
};

class ModelCatalog : public QObject {
    Q_OBJECT
public:
    struct Options {
        ModelSourceRoots roots;
        MemoryOptions memory;  // the chosen context and KV type (availableBytes: from availableMemory)
        std::function<qint64()> availableMemory = [] { return availableMemoryBytes(); };
        bool saveUserFolders = false;  // addUserFolder also stores the list (setUserModelFolders)
    };
    // The user's: defaultModelSourceRoots(), available memory from the system, added folders saved.
    static Options userOptions();
    explicit ModelCatalog(Options options, QObject* parent = nullptr);

    // Starts a scan (a scan in progress is superseded: its results are dropped).
    void rescan();
    bool scanning() const { return scanning_; }
    const QList<CatalogEntry>& entries() const { return entries_; }  // grouped as discoverModels orders them
    const QList<ScanNote>& notes() const { return notes_; }
    const CatalogEntry* entry(const QString& path) const;
    // Inspections started since the catalog was made (a scan of unchanged files starts none).
    int nInspections() const { return nInspections_; }

    // Re-estimates every inspected entry's memory for the options (and memory available now).
    void setMemoryOptions(const MemoryOptions& memory);
    const MemoryOptions& memoryOptions() const { return options_.memory; }
    const ModelSourceRoots& roots() const { return options_.roots; }
    // Adds a folder searched recursively (kept when saveUserFolders) and rescans.
    void addUserFolder(const QString& folder);

signals:
    void listed();  // entries() and notes() were replaced by a scan's list (facts may be pending)
    void inspected(const QString& path);  // that entry's facts arrived
    void scanFinished();  // every entry of the scan has its facts

private:
    struct Cached {
        qint64 bytes = 0;
        qint64 modifiedMs = 0;
        Result<ModelFileInfo> info;
    };
    void takeList(int generation, const ModelScan& scan, qint64 available);
    void takeFacts(int generation, const QString& path, const Result<ModelFileInfo>& info);
    void setFacts(CatalogEntry& entry, const Result<ModelFileInfo>& info);
    void finishIfDone();

    Options options_;
    QList<CatalogEntry> entries_;
    QList<ScanNote> notes_;
    QHash<QString, Cached> cache_;  // by path, across scans
    int generation_ = 0;
    int pending_ = 0;
    int nInspections_ = 0;
    bool scanning_ = false;
};

}  // namespace hearth
