// Converts listBackends() for the settings panel.
#include "app/chat/backend_choices.h"

#include "kernels/backend.h"

namespace hearth {

QList<BackendChoice> backendChoices() {
    QList<BackendChoice> out;
    for (const BackendInfo& b : listBackends())
        out.append({QString::fromStdString(b.name), b.available, QString::fromStdString(b.reason)});
    return out;
}

}  // namespace hearth
