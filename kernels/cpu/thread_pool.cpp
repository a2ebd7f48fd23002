// Thread pool: workers spin briefly on a generation counter (a decode step issues a matmul
// every few tens of microseconds, too often to sleep between them), then sleep on a condition
// variable so that an idle engine costs no CPU. Pieces are claimed per job with a CAS on the
// job's generation, so a worker that wakes late (or a stale one from a finished job) finds its
// pieces done by someone else and touches nothing of the job.
#include "kernels/cpu/thread_pool.h"

#include "kernels/cpu/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace hearth {
namespace {

// About 100 µs of pause instructions: longer than the gap between two matmuls of a decode
// step, short enough not to steal a shared core for long.
constexpr int kSpinIterations = 4000;

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int nThreads) {
    nThreads_ = nThreads > 0 ? nThreads : physicalCoreCount();
    nShares_ = nThreads_ * kPiecesPerThread;
    claims_ = std::make_unique<ShareClaim[]>(static_cast<size_t>(nShares_));
    workers_.reserve(static_cast<size_t>(nThreads_ - 1));
    for (int i = 1; i < nThreads_; ++i) workers_.emplace_back([this, i] { workerLoop(i); });
}

ThreadPool::~ThreadPool() {
    if (workers_.empty()) return;
    {
        std::lock_guard lock(mutex_);  // pairs with the predicate check of a sleeping worker
        stopping_ = true;
        generation_.fetch_add(1);
    }
    wakeup_.notify_all();
    for (std::thread& t : workers_) t.join();
}

// Returns the new generation once it differs from seen. The sleeper count and the generation
// are both sequentially consistent, so either the worker sees the new generation or the
// dispatcher sees the sleeper and notifies under the mutex (no lost wakeup).
uint64_t ThreadPool::waitForJob(uint64_t seen) {
    for (int i = 0; i < kSpinIterations; ++i) {
        const uint64_t g = generation_.load(std::memory_order_acquire);
        if (g != seen) return g;
        cpuRelax();
    }
    std::unique_lock lock(mutex_);
    nSleepers_.fetch_add(1);
    wakeup_.wait(lock, [&] { return generation_.load() != seen; });
    nSleepers_.fetch_sub(1);
    return generation_.load(std::memory_order_acquire);
}

// Generations only grow, so a share is free for job g while its claim is older than g; a
// stale participant (g smaller than the current job) can never claim anything.
bool ThreadPool::claim(int share, uint64_t generation) {
    std::atomic<uint64_t>& c = claims_[static_cast<size_t>(share)].generation;
    uint64_t last = c.load(std::memory_order_relaxed);
    while (last < generation)
        if (c.compare_exchange_weak(last, generation, std::memory_order_acq_rel)) return true;
    return false;
}

// The thread's own pieces front to back, then the pieces nobody has started, taken from the
// back of the other threads' shares (where their owners will come last).
void ThreadPool::runShares(uint64_t generation, int thread) {
    const auto runIfClaimed = [&](int share) {
        if (!claim(share, generation)) return;
        call_(ctx_, share, thread);  // valid: the job cannot finish before this piece is done
        nSharesDone_.fetch_add(1, std::memory_order_acq_rel);
    };
    for (int j = 0; j < kPiecesPerThread; ++j) runIfClaimed(thread * kPiecesPerThread + j);
    for (int d = 1; d < nThreads_; ++d) {
        const int victim = (thread + d) % nThreads_;
        for (int j = kPiecesPerThread - 1; j >= 0; --j) runIfClaimed(victim * kPiecesPerThread + j);
    }
}

void ThreadPool::workerLoop(int thread) {
    uint64_t seen = 0;
    for (;;) {
        seen = waitForJob(seen);
        if (stopping_) return;
        runShares(seen, thread);
    }
}

void ThreadPool::dispatch(Call call, void* ctx) {
    if (workers_.empty()) {
        for (int share = 0; share < nShares_; ++share) call(ctx, share, 0);
        return;
    }
    call_ = call;
    ctx_ = ctx;
    nSharesDone_.store(0, std::memory_order_relaxed);
    const uint64_t generation = generation_.fetch_add(1) + 1;  // seq_cst: publishes the job
    if (nSleepers_.load() > 0) {
        { std::lock_guard lock(mutex_); }  // a sleeper between its check and its wait is now waiting
        wakeup_.notify_all();
    }
    runShares(generation, 0);
    // Every piece is claimed by now; wait for those still running on workers.
    for (int i = 0; nSharesDone_.load(std::memory_order_acquire) != nShares_; ++i) {
        if (i < kSpinIterations) cpuRelax();
        else std::this_thread::yield();  // a worker was descheduled mid-share
    }
}

}  // namespace hearth
