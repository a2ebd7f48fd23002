// Shared pieces of the hearth-cli commands of the full build (see cli_common.h): the Qt face of
// the core's (app/cli_core/core_common.h).
#include "app/cli/cli_common.h"

#include <QJsonDocument>

namespace hearth::cli {

namespace {

QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

bool QtOptionView::isSet(std::string_view name) const { return p_.isSet(qs(name)); }

std::string QtOptionView::value(std::string_view name) const { return p_.value(qs(name)).toStdString(); }

std::vector<std::string> QtOptionView::values(std::string_view name) const {
    std::vector<std::string> out;
    for (const QString& v : p_.values(qs(name))) out.push_back(v.toStdString());
    return out;
}

int usageError(const QString& message) { return core::usageError(message.toStdString()); }

int failWith(const Error& error) { return core::failWith(error); }

void writeOut(std::string_view text) { core::writeOut(text); }

QJsonArray toJson(const std::vector<TokenId>& ids) {
    QJsonArray a;
    for (TokenId id : ids) a.append(id);
    return a;
}

QList<QCommandLineOption> commonOptions() {
    QList<QCommandLineOption> options;
    for (const core::OptionSpec& s : core::commonOptionSpecs())
        options.append(QCommandLineOption(qs(s.name), qs(s.description), qs(s.valueName), qs(s.defaultValue)));
    return options;
}

bool parseOptions(QCommandLineParser& p, const QStringList& args, QString& error,
                  const QList<QCommandLineOption>& extra) {
    p.addOptions(commonOptions());
    p.addOptions(extra);
    if (!p.parse(args)) {
        error = p.errorText();
        return false;
    }
    return true;
}

bool readSampling(const QCommandLineParser& p, GenerateRequest& req, QString& error) {
    std::string message;
    const bool ok = core::readSampling(QtOptionView(p), req, message);
    if (!ok) error = QString::fromStdString(message);
    return ok;
}

Result<EngineOptions> readEngineOptions(const QCommandLineParser& p) {
    return core::readEngineOptions(QtOptionView(p));
}

Result<std::unique_ptr<Engine>> loadEngine(const QCommandLineParser& p) { return core::loadEngine(QtOptionView(p)); }

bool readPromptText(const QCommandLineParser& p, std::string& prompt, QString& error) {
    std::string message;
    const bool ok = core::readPromptText(QtOptionView(p), prompt, message);
    if (!ok) error = QString::fromStdString(message);
    return ok;
}

bool thinks(const QCommandLineParser& p) { return core::thinks(QtOptionView(p)); }

bool readRequest(const QCommandLineParser& p, const Engine& e, GenerateRequest& req, QString& error) {
    std::string message;
    const bool ok = core::readRequest(QtOptionView(p), e, req, message);
    if (!ok) error = QString::fromStdString(message);
    return ok;
}

QJsonObject resultJson(const GenerateRequest& req, const Outcome& o, double loadMs) {
    const std::string text = core::generateJson(req, o, loadMs).compact();
    return QJsonDocument::fromJson(QByteArray::fromStdString(text)).object();
}

}  // namespace hearth::cli
