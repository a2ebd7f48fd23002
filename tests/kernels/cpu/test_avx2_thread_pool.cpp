// The engine's thread pool (kernels/cpu/thread_pool.h): every task runs exactly once, in
// contiguous ranges, over many back-to-back jobs (the decode pattern), with workers that
// fall asleep between jobs, and the pool shuts down without deadlock.
#include <QTest>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <chrono>
#include <thread>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/thread_pool.h"

using namespace hearth;

class TestAvx2ThreadPool : public QObject {
    Q_OBJECT
private slots:
    void physicalCoresArePositive() {
        QVERIFY(physicalCoreCount() >= 1);
        QVERIFY(ThreadPool().size() == physicalCoreCount());
    }

    void everyTaskRunsExactlyOnce() {
        for (int nThreads : {1, 2, 3, 5}) {
            ThreadPool pool(nThreads);
            QCOMPARE(pool.size(), nThreads);
            std::vector<std::atomic<int>> hits(1000);
            for (int job = 0; job < 3000; ++job) {
                const int64_t nTasks = job % 37 == 0 ? 1 : 1 + job % 997;
                for (int64_t i = 0; i < nTasks; ++i) hits[static_cast<size_t>(i)].store(0);
                pool.parallelFor(nTasks, [&](int64_t begin, int64_t end) {
                    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
                });
                for (int64_t i = 0; i < nTasks; ++i) QCOMPARE(hits[static_cast<size_t>(i)].load(), 1);
            }
        }
    }

    void rangesAreStaticAndContiguous() {  // piece i of P = T * kPiecesPerThread is [i*n/P, (i+1)*n/P)
        ThreadPool pool(3);
        std::mutex mutex;
        std::vector<std::pair<int64_t, int64_t>> ranges;
        const int64_t nTasks = 100, nPieces = 3 * ThreadPool::kPiecesPerThread;
        pool.parallelFor(nTasks, [&](int64_t begin, int64_t end) {
            std::lock_guard lock(mutex);
            ranges.push_back({begin, end});
        });
        std::sort(ranges.begin(), ranges.end());
        QCOMPARE(static_cast<int64_t>(ranges.size()), nPieces);
        for (int64_t i = 0; i < nPieces; ++i)
            QVERIFY(ranges[static_cast<size_t>(i)] == std::make_pair(i * nTasks / nPieces, (i + 1) * nTasks / nPieces));
    }

    // The thread index is in range, and one thread never runs two calls at once (per-thread
    // scratch is safe), over many jobs.
    void threadIndexIsExclusive() {
        ThreadPool pool(4);
        std::vector<std::atomic<int>> busy(4);
        std::atomic<bool> overlap{false}, outOfRange{false};
        for (int job = 0; job < 2000; ++job)
            pool.parallelFor(64, [&](int64_t, int64_t, int thread) {
                if (thread < 0 || thread >= 4) return outOfRange.store(true);
                if (busy[static_cast<size_t>(thread)].fetch_add(1) != 0) overlap.store(true);
                busy[static_cast<size_t>(thread)].fetch_sub(1);
            });
        QVERIFY(!overlap.load());
        QVERIFY(!outOfRange.load());
    }

    void wakesSleepingWorkers() {  // pauses longer than the spin, so workers block and wake
        ThreadPool pool(3);
        for (int job = 0; job < 20; ++job) {
            std::this_thread::sleep_for(std::chrono::milliseconds(job % 4 == 0 ? 5 : 0));
            std::atomic<int> sum{0};
            pool.parallelFor(30, [&](int64_t begin, int64_t end) { sum.fetch_add(static_cast<int>(end - begin)); });
            QCOMPARE(sum.load(), 30);
        }
    }

    void destroysIdleAndBusyPools() {
        for (int i = 0; i < 50; ++i) {
            ThreadPool pool(1 + i % 4);
            if (i % 2) pool.parallelFor(10, [](int64_t, int64_t) {});
        }
    }
};

QTEST_APPLESS_MAIN(TestAvx2ThreadPool)
#include "test_avx2_thread_pool.moc"
