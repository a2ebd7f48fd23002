// The compute backends the settings panel offers, with the reason when one is unavailable
// (kernels/backend.h's registry, as Qt values for ui/).
#pragma once

#include <QList>
#include <QString>

namespace hearth {

struct BackendChoice {
    QString name;  // "CPU (reference)", "CPU (AVX2)", "CUDA"
    bool available = false;
    QString reason;  // empty when available
    bool isReference() const { return name.contains(QLatin1String("reference")); }
};

QList<BackendChoice> backendChoices();

}  // namespace hearth
