// The fault-injecting VFS of test_store_faults: a wrapper of the default VFS, registered as the
// default, whose files forward every call, except that while a write budget is set, a write
// (or a file growing) past it fails with SQLITE_FULL, as on a disk that has just filled up.
#include <sqlite3.h>

#include <atomic>
#include <cstdint>

namespace hearth::test {
namespace {

std::atomic<int64_t> g_budget{-1};  // bytes that may still be written; -1: no limit
std::atomic<int64_t> g_refused{0};
sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_vfs;

struct FaultFile {
    sqlite3_file base;
    sqlite3_file* real;  // lives right after this struct
};

sqlite3_file* real(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f)->real; }

// true when n more bytes fit in the budget (and takes them from it).
bool take(int64_t n) {
    int64_t left = g_budget.load();
    while (left >= 0) {
        if (left < n) {
            ++g_refused;
            return false;
        }
        if (g_budget.compare_exchange_weak(left, left - n)) return true;
    }
    return true;
}

int fClose(sqlite3_file* f) { return real(f)->pMethods->xClose(real(f)); }
int fRead(sqlite3_file* f, void* b, int n, sqlite3_int64 o) { return real(f)->pMethods->xRead(real(f), b, n, o); }
int fWrite(sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
    return take(n) ? real(f)->pMethods->xWrite(real(f), b, n, o) : SQLITE_FULL;
}
int fTruncate(sqlite3_file* f, sqlite3_int64 s) { return real(f)->pMethods->xTruncate(real(f), s); }
int fSync(sqlite3_file* f, int fl) { return real(f)->pMethods->xSync(real(f), fl); }
int fFileSize(sqlite3_file* f, sqlite3_int64* s) { return real(f)->pMethods->xFileSize(real(f), s); }
int fLock(sqlite3_file* f, int l) { return real(f)->pMethods->xLock(real(f), l); }
int fUnlock(sqlite3_file* f, int l) { return real(f)->pMethods->xUnlock(real(f), l); }
int fCheck(sqlite3_file* f, int* r) { return real(f)->pMethods->xCheckReservedLock(real(f), r); }
int fFileControl(sqlite3_file* f, int op, void* a) { return real(f)->pMethods->xFileControl(real(f), op, a); }
int fSectorSize(sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
int fDevChars(sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); }
int fShmMap(sqlite3_file* f, int i, int sz, int e, void volatile** p) {
    return real(f)->pMethods->xShmMap(real(f), i, sz, e, p);
}
int fShmLock(sqlite3_file* f, int o, int n, int fl) { return real(f)->pMethods->xShmLock(real(f), o, n, fl); }
void fShmBarrier(sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
int fShmUnmap(sqlite3_file* f, int d) { return real(f)->pMethods->xShmUnmap(real(f), d); }
int fFetch(sqlite3_file* f, sqlite3_int64 o, int n, void** p) { return real(f)->pMethods->xFetch(real(f), o, n, p); }
int fUnfetch(sqlite3_file* f, sqlite3_int64 o, void* p) { return real(f)->pMethods->xUnfetch(real(f), o, p); }

const sqlite3_io_methods kMethods = {3,        fClose,      fRead,     fWrite,       fTruncate,   fSync,     fFileSize,
                                     fLock,    fUnlock,     fCheck,    fFileControl, fSectorSize, fDevChars, fShmMap,
                                     fShmLock, fShmBarrier, fShmUnmap, fFetch,       fUnfetch};

int fOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* outFlags) {
    auto* x = reinterpret_cast<FaultFile*>(f);
    x->real = reinterpret_cast<sqlite3_file*>(x + 1);
    const int rc = g_real->xOpen(g_real, name, x->real, flags, outFlags);
    x->base.pMethods = (rc == SQLITE_OK && x->real->pMethods) ? &kMethods : nullptr;
    return rc;
}

}  // namespace

void installFaultVfs() {
    if (g_real) return;
    g_real = sqlite3_vfs_find(nullptr);
    g_vfs = *g_real;
    g_vfs.zName = "hearth-fault";
    g_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + g_real->szOsFile;
    g_vfs.xOpen = fOpen;
    sqlite3_vfs_register(&g_vfs, 1);
}

void setWriteBudget(int64_t bytes) { g_budget = bytes; }  // -1: no limit
int64_t refusedWrites() { return g_refused.load(); }

}  // namespace hearth::test
