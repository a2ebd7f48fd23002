// hearth-cli entry point: the composition root of the headless program.
#include <QCoreApplication>

#include "app/cli/cli.h"

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName("hearth-cli");
    QCoreApplication::setApplicationVersion(HEARTH_VERSION);
    return hearth::runCli(QCoreApplication::arguments().mid(1));
}
