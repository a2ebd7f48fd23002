// hearth (GUI) entry point: the composition root, and the one file of app/ allowed to include
// ui/. Builds the engine host and the window, and tears them down in reverse order.
#include <QApplication>
#include <QCommandLineParser>

#include "app/engine_host.h"
#include "app/paths.h"
#include "ui/main_window.h"

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName("Hearth");
    QApplication::setApplicationVersion(HEARTH_VERSION);
    QCommandLineParser parser;
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption({"model", "GGUF model to load.", "path", hearth::defaultModelPath()});
    parser.process(app);

    hearth::EngineHost host;
    hearth::MainWindow window(host);
    window.show();
    host.loadModel(parser.value("model"));
    return QApplication::exec();
}
