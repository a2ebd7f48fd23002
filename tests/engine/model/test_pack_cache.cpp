// The disk cache of packed weights (engine/model/pack_cache.h) on tiny synthetic models (a Llama
// in Q4_0 with its own output matrix, a Gemma 3 in Q4_K whose output is the tied embedding): a
// hit maps the file and gives logits bitwise those of packing at load; every damaged file (a
// flipped byte in a copy or in the table, a file cut short, another model's file, a file of
// another packing layout or format version, a folder in the file's place) is ignored with a
// reason, the weights packed again with the same logits, and the file written again; the folder
// keeps the newest files; the switches (HEARTH_PACK_CACHE=0, EngineOptions::packCache,
// EngineOptions::packWeights) leave no file.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <map>
#include <optional>
#include <utility>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "engine/engine.h"
#include "engine/model/gguf.h"
#include "engine/model/model.h"
#include "engine/model/pack_cache.h"
#include "engine/model/synth.h"
#include "kernels/cpu/cpu_features.h"
#include "tests/support/scoped_env.h"

using namespace hearth;
using namespace hearth::test;

namespace {

// A model loaded and packed through the cache (or without it: dir empty).
struct Loaded {
    std::unique_ptr<GgufFile> file;
    std::unique_ptr<Model> model;
    std::unique_ptr<Backend> backend;
    PackCacheResult cache;
};

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
bool writeAll(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}
uint64_t getU64(const QByteArray& b, int at) {
    uint64_t v = 0;
    std::memcpy(&v, b.constData() + at, 8);  // the file is little-endian, as x86 is
    return v;
}
void putU64(QByteArray& b, int at, uint64_t v) { std::memcpy(b.data() + at, &v, 8); }
// The table checksum of a file whose header or table a test changed (pack_cache.cpp's layout).
void resealTable(QByteArray& b) {
    const auto nEntries = static_cast<int>(getU64(b, 8) >> 32);
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    XXH3_64bits_update(&state, b.constData(), 48);
    XXH3_64bits_update(&state, b.constData() + 64, static_cast<size_t>(nEntries) * 128);
    putU64(b, 48, XXH3_64bits_digest(&state));
}

}  // namespace

class TestPackCache : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void hitIsBitwiseRepacking_data();
    void hitIsBitwiseRepacking();
    void damagedFileIsRepacked_data();
    void damagedFileIsRepacked();
    void folderInTheWay();
    void keepsTheNewestFiles();
    void engineSwitches();

private:
    std::optional<Loaded> load(const QString& model, const QString& cacheDir);
    std::vector<float> logits(Loaded& m);
    QString cacheFileOf(const QString& model, const QString& cacheDir);

    QTemporaryDir dir_;
    QString llama_, gemma_, otherLlama_;
    std::map<QString, std::vector<float>> want_;  // logits with the weights packed at load
};

void TestPackCache::initTestCase() {
    if (!cpuFeatures().canRunAvx2()) QSKIP("this CPU (or OS) lacks AVX2: its backend packs nothing to cache");
    QVERIFY(dir_.isValid());
    const struct {
        QString* path;
        const char* shape;
        DType type;
        uint64_t seed;
    } models[] = {{&llama_, "tiny", DType::Q4_0, 1},
                  {&gemma_, "tiny-gemma3", DType::Q4_K, 2},
                  {&otherLlama_, "tiny", DType::Q4_0, 7}};
    for (const auto& m : models) {
        *m.path = dir_.filePath(QStringLiteral("%1-%2.gguf").arg(m.shape).arg(m.seed));
        auto shape = findSynthShape(m.shape);
        QVERIFY(shape);
        auto written = writeSynthModel(*shape, {.type = m.type, .seed = m.seed}, m.path->toStdString());
        QVERIFY2(written, written ? "" : written.error().message.c_str());
    }
    for (const QString& path : {llama_, gemma_}) {
        auto plain = load(path, QString());
        QVERIFY(plain);
        QVERIFY(plain->cache.report.packedBytes > 0);
        want_[path] = logits(*plain);
        QVERIFY(!want_[path].empty());
    }
}

