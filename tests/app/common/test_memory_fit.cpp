// The memory verdict (app/common/memory_fit.h): MemAvailable read from a meminfo file, the KV
// size equal to what a loaded engine's cache holds at that context, weights + KV + 10%, and the
// thresholds: "fits" below 70% of the available memory, "tight" up to 100%, "too big" above;
// with a GPU's free memory, the layers the engine would place on it.
#include <QTemporaryDir>
#include <QtTest>

#include "app/common/memory_fit.h"
#include "app/common/model_info.h"
#include "engine/engine.h"
#include "engine/kv/kv_cache.h"
#include "engine/model/gguf.h"
#include "engine/model/layer_placement.h"
#include "engine/model/model.h"
#include "tests/support/tiny_llama.h"

using namespace hearth;

class TestMemoryFit : public QObject {
    Q_OBJECT
private slots:
    void readsMemAvailable() {
        QTemporaryDir dir;
        const QString path = dir.filePath("meminfo");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            "MemTotal:       16318508 kB\nMemFree:         1010032 kB\nMemAvailable:    9876543 kB\n"
            "Buffers:          12345 kB\n");
        f.close();
        QCOMPARE(availableMemoryBytes(path), qint64{9876543} * 1024);
        QCOMPARE(availableMemoryBytes(dir.filePath("absent")), qint64{-1});
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write("MemTotal: 100 kB\n");  // a kernel older than 3.14 has no MemAvailable
        f.close();
        QCOMPARE(availableMemoryBytes(path), qint64{-1});
#ifdef Q_OS_LINUX
        QVERIFY(availableMemoryBytes() > 0);  // this machine's
#endif
    }

    // The KV part is the engine's own cache size at that context, F16 and Q8_0.
    void kvIsWhatTheEngineAllocates() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("tiny.gguf").toStdString();
        test::TinyLlamaShape shape;
        shape.nEmbd = 128;  // KV rows of 64: Q8_0 needs multiples of 32
        shape.context = 512;
        QVERIFY(test::tinyLlama(shape).writeFile(path));
        const auto info = inspectModel(QString::fromStdString(path), {.contextLength = 100});
        QVERIFY(info);
        for (const KvElementType type : {KvElementType::F16, KvElementType::Q8_0}) {
            EngineOptions options;
            options.contextLength = 100;
            options.kvType = type;
            auto engine = Engine::load(path, options);
            QVERIFY2(engine, engine ? "" : engine.error().message.c_str());
            const qint64 blocks =
                ((*engine)->contextLength() + (*engine)->kvBlockSize() - 1) / (*engine)->kvBlockSize();
            const MemoryEstimate e = estimateMemory(*info, {.contextLength = 100, .kvType = type});
            QCOMPARE(e.kvBytes, blocks * static_cast<qint64>((*engine)->kvBytesPerBlock()));
            QCOMPARE(e.contextLength, 100);
        }
        QCOMPARE(info->memory.contextLength, 100);
        // F16: 7 blocks of 16 tokens x 2 layers x K and V x 64 elements x 2 bytes
        QCOMPARE(info->memory.kvBytes, qint64{7 * 16 * 2 * 2 * 64 * 2});
        // A context beyond the trained one is capped as loading caps it; 0 is the trained one.
        QCOMPARE(estimateMemory(*info, {.contextLength = 4096}).contextLength, 512);
        QCOMPARE(estimateMemory(*info, {}).contextLength, 512);
        QCOMPARE(info->memory.verdict, MemoryVerdict::Unknown);  // no available memory given
    }

    // With a GPU's free memory the estimate places layers as the engine's loading does
    // (planLayerPlacement on the file); without one it says nothing of a GPU.
    void gpuShareIsTheEnginesPlacement() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("tiny.gguf").toStdString();
        test::TinyLlamaShape shape;
        shape.context = 512;
        QVERIFY(test::tinyLlama(shape).writeFile(path));
        const auto info = inspectModel(QString::fromStdString(path), {.contextLength = 256});
        QVERIFY(info);
        QCOMPARE(info->memory.gpu.nLayers, 0);
        QVERIFY(gpuPlacementText(info->memory.gpu).isEmpty());
        auto file = GgufFile::open(path);
        QVERIFY(file);
        auto model = Model::load(**file);
        QVERIFY(model);
        KvLayout layout = (*model)->kvLayout();
        layout.elementType = KvElementType::F16;
        const LayerPlacement all = planLayerPlacement(**file, (*model)->config(), layout, 256, size_t{1} << 40);
        QVERIFY(all.all() && all.nLayers == 2);
        const MemoryEstimate roomy =
            estimateMemory(*info, {.contextLength = 256, .gpuFreeBytes = static_cast<qint64>(all.deviceBytes)});
        QVERIFY(roomy.gpu.all());
        QCOMPARE(roomy.gpu.deviceBytes, all.deviceBytes);
        QCOMPARE(gpuPlacementText(roomy.gpu), QString("all 2 layers on the GPU"));
        const auto less = static_cast<qint64>(all.deviceBytes - 1);
        const MemoryEstimate tight = estimateMemory(*info, {.contextLength = 256, .gpuFreeBytes = less});
        const LayerPlacement engine = planLayerPlacement(**file, (*model)->config(), layout, 256, size_t(less));
        QCOMPARE(tight.gpu.onDevice, engine.onDevice);
        QCOMPARE(tight.gpu.onDevice, 1);  // the last layer stays with the output head on the CPU
        QCOMPARE(gpuPlacementText(tight.gpu), QString("1 of 2 layers on the GPU"));
        const MemoryEstimate none = estimateMemory(*info, {.contextLength = 256, .gpuFreeBytes = 1024});
        QCOMPARE(none.gpu.onDevice, 0);
        QCOMPARE(gpuPlacementText(none.gpu), QString("too big for the GPU: on the CPU"));
    }

    void thresholds() {
        const KvLayout layout{.nLayers = 2, .rowStride = 64, .blockSize = 16};
        const qint64 kv = kvCacheBytes(layout, 1024);
        QCOMPARE(kv, qint64{1024 * 2 * 2 * 64 * 2});
        const qint64 weights = 1'000'000;
        const qint64 needed = static_cast<qint64>(static_cast<double>(weights + kv) * 1.1);
        const auto verdict = [&](qint64 available) {
            const MemoryEstimate e = estimateMemory(weights, layout, 1024, {.availableBytes = available});
            [&] { QCOMPARE(e.neededBytes, needed); }();
            return e.verdict;
        };
        QCOMPARE(verdict(needed * 2), MemoryVerdict::Fits);
        QCOMPARE(verdict(static_cast<qint64>(needed / 0.69)), MemoryVerdict::Fits);
        QCOMPARE(verdict(static_cast<qint64>(needed / 0.71)), MemoryVerdict::Tight);
        QCOMPARE(verdict(needed), MemoryVerdict::Tight);
        QCOMPARE(verdict(needed - 1), MemoryVerdict::TooBig);
        QCOMPARE(verdict(-1), MemoryVerdict::Unknown);
        // A layout the cache refuses (a Q8_0 row not a multiple of 32) has no estimate.
        const KvLayout odd{.nLayers = 2, .rowStride = 48, .blockSize = 16};
        QCOMPARE(estimateMemory(weights, odd, 1024, {.kvType = KvElementType::Q8_0, .availableBytes = 1 << 30}).verdict,
                 MemoryVerdict::Unknown);
    }

    // With sliding-window layers (Gemma 2 and 3) the estimate is what a conversation really
    // holds under the per-group pools: a KvCache advanced position by position, as the scheduler
    // does, holds exactly that many bytes at its peak, and far less than every layer keeping
    // every position.
    void windowPoolsHoldOnlyTheWindow_data() {
        QTest::addColumn<int>("nTokens");
        QTest::addColumn<int>("window");
        QTest::newRow("short: every block still in the window") << 40 << 64;
        QTest::newRow("window on block boundaries") << 700 << 64;
        QTest::newRow("window off block boundaries") << 700 << 50;
    }
    void windowPoolsHoldOnlyTheWindow() {
        QFETCH(int, nTokens);
        QFETCH(int, window);
        KvLayout layout{.nLayers = 6, .rowStride = 32, .blockSize = 16};
        layout.window = window;
        layout.windowLayers = {false, true, true, true, true, true};
        auto cache = KvCache::create(layout, nTokens);
        QVERIFY(cache);
        std::vector<int32_t> tokens(static_cast<size_t>(nTokens), 7);
        KvSequence seq;
        size_t peak = 0;
        while (seq.nTokens < nTokens) {
            QVERIFY((*cache)->reserve(seq, seq.nTokens + 1));
            ++seq.nTokens;
            (*cache)->publish(seq, tokens);
            peak = std::max(peak, (*cache)->heldBytes(seq));
        }
        QCOMPARE(kvCacheBytes(layout, nTokens), static_cast<qint64>(peak));
        KvLayout all = layout;
        all.window = 0, all.windowLayers.clear();
        if (nTokens > 4 * window) QVERIFY(kvCacheBytes(layout, nTokens) * 3 < kvCacheBytes(all, nTokens));
        (*cache)->release(seq);
    }
};

QTEST_GUILESS_MAIN(TestMemoryFit)
#include "test_memory_fit.moc"
