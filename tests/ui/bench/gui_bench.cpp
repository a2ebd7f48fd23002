// Responsiveness benchmark (not a test): the real window, shown and painted (run it under
// Xvfb: xvfb-run -a build-gui/tests/gui_bench [code]). Opens a stored conversation of 1,000
// messages, then feeds synthetic token events at 2,000 per second for 10 seconds into a
// streaming reply (prose; with code, Python code blocks that the highlighter colours): a
// producer thread makes the tokens and coalesces them per 16 ms frame, as EngineWorker does,
// and the GUI appends them to the message model. Meanwhile the producer posts a time-stamped
// probe to the GUI thread every 5 ms; the delay until the GUI runs it is the event-loop
// latency. Prints p50/p99 latency, the time to open the conversation, and checks that all
// 20,000 tokens reached the message view.
#include <QApplication>
#include <QElapsedTimer>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "tests/ui/gui_app.h"
#include "ui/appearance.h"

using namespace hearth;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kMessages = 1000, kTokensPerSecond = 2000, kSeconds = 10;

std::string sampleText(int i) {
    if (i % 2 == 0) return "Question " + std::to_string(i) + ": how do I sort a list in Python?";
    return "## Answer " + std::to_string(i) +
        "\n\nUse `sorted()`:\n\n- it returns a new list\n- `key=` picks the field\n\n"
        "```python\nnames = sorted(names, key=str.lower)\n```\n\n| call | in place |\n|---|---|\n| sorted | no |\n| "
        "sort | yes |\n";
}

qint64 fillConversation(ConversationStore& store) {
    const Conversation c = store.createConversation("A long conversation").value();
    int64_t parent = 0;
    for (int i = 0; i < kMessages; ++i)
        parent =
            store.appendMessage(c.id, parent, i % 2 ? ChatRole::Assistant : ChatRole::User, sampleText(i)).value().id;
    return c.id;
}

double threadCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// Token i of the prose reply: "w<i>" plus a space, a newline every 12 tokens and a blank line
// every 60 (Markdown paragraphs).
QString proseToken(int i) {
    return QStringLiteral("w%1%2").arg(i).arg(i % 60 == 59 ? "\n\n" : i % 12 == 11 ? "\n" : " ");
}

// Token i of the code reply: Python blocks of 20 lines (a keyword opens each line, every fifth
// token is a string, each line ends in a comment) with a sentence between the blocks.
QString codeToken(int i) {
    QString t = i % 240 == 0 ? QStringLiteral("```python\n") : QString();
    if (i % 12 == 0) t += QStringLiteral("return ");
    t += i % 5 == 0 ? QStringLiteral("\"w%1\"").arg(i) : QStringLiteral("w%1").arg(i);
    if (i % 12 == 11) t += QStringLiteral("  # note\n");
    else t += QStringLiteral(" + ");
    if (i % 240 == 239) t += QStringLiteral("```\n\nThe next block:\n\n");
    return t;
}