std::optional<Loaded> TestPackCache::load(const QString& model, const QString& cacheDir) {
    Loaded m;
    auto file = GgufFile::open(model.toStdString());
    if (!file) return std::nullopt;
    m.file = std::move(*file);
    auto loaded = Model::load(*m.file);
    if (!loaded) return std::nullopt;
    m.model = std::move(*loaded);
    m.backend = makeBestCpuBackend(2);
    if (cacheDir.isEmpty()) {
        m.cache.report.packedBytes = m.model->packWeights(*m.backend);
        return m;
    }
    auto fp = fingerprintFile(model.toStdString());
    if (!fp) return std::nullopt;
    PackCacheConfig config;
    config.dir = cacheDir.toStdString();
    config.writeInBackground = false;
    m.cache = packWithCache(*m.model, *m.backend, *fp, config);
    return m;
}

// The logits of a prefill of 12 tokens (the panels), 3 decode steps (the packed tiles; Q/K/V and
// gate/up through matmulMany) and a chunk of 2 tokens, concatenated.
std::vector<float> TestPackCache::logits(Loaded& m) {
    const Model& model = *m.model;
    KvCache cache(model.kvLayout(16), 64);
    KvSequence seq;
    const auto nVocab = static_cast<size_t>(model.config().nVocab);
    std::vector<int32_t> tokens;
    for (int i = 0; i < 17; ++i) tokens.push_back(1 + (i * 37) % (model.config().nVocab - 1));
    std::vector<float> all, out(2 * nVocab);
    size_t at = 0;
    for (size_t n : {12, 1, 1, 1, 2}) {
        const std::span<float> wanted(out.data(), n == 2 ? 2 * nVocab : nVocab);
        if (!m.model->forward(*m.backend, cache, seq, std::span(tokens).subspan(at, n), wanted)) return {};
        all.insert(all.end(), wanted.begin(), wanted.end());
        at += n;
    }
    return all;
}

QString TestPackCache::cacheFileOf(const QString& model, const QString& cacheDir) {
    auto fp = fingerprintFile(model.toStdString());
    auto backend = makeBestCpuBackend(1);
    if (!fp) return {};
    return cacheDir + "/" + QString::fromStdString(packCacheFileName(*fp, packLayoutDigest(*backend)));
}

void TestPackCache::hitIsBitwiseRepacking_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("llama Q4_0") << llama_;
    QTest::newRow("gemma3 Q4_K, tied output") << gemma_;
}

void TestPackCache::hitIsBitwiseRepacking() {
    QFETCH(QString, model);
    QTemporaryDir cacheDir;
    auto first = load(model, cacheDir.path());
    QVERIFY(first);
    QCOMPARE(first->cache.report.outcome, PackCacheReport::Outcome::Miss);
    QVERIFY2(first->cache.report.note.empty(), first->cache.report.note.c_str());
    QVERIFY(QFile::exists(QString::fromStdString(first->cache.report.path)));
    QCOMPARE(QString::fromStdString(first->cache.report.path), cacheFileOf(model, cacheDir.path()));
    QVERIFY(logits(*first) == want_[model]);

    auto second = load(model, cacheDir.path());
    QVERIFY(second);
    const PackCacheReport& r = second->cache.report;
    QCOMPARE(r.outcome, PackCacheReport::Outcome::Hit);
    QVERIFY(second->cache.mapping && !second->cache.write);
    QCOMPARE(r.packedBytes, first->cache.report.packedBytes);
    // Every packed matrix reads the mapped file, not a copy made at this load.
    const std::span<const uint8_t> mapped = second->cache.mapping->bytes();
    int nPacked = 0;
    for (const Model::PackableWeight& w : second->model->packableWeights()) {
        if (w.view->packed.layout == 0) continue;
        const auto* p = static_cast<const uint8_t*>(w.view->packed.data);
        QVERIFY2(p >= mapped.data() && p + w.view->packed.bytes <= mapped.data() + mapped.size(), w.name.c_str());
        ++nPacked;
    }
    QCOMPARE(nPacked, static_cast<int>(second->model->packableWeights().size()));
    qInfo("%d matrices mapped from a %zu-byte file, checked in %.4f s", nPacked, mapped.size(), r.checkSeconds);
    const std::vector<float> got = logits(*second);
    QCOMPARE(got.size(), want_[model].size());
    QVERIFY(std::memcmp(got.data(), want_[model].data(), got.size() * sizeof(float)) == 0);
}

