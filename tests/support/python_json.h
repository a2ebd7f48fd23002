// Runs a Python script with one JSON request on stdin and reads its one JSON answer.
#pragma once

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <csignal>
#include <cstring>

namespace hearth::test {

// "signal 4 (SIGILL, Illegal instruction)".
inline QString signalText(int sig) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    const char* abbrev = sigabbrev_np(sig);
#else
    const char* abbrev = nullptr;
#endif
    return QStringLiteral("signal %1 (%2%3)")
        .arg(sig)
        .arg(abbrev != nullptr ? QStringLiteral("SIG%1, ").arg(QString::fromLatin1(abbrev)) : QString())
        .arg(QString::fromLocal8Bit(strsignal(sig)));
}

// The last lines of a process's stderr, at most maxChars.
inline QString stderrTail(const QByteArray& err, int maxLines = 25, int maxChars = 3000) {
    QStringList lines = QString::fromUtf8(err).split('\n');
    while (!lines.isEmpty() && lines.last().trimmed().isEmpty()) lines.removeLast();
    if (lines.size() > maxLines) lines = lines.mid(lines.size() - maxLines);
    return lines.join('\n').right(maxChars);
}

// Returns the answer, or an object {"error": "..."} when the script failed. The error says first
// how the process ended ("killed by signal 4 (SIGILL, ...)" or "exited with code 1"), then the
// tail of its stderr, so that a warning printed before a crash is not taken for the cause.
// A crash also sets "signal"; a non-zero exit "exit_code"; both set "stderr" (the tail).
inline QJsonObject askPython(const QString& python, const QString& script, const QJsonObject& request,
                             int timeoutMs = 1800000) {
    QProcess p;
    p.start(python, {script});
    if (!p.waitForStarted(30000)) return {{"error", "cannot start " + python + ": " + p.errorString()}};
    p.write(QJsonDocument(request).toJson(QJsonDocument::Compact));
    p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {{"error", script + " timed out"}};
    }
    const QString tail = stderrTail(p.readAllStandardError());
    if (p.exitStatus() != QProcess::NormalExit) {
        // Qt reports the terminating signal as the exit code of a crashed process (Unix).
        const int sig = p.exitCode();
        return {
            {"error", QStringLiteral("%1 was killed by %2; its stderr ends:\n%3").arg(script, signalText(sig), tail)},
            {"signal", sig},
            {"stderr", tail}};
    }
    if (p.exitCode() != 0)
        return {
            {"error",
             QStringLiteral("%1 exited with code %2; its stderr ends:\n%3").arg(script).arg(p.exitCode()).arg(tail)},
            {"exit_code", p.exitCode()},
            {"stderr", tail}};
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(p.readAllStandardOutput(), &parseError);
    if (parseError.error != QJsonParseError::NoError) return {{"error", "bad JSON from " + script}};
    return doc.object();
}

}  // namespace hearth::test
