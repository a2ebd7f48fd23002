// Runs hearth-cli (the binary under test, from HEARTH_CLI) and captures what it printed.
#pragma once

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStringList>

#include "tests/support/test_env.h"

namespace hearth::test {

struct CliRun {
    int exitCode = -1;
    bool crashed = false;  // ended by a signal, or did not finish in time
    QByteArray out, err;
    QJsonObject json() const { return QJsonDocument::fromJson(out).object(); }
};

// launcher: a program (with its arguments) that runs hearth-cli, e.g. {"qemu-x86_64", "-cpu", M}.
inline CliRun runCli(const QStringList& args, int timeoutMs = 300000, const QStringList& launcher = {}) {
    QProcess p;
    if (launcher.isEmpty()) p.start(cliExe(), args);
    else p.start(launcher.front(), launcher.mid(1) + QStringList{cliExe()} + args);
    CliRun r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.crashed = true;
    }
    r.crashed = r.crashed || p.exitStatus() != QProcess::NormalExit;
    r.exitCode = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

}  // namespace hearth::test
