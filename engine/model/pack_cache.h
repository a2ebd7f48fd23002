// A disk cache of the backend's packed weights (Backend::packWeight, Model::packWeights): one file
// per model and packing layout, so that a later load reads the copies instead of making them again
// (making them costs the kernel's zeroing of fresh pages, most of a load). A file is keyed by the
// model's fingerprint and a digest of the backend's packing (its name and what it makes of fixed
// probe matrices of every type, so a changed layout never matches an old file), and checked whole
// before a byte of it is used: magic, format version, fingerprint, layout digest, size, a table
// checksum, every matrix's name, type and shape against the model's, and every matrix's XXH3-64.
// A file that fails is ignored (the note says why) and written again; it never gives weights.
// Files are written to a temporary name and renamed, so a crash leaves no half file under the
// cache's name. The folder keeps the files of the most recently used models (PackCacheConfig).
// Thread-safety: packWithCache runs on the engine thread; a PackCacheWrite may run on its own
// thread while the model is used (it only reads the packed copies).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "engine/snapshot/model_fingerprint.h"
#include "engine/util/mapped_file.h"
#include "kernels/backend.h"

namespace hearth {

class Model;

struct PackCacheConfig {
    std::string dir;  // the cache folder (created when missing)
    // The folder keeps the files of the most recently used models (a hit counts as a use): at most
    // maxFiles, together at most maxBytes; a model whose copies alone exceed maxBytes is not saved.
    int maxFiles = 3;
    uint64_t maxBytes = uint64_t{32} << 30;
    // Written after packing on a thread of the write's own (the first token does not wait for
    // the disk), or before packWithCache returns (false; tests).
    bool writeInBackground = true;
};

// The default folder: HEARTH_PACK_CACHE_DIR when set, else ${XDG_CACHE_HOME:-~/.cache}/hearth/packed
// (Windows: %LOCALAPPDATA%/hearth/packed), the folder hierarchy of Hearth's other caches. Empty
// when no home folder is known.
std::string defaultPackCacheDir();
// False when HEARTH_PACK_CACHE=0 is in the environment (the cache is neither read nor written).
bool packCacheEnabledByEnvironment();

// The digest of how backend packs (0: it packs none of the probe matrices, so nothing is cached).
uint64_t packLayoutDigest(Backend& backend);
// The cache file's name for a model and a layout digest: <fingerprint hex>-<digest hex>.hpack.
std::string packCacheFileName(const ModelFingerprint& fingerprint, uint64_t layoutDigest);

// A file being written (a cache miss): the packed copies' bytes, read while the model lives.
class PackCacheWrite {
public:
    struct Entry {
        std::string name;
        DType type = DType::F32;
        int64_t nRows = 0, nCols = 0;
        PackedRows packed;  // bytes 0: the backend kept the file's layout
    };
    PackCacheWrite(PackCacheConfig config, std::string path, const ModelFingerprint& fingerprint, uint64_t digest,
                   std::vector<Entry> entries);
    ~PackCacheWrite();  // waits for a background write to finish
    PackCacheWrite(const PackCacheWrite&) = delete;
    PackCacheWrite& operator=(const PackCacheWrite&) = delete;

    void start();  // on a thread of its own
    void run();  // here
    // Waits for the write; empty when the file was written, else why not (one line).
    const std::string& wait();

private:
    std::string writeFile();
    void evict() const;

    PackCacheConfig config_;
    std::string path_;
    ModelFingerprint fingerprint_;
    uint64_t digest_ = 0;
    std::vector<Entry> entries_;
    std::thread thread_;
    std::string problem_;
};

// What packWithCache did (and Engine::load, which may not call it).
struct PackCacheReport {
    enum class Outcome {
        NotPacked,  // nothing packed (EngineOptions::packWeights false: hearth-cli info)
        Off,  // the cache is switched off (HEARTH_PACK_CACHE=0, EngineOptions::packCache): packed
        NoLayout,  // the backend packs none of the model's matrices (HEARTH_REPACK=0, the reference
        // backend, an F32 model): no file
        Hit,  // the copies are the cache file's
        Miss,  // no file: packed, and the file is written (PackCacheResult::write)
        Rejected,  // a file was there but failed a check (note): packed, and written again
    };
    Outcome outcome = Outcome::NotPacked;
    std::string path;  // the cache file
    std::string note;  // one line for the log: a rejected file's reason, a write that failed
    double checkSeconds = 0;  // a hit: reading and checking the file (checksums included)
    size_t packedBytes = 0;  // bytes of the file's rows the backend reads from copies (Model::packWeights)
};
struct PackCacheResult {
    PackCacheReport report;
    std::unique_ptr<MappedFile> mapping;  // a hit: keep as long as the model
    std::unique_ptr<PackCacheWrite> write;  // a miss: destroy before the model (it reads its copies)
};
const char* packCacheOutcomeName(PackCacheReport::Outcome outcome);  // "hit", "miss (written)", ...

// Packs model's matrices for backend (Model::packWeights, progress as its): those the cache file
// of (fingerprint, backend's layout) holds are taken from it when the whole file checks; the
// others are packed by the backend, and then the file is written (config.writeInBackground).
// Never fails: a cache that cannot be read or written is a note, the model packed as without it.
PackCacheResult packWithCache(Model& model, Backend& backend, const ModelFingerprint& fingerprint,
                              const PackCacheConfig& config,
                              const std::function<void(int done, int total)>& progress = {});

}  // namespace hearth
