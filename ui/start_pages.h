// The pages the chat area shows instead of an empty message list: the first-start page (no model
// yet: what a model is, the folders Hearth looks in, the "Model…" picker) and the welcome page of
// a new, empty chat (the model in use, three example prompts, what Hearth remembers).
#pragma once

#include <QList>
#include <QWidget>

#include "app/models/model_sources.h"

class QLabel;
class QPushButton;

namespace hearth {

class FirstStartPage : public QWidget {
    Q_OBJECT
public:
    explicit FirstStartPage(QWidget* parent = nullptr);
    // The folders listed (modelSearchFolders(): each source's, in the order they are searched).
    void setFolders(const QList<ModelFolder>& folders);
    QPushButton* chooseButton() const { return choose_; }

signals:
    void chooseModelRequested();

private:
    QLabel* folders_;
    QPushButton* choose_;
};

class WelcomePage : public QWidget {
    Q_OBJECT
public:
    explicit WelcomePage(QWidget* parent = nullptr);
    void setModelName(const QString& name);
    QList<QPushButton*> promptButtons() const { return prompts_; }

signals:
    void promptChosen(const QString& text);

private:
    QLabel* model_;
    QList<QPushButton*> prompts_;
};

}  // namespace hearth
