// killPoint() and the "wal-write" VFS shim: a wrapper of the default VFS whose files forward
// every call, except that the chosen write to a WAL file stops half-way with SIGKILL.
#include "app/store/kill_point.h"

#include <sqlite3.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

namespace hearth {
namespace {

struct Target {
    std::string name;
    long nth = 1;
    long seen = 0;
};

Target* target() {
    static Target* t = [] {
        const char* env = std::getenv("HEARTH_KILL_POINT");
        if (!env || !*env) return static_cast<Target*>(nullptr);
        auto* x = new Target;
        const std::string s(env);
        const size_t colon = s.find(':');
        x->name = s.substr(0, colon);
        if (colon != std::string::npos) x->nth = std::max(1L, std::strtol(s.c_str() + colon + 1, nullptr, 10));
        return x;
    }();
    return t;
}

bool fires(const char* name) {
    Target* t = target();
    return t && t->name == name && ++t->seen == t->nth;
}

struct KillFile {
    sqlite3_file base;
    sqlite3_file* real;  // lives right after this struct
    bool wal;
};

sqlite3_vfs* g_real = nullptr;
sqlite3_vfs g_vfs;

sqlite3_file* real(sqlite3_file* f) { return reinterpret_cast<KillFile*>(f)->real; }

int kClose(sqlite3_file* f) { return real(f)->pMethods->xClose(real(f)); }
int kRead(sqlite3_file* f, void* b, int n, sqlite3_int64 o) { return real(f)->pMethods->xRead(real(f), b, n, o); }
int kWrite(sqlite3_file* f, const void* b, int n, sqlite3_int64 o) {
    if (reinterpret_cast<KillFile*>(f)->wal && fires("wal-write")) {
        real(f)->pMethods->xWrite(real(f), b, n / 2, o);  // a torn write, then death
        std::raise(SIGKILL);
    }
    return real(f)->pMethods->xWrite(real(f), b, n, o);
}
int kTruncate(sqlite3_file* f, sqlite3_int64 s) { return real(f)->pMethods->xTruncate(real(f), s); }
int kSync(sqlite3_file* f, int fl) { return real(f)->pMethods->xSync(real(f), fl); }
int kFileSize(sqlite3_file* f, sqlite3_int64* s) { return real(f)->pMethods->xFileSize(real(f), s); }
int kLock(sqlite3_file* f, int l) { return real(f)->pMethods->xLock(real(f), l); }
int kUnlock(sqlite3_file* f, int l) { return real(f)->pMethods->xUnlock(real(f), l); }
int kCheck(sqlite3_file* f, int* r) { return real(f)->pMethods->xCheckReservedLock(real(f), r); }
int kFileControl(sqlite3_file* f, int op, void* a) { return real(f)->pMethods->xFileControl(real(f), op, a); }
int kSectorSize(sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
int kDevChars(sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); }
int kShmMap(sqlite3_file* f, int i, int sz, int e, void volatile** p) {
    return real(f)->pMethods->xShmMap(real(f), i, sz, e, p);
}
int kShmLock(sqlite3_file* f, int o, int n, int fl) { return real(f)->pMethods->xShmLock(real(f), o, n, fl); }
void kShmBarrier(sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
int kShmUnmap(sqlite3_file* f, int d) { return real(f)->pMethods->xShmUnmap(real(f), d); }
int kFetch(sqlite3_file* f, sqlite3_int64 o, int n, void** p) { return real(f)->pMethods->xFetch(real(f), o, n, p); }
int kUnfetch(sqlite3_file* f, sqlite3_int64 o, void* p) { return real(f)->pMethods->xUnfetch(real(f), o, p); }

const sqlite3_io_methods kMethods = {3,        kClose,      kRead,     kWrite,       kTruncate,   kSync,     kFileSize,
                                     kLock,    kUnlock,     kCheck,    kFileControl, kSectorSize, kDevChars, kShmMap,
                                     kShmLock, kShmBarrier, kShmUnmap, kFetch,       kUnfetch};

int kOpen(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* outFlags) {
    auto* k = reinterpret_cast<KillFile*>(f);
    k->real = reinterpret_cast<sqlite3_file*>(k + 1);
    k->wal = (flags & SQLITE_OPEN_WAL) != 0;
    const int rc = g_real->xOpen(g_real, name, k->real, flags, outFlags);
    k->base.pMethods = (rc == SQLITE_OK && k->real->pMethods) ? &kMethods : nullptr;
    return rc;
}

}  // namespace

void killPoint(const char* name) {
    if (fires(name)) std::raise(SIGKILL);
}

void installKillVfsIfAsked() {
    Target* t = target();
    if (!t || t->name != "wal-write" || g_real) return;
    g_real = sqlite3_vfs_find(nullptr);
    g_vfs = *g_real;
    g_vfs.zName = "hearth-kill";
    g_vfs.szOsFile = static_cast<int>(sizeof(KillFile)) + g_real->szOsFile;
    g_vfs.xOpen = kOpen;
    sqlite3_vfs_register(&g_vfs, 1);
}

}  // namespace hearth
