// The disk cache of packed weights (pack_cache.h). File layout, little-endian:
//   header (64 bytes): magic "HRTHPACK", u32 format version, u32 matrices, fingerprint[16],
//     u64 layout digest, u64 file bytes, u64 XXH3-64 of the header's first 48 bytes and the
//     table, u64 zero
//   table: one 128-byte entry per matrix in Model::packableWeights order: name[64] (NUL-padded),
//     u32 type, u32 layout, i64 rows, i64 cols, u64 offset, u64 bytes, u64 XXH3-64 of the bytes,
//     16 zero bytes
//   the copies, each at an offset that is a multiple of 4096 (the kernels want 64-byte alignment).
#include "engine/model/pack_cache.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "engine/model/model.h"
#include "engine/str_cat.h"
#include "engine/util/file_path.h"
#include "engine/util/mapped_file.h"

#if defined(_WIN32)
#include <cwchar>
#endif

namespace hearth {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'H', 'R', 'T', 'H', 'P', 'A', 'C', 'K'};
// 1: the layout above.
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kHeaderBytes = 64, kEntryBytes = 128, kNameBytes = 64;
constexpr size_t kChecksummedHeaderBytes = 48;
constexpr uint64_t kDataAlignment = 4096;
constexpr const char* kExtension = ".hpack";

void putU32(uint8_t* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void putU64(uint8_t* p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t getU32(const uint8_t* p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = v << 8 | p[i];
    return v;
}
uint64_t getU64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
    return v;
}

uint64_t alignUp(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

std::string megabytes(uint64_t bytes) { return strCat(bytes / 1000000, " MB"); }

// One table entry as read from a file.
struct TableEntry {
    std::string name;
    uint32_t type = 0, layout = 0;
    int64_t nRows = 0, nCols = 0;
    uint64_t offset = 0, bytes = 0, checksum = 0;
};

TableEntry readEntry(const uint8_t* p) {
    TableEntry e;
    e.name.assign(reinterpret_cast<const char*>(p), strnlen(reinterpret_cast<const char*>(p), kNameBytes));
    e.type = getU32(p + 64);
    e.layout = getU32(p + 68);
    e.nRows = static_cast<int64_t>(getU64(p + 72));
    e.nCols = static_cast<int64_t>(getU64(p + 80));
    e.offset = getU64(p + 88);
    e.bytes = getU64(p + 96);
    e.checksum = getU64(p + 104);
    return e;
}

uint64_t tableChecksum(const uint8_t* header, const uint8_t* table, size_t tableBytes) {
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, header, kChecksummedHeaderBytes);
    XXH3_64bits_update(&state, table, tableBytes);
    return XXH3_64bits_digest(&state);
}

// Reads the file at path into memory and checks all of it against the model's matrices (pack_cache.h); on
// success packed[i] is matrix i's copy in that memory (bytes 0: none). The error is the reason.
Result<std::unique_ptr<MappedFile>> openChecked(const std::string& path, const ModelFingerprint& fingerprint,
                                                uint64_t digest, const std::vector<Model::PackableWeight>& weights,
                                                std::vector<PackedRows>& packed,
                                                const std::function<void(int done, int total)>& progress) {
    // Read into memory rather than mapped: decode streams these bytes every token, and a file
    // mapping's small pages cost it ~6% (1.1B Q4_0, 2 threads: 40.5 vs 43 tokens/s).
    auto mapped = MappedFile::readIntoMemory(path);
    if (!mapped) return std::unexpected(mapped.error());
    const std::span<const uint8_t> bytes = (*mapped)->bytes();
    const auto bad = [](std::string why) { return fail(ErrorCode::InvalidFormat, std::move(why)); };
    if (bytes.size() < kHeaderBytes) return bad(strCat("it is cut short (", bytes.size(), " bytes)"));
    const uint8_t* h = bytes.data();
    if (std::memcmp(h, kMagic, sizeof kMagic) != 0) return bad("it is not a Hearth pack cache file (magic)");
    if (const uint32_t v = getU32(h + 8); v != kFormatVersion)
        return bad(strCat("its format version is ", v, "; this build reads ", kFormatVersion));
    const uint64_t nEntries = getU32(h + 12);
    const uint64_t tableEnd = kHeaderBytes + nEntries * kEntryBytes;
    if (getU64(h + 40) != bytes.size() || tableEnd > bytes.size())
        return bad(strCat("it has ", bytes.size(), " bytes, its header says ", getU64(h + 40), " (cut short?)"));
    if (tableChecksum(h, h + kHeaderBytes, nEntries * kEntryBytes) != getU64(h + 48))
        return bad("its header or table is damaged (checksum)");
    if (!std::equal(fingerprint.begin(), fingerprint.end(), h + 16))
        return bad("it was made for another model (fingerprint)");
    if (getU64(h + 32) != digest) return bad("it was made by another packing layout");
    if (nEntries != weights.size())
        return bad(strCat("it holds ", nEntries, " matrices; the model has ", weights.size()));
    packed.assign(weights.size(), PackedRows{});
    for (size_t i = 0; i < weights.size(); ++i) {
        const TableEntry e = readEntry(h + kHeaderBytes + i * kEntryBytes);
        const WeightView& w = *weights[i].view;
        if (e.name != weights[i].name || e.type != static_cast<uint32_t>(w.type) || e.nRows != w.nRows ||
            e.nCols != w.nCols)
            return bad(strCat("matrix ", i, " is '", e.name, "' ", e.nRows, "x", e.nCols, " of type ", e.type,
                              "; the model's is '", weights[i].name, "' ", w.nRows, "x", w.nCols, " of type ",
                              static_cast<uint32_t>(w.type)));
        if (e.bytes == 0) continue;
        if (e.layout == 0 || e.offset % 64 != 0 || e.offset < tableEnd || e.offset > bytes.size() ||
            e.bytes > bytes.size() - e.offset)
            return bad(strCat("matrix '", e.name, "' has its copy outside the file"));
        packed[i] = {h + e.offset, e.layout, static_cast<size_t>(e.bytes)};
    }
    // Every copy's checksum before any is used: the data of a model whose table checks may still
    // be damaged anywhere (a bad sector, a file cut and padded by a copy tool).
    for (size_t i = 0; i < weights.size(); ++i) {
        const TableEntry e = readEntry(h + kHeaderBytes + i * kEntryBytes);
        if (e.bytes != 0 && XXH3_64bits(h + e.offset, e.bytes) != e.checksum)
            return bad(strCat("the copy of matrix '", e.name, "' is damaged (checksum)"));
        if (progress) progress(static_cast<int>(i + 1), static_cast<int>(weights.size()));
    }
    return std::move(*mapped);
}

// Deterministic bytes for the probe matrices (splitmix64).
void fillProbe(uint8_t* p, size_t n, uint64_t seed) {
    for (size_t i = 0; i < n; i += 8) {
        uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        std::memcpy(p + i, &z, std::min<size_t>(8, n - i));
    }
}

}  // namespace

