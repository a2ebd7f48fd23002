// Both pages are plain widgets in a centred column of readable width; their words are tr()'d
// and the folder list is the model catalog's own (app/models/model_sources.h), never a copy.
#include "ui/start_pages.h"

#include <QDir>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace hearth {
namespace {

constexpr int kColumnWidth = 560;  // px: a line of ~80 characters at the default font

// A centred column inside page, at most kColumnWidth wide; the widgets go into the returned
// layout. Stretches beside it rather than an alignment flag: a flag would give the column its
// size hint's width, and the word-wrapped labels their heights for another width (cut off).
QVBoxLayout* column(QWidget* page) {
    auto* outer = new QVBoxLayout(page);
    auto* row = new QHBoxLayout;
    auto* inner = new QWidget;
    inner->setMaximumWidth(kColumnWidth);
    inner->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    row->addStretch(1);
    row->addWidget(inner, 100);
    row->addStretch(1);
    outer->addStretch(1);
    outer->addLayout(row);
    outer->addStretch(2);
    auto* layout = new QVBoxLayout(inner);
    layout->setSpacing(12);
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
