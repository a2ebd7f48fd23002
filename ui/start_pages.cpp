// Both pages are plain widgets in a centred column of readable width; their words are tr()'d
// and the folder list is the model catalog's own (app/models/model_sources.h), never a copy.
#include "ui/start_pages.h"

#include <QDir>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace hearth {
namespace {

constexpr int kColumnWidth = 560;  // px: a line of ~80 characters at the default font

// A centred column inside page; the widgets go into the returned layout.
QVBoxLayout* column(QWidget* page) {
    auto* outer = new QVBoxLayout(page);
    outer->addStretch(1);
    auto* inner = new QWidget;
    inner->setMaximumWidth(kColumnWidth);
    auto* layout = new QVBoxLayout(inner);
    layout->setSpacing(12);
    outer->addWidget(inner, 0, Qt::AlignHCenter);
    outer->addStretch(2);
    return layout;
}

QLabel* heading(const QString& text) {
    auto* label = new QLabel(text);
    QFont f = label->font();
    f.setPointSizeF(f.pointSizeF() * 1.6);
    f.setBold(true);
    label->setFont(f);
    label->setWordWrap(true);
    return label;
}

QLabel* paragraph(const QString& text) {
    auto* label = new QLabel(text);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);
    return label;
}

}  // namespace

FirstStartPage::FirstStartPage(QWidget* parent)
    : QWidget(parent), folders_(new QLabel), choose_(new QPushButton(tr("Choose a model…"))) {
    setObjectName("firstStartPage");
    QVBoxLayout* layout = column(this);
    layout->addWidget(heading(tr("Welcome to Hearth")));
    layout->addWidget(
        paragraph(tr("Hearth answers with a language model: one file (GGUF, usually 100 MB to a few GB) that runs "
                     "entirely on this computer. No model has been chosen yet. Pick one you already have, or "
                     "download a GGUF file into one of these folders:")));
    folders_->setObjectName("modelFolders");
    folders_->setTextFormat(Qt::PlainText);
    folders_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    folders_->setWordWrap(true);
    layout->addWidget(folders_);
    layout->addWidget(
        paragraph(tr("Hearth finds the models of LM Studio, Ollama, GPT4All, Jan and the Hugging "
                     "Face cache in place; nothing is copied.")));
    choose_->setObjectName("chooseModelButton");
    choose_->setDefault(true);
    layout->addWidget(choose_, 0, Qt::AlignLeft);
    connect(choose_, &QPushButton::clicked, this, &FirstStartPage::chooseModelRequested);
}

void FirstStartPage::setFolders(const QList<ModelFolder>& folders) {
    QStringList lines;
    for (const ModelFolder& f : folders)
        lines << tr("%1: %2").arg(modelSourceName(f.source), QDir::toNativeSeparators(f.path));
    folders_->setText(lines.join('\n'));
}

WelcomePage::WelcomePage(QWidget* parent) : QWidget(parent), model_(new QLabel) {
    setObjectName("welcomePage");
    QVBoxLayout* layout = column(this);
    layout->addWidget(heading(tr("New chat")));
    model_->setObjectName("welcomeModel");
    model_->setWordWrap(true);
    model_->setTextFormat(Qt::PlainText);
    layout->addWidget(model_);
    layout->addWidget(paragraph(tr("Try one of these, or write your own below:")));
    const QStringList examples = {tr("Explain how a hash table works, with a short example in Python."),
                                  tr("Write a friendly email asking to move tomorrow's meeting to Friday."),
                                  tr("Give me three ideas for a quick vegetarian dinner.")};
    for (const QString& text : examples) {
        auto* b = new QPushButton(text);
        b->setObjectName("examplePrompt");
        b->setStyleSheet(QStringLiteral("text-align: left; padding: 8px 12px;"));
        layout->addWidget(b);
        prompts_.append(b);
        connect(b, &QPushButton::clicked, this, [this, text] { emit promptChosen(text); });
    }
    auto* memory =
        paragraph(tr("Hearth keeps your conversations, and the model's working memory of each (its KV "
                     "cache), on this computer only, so a long chat continues at once when you reopen it."));
    memory->setObjectName("welcomeMemory");
    layout->addWidget(memory);
}

void WelcomePage::setModelName(const QString& name) { model_->setText(tr("Model: %1").arg(name)); }

}  // namespace hearth
