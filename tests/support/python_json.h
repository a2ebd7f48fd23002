// Runs a Python script with one JSON request on stdin and reads its one JSON answer.
#pragma once

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QString>

namespace hearth::test {

// Returns the answer, or an object {"error": "..."} when the script failed.
inline QJsonObject askPython(const QString& python, const QString& script, const QJsonObject& request,
                             int timeoutMs = 1800000) {
    QProcess p;
    p.start(python, {script});
    if (!p.waitForStarted(30000)) return {{"error", "cannot start " + python}};
    p.write(QJsonDocument(request).toJson(QJsonDocument::Compact));
    p.closeWriteChannel();
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {{"error", script + " timed out"}};
    }
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return {{"error", QString::fromUtf8(p.readAllStandardError()).right(2000)}};
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(p.readAllStandardOutput(), &parseError);
    if (parseError.error != QJsonParseError::NoError) return {{"error", "bad JSON from " + script}};
    return doc.object();
}

}  // namespace hearth::test
