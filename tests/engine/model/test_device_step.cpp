// Issue 24's proof without a GPU: the forward pass on a backend with memory of its own
// (tests/support/device_memory_backend.h), the KV pool in that memory too (KvCache::placeOn).
// On every tiny family (Llama, Gemma 3 with its window pool, Qwen 2 with biases, Qwen 3, Phi-3
// with fused tensors, Gemma 2 with soft-caps), a prefill, a decode step, a batch of two
// sequences, a 3-row verification and a prefill chunk each upload their inputs once (token ids,
// positions and KV slots: 12 bytes a row; every layer's block tables, which every KV operator
// then gets in the backend's memory) and download exactly the wanted rows' logits once
// (none for the chunk), with no copy; no operator gets a pointer outside the backend's memory
// (activations, KV blocks, norm and bias vectors, matrices, logits); a token tree's step runs
// there too (its private blocks and ancestor copies in that memory); the logits are bitwise
// those of the same model on the reference backend over host memory; and the KV a snapshot
// saves (whole blocks, a partial block's rows) comes down bitwise the host cache's and goes
// back up into another cache on the device bitwise. And steps as one submission
// (Backend::beginStep, recorded and replayed as CUDA graphs are): decoding one sequence past a
// bucket of its block tables, then two sequences together, every replayed step makes no
// operator call, one upload and one download, with logits bitwise the plain pass's. A model
// split between that backend and the CPU (Model::splitLayers, the KV of the later layers in host
// memory) gives the same bits, moving its inputs up and the residual stream down once a step;
// and the layer placement counts what fits a memory budget. When the device's memory turns out
// smaller than its free memory claimed, Engine::load places fewer layers (down to none) instead
// of failing, and the engine gives the CPU's reply.
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <limits>
#include <optional>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/model/layer_placement.h"
#include "engine/model/model.h"
#include "engine/model/synth.h"
#include "engine/sample/sampler.h"
#include "engine/spec/spec_options.h"
#include "tests/support/device_memory_backend.h"

using namespace hearth;
using Tokens = std::vector<int32_t>;

