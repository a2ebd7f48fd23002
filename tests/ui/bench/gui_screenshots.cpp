// Screenshots of the real window for the README (run under Xvfb):
//   xvfb-run -a build-gui/tests/gui_screenshots OUT_DIR [zh_CN | polish]
// Loads SmolLM2 (else the small test model), asks it a question, and saves the main window,
// the settings panel (sampling and engine pages), a thinking model's reply folded and unfolded
// (the test model of tests/app/chat/thinking_model.h), the model picker (the models folder's
// files and a test file of an architecture Hearth does not run) and the code conversation in the
// dark palette (the others in Hearth's light one); with
// zh_CN, the main window in Simplified Chinese; with polish, only the settings panel with a
// range message and the window while a reply streams (live tokens/s in the status line); with
// pages (and optionally zh_CN after it), the first-start page before any model is loaded and the
// welcome page of a new chat (first-start.png, welcome.png; welcome-zh_CN.png in Chinese).
#include <QApplication>
#include <QDoubleSpinBox>
#include <QListWidget>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTranslator>
#include <cstdio>

#include "app/common/paths.h"
#include "tests/app/chat/thinking_model.h"
#include "tests/ui/gui_app.h"
#include "ui/appearance.h"
#include "ui/model_picker.h"

using namespace hearth;

