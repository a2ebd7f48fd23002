// The compute backends the settings panel offers, with the reason when one is unavailable
// (kernels/backend.h's registry, as Qt values for ui/): in plain, translated words from the
// backend's problem (no NVIDIA driver, no NVIDIA GPU, a driver too old for this build), the
// registry's own English words kept as details.
#pragma once

#include <QList>
#include <QString>

#include "engine/engine.h"
#include "kernels/backend_problem.h"

namespace hearth {

struct BackendChoice {
    QString name;  // "CPU (reference)", "CPU (AVX2)", "CUDA": the registry's, kept in the settings
    QString label = {};  // the name in the interface's language
    bool available = false;
    QString reason = {};  // empty when available; plain words
    QString details = {};  // the registry's reason, for people debugging (English)
    BackendProblem problem = BackendProblem::None;
    bool isReference() const { return name.contains(QLatin1String("reference")); }
};

// The plain words for a problem of the named backend; technical: the registry's reason, used
// as it is where no plainer words exist (BackendProblem::Other).
QString backendProblemText(const QString& name, BackendProblem problem, const QString& technical);

QList<BackendChoice> backendChoices();

// The engine's backend for a settings value: empty (or a name no longer listed) is Best (CUDA
// where a usable GPU is found), "CUDA" asks for CUDA, a CPU name keeps the engine on the CPU.
EngineOptions::BackendKind backendKindFor(const QString& name);

// The free memory of the GPU a model would load on under the settings' backend value (capped by
// HEARTH_CUDA_MEMORY_LIMIT_MB, as the engine caps it), for the model picker's placement; -1 where
// it would load on the CPU (no usable GPU, a CPU backend picked, HEARTH_BACKEND=cpu).
qint64 gpuMemoryForModels(const QString& backendSetting);

}  // namespace hearth
