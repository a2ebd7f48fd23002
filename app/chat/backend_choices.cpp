// Converts listBackends() for the settings panel; words in the context hearth::BackendChoices.
#include "app/chat/backend_choices.h"

#include <QCoreApplication>
#include <QRegularExpression>

#include "engine/model/layer_placement.h"
#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"

namespace hearth {
namespace {

QString tr(const char* text, int n = -1) {
    return QCoreApplication::translate("hearth::BackendChoices", text, nullptr, n);
}

// The registry's names are identifiers ("CPU (AVX2, 8 threads)"); the label says the same in the
// interface's words, with the thread count the name carries.
QString labelOf(const QString& name) {
    if (name.startsWith(QLatin1String("CPU (AVX2"))) {
        const auto threads = QRegularExpression(QStringLiteral("\\d+")).match(name.mid(9));
        return threads.hasMatch() ? tr("CPU (AVX2, %n thread(s))", threads.captured().toInt()) : tr("CPU (AVX2)");
    }
    if (name == QLatin1String("CPU (reference)")) return tr("CPU (reference kernels, slow)");
    return name;  // "CUDA": a name
}

}  // namespace

QString backendProblemText(const QString& name, BackendProblem problem, const QString& technical) {
    switch (problem) {
    case BackendProblem::None: return {};
    case BackendProblem::NotBuilt: return tr("this build of Hearth was made without it");
    case BackendProblem::NoDriver: return tr("no NVIDIA driver is installed");
    case BackendProblem::NoDevice: return tr("no NVIDIA graphics card was found");
    case BackendProblem::DriverTooOld: return tr("the NVIDIA driver is too old for this build of Hearth: update it");
    case BackendProblem::Other: break;
    }
    return name == QLatin1String("CUDA") ? tr("CUDA cannot start (%1)").arg(technical) : technical;
}

QList<BackendChoice> backendChoices() {
    QList<BackendChoice> out;
    for (const BackendInfo& b : listBackends()) {
        const QString name = QString::fromStdString(b.name), technical = QString::fromStdString(b.reason);
        const BackendProblem problem = b.available ? BackendProblem::None : b.problem;
        out.append({.name = name,
                    .label = labelOf(name),
                    .available = b.available,
                    .reason = b.available ? QString() : backendProblemText(name, problem, technical),
                    .details = technical,
                    .problem = problem});
    }
    return out;
}

EngineOptions::BackendKind backendKindFor(const QString& name) {
    using Kind = EngineOptions::BackendKind;
    if (name == QLatin1String("CUDA")) return Kind::Cuda;
    if (name == QLatin1String("CPU (reference)")) return Kind::Reference;
    if (name.startsWith(QLatin1String("CPU"))) return Kind::Cpu;
    return Kind::Best;
}

qint64 gpuMemoryForModels(const QString& backendSetting) {
    if (!cudaConsidered(backendKindFor(backendSetting)) || !probeCuda().available) return -1;
    const auto cuda = makeCudaBackend(nullptr);
    const size_t budget = cuda ? placementBudget(cuda->freeMemory()) : 0;
    return budget > 0 ? static_cast<qint64>(budget) : -1;
}

}  // namespace hearth