namespace {

void chat(test::GuiApp& gui, const QString& text) {
    test::typeAndSend(gui, text);
    if (!QTest::qWaitFor([&] { return !gui.replies->generating(); }, 120000))
        std::puts("the reply did not finish in 2 minutes; the screenshot shows it unfinished");
}

// tab: the panel's page to show (0 sampling, 2 engine and app).
void settingsShot(test::GuiApp& gui, const QString& file, int tab = 0) {
    auto c = QObject::connect(gui.window.get(), &MainWindow::settingsDialogOpened, [file, tab](QWidget* w) {
        w->findChild<QTabWidget*>()->setCurrentIndex(tab);
        QTimer::singleShot(300, w, [w, file] {
            w->grab().save(file);
            static_cast<QDialog*>(w)->reject();
        });
    });
    gui.window->openSettings();
    QObject::disconnect(c);
}

// The reasoning folded under its header, then unfolded, and the panel with the Thinking switch.
void thinkingShots(test::GuiApp& gui, const QString& dir, const QString& out) {
    const QString path = dir + "/thinking.gguf";
    if (!test::thinkingModel().writeFile(path.toStdString())) return;
    gui.window->loadModel(path);
    if (!QTest::qWaitFor([&] { return gui.models->model() && gui.models->model()->file.path == path; }, 60000)) return;
    gui.conversations->newConversation();
    chat(gui, "What is six times seven?");
    QTest::qWait(300);
    gui.window->grab().save(out + "/thinking.png");
    test::clickChip(*gui.window, 1, MessageDelegate::Action::ToggleReasoning);
    QTest::qWait(300);
    gui.window->grab().save(out + "/thinking-expanded.png");
    settingsShot(gui, out + "/settings-thinking.png");
}

void pickerShot(const QString& dir, const QString& out) {
    const QString models = dir + "/picker";
    QDir().mkpath(models);
    for (const QFileInfo& f : QDir(modelsDir()).entryInfoList({"*.gguf"}, QDir::Files))
        QFile::link(f.absoluteFilePath(), models + "/" + f.fileName());
    GgufWriter mamba = test::tinyLlama();
    mamba.set("general.architecture", std::string("mamba"));
    if (!mamba.writeFile((models + "/mamba-test.gguf").toStdString())) return;
    ModelPicker picker(models, models + "/mamba-test.gguf");
    picker.show();
    if (!QTest::qWaitFor([&] { return picker.inspected(); }, 20000))
        qWarning("the picker did not finish inspecting the models in 20 s; the screenshot shows it unfinished");
    QTest::qWait(200);
    picker.grab().save(out + "/model-picker.png");
}

// Temperature 9.5 typed into the panel: the field keeps it and the panel says why it is refused.
void rangeMessageShot(test::GuiApp& gui, const QString& file) {
    auto c = QObject::connect(gui.window.get(), &MainWindow::settingsDialogOpened, [file](QWidget* w) {
        auto* temperature = w->findChild<QDoubleSpinBox*>("param_temperature");
        temperature->setFocus();
        temperature->selectAll();
        QTest::keyClicks(temperature, "9.5");
        QTimer::singleShot(300, w, [w, file] {
            w->grab().save(file);
            static_cast<QDialog*>(w)->reject();
        });
    });
    gui.window->openSettings();
    QObject::disconnect(c);
}

// The window a second into a long reply, then the reply stopped.
void streamingShot(test::GuiApp& gui, const QString& file) {
    ChatSettings s = gui.settings.chatDefaults({});
    s.maxTokens = 2000;
    gui.settings.setChatDefaults(s);
    gui.conversations->newConversation();
    test::typeAndSend(gui, "Tell me a long story about a lighthouse keeper.");
    QTest::qWait(1500);
    gui.window->grab().save(file);
    gui.replies->stop();
    if (!QTest::qWaitFor([&] { return !gui.replies->generating(); }, 30000))
        std::puts("the reply did not stop in 30 s");
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() < 2) return std::puts("usage: gui_screenshots OUT_DIR [zh_CN]"), 2;
    const QString out = args[1];
    const bool pages = args.size() > 2 && args[2] == "pages";
    const bool chinese = args.size() > 2 && (args[2] == "zh_CN" || (pages && args.size() > 3 && args[3] == "zh_CN"));
    const bool polish = args.size() > 2 && args[2] == "polish";
    applyAppearance(app, "light");  // Hearth's own palette and icon theme, as a user who chose Light sees them
    QTranslator translator;
    if (chinese && translator.load(":/i18n/hearth_zh_CN.qm")) app.installTranslator(&translator);
    QTemporaryDir dir;
    test::GuiApp gui(dir.path());
    ChatSettings s;
    s.maxTokens = 160;
    s.seed = 7;
    gui.settings.setChatDefaults(s);
    gui.window->resize(1100, 720);
    if (!QTest::qWaitForWindowExposed(gui.window.get())) return std::puts("the window was not exposed"), 1;
    if (pages && !chinese) {  // nothing loaded yet: the first start
        QTest::qWait(300);
        gui.window->grab().save(out + "/first-start.png");
    }
    const QString smol = defaultModelPath();
    gui.window->loadModel(QFileInfo::exists(smol) ? smol : test::smallModel(dir.path()));
    if (!QTest::qWaitFor([&] { return gui.models->model().has_value(); }, 60000)) return std::puts("no model"), 1;
    if (pages) {
        gui.conversations->newConversation();
        QTest::qWait(300);
        gui.window->grab().save(out + (chinese ? "/welcome-zh_CN.png" : "/welcome.png"));
        return 0;
    }
    if (polish) {
        rangeMessageShot(gui, out + "/settings-range.png");
        streamingShot(gui, out + "/streaming.png");
        return 0;
    }
    gui.conversations->newConversation();
    chat(gui, "What are three tips for a good night's sleep?");
    gui.conversations->newConversation();
    chat(gui, "Write a Python function that reverses a string.");
    QTest::qWait(300);
    gui.window->grab().save(out + (chinese ? "/main-window-zh_CN.png" : "/main-window.png"));
    if (chinese) return 0;
    const qint64 codeChat = gui.conversations->current();  // shown again in the dark palette
    settingsShot(gui, out + "/settings.png");
    EngineSettings engine = gui.settings.engine();
    engine.spec.enabled = true;  // the group shown in use
    gui.settings.setEngine(engine);
    settingsShot(gui, out + "/settings-engine.png", 2);
    thinkingShots(gui, dir.path(), out);
    pickerShot(dir.path(), out);
    gui.window->loadModel(QFileInfo::exists(smol) ? smol : test::smallModel(dir.path()));  // after the thinking model
    if (!QTest::qWaitFor(
            [&] { return gui.models->model() && !gui.models->model()->file.path.endsWith("thinking.gguf"); }, 60000))
        std::puts("the chat model did not load again in 60 s; the dark screenshot names the thinking model");
    gui.conversations->openConversation(codeChat);
    applyAppearance(app, "dark");
    QTest::qWait(300);
    gui.window->grab().save(out + "/dark.png");
    return 0;
}