void TestPackCache::damagedFileIsRepacked_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QString>("reason");  // in the note
    const std::pair<const char*, QString> models[] = {{"llama", llama_}, {"gemma3", gemma_}};
    for (const auto& [name, model] : models) {
        const auto row = [&](const char* damage, const char* reason) {
            QTest::addRow("%s, %s", name, damage) << model << QString(damage) << QString(reason);
        };
        row("flipped byte in a copy", "is damaged (checksum)");
        row("flipped byte in the last copy", "is damaged (checksum)");
        row("flipped byte in the table", "header or table is damaged");
        row("cut in half", "cut short");
        row("cut to 10 bytes", "cut short (10 bytes)");
        row("empty", "cut short (0 bytes)");
        row("another model's file", "another model");
        row("another packing layout", "another packing layout");
        row("another format version", "format version");
        row("not a cache file", "not a Hearth pack cache file");
    }
}

void TestPackCache::damagedFileIsRepacked() {
    QFETCH(QString, model);
    QFETCH(QString, damage);
    QFETCH(QString, reason);
    QTemporaryDir cacheDir;
    QVERIFY(load(model, cacheDir.path()));
    const QString path = cacheFileOf(model, cacheDir.path());
    QByteArray bytes = readAll(path);
    QVERIFY(bytes.size() > 8192);
    const int firstCopy = static_cast<int>(getU64(bytes, 64 + 88)),
              firstBytes = static_cast<int>(getU64(bytes, 64 + 96));
    QVERIFY(firstCopy > 0 && firstBytes > 0);
    if (damage == "flipped byte in a copy") {
        bytes[firstCopy + firstBytes / 2] = static_cast<char>(bytes[firstCopy + firstBytes / 2] ^ 0x10);
    } else if (damage == "flipped byte in the last copy") {
        const int nEntries = static_cast<int>(getU64(bytes, 8) >> 32);
        const int last = 64 + (nEntries - 1) * 128;
        const auto end = static_cast<int>(getU64(bytes, last + 88) + getU64(bytes, last + 96));
        bytes[end - 1] = static_cast<char>(bytes[end - 1] ^ 0x01);
    } else if (damage == "flipped byte in the table") {
        bytes[64 + 128 + 72] = static_cast<char>(bytes[64 + 128 + 72] ^ 0x04);  // matrix 1's rows
    } else if (damage == "cut in half") {
        bytes.truncate(bytes.size() / 2);
    } else if (damage == "cut to 10 bytes") {
        bytes.truncate(10);
    } else if (damage == "empty") {
        bytes.clear();
    } else if (damage == "another model's file") {
        QTemporaryDir otherDir;
        QVERIFY(load(otherLlama_, otherDir.path()));
        bytes = readAll(cacheFileOf(otherLlama_, otherDir.path()));
        QVERIFY(!bytes.isEmpty());
    } else if (damage == "another packing layout") {  // a stale file, sealed as a good one
        putU64(bytes, 32, getU64(bytes, 32) ^ 0x100);
        resealTable(bytes);
    } else if (damage == "another format version") {
        bytes[8] = 2;
        resealTable(bytes);
    } else if (damage == "not a cache file") {
        bytes.replace(0, 8, QByteArray("GGUF\3\0\0\0", 8));
    }
    QVERIFY(writeAll(path, bytes));

    auto damaged = load(model, cacheDir.path());
    QVERIFY(damaged);
    const PackCacheReport& r = damaged->cache.report;
    QCOMPARE(r.outcome, PackCacheReport::Outcome::Rejected);
    QVERIFY(!damaged->cache.mapping);
    QVERIFY2(QString::fromStdString(r.note).contains(reason), r.note.c_str());
    QVERIFY2(r.note.find(path.toStdString()) != std::string::npos, r.note.c_str());
    qInfo("%s", r.note.c_str());
    QVERIFY(logits(*damaged) == want_[model]);
    // Written again: the next load maps it.
    auto again = load(model, cacheDir.path());
    QVERIFY(again);
    QCOMPARE(again->cache.report.outcome, PackCacheReport::Outcome::Hit);
    QVERIFY(logits(*again) == want_[model]);
}

// A folder where the file should be: not read, not written, said in the note; the model runs.
void TestPackCache::folderInTheWay() {
    QTemporaryDir cacheDir;
    QVERIFY(QDir().mkpath(cacheFileOf(llama_, cacheDir.path())));
    auto m = load(llama_, cacheDir.path());
    QVERIFY(m);
    QCOMPARE(m->cache.report.outcome, PackCacheReport::Outcome::Rejected);
    QVERIFY2(m->cache.report.note.find("not written") != std::string::npos, m->cache.report.note.c_str());
    QVERIFY(logits(*m) == want_[llama_]);
}