// The synthetic engine: tokens at kTokensPerSecond, flushed every 16 ms.
void produce(QObject* gui, const std::function<void(QString)>& deliver, std::vector<double>& latencies,
             const std::function<QString(int)>& token) {
    const auto start = Clock::now();
    auto lastFlush = start, lastProbe = start;
    QString pending;
    for (int i = 0; i < kTokensPerSecond * kSeconds;) {
        const auto now = Clock::now();
        const auto due = static_cast<int>(std::chrono::duration<double>(now - start).count() * kTokensPerSecond);
        for (; i < std::min(due, kTokensPerSecond * kSeconds); ++i) pending += token(i);
        if (now - lastFlush >= std::chrono::milliseconds(16) && !pending.isEmpty()) {
            QMetaObject::invokeMethod(
                gui, [deliver, text = std::move(pending)] { deliver(text); }, Qt::QueuedConnection);
            pending.clear();
            lastFlush = now;
        }
        if (now - lastProbe >= std::chrono::milliseconds(5)) {
            QMetaObject::invokeMethod(
                gui,
                [&latencies, now] {
                    latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - now).count());
                },
                Qt::QueuedConnection);
            lastProbe = now;
        }
        QThread::msleep(1);
    }
    if (!pending.isEmpty())
        QMetaObject::invokeMethod(
            gui, [deliver, text = std::move(pending)] { deliver(text); }, Qt::QueuedConnection);
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    const bool code = app.arguments().contains("code");  // the streamed reply is Python code blocks
    applyAppearance(app, "light");  // Hearth's palette and icon theme: chips paint their icons
    QTemporaryDir dir;
    test::GuiApp gui(dir.path());
    gui.window->resize(1100, 760);
    if (!QTest::qWaitForWindowExposed(gui.window.get())) return std::puts("window not exposed"), 1;
    const qint64 conversation = fillConversation(*gui.store);
    QElapsedTimer open;
    open.start();
    gui.conversations->openConversation(conversation);
    const double openMs = open.nsecsElapsed() / 1e6;
    gui.window->messageView()->viewport()->repaint();  // the first frame with the conversation
    const double paintedMs = open.nsecsElapsed() / 1e6;
    QTest::qWait(500);

    MessageListModel* model = gui.messages();
    model->append(MessageRow{999999, ChatRole::Assistant, {}, true});
    std::vector<double> latencies;
    QThread producer;
    QObject::connect(&producer, &QThread::started, [&] {
        produce(
            gui.window.get(), [model](const QString& t) { model->appendText(999999, t); }, latencies,
            code ? codeToken : proseToken);
        producer.quit();
    });
    // An event loop that sleeps when idle (processEvents(flags, ms) never waits: a loop of it
    // would spin and count as busy GUI time).
    QEventLoop loop;
    QObject::connect(&producer, &QThread::finished, &loop, &QEventLoop::quit, Qt::QueuedConnection);
    QElapsedTimer feed;
    feed.start();
    const double cpuBefore = threadCpuMs();
    producer.start();
    loop.exec();
    QApplication::processEvents();
    const double feedS = feed.nsecsElapsed() / 1e9;
    const double guiCpuMs = threadCpuMs() - cpuBefore;
    gui.window->messageView()->viewport()->repaint();

    QStringList words;  // the tokens' "w<i>", in the order the reply holds them
    for (const QRegularExpressionMatch& m :
         QRegularExpression("w\\d+").globalMatch(model->row(model->rowCount() - 1)->text))
        words << m.captured();
    bool inOrder = words.size() == kTokensPerSecond * kSeconds;
    for (int i = 0; inOrder && i < words.size(); ++i) inOrder = words[i] == QStringLiteral("w%1").arg(i);
    std::printf("conversation of %d messages: openConversation %.1f ms, first frame painted %.1f ms\n", kMessages,
                openMs, paintedMs);
    std::printf("streamed reply: %s\n", code ? "Python code blocks (argument code)" : "prose");
    std::printf("tokens delivered to the message view: %lld of %d, in order: %s (%.1f s)\n",
                static_cast<long long>(words.size()), kTokensPerSecond * kSeconds, inOrder ? "yes" : "NO", feedS);
    std::printf("GUI event-loop latency over %zu probes: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", latencies.size(),
                percentile(latencies, 0.5), percentile(latencies, 0.99), percentile(latencies, 1.0));
    std::printf("GUI thread CPU time while streaming: %.0f ms (%.0f%% of the %.1f s)\n", guiCpuMs,
                guiCpuMs / (feedS * 10), feedS);
    std::printf("view follows the end: %s\n", gui.window->messageView()->followsEnd() ? "yes" : "no");
    QFile load("/proc/loadavg");
    if (load.open(QIODevice::ReadOnly))
        std::printf("load average at the end (1/5/15 min): %s", load.readAll().constData());
    return inOrder ? 0 : 1;
}
