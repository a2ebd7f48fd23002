// Kill points for the crash test: HEARTH_KILL_POINT=NAME[:N] SIGKILLs the process the Nth time
// it passes killPoint(NAME); "wal-write" fires half-way through a WAL write (a SQLite VFS
// shim, installed only when asked). Without the variable: no effect.
#pragma once

namespace hearth {

void killPoint(const char* name);
// Registers the shim as the default VFS when HEARTH_KILL_POINT is "wal-write[:N]". Idempotent.
void installKillVfsIfAsked();

}  // namespace hearth