std::string defaultPackCacheDir() {
    if (const char* dir = std::getenv("HEARTH_PACK_CACHE_DIR"); dir && *dir) return dir;
#if defined(_WIN32)
    const wchar_t* local = _wgetenv(L"LOCALAPPDATA");
    return local && *local ? narrow(local) + "/hearth/packed" : std::string();
#else
    // The XDG base directory spec: a relative XDG_CACHE_HOME is invalid and ignored.
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/')
        return std::string(xdg) + "/hearth/packed";
    const char* home = std::getenv("HOME");
    return home && *home ? std::string(home) + "/.cache/hearth/packed" : std::string();
#endif
}

bool packCacheEnabledByEnvironment() {
    const char* env = std::getenv("HEARTH_PACK_CACHE");
    return env == nullptr || std::strcmp(env, "0") != 0;
}

// Every weight type through packWeight at two shapes: the layouts, sizes and bytes it makes of
// fixed input, with the backend's name and the file format's version. A change to any packing
// routine changes the digest, so the files of an older build are never read as this one's.
uint64_t packLayoutDigest(Backend& backend) {
    std::string blob = strCat("hearth pack cache ", kFormatVersion, " ", backend.name(), "\n");
    bool packsAny = false;
    std::vector<uint8_t> input;
    for (const auto& [nRows, nCols] : {std::pair<int64_t, int64_t>{24, 512}, {40, 768}})
        for (DType t : {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::Q4_K, DType::Q5_K,
                        DType::Q6_K, DType::F16, DType::BF16, DType::F32}) {
            const size_t n = rowBytes(t, nCols) * static_cast<size_t>(nRows);
            input.assign(n + 64, 0);
            uint8_t* data = input.data() + (64 - reinterpret_cast<uintptr_t>(input.data()) % 64) % 64;
            fillProbe(data, n, static_cast<uint64_t>(t) * 1000 + static_cast<uint64_t>(nCols));
            WeightView w{t, data, nRows, nCols, {}};
            const std::unique_ptr<WeightBuffer> copy = backend.packWeight(w);
            blob += strCat(static_cast<int>(t), " ", nRows, "x", nCols, " ", w.packed.layout, " ", w.packed.bytes, " ");
            if (copy && w.packed.data && w.packed.bytes > 0) {
                packsAny = true;
                blob += strCat(XXH3_64bits(w.packed.data, w.packed.bytes), "\n");
            }
        }
    return packsAny ? XXH3_64bits(blob.data(), blob.size()) | 1 : 0;  // never 0 when something packs
}

