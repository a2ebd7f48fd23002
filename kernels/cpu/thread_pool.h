// The engine's own thread pool (no OpenMP): persistent workers; a job is split into static
// contiguous shares, one per thread, so that the cores finish together. Each share is cut into
// a few pieces, and a piece its owner has not started when another thread runs out of work is
// taken over by that thread: cores are often shared with other programs, and a descheduled
// worker must not stall the engine. Dispatch allocates nothing and takes no lock unless a
// worker sleeps. Thread-safety: one thread (the engine thread) submits jobs; jobs must not
// submit jobs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace hearth {

class ThreadPool {
public:
    // nThreads <= 0: one per physical core (cpu_features.h). The calling thread is one of the
    // nThreads, so nThreads - 1 workers are started.
    explicit ThreadPool(int nThreads = 0);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return nThreads_; }

    // Calls fn(begin, end) — or fn(begin, end, thread) — on contiguous ranges that cover
    // [0, nTasks) exactly once, and returns when all calls have returned. Thread i (0 is the
    // caller) owns [i*nTasks/T, (i+1)*nTasks/T), T = size(), cut into kPiecesPerThread pieces;
    // `thread` is the index of the thread running the call (for per-thread scratch: one
    // thread never runs two calls at once). Empty ranges are not called.
    template <class Fn>
    void parallelFor(int64_t nTasks, Fn&& fn) {
        if (nTasks <= 0) return;
        if (nThreads_ == 1 || nTasks == 1) return invoke(fn, int64_t{0}, nTasks, 0);
        const int64_t nPieces = static_cast<int64_t>(nThreads_) * kPiecesPerThread;
        auto piece = [&](int share, int thread) {
            const int64_t begin = share * nTasks / nPieces, end = (share + 1) * nTasks / nPieces;
            if (begin < end) invoke(fn, begin, end, thread);
        };
        dispatch([](void* ctx, int share, int thread) { (*static_cast<decltype(piece)*>(ctx))(share, thread); },
                 &piece);
    }

    static constexpr int kPiecesPerThread = 4;

private:
    using Call = void (*)(void* ctx, int share, int thread);

    template <class Fn>
    static void invoke(Fn& fn, int64_t begin, int64_t end, int thread) {
        if constexpr (std::is_invocable_v<Fn&, int64_t, int64_t, int>) fn(begin, end, thread);
        else fn(begin, end);
    }

    struct alignas(64) ShareClaim {
        std::atomic<uint64_t> generation{0};  // the last job whose share this was claimed for
    };

    void dispatch(Call call, void* ctx);
    void workerLoop(int thread);
    uint64_t waitForJob(uint64_t seen);
    void runShares(uint64_t generation, int thread);
    bool claim(int share, uint64_t generation);

    int nThreads_ = 1;
    std::vector<std::thread> workers_;
    int nShares_ = 1;
    std::unique_ptr<ShareClaim[]> claims_;  // [nShares_]
    // The current job, published by the increment of generation_.
    Call call_ = nullptr;
    void* ctx_ = nullptr;
    bool stopping_ = false;
    std::atomic<uint64_t> generation_{0};
    std::atomic<int> nSharesDone_{0};
    std::atomic<int> nSleepers_{0};  // workers blocked on wakeup_ (not spinning)
    std::mutex mutex_;
    std::condition_variable wakeup_;
};

}  // namespace hearth