namespace {

bool sameBits(std::span<const float> a, std::span<const float> b) {
    // memcmp of empty spans would get null pointers (undefined, and UBSan says so).
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

Tokens tokensOf(int n, int salt, int nVocab) {
    Tokens t;
    for (int k = 0; k < n; ++k) t.push_back(3 + (k * 37 + salt * 101) % (nVocab - 3));
    return t;
}

// A tiny family's synthetic model written into dir and loaded twice: one copy for the plain
// reference pass, one for the backend under test (packWeights changes a model's views).
struct TwoModels {
    std::unique_ptr<GgufFile> file;
    std::unique_ptr<Model> plain, other;
};
std::optional<TwoModels> loadTwice(const QTemporaryDir& dir, const QString& shape, int type, uint64_t seed,
                                   const QString& tag) {
    auto s = findSynthShape(shape.toStdString());
    if (!s) return std::nullopt;
    const std::string path = dir.filePath(shape + QString::number(type) + tag + ".gguf").toStdString();
    if (!writeSynthModel(*s, {.type = static_cast<DType>(type), .seed = seed}, path)) return std::nullopt;
    auto file = GgufFile::open(path);
    if (!file) return std::nullopt;
    TwoModels m{std::move(*file), nullptr, nullptr};
    auto plain = Model::load(*m.file), other = Model::load(*m.file);
    if (!plain || !other) return std::nullopt;
    m.plain = std::move(*plain), m.other = std::move(*other);
    return m;
}

// Two sequences run step by step on the plain model (the reference backend, a host cache) and on
// the model under test (a DeviceMemoryBackend, its cache). step(): one step of the given
// sequences (a token each, or a prompt for one), the logits compared bit for bit, the backend's
// violations checked; the first problem, or empty. The step's transfers stay readable after.
struct PairedSteps {
    PairedSteps(Model& plainModel, Backend& referenceBackend, KvCache& plainKv, Model& otherModel,
                test::DeviceMemoryBackend& deviceBackend, KvCache& otherKv)
        : plain(plainModel), reference(referenceBackend), plainCache(plainKv), other(otherModel),
          device(deviceBackend), otherCache(otherKv) {}
    Model& plain;
    Backend& reference;
    KvCache& plainCache;
    Model& other;
    test::DeviceMemoryBackend& device;
    KvCache& otherCache;
    KvSequence plainSeqs[2], otherSeqs[2];
    std::vector<float> want[2], got[2];

    QString step(const std::vector<int>& seqs, const Tokens& tokens, const char* what, int index) {
        const auto nVocab = static_cast<size_t>(plain.config().nVocab);
        std::vector<ForwardItem> plainItems, otherItems;
        for (size_t k = 0; k < seqs.size(); ++k) {
            const int q = seqs[k];
            want[q].resize(nVocab), got[q].resize(nVocab);
            const std::span<const int32_t> t =
                seqs.size() == 1 ? std::span<const int32_t>(tokens) : std::span<const int32_t>(&tokens[k], 1);
            plainItems.push_back({&plainSeqs[q], t, want[q]});
            otherItems.push_back({&otherSeqs[q], t, got[q]});
        }
        device.resetCounts();
        if (!plain.forward(reference, plainCache, plainItems))
            return QString("%1 %2: the plain pass failed").arg(what).arg(index);
        if (auto r = other.forward(device, otherCache, otherItems); !r)
            return QString("%1 %2: %3").arg(what).arg(index).arg(QString::fromStdString(r.error().message));
        for (int q : seqs)
            if (!sameBits(got[q], want[q]))
                return QString("%1 %2: logits of sequence %3 differ").arg(what).arg(index).arg(q);
        if (!device.violations().empty())
            return QString("%1 %2: %3").arg(what).arg(index).arg(QString::fromStdString(device.violations().front()));
        return QString();
    }
};

}  // namespace

class TestDeviceStep : public QObject {
    Q_OBJECT
private slots:
    void stepsMoveOnlyInputsAndLogits_data();
    void stepsMoveOnlyInputsAndLogits();
    void decodeStepsReplay_data() { stepsMoveOnlyInputsAndLogits_data(); }
    void decodeStepsReplay();
    void smallOutputsComeDownAlone_data() { stepsMoveOnlyInputsAndLogits_data(); }
    void smallOutputsComeDownAlone();
    void splitLayers_data() { stepsMoveOnlyInputsAndLogits_data(); }
    void splitLayers();
    void layerPlacement();
    void loadPlacesFewerLayersOutOfMemory();
    void reportsFromFirstLogits();

private:
    QTemporaryDir dir_;
};

void TestDeviceStep::stepsMoveOnlyInputsAndLogits_data() {
    QTest::addColumn<QString>("shape");
    QTest::addColumn<int>("type");
    for (const char* shape : {"tiny", "tiny-gemma3", "tiny-qwen2", "tiny-qwen3", "tiny-phi3", "tiny-gemma2"})
        QTest::newRow(shape) << shape << static_cast<int>(DType::Q8_0);
    QTest::newRow("tiny F32") << "tiny" << static_cast<int>(DType::F32);
}

void TestDeviceStep::stepsMoveOnlyInputsAndLogits() {
    QFETCH(QString, shape);
    QFETCH(int, type);
    auto models = loadTwice(dir_, shape, type, 3, "");
    QVERIFY(models.has_value());
    std::unique_ptr<Model>&plain = models->plain, &onDevice = models->other;
    auto reference = makeCpuReferenceBackend(), inner = makeCpuReferenceBackend();
    test::DeviceMemoryBackend device(*inner);
    onDevice->packWeights(device);
    QVERIFY(device.loadBytes() > 0);

    const int nVocab = plain->config().nVocab;
    const auto rows = [&](int n) { return std::vector<float>(static_cast<size_t>(n) * nVocab); };
    KvCache plainCache(plain->kvLayout(16), 512), deviceCache(onDevice->kvLayout(16), 512);
    deviceCache.placeOn(&device);
    KvSequence plainSeqs[2], deviceSeqs[2];

    // One step on both: items of (sequence, tokens, logits rows wanted); checks the transfers.
    struct Part {
        int seq;
        Tokens tokens;
        int nLogits;
        Tokens parents = {};  // a token tree (ForwardItem::parents): transfers are not counted
    };
    // A step's one upload: ids, positions and slots (12 bytes a row, padded to 8), then each
    // item's K and V block tables (a pointer per block, padded to a multiple of 16 blocks) in
    // every layer.
    const auto stepBytesUp = [&](const std::vector<Part>& parts, int nRows) {
        size_t bytes = (size_t(nRows) * 3 * sizeof(int32_t) + 7) / 8 * 8;
        for (const Part& p : parts)
            bytes += size_t(deviceCache.layout().nLayers) * 2 * ((deviceSeqs[p.seq].blockTable.size() + 15) / 16 * 16) *
                sizeof(void*);
        return bytes;
    };
    const auto step = [&](const char* what, const std::vector<Part>& parts) {
        std::vector<std::vector<float>> expected, got;
        std::vector<ForwardItem> plainItems, deviceItems;
        for (const Part& p : parts) expected.push_back(rows(p.nLogits)), got.push_back(rows(p.nLogits));
        int nRows = 0, nLogits = 0;
        for (size_t i = 0; i < parts.size(); ++i) {
            const Part& p = parts[i];
            plainItems.push_back({&plainSeqs[p.seq], p.tokens, expected[i], 0, p.parents});
            deviceItems.push_back({&deviceSeqs[p.seq], p.tokens, got[i], 0, p.parents});
            nRows += static_cast<int>(p.tokens.size());
            nLogits += p.nLogits;
        }
        if (!plain->forward(*reference, plainCache, plainItems)) return QString("%1: the plain pass failed").arg(what);
        device.resetCounts();
        if (auto r = onDevice->forward(device, deviceCache, deviceItems); !r)
            return QString("%1: %2").arg(what, QString::fromStdString(r.error().message));
        const test::DeviceTransfers& t = device.transfers();
        if (!device.violations().empty())
            return QString("%1: %2").arg(what, QString::fromStdString(device.violations().front()));
        if (device.kvOutside() > 0) return QString("%1: KV blocks outside the backend's memory").arg(what);
        const bool tree = !parts.front().parents.empty();
        if (tree) qInfo("%s: %d uploads, %d copies (%zu bytes)", what, t.uploads, t.copies, t.bytesCopied);
        else if (t.uploads != 1 || t.bytesUp != stepBytesUp(parts, nRows))
            return QString("%1: %2 uploads of %3 bytes in all").arg(what).arg(t.uploads).arg(t.bytesUp);
        else if (device.tablesFromHost() > 0)
            return QString("%1: %2 KV calls without their block tables in the backend's memory")
                .arg(what)
                .arg(device.tablesFromHost());
        else if (t.downloads != (nLogits > 0 ? 1 : 0) || t.bytesDown != size_t(nLogits) * size_t(nVocab) * sizeof(float))
            return QString("%1: %2 downloads of %3 bytes in all").arg(what).arg(t.downloads).arg(t.bytesDown);
        else if (t.copies != 0) return QString("%1: %2 copies").arg(what).arg(t.copies);
        for (size_t i = 0; i < parts.size(); ++i)
            if (!sameBits(got[i], expected[i])) return QString("%1: item %2's logits differ").arg(what).arg(i);
        qInfo("%s: %d rows, %d operator calls, %zu bytes up, %zu down", what, nRows, t.ops, t.bytesUp, t.bytesDown);
        return QString();
    };

    QString r = step("prefill", {{0, tokensOf(20, 0, nVocab), 1}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("decode", {{0, tokensOf(1, 1, nVocab), 1}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("two sequences", {{0, tokensOf(1, 2, nVocab), 1}, {1, tokensOf(6, 3, nVocab), 1}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("verify", {{0, tokensOf(3, 4, nVocab), 3}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("no logits", {{1, tokensOf(4, 5, nVocab), 0}});  // a prefill chunk: nothing comes down
    QVERIFY2(r.isEmpty(), qPrintable(r));
    // The next step goes on from there, as on the host.
    r = step("decode after", {{1, tokensOf(1, 6, nVocab), 1}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    // A tree: a, then b and c both after a, then d after c (rows off the chain attend through
    // private blocks holding their ancestors).
    r = step("tree", {{0, tokensOf(4, 7, nVocab), 4, {-1, 0, 0, 2}}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    QVERIFY(device.transfers().copies > 0);

    // Snapshots: what the store saves comes down bitwise; restored into another device cache,
    // it reads back the same.
    const KvSequence &hostSeq = plainSeqs[0], &devSeq = deviceSeqs[0];
    QCOMPARE(devSeq.nTokens, hostSeq.nTokens);
    const int32_t bs = deviceCache.layout().blockSize, nFull = devSeq.nTokens / bs, tail = devSeq.nTokens % bs;
    QVERIFY(nFull >= 1 && tail > 0);
    KvCache restored(onDevice->kvLayout(16), 512);
    restored.placeOn(&device);
    for (int g = 0; g < deviceCache.nGroups(); ++g) {
        const std::vector<BlockId>& hostTable = g == 0 ? hostSeq.blockTable : hostSeq.windowTable;
        const std::vector<BlockId>& devTable = g == 0 ? devSeq.blockTable : devSeq.windowTable;
        for (int32_t i = 0; i < nFull; ++i) {
            if (devTable[size_t(i)] == kNoBlock) continue;  // a window block released
            device.resetCounts();
            const std::vector<uint8_t> saved = deviceCache.blockBytes(devTable[size_t(i)], g);
            QVERIFY(saved == plainCache.blockBytes(hostTable[size_t(i)], g));
            QCOMPARE(device.transfers().bytesDown, saved.size());
        }
    }
    const std::vector<uint8_t> tailRows = deviceCache.packedRows(devSeq, size_t(nFull), tail);
    QVERIFY(!tailRows.empty());
    QVERIFY(tailRows == plainCache.packedRows(hostSeq, size_t(nFull), tail));
    BlockKey key{};
    key[0] = 42;
    const std::vector<uint8_t> whole = deviceCache.blockBytes(devSeq.blockTable[0], 0);
    auto imported = restored.importBlock(key, whole);
    QVERIFY(imported && *imported);
    KvSequence back;
    const auto hit = restored.cachedPrefix(back, Tokens{});  // nothing: the key is not a chain of tokens
    QVERIFY(hit.full.blocks.empty());
    QCOMPARE(restored.pool(0).find(key) >= 0, true);
    QVERIFY(restored.blockBytes(restored.pool(0).find(key), 0) == whole);
    KvSequence writeInto;
    QVERIFY(restored.reserve(writeInto, tail));
    QVERIFY(restored.writeRows(writeInto, 0, tailRows, tail, tail));
    QVERIFY(restored.packedRows(writeInto, 0, tail) == tailRows);
    QVERIFY2(device.violations().empty(), device.violations().empty() ? "" : device.violations().front().c_str());
}

void TestDeviceStep::decodeStepsReplay() {
    QFETCH(QString, shape);
    QFETCH(int, type);
    auto models = loadTwice(dir_, shape, type, 5, "-replay");
    QVERIFY(models.has_value());
    auto reference = makeCpuReferenceBackend(), inner = makeCpuReferenceBackend();
    test::DeviceMemoryBackend device(*inner);
    models->other->packWeights(device);
    const int nVocab = models->plain->config().nVocab;
    KvCache plainCache(models->plain->kvLayout(16), 1024), deviceCache(models->other->kvLayout(16), 1024);
    deviceCache.placeOn(&device);
    PairedSteps pair(*models->plain, *reference, plainCache, *models->other, device, deviceCache);
    // A step, then what a replayed one must be: no operator call, one upload, one download.
    int replayedSteps = 0;
    const auto step = [&](std::vector<int> seqs, const Tokens& tokens, const char* what, int index) {
        const QString r = pair.step(seqs, tokens, what, index);
        const test::DeviceTransfers& t = device.transfers();
        if (!r.isEmpty() || t.replayed != 1) return r;
        ++replayedSteps;
        if (t.ops != 0 || t.uploads != 1 || t.downloads != 1)
            return QString("%1 %2: a replayed step made %3 operator calls, %4 uploads, %5 downloads")
                .arg(what).arg(index).arg(t.ops).arg(t.uploads).arg(t.downloads);
        return QString();
    };

    // A prompt ending 6 positions before a table bucket's end (16 blocks of 16: 256 positions),
    // then 20 decoded tokens: the first steps run and record, the next replay, the bucket's end
    // brings a new key (longer tables) that runs, records and replays in turn.
    QString r = step({0}, tokensOf(250, 1, nVocab), "prefill", 0);
    QVERIFY2(r.isEmpty(), qPrintable(r));
    const size_t keysBefore = device.stepKeys();
    for (int i = 0; i < 20; ++i) {
        r = step({0}, tokensOf(1, 10 + i, nVocab), "decode", i);
        QVERIFY2(r.isEmpty(), qPrintable(r));
    }
    QCOMPARE(device.stepKeys(), keysBefore + 2);  // positions 250..255, then 256..269
    QCOMPARE(replayedSteps, 20 - 4);
    // Two sequences decoding together (one row each), the second one's prompt first.
    r = step({1}, tokensOf(30, 2, nVocab), "second prompt", 0);
    QVERIFY2(r.isEmpty(), qPrintable(r));
    replayedSteps = 0;
    for (int i = 0; i < 6; ++i) {
        r = step({0, 1}, Tokens{3 + i, 40 + i}, "two sequences", i);
        QVERIFY2(r.isEmpty(), qPrintable(r));
    }
    QCOMPARE(replayedSteps, 6 - 2);
    qInfo("%d step keys over 28 steps", int(device.stepKeys()));
}

// A row's first k logits in the sampler's order: greater first, equal ones (-0 == +0) by lower id.
std::vector<Backend::TopEntry> firstLogits(std::span<const float> row, int32_t k) {
    std::vector<Backend::TopEntry> all(row.size());
    for (size_t i = 0; i < row.size(); ++i) all[i] = {static_cast<int32_t>(i), row[i]};
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.value > b.value; });
    all.resize(static_cast<size_t>(k));
    return all;
}

// Items that want only their greedy ids (ForwardItem::ids, a plain greedy request on a device)
// or their rows' first logits (ForwardItem::topK, a top-k sampled one): each id is the sampler's
// argmax of the reference's logits, each row's first logits are those of a sort of the
// reference's, and a step brings down those (4 bytes a row, 8 an entry) instead of the rows, one
// download for each kind in a step; a row the backend flags (a NaN or an infinity) comes down
// itself. Decode steps for either replay with one upload and one download.
void TestDeviceStep::smallOutputsComeDownAlone() {
    QFETCH(QString, shape);
    QFETCH(int, type);
    auto models = loadTwice(dir_, shape, type, 7, "-ids");
    QVERIFY(models.has_value());
    auto reference = makeCpuReferenceBackend(), inner = makeCpuReferenceBackend();
    test::DeviceMemoryBackend device(*inner);
    models->other->packWeights(device);
    const int nVocab = models->plain->config().nVocab;
    const auto vocab = static_cast<size_t>(nVocab);
    KvCache plainCache(models->plain->kvLayout(16), 512), deviceCache(models->other->kvLayout(16), 512);
    deviceCache.placeOn(&device);
    KvSequence plainSeqs[2], deviceSeqs[2];
    constexpr int32_t kIds = -1;  // Part::top for an item wanting ids
    struct Part {
        int seq;
        Tokens tokens;
        int nRows;
        int32_t top;  // 0: logits; kIds: greedy ids; else the first logits wanted a row
        bool lse = false;  // with top: the rows' log-sum-exps too
    };
    int replayed = 0;
    const auto step = [&](const QString& what, const std::vector<Part>& parts) {
        std::vector<std::vector<float>> want(parts.size()), got(parts.size());
        std::vector<std::vector<int32_t>> ids(parts.size());
        std::vector<std::vector<Backend::TopEntry>> top(parts.size());
        std::vector<std::vector<float>> lse(parts.size());
        std::vector<ForwardItem> plainItems, deviceItems;
        size_t outRows = 0, idRows = 0, topRows = 0, logitItems = 0, flagged = 0;
        bool anyLse = false;
        int32_t maxTop = 0;
        for (size_t i = 0; i < parts.size(); ++i) {
            const Part& p = parts[i];
            const auto rows = size_t(p.nRows);
            want[i].resize(rows * vocab);
            if (p.top == kIds) ids[i].assign(rows, -1);
            else got[i].assign(rows * vocab, -7.0f);
            if (p.top > 0) top[i].resize(rows * size_t(p.top));
            if (p.lse) lse[i].assign(rows, NAN);
            anyLse = anyLse || p.lse;
            plainItems.push_back({&plainSeqs[p.seq], p.tokens, want[i]});
            deviceItems.push_back(
                {&deviceSeqs[p.seq], p.tokens, got[i], 0, {}, ids[i], top[i], std::max(p.top, int32_t{0}), lse[i]});
            outRows += rows;
            idRows += p.top == kIds ? rows : 0;
            topRows += p.top > 0 ? rows : 0;
            flagged += p.top > 0 && device.flagTopRows ? rows : 0;
            logitItems += p.top == 0 && rows > 0 ? 1 : 0;
            maxTop = std::max(maxTop, p.top);
        }
        if (!models->plain->forward(*reference, plainCache, plainItems)) return what + ": the plain pass failed";
        device.resetCounts();
        if (auto r = models->other->forward(device, deviceCache, deviceItems); !r)
            return what + ": " + QString::fromStdString(r.error().message);
        for (size_t i = 0; i < parts.size(); ++i) {
            const int32_t k = parts[i].top;
            for (size_t r = 0; r < size_t(parts[i].nRows); ++r) {
                const std::span<const float> wantRow = std::span<const float>(want[i]).subspan(r * vocab, vocab);
                if (k == kIds) {
                    if (ids[i][r] != argmax(wantRow))
                        return what +
                            QString(": item %1 row %2: id %3, the argmax is %4")
                                .arg(i)
                                .arg(r)
                                .arg(ids[i][r])
                                .arg(argmax(wantRow));
                    continue;
                }
                const std::span<const float> gotRow = std::span<const float>(got[i]).subspan(r * vocab, vocab);
                if (k == 0 || device.flagTopRows) {  // the row itself
                    if (!sameBits(gotRow, wantRow))
                        return what + QString(": item %1 row %2's logits differ").arg(i).arg(r);
                    continue;
                }
                const std::vector<Backend::TopEntry> expect = firstLogits(wantRow, k);
                for (size_t j = 0; j < size_t(k); ++j) {
                    const Backend::TopEntry& e = top[i][r * size_t(k) + j];
                    if (e.id != expect[j].id || e.value != expect[j].value)
                        return what +
                            QString(": item %1 row %2 entry %3: id %4 (%5), want %6 (%7)")
                                .arg(i)
                                .arg(r)
                                .arg(j)
                                .arg(e.id)
                                .arg(e.value)
                                .arg(expect[j].id)
                                .arg(expect[j].value);
                }
                if (gotRow[0] != -7.0f) return what + QString(": item %1 row %2 came down").arg(i).arg(r);
                // The test device's topKRows is Backend's default: the host's logSumExp, bit for bit.
                const float wantLse = logSumExp(wantRow.data(), static_cast<int64_t>(vocab));
                if (parts[i].lse && std::memcmp(&lse[i][r], &wantLse, sizeof(float)) != 0)
                    return what +
                        QString(": item %1 row %2: log-sum-exp %3, want %4").arg(i).arg(r).arg(lse[i][r]).arg(wantLse);
            }
        }
        const test::DeviceTransfers& t = device.transfers();
        // Ids and first logits of every output row (with every row's log-sum-exp where an item
        // wants those), one download each; logits for every output row once any item wants them
        // (the other kinds' rows too: rare, one request sampling beside another one's kind); a
        // flagged row by itself.
        const size_t logitRows = (logitItems == 0 ? 0 : outRows) + flagged;
        const size_t bytesDown = (idRows > 0 ? outRows * sizeof(int32_t) : 0) +
            (topRows > 0 ? outRows * size_t(maxTop) * sizeof(Backend::TopEntry) : 0) +
            (anyLse ? outRows * sizeof(float) : 0) + logitRows * vocab * sizeof(float);
        const int downloads =
            (idRows > 0 ? 1 : 0) + (topRows > 0 ? 1 : 0) + (logitItems > 0 ? 1 : 0) + static_cast<int>(flagged);
        if (t.downloads != downloads || t.bytesDown != bytesDown || t.uploads != 1)
            return what +
                QString(": %1 uploads, %2 downloads of %3 bytes (want 1, %4 of %5)")
                    .arg(t.uploads)
                    .arg(t.downloads)
                    .arg(t.bytesDown)
                    .arg(downloads)
                    .arg(bytesDown);
        if (!device.violations().empty()) return what + ": " + QString::fromStdString(device.violations().front());
        replayed += t.replayed;
        return QString();
    };
    const int32_t k = std::min(40, nVocab - 1);
    QString r = step("prefill", {{0, tokensOf(20, 0, nVocab), 1, kIds}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("second prefill, logits", {{1, tokensOf(9, 1, nVocab), 1, 0}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    for (int i = 0; i < 12; ++i) {
        r = step(QString("decode %1").arg(i), {{0, tokensOf(1, 10 + i, nVocab), 1, i < 6 ? kIds : k}});
        QVERIFY2(r.isEmpty(), qPrintable(r));
    }
    QVERIFY2(replayed >= 8, qPrintable(QString("%1 of 12 decode steps replayed").arg(replayed)));
    r = step("verify rows", {{0, tokensOf(3, 30, nVocab), 3, kIds}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("one of each", {{0, tokensOf(1, 31, nVocab), 1, kIds}, {1, tokensOf(1, 32, nVocab), 1, 0}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("logits then ids", {{1, tokensOf(2, 33, nVocab), 2, 0}, {0, tokensOf(2, 34, nVocab), 2, kIds}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("two sizes", {{0, tokensOf(1, 35, nVocab), 1, 3}, {1, tokensOf(2, 36, nVocab), 2, k}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("logits then top", {{1, tokensOf(2, 37, nVocab), 2, 0}, {0, tokensOf(1, 38, nVocab), 1, 1}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("ids then top", {{1, tokensOf(1, 39, nVocab), 1, kIds}, {0, tokensOf(1, 40, nVocab), 1, k}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("top with log-sum-exps", {{0, tokensOf(3, 43, nVocab), 3, k, true}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    r = step("log-sum-exps beside plain top",
             {{1, tokensOf(1, 44, nVocab), 1, 5}, {0, tokensOf(2, 45, nVocab), 2, k, true}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    device.flagTopRows = true;
    r = step("flagged rows", {{0, tokensOf(2, 41, nVocab), 2, k}});
    QVERIFY2(r.isEmpty(), qPrintable(r));
    device.flagTopRows = false;
    const Tokens one = tokensOf(1, 42, nVocab);
    QVERIFY(!models->other->checkItem({&deviceSeqs[1], one, {}, 0, {}, {}, {}, 5}));  // no logits rows
    std::vector<float> row(vocab), sums(2);
    std::vector<Backend::TopEntry> entries(5);
    QVERIFY(!models->other->checkItem({&deviceSeqs[1], one, row, 0, {}, {}, entries, 5, sums}));  // two for one row
    QVERIFY(!models->other->checkItem({&deviceSeqs[1], one, row, 0, {}, {}, {}, 0, std::span(sums).first(1)}));
    QVERIFY(models->other->checkItem({&deviceSeqs[1], one, row, 0, {}, {}, entries, 5, std::span(sums).first(1)}));
}

void TestDeviceStep::splitLayers() {
    QFETCH(QString, shape);
    QFETCH(int, type);
    auto models = loadTwice(dir_, shape, type, 7, "-split");
    QVERIFY(models.has_value());
    Model &plain = *models->plain, &split = *models->other;
    const int nLayers = plain.config().nLayers, firstHost = std::max(1, nLayers / 2);
    auto reference = makeCpuReferenceBackend(), inner = makeCpuReferenceBackend(), host = makeCpuReferenceBackend();
    test::DeviceMemoryBackend device(*inner);
    split.splitLayers(host.get(), firstHost);
    split.packWeights(device);
    split.packWeights(*host);
    const int nVocab = plain.config().nVocab;
    KvCache plainCache(plain.kvLayout(16), 512), splitCache(split.kvLayout(16), 512);
    splitCache.placeOn(&device, firstHost);
    QCOMPARE(splitCache.memory(firstHost - 1), static_cast<Backend*>(&device));
    QCOMPARE(splitCache.memory(firstHost), static_cast<Backend*>(nullptr));
    PairedSteps pair(plain, *reference, plainCache, split, device, splitCache);
    const KvSequence(&plainSeqs)[2] = pair.plainSeqs;
    const KvSequence(&splitSeqs)[2] = pair.otherSeqs;
    // A step, then what a split one must move: one upload, the residual rows down once.
    const size_t residualBytes = size_t(plain.config().nEmbd) * sizeof(float);
    const auto step = [&](std::vector<int> seqs, const Tokens& tokens, const char* what, int index) {
        const QString r = pair.step(seqs, tokens, what, index);
        if (!r.isEmpty()) return r;
        if (device.kvOutside() > 0) return QString("%1 %2: device KV outside its memory").arg(what).arg(index);
        const test::DeviceTransfers& t = device.transfers();
        const size_t rows = seqs.size() == 1 ? tokens.size() : seqs.size();
        if (t.uploads != 1 || t.downloads != 1 || t.bytesDown != rows * residualBytes)
            return QString("%1 %2: %3 uploads, %4 downloads of %5 bytes (the residual stream: %6)")
                .arg(what).arg(index).arg(t.uploads).arg(t.downloads).arg(t.bytesDown).arg(rows * residualBytes);
        return QString();
    };
    QString r = step({0}, tokensOf(40, 1, nVocab), "prefill", 0);
    QVERIFY2(r.isEmpty(), qPrintable(r));
    for (int i = 0; i < 6; ++i) {
        r = step({0}, tokensOf(1, 10 + i, nVocab), "decode", i);
        QVERIFY2(r.isEmpty(), qPrintable(r));
    }
    QVERIFY(device.transfers().replayed == 1);  // the device's part of a decode step replays
    r = step({1}, tokensOf(20, 2, nVocab), "second prompt", 0);
    QVERIFY2(r.isEmpty(), qPrintable(r));
    for (int i = 0; i < 3; ++i) {
        r = step({0, 1}, Tokens{3 + i, 40 + i}, "two sequences", i);
        QVERIFY2(r.isEmpty(), qPrintable(r));
    }
    // A snapshot of a full block spanning both memories reads as the host cache's.
    for (int g = 0; g < splitCache.nGroups(); ++g) {
        const BlockId hostBlock = (g == 0 ? plainSeqs[0].blockTable : plainSeqs[0].windowTable)[1];
        const BlockId splitBlock = (g == 0 ? splitSeqs[0].blockTable : splitSeqs[0].windowTable)[1];
        QVERIFY(hostBlock != kNoBlock && splitBlock != kNoBlock);
        QVERIFY(splitCache.blockBytes(splitBlock, g) == plainCache.blockBytes(hostBlock, g));
    }
}

void TestDeviceStep::layerPlacement() {
    auto s = findSynthShape("tiny");
    QVERIFY(s.has_value());
    const std::string path = dir_.filePath("placement.gguf").toStdString();
    QVERIFY(writeSynthModel(*s, {.type = DType::Q8_0, .seed = 1}, path).has_value());
    auto file = GgufFile::open(path);
    QVERIFY(file.has_value());
    auto model = Model::load(**file);
    QVERIFY(model.has_value());
    const ModelConfig& c = (*model)->config();
    const KvLayout layout = (*model)->kvLayout(16);
    const LayerPlacement all = planLayerPlacement(**file, c, layout, 1024, size_t{1} << 40);
    QVERIFY(all.all());
    QCOMPARE(QString::fromStdString(all.describe()), QString("all %1 layers on the GPU").arg(c.nLayers));
    // Just enough for everything; a byte less keeps the output head (and maybe a layer) on the CPU.
    QVERIFY(planLayerPlacement(**file, c, layout, 1024, all.deviceBytes).all());
    const LayerPlacement less = planLayerPlacement(**file, c, layout, 1024, all.deviceBytes - 1);
    QVERIFY(!less.all() && less.onDevice >= 1 && less.deviceBytes <= all.deviceBytes - 1);
    QCOMPARE(QString::fromStdString(less.describe()), QString("%1 of %2 layers on the GPU").arg(less.onDevice).arg(c.nLayers));
    // The margin alone does not fit: no layer.
    const LayerPlacement none = planLayerPlacement(**file, c, layout, 1024, placementMargin(c));
    QCOMPARE(none.onDevice, 0);
    QCOMPARE(QString::fromStdString(none.describe()), QString("no layer fits the GPU"));
    // A longer context needs more KV: fewer layers fit the same budget.
    const LayerPlacement longer = planLayerPlacement(**file, c, layout, 2048, all.deviceBytes);
    QVERIFY(!longer.all());
}

void TestDeviceStep::loadPlacesFewerLayersOutOfMemory() {
    auto s = findSynthShape("tiny-gemma3");  // 7 layers, a window pool
    QVERIFY(s.has_value());
    const std::string path = dir_.filePath("oom.gguf").toStdString();
    QVERIFY(writeSynthModel(*s, {.type = DType::Q8_0, .seed = 3}, path).has_value());
    auto file = GgufFile::open(path);
    QVERIFY(file.has_value());
    // The file's bytes of the token embedding and of each layer.
    size_t embedding = 0;
    std::vector<size_t> layer(static_cast<size_t>(s->nLayers), 0);
    for (const GgufTensorInfo& t : (*file)->tensors()) {
        if (t.name == "token_embd.weight") embedding = t.nBytes;
        else if (t.name.rfind("blk.", 0) == 0) layer[static_cast<size_t>(std::atoi(t.name.c_str() + 4))] += t.nBytes;
    }
    QVERIFY(embedding > 0 && layer[3] > 0);

    GenerateRequest req;
    req.maxTokens = 10;
    req.sampling.temperature = 0;
    const auto cb = [](TokenId, std::string_view) { return true; };
    auto cpu = Engine::load(path, {});
    QVERIFY2(cpu, cpu ? "" : cpu.error().message.c_str());
    req.prompt = (*cpu)->rawPrompt("a b c d e f g");
    auto expected = (*cpu)->generate(req, cb);
    QVERIFY(expected && !expected->tokens.empty());

    // Room for the matrices of the embedding and three layers (and half a fourth), while the
    // free memory claims a gigabyte: all 7 layers, then 6, 5 and 4 run out of memory at load.
    const auto load = [&](size_t capacity) {
        EngineOptions options;
        options.makeBackend = [capacity] {
            return std::make_unique<test::DeviceMemoryBackend>(
                makeCpuReferenceBackend(), test::DeviceMemoryBackend::Limits{.weightCapacity = capacity,
                                                                              .claimedFree = size_t{1} << 30});
        };
        return Engine::load(path, options);
    };
    // Room for everything: every layer and the output head on the test device, the greedy
    // request's ids chosen there (ForwardItem::ids), the CPU's tokens.
    auto whole = load(size_t{1} << 30);
    QVERIFY2(whole, whole ? "" : whole.error().message.c_str());
    QVERIFY2(QString::fromStdString((*whole)->backendNote()).contains("all 7 layers"), (*whole)->backendNote().c_str());
    auto onDevice = (*whole)->generate(req, cb);
    QVERIFY2(onDevice, onDevice ? "" : onDevice.error().message.c_str());
    QCOMPARE(onDevice->tokens, expected->tokens);
    // Sampled requests, drawn from the rows' first logits (Backend::topKRows; with penalties and a
    // ban) or, with a bias that raises a logit, from the whole rows; then greedy with penalties;
    // each also speculating (a draft model, every step verifying up to 4 drafts: the rows' first
    // logits feed the verifier): the CPU's tokens.
    int drafted = 0;
    for (const bool speculate : {false, true})
        for (const float bias : {-std::numeric_limits<float>::infinity(), 2.0f, -1.0f}) {
            GenerateRequest sampled = req;
            sampled.maxTokens = 24;
            sampled.sampling.temperature = bias == -1.0f ? 0.0f : 0.9f;
            sampled.sampling.topK = 20;
            sampled.sampling.seed = 17;
            sampled.sampling.repeatPenalty = 1.3f;
            sampled.sampling.presencePenalty = 0.5f;
            sampled.sampling.logitBias = {{static_cast<int32_t>(expected->tokens[1]), bias}};
            if (speculate) sampled.spec = alwaysOn(specDraftModel(path, 4));
            auto want = (*cpu)->generate(sampled, cb);
            auto got = (*whole)->generate(sampled, cb);
            QVERIFY(want && got);
            QCOMPARE(got->tokens, want->tokens);
            drafted += got->spec.drafted;
        }
    QVERIFY(drafted > 20);

    auto split = load(embedding + layer[0] + layer[1] + layer[2] + layer[3] / 2);
    QVERIFY2(split, split ? "" : split.error().message.c_str());
    const QString note = QString::fromStdString((*split)->backendNote());
    qInfo("%s", qPrintable(note));
    QVERIFY2(note.contains("out of GPU memory at load with 4 of 7 layers; 3 of 7 layers on the GPU"), qPrintable(note));
    QVERIFY((*split)->backendName().starts_with("device memory (test)"));
    auto got = (*split)->generate(req, cb);
    QVERIFY2(got, got ? "" : got.error().message.c_str());
    QCOMPARE(got->tokens, expected->tokens);

    // No room for even one layer beside the embedding: the CPU, after trying 1 layer.
    auto none = load(embedding + layer[0] / 2);
    QVERIFY2(none, none ? "" : none.error().message.c_str());
    const QString cpuNote = QString::fromStdString((*none)->backendNote());
    qInfo("%s", qPrintable(cpuNote));
    QVERIFY2(cpuNote.contains("out of GPU memory at load with 1 of 7 layers; running on the CPU"), qPrintable(cpuNote));
    QCOMPARE(QString::fromStdString((*none)->backendName()), QString::fromStdString((*cpu)->backendName()));
    auto onCpu = (*none)->generate(req, cb);
    QVERIFY(onCpu);
    QCOMPARE(onCpu->tokens, expected->tokens);
}

namespace {

// What a request's Token events reported: the tokens, their top logits (or log-probabilities)
// and log-probabilities, stepped alone through e.
struct Reported {
    std::vector<TokenId> tokens;
    std::vector<std::vector<std::pair<TokenId, float>>> top;
    std::vector<float> logprobs;
};
std::optional<Reported> stepAlone(Engine& e, const GenerateRequest& req) {
    auto id = e.submit(req);
    if (!id) return std::nullopt;
    Reported r;
    while (!e.idle())
        for (EngineEvent& ev : e.step()) {
            if (ev.request != *id) continue;
            if (ev.kind == EngineEvent::Kind::Finish && ev.error) return std::nullopt;
            if (ev.kind != EngineEvent::Kind::Token) continue;
            r.tokens.push_back(ev.token);
            r.top.push_back(std::move(ev.topLogits));
            r.logprobs.push_back(ev.logprob);
        }
    return r;
}

bool sameReports(const Reported& a, const Reported& b) {
    if (a.tokens != b.tokens || a.top.size() != b.top.size() || !sameBits(a.logprobs, b.logprobs)) return false;
    for (size_t i = 0; i < a.top.size(); ++i) {
        if (a.top[i].size() != b.top[i].size()) return false;
        for (size_t j = 0; j < a.top[i].size(); ++j)
            if (a.top[i][j].first != b.top[i][j].first ||
                std::memcmp(&a.top[i][j].second, &b.top[i][j].second, sizeof(float)) != 0)
                return false;
    }
    return true;
}

}  // namespace

// Requests that report top logits or log-probabilities (the local server's logprobs) on a
// backend with memory of its own: rows whose choice needs only their first logits bring down
// those and their log-sum-exp, not the row (ForwardItem::lse), and every report — top ids,
// their logits or log-probabilities, the chosen token's log-probability — is the CPU engine's,
// bit for bit (the test device computes as the host does). Requests whose choice needs the
// whole row (top-k off, a raising bias, more top logits than topKRows gives) bring it down.
void TestDeviceStep::reportsFromFirstLogits() {
    auto s = findSynthShape("tiny-gemma3");
    QVERIFY(s.has_value());
    const std::string path = dir_.filePath("reports.gguf").toStdString();
    QVERIFY(writeSynthModel(*s, {.type = DType::Q8_0, .seed = 5}, path).has_value());
    auto cpu = Engine::load(path, {});
    QVERIFY2(cpu, cpu ? "" : cpu.error().message.c_str());
    test::DeviceMemoryBackend* device = nullptr;
    EngineOptions options;
    options.makeBackend = [&device] {
        auto b = std::make_unique<test::DeviceMemoryBackend>(
            makeCpuReferenceBackend(), test::DeviceMemoryBackend::Limits{.claimedFree = size_t{1} << 30});
        if (device == nullptr) device = b.get();
        return b;
    };
    auto whole = Engine::load(path, options);
    QVERIFY2(whole, whole ? "" : whole.error().message.c_str());
    QVERIFY(device != nullptr);
    const size_t rowBytes = static_cast<size_t>((*cpu)->tokenizer().nVocab()) * sizeof(float);

    struct Case {
        const char* name;
        float temperature;
        int32_t topK, nTopLogits;
        bool logprobs, speculate, wholeRows;
        float bias = -1.0f;
    };
    const Case cases[] = {
        {"greedy, top 5 log-probabilities", 0.0f, 40, 5, true, false, false},
        {"greedy, top logits", 0.0f, 40, 3, false, false, false},
        {"sampled, log-probabilities", 0.9f, 20, 0, true, false, false},
        {"sampled, top 30 log-probabilities", 0.9f, 20, 30, true, false, false},
        {"sampled, speculating, log-probabilities", 0.9f, 20, 4, true, true, false},
        {"greedy, speculating, log-probabilities", 0.0f, 40, 2, true, true, false},
        {"top-k off: whole rows", 0.9f, 0, 5, true, false, true},
        {"a raising bias: whole rows", 0.9f, 20, 5, true, false, true, 2.0f},
        {"300 top logits: whole rows", 0.9f, 20, 300, true, false, true},
    };
    for (const Case& c : cases) {
        GenerateRequest req;
        req.prompt = (*cpu)->rawPrompt("a b c d e f g");
        req.maxTokens = 16;
        req.sampling.temperature = c.temperature;
        req.sampling.topK = c.topK;
        req.sampling.seed = 23;
        req.sampling.repeatPenalty = 1.2f;
        req.sampling.logitBias = {{7, c.bias}};
        req.nTopLogits = c.nTopLogits;
        req.logprobs = c.logprobs;
        if (c.speculate) req.spec = alwaysOn(specDraftModel(path, 3));
        const auto want = stepAlone(**cpu, req);
        device->resetCounts();
        const auto got = stepAlone(**whole, req);
        QVERIFY2(want && got, c.name);
        QVERIFY2(!want->tokens.empty() && sameReports(*got, *want), c.name);
        if (c.logprobs)
            QVERIFY2(std::all_of(got->logprobs.begin(), got->logprobs.end(), [](float p) { return p <= 0.0f; }),
                     c.name);
        // Speculating, the draft model shares the test device's counters: only plain requests
        // are counted. The prompt's step brings down one row's worth at most either way.
        if (c.speculate) continue;
        const size_t down = device->transfers().bytesDown, tokens = got->tokens.size();
        const QString msg = QString("%1: %2 bytes down for %3 tokens (a row: %4 bytes)")
                                .arg(c.name)
                                .arg(down)
                                .arg(tokens)
                                .arg(rowBytes);
        if (c.wholeRows) QVERIFY2(down >= tokens * rowBytes, qPrintable(msg));
        else QVERIFY2(down < tokens * rowBytes / 4, qPrintable(msg));
    }
}

QTEST_GUILESS_MAIN(TestDeviceStep)
#include "test_device_step.moc"
