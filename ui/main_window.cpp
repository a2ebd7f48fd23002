// Minimal chat window wired to the engine host through queued signals.
#include "ui/main_window.h"

#include <QKeyEvent>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QStatusBar>
#include <QTextBrowser>
#include <QVBoxLayout>

#include "app/engine_host.h"

namespace hearth {

MainWindow::MainWindow(EngineHost& host, QWidget* parent)
    : QMainWindow(parent), host_(host), transcript_(new QTextBrowser), composer_(new QPlainTextEdit),
      sendButton_(new QPushButton(tr("Send"))), status_(new QLabel(tr("Loading model…"))) {
    setWindowTitle(tr("Hearth"));
    transcript_->setObjectName("transcript");
    composer_->setObjectName("composer");
    sendButton_->setObjectName("sendButton");
    status_->setObjectName("status");
    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    composer_->setPlaceholderText(tr("Message Hearth…"));
    composer_->setMaximumHeight(100);
    composer_->installEventFilter(this);
    auto* row = new QHBoxLayout;
    row->addWidget(composer_, 1);
    row->addWidget(sendButton_);
    layout->addWidget(transcript_, 1);
    layout->addLayout(row);
    setCentralWidget(central);
    statusBar()->addWidget(status_, 1);
    sendButton_->setEnabled(false);
    resize(900, 640);

    EngineWorker* w = host_.worker();
    connect(sendButton_, &QPushButton::clicked, this, [this] { generating_ ? host_.stop() : send(); });
    connect(w, &EngineWorker::modelLoaded, this, [this](const QString& d) {
        modelReady_ = true;
        status_->setText(d);
        sendButton_->setEnabled(true);
    });
    connect(w, &EngineWorker::loadFailed, this, [this](const QString& m) { status_->setText(tr("Cannot load the model: %1").arg(m)); });
    connect(w, &EngineWorker::textReady, this, &MainWindow::appendText);
    connect(w, &EngineWorker::replyFinished, this, [this](const QString& s) {
        status_->setText(s);
        setGenerating(false);
    });
    connect(w, &EngineWorker::replyFailed, this, [this](const QString& m) {
        status_->setText(m);
        setGenerating(false);
    });
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (watched == composer_ && event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        if ((key->key() == Qt::Key_Return || key->key() == Qt::Key_Enter) && !(key->modifiers() & Qt::ShiftModifier)) {
            if (!generating_) send();
            return true;
        }
    }
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::send() {
    const QString text = composer_->toPlainText().trimmed();
    if (text.isEmpty() || generating_ || !modelReady_) return;
    composer_->clear();
    roles_ << QStringLiteral("user") << QStringLiteral("assistant");
    contents_ << text << QString();
    renderTranscript();
    setGenerating(true);
    host_.generate(roles_.mid(0, roles_.size() - 1), contents_.mid(0, contents_.size() - 1));
}

void MainWindow::appendText(const QString& text) {
    if (contents_.isEmpty()) return;
    contents_.last() += text;
    renderTranscript();
}

void MainWindow::setGenerating(bool generating) {
    generating_ = generating;
    sendButton_->setText(generating ? tr("Stop") : tr("Send"));
}

void MainWindow::renderTranscript() {
    QScrollBar* bar = transcript_->verticalScrollBar();
    const bool atBottom = bar->value() >= bar->maximum() - 4;
    QString html;
    for (qsizetype i = 0; i < roles_.size(); ++i) {
        const bool user = roles_[i] == QLatin1String("user");
        html += QStringLiteral("<p><b>%1</b><br>%2</p>")
                    .arg(user ? tr("You") : tr("Hearth"), contents_[i].toHtmlEscaped().replace('\n', "<br>"));
    }
    transcript_->setHtml(html);
    if (atBottom) bar->setValue(bar->maximum());
}

}  // namespace hearth