std::string packCacheFileName(const ModelFingerprint& fingerprint, uint64_t layoutDigest) {
    char digest[17];
    std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(layoutDigest));
    return fingerprintHex(fingerprint) + "-" + digest + kExtension;
}

const char* packCacheOutcomeName(PackCacheReport::Outcome outcome) {
    using Outcome = PackCacheReport::Outcome;
    switch (outcome) {
    case Outcome::NotPacked: return "not packed";
    case Outcome::Off: return "off";
    case Outcome::NoLayout: return "unused (nothing packed)";
    case Outcome::Hit: return "hit";
    case Outcome::Miss: return "miss (written)";
    case Outcome::Rejected: return "rejected (rewritten)";
    }
    return "";
}

PackCacheWrite::PackCacheWrite(PackCacheConfig config, std::string path, const ModelFingerprint& fingerprint,
                               uint64_t digest, std::vector<Entry> entries)
    : config_(std::move(config)),
      path_(std::move(path)),
      fingerprint_(fingerprint),
      digest_(digest),
      entries_(std::move(entries)) {}

PackCacheWrite::~PackCacheWrite() { wait(); }

void PackCacheWrite::start() {
    if (thread_.joinable()) return;
    try {
        thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {  // no thread to be had: written now instead
        run();
    }
}

void PackCacheWrite::run() {
    problem_ = writeFile();
    if (problem_.empty()) evict();
}

const std::string& PackCacheWrite::wait() {
    if (thread_.joinable()) thread_.join();
    return problem_;
}

std::string PackCacheWrite::writeFile() {
    std::vector<uint8_t> head(kHeaderBytes + entries_.size() * kEntryBytes, 0);
    uint64_t offset = alignUp(head.size(), kDataAlignment), total = 0;
    for (size_t i = 0; i < entries_.size(); ++i) {
        const Entry& e = entries_[i];
        if (e.name.size() >= kNameBytes) return strCat("the matrix name '", e.name, "' is too long");
        uint8_t* p = head.data() + kHeaderBytes + i * kEntryBytes;
        std::memcpy(p, e.name.data(), e.name.size());
        putU32(p + 64, static_cast<uint32_t>(e.type));
        putU32(p + 68, e.packed.bytes ? e.packed.layout : 0);
        putU64(p + 72, static_cast<uint64_t>(e.nRows));
        putU64(p + 80, static_cast<uint64_t>(e.nCols));
        if (e.packed.bytes == 0) continue;
        putU64(p + 88, offset);
        putU64(p + 96, e.packed.bytes);
        putU64(p + 104, XXH3_64bits(e.packed.data, e.packed.bytes));
        total += e.packed.bytes;
        offset = alignUp(offset + e.packed.bytes, kDataAlignment);
    }
    if (total > config_.maxBytes)
        return strCat("the packed copies (", megabytes(total), ") exceed the cache's limit (",
                      megabytes(config_.maxBytes), ")");
    std::memcpy(head.data(), kMagic, sizeof kMagic);
    putU32(head.data() + 8, kFormatVersion);
    putU32(head.data() + 12, static_cast<uint32_t>(entries_.size()));
    std::copy(fingerprint_.begin(), fingerprint_.end(), head.data() + 16);
    putU64(head.data() + 32, digest_);
    putU64(head.data() + 40, offset);
    putU64(head.data() + 48, tableChecksum(head.data(), head.data() + kHeaderBytes, head.size() - kHeaderBytes));

    std::error_code ec;
    const fs::path dir = fsPath(config_.dir);
    fs::create_directories(dir, ec);
    if (ec) return strCat("cannot create ", config_.dir, ": ", ec.message());
    // Room for the file and 1 GiB besides: a cache never fills the disk.
    const fs::space_info space = fs::space(dir, ec);
    if (!ec && space.available < offset + (uint64_t{1} << 30))
        return strCat("not enough free disk space in ", config_.dir, " for ", megabytes(offset));
    const std::string tmp = strCat(path_, ".tmp-", std::random_device{}());
    std::FILE* f = openFile(tmp, "wb");
    if (!f) return strCat("cannot create ", tmp);
    static const std::array<uint8_t, kDataAlignment> zeros{};
    uint64_t at = 0;
    const auto put = [&](const void* data, size_t n) {
        if (n > 0 && std::fwrite(data, 1, n, f) != n) return false;
        at += n;
        return true;
    };
    const auto padTo = [&](uint64_t to) { return put(zeros.data(), static_cast<size_t>(to - at)); };
    bool ok = put(head.data(), head.size());
    for (const Entry& e : entries_) {
        if (!ok || e.packed.bytes == 0) continue;
        ok = padTo(alignUp(at, kDataAlignment)) && put(e.packed.data, e.packed.bytes);
    }
    ok = ok && padTo(offset) && std::fflush(f) == 0;
    ok = std::fclose(f) == 0 && ok;
    if (ok) fs::rename(fsPath(tmp), fsPath(path_), ec);
    if (!ok || ec) {
        fs::remove(fsPath(tmp), ec);
        return strCat("cannot write ", path_, ok ? ": " + ec.message() : std::string());
    }
    return {};
}

// The newest files first (a hit touches its file), kept while within maxFiles and maxBytes; a
// temporary file an hour old is a crashed write's.
void PackCacheWrite::evict() const {
    struct Found {
        fs::path path;
        fs::file_time_type time;
        uint64_t size;
    };
    std::vector<Found> files;
    std::error_code ec;
    const auto now = fs::file_time_type::clock::now();
    for (fs::directory_iterator it(fsPath(config_.dir), ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path& p = it->path();
        std::error_code fileEc;
        const auto time = fs::last_write_time(p, fileEc);
        if (fileEc || !it->is_regular_file(fileEc)) continue;
        if (p.extension() == kExtension) files.push_back({p, time, static_cast<uint64_t>(it->file_size(fileEc))});
        else if (p.filename().string().find(strCat(kExtension, ".tmp-")) != std::string::npos &&
                 now - time > std::chrono::hours(1))
            fs::remove(p, fileEc);
    }
    std::sort(files.begin(), files.end(), [](const Found& a, const Found& b) { return a.time > b.time; });
    uint64_t kept = 0;
    for (size_t i = 0; i < files.size(); ++i) {
        kept += files[i].size;
        if (static_cast<int>(i) >= config_.maxFiles || (i > 0 && kept > config_.maxBytes))
            fs::remove(files[i].path, ec);
    }
}

PackCacheResult packWithCache(Model& model, Backend& backend, const ModelFingerprint& fingerprint,
                              const PackCacheConfig& config, const std::function<void(int done, int total)>& progress) {
    using Outcome = PackCacheReport::Outcome;
    PackCacheResult result;
    PackCacheReport& r = result.report;
    const uint64_t digest = packLayoutDigest(backend);
    if (digest == 0 || config.dir.empty()) {
        r.outcome = digest == 0 ? Outcome::NoLayout : Outcome::Off;
        r.packedBytes = model.packWeights(backend, progress);
        return result;
    }
    r.path = config.dir + "/" + packCacheFileName(fingerprint, digest);
    const std::vector<Model::PackableWeight> weights = model.packableWeights();
    r.outcome = Outcome::Miss;
    std::error_code ec;
    if (fs::exists(fsPath(r.path), ec)) {
        const auto start = std::chrono::steady_clock::now();
        std::vector<PackedRows> packed;
        auto mapping = openChecked(r.path, fingerprint, digest, weights, packed, progress);
        if (mapping) {
            for (size_t i = 0; i < weights.size(); ++i) {
                if (packed[i].bytes == 0) continue;
                WeightView& w = *weights[i].view;
                w.packed = packed[i];
                r.packedBytes += rowBytes(w.type, w.nCols) * static_cast<size_t>(w.nRows);
            }
            result.mapping = std::move(*mapping);
            r.outcome = Outcome::Hit;
            r.checkSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            fs::last_write_time(fsPath(r.path), fs::file_time_type::clock::now(), ec);  // the last use
            r.packedBytes += model.packWeights(backend);  // any the file lacks; ties the output
            return result;
        }
        r.outcome = Outcome::Rejected;
        r.note = strCat("pack cache: ignored ", r.path, ": ", mapping.error().message, "; repacked and rewritten");
    }
    r.packedBytes = model.packWeights(backend, progress);
    std::vector<PackCacheWrite::Entry> entries;
    bool anyPacked = false;
    for (const Model::PackableWeight& p : weights) {
        const WeightView& w = *p.view;
        const bool packed = w.packed.layout != 0 && w.packed.data != nullptr && w.packed.bytes > 0;
        anyPacked = anyPacked || packed;
        entries.push_back({p.name, w.type, w.nRows, w.nCols, packed ? w.packed : PackedRows{}});
    }
    if (!anyPacked) {  // a model of types the backend keeps (F32, F16): nothing to save
        r.outcome = r.outcome == Outcome::Miss ? Outcome::NoLayout : r.outcome;
        return result;
    }
    result.write = std::make_unique<PackCacheWrite>(config, r.path, fingerprint, digest, std::move(entries));
    if (config.writeInBackground) {
        result.write->start();
    } else {
        result.write->run();
        if (const std::string& problem = result.write->wait(); !problem.empty())
            r.note += strCat(r.note.empty() ? "" : "; ", "pack cache: not written: ", problem);
    }
    return result;
}

}  // namespace hearth