// maxFiles 2: the third model's file pushes out the least recently used (a hit is a use).
void TestPackCache::keepsTheNewestFiles() {
    QTemporaryDir cacheDir;
    const auto loadWith2 = [&](const QString& model) {
        Loaded m;
        auto file = GgufFile::open(model.toStdString());
        auto loaded = file ? Model::load(**file) : Result<std::unique_ptr<Model>>(std::unexpected(Error{}));
        auto fp = fingerprintFile(model.toStdString());
        if (!loaded || !fp) return PackCacheReport::Outcome::NotPacked;
        m.file = std::move(*file);
        m.model = std::move(*loaded);
        m.backend = makeBestCpuBackend(1);
        PackCacheConfig config{cacheDir.path().toStdString(), 2, uint64_t{1} << 30, false};
        return packWithCache(*m.model, *m.backend, *fp, config).report.outcome;
    };
    QCOMPARE(loadWith2(llama_), PackCacheReport::Outcome::Miss);
    QTest::qWait(20);  // file times apart
    QCOMPARE(loadWith2(gemma_), PackCacheReport::Outcome::Miss);
    QTest::qWait(20);
    QCOMPARE(loadWith2(llama_), PackCacheReport::Outcome::Hit);  // now newer than gemma's
    QTest::qWait(20);
    QCOMPARE(loadWith2(otherLlama_), PackCacheReport::Outcome::Miss);
    QVERIFY(QFile::exists(cacheFileOf(llama_, cacheDir.path())));
    QVERIFY(QFile::exists(cacheFileOf(otherLlama_, cacheDir.path())));
    QVERIFY(!QFile::exists(cacheFileOf(gemma_, cacheDir.path())));
    QCOMPARE(QDir(cacheDir.path()).entryList(QDir::Files).size(), 2);
}

// Through the engine: the file written after load (waited for when the engine goes), mapped at
// the next load with the same greedy tokens; switched off, no file; packWeights false, no packing.
void TestPackCache::engineSwitches() {
    const ScopedEnv on("HEARTH_PACK_CACHE", std::nullopt);  // the test environment sets it to 0
    QTemporaryDir cacheDir;
    const auto run = [&](EngineOptions options) -> std::pair<PackCacheReport, std::vector<TokenId>> {
        options.nThreads = 2;
        options.packCacheDir = cacheDir.path().toStdString();
        auto e = Engine::load(llama_.toStdString(), options);
        if (!e) return {};
        GenerateRequest req;
        req.prompt = (*e)->rawPrompt("once upon a time");
        req.maxTokens = 8;
        auto out = (*e)->generate(req, [](TokenId, std::string_view) { return true; });
        return {(*e)->packCacheReport(), out ? out->tokens : std::vector<TokenId>{}};
    };
    const auto nFiles = [&] { return QDir(cacheDir.path()).entryList(QDir::Files).size(); };
    EngineOptions off;
    off.packCache = false;
    const auto [offReport, offTokens] = run(off);
    QCOMPARE(offReport.outcome, PackCacheReport::Outcome::Off);
    QVERIFY(offReport.packedBytes > 0);
    QVERIFY(!offTokens.empty());
    QCOMPARE(nFiles(), 0);
    {
        const ScopedEnv envOff("HEARTH_PACK_CACHE", QByteArray("0"));
        QCOMPARE(run({}).first.outcome, PackCacheReport::Outcome::Off);
        QCOMPARE(nFiles(), 0);
    }
    EngineOptions factsOnly;
    factsOnly.packWeights = false;
    const auto [factsReport, factsTokens] = run(factsOnly);
    QCOMPARE(factsReport.outcome, PackCacheReport::Outcome::NotPacked);
    QCOMPARE(factsReport.packedBytes, size_t{0});
    QCOMPARE(factsTokens, offTokens);  // the file's layout computes the same
    QCOMPARE(nFiles(), 0);

    const auto [missReport, missTokens] = run({});
    QCOMPARE(missReport.outcome, PackCacheReport::Outcome::Miss);
    QCOMPARE(missTokens, offTokens);
    QCOMPARE(nFiles(), 1);
    const auto [hitReport, hitTokens] = run({});
    QCOMPARE(hitReport.outcome, PackCacheReport::Outcome::Hit);
    QCOMPARE(hitReport.packedBytes, offReport.packedBytes);
    QCOMPARE(hitTokens, offTokens);
}

QTEST_GUILESS_MAIN(TestPackCache)
#include "test_pack_cache.moc"
