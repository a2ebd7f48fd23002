// The key field never shows a saved key: it is empty with a placeholder saying one is saved,
// and only a key typed here is written back (an emptied field after typing removes it).
#include "ui/servers_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "app/chat/local_server_controller.h"
#include "app/chat/remote_controller.h"

namespace hearth {

ServersPage::ServersPage(LocalServerController* server, RemoteController* remote, QWidget* parent)
    : QWidget(parent), server_(server), remote_(remote) {
    auto* layout = new QVBoxLayout(this);
    if (server_) layout->addWidget(localGroup());
    if (remote_) layout->addWidget(remoteGroup());
    layout->addStretch(1);
}

QWidget* ServersPage::localGroup() {
    auto* group = new QGroupBox(tr("Local server"));
    serverSwitch_ = new QCheckBox(tr("Serve the loaded model to other programs (OpenAI-compatible API)"));
    serverSwitch_->setObjectName("localServerSwitch");
    port_ = new QSpinBox;
    port_->setObjectName("localServerPort");
    port_->setRange(0, 65535);
    port_->setSpecialValueText(tr("any free port"));
    port_->setValue(server_->port());
    address_ = new QLabel;
    address_->setObjectName("localServerAddress");
    address_->setWordWrap(true);
    address_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* note =
        new QLabel(tr("Only programs on this computer can connect (127.0.0.1). The server stops when "
                      "switched off and when Hearth quits; the window's own replies go first."));
    note->setWordWrap(true);
    auto* form = new QFormLayout(group);
    form->addRow(serverSwitch_);
    form->addRow(tr("Port"), port_);
    form->addRow(tr("Address"), address_);
    form->addRow(note);
    serverSwitch_->setChecked(server_->running());
    connect(serverSwitch_, &QCheckBox::toggled, this, [this](bool on) {
        if (on) server_->start(port_->value());
        else server_->stop();
    });
    connect(server_, &LocalServerController::stateChanged, this, &ServersPage::showServerState);
    showServerState();
    return group;
}

void ServersPage::showServerState() {
    const bool running = server_->running();
    const QSignalBlocker block(serverSwitch_);
    serverSwitch_->setChecked(running);
    port_->setEnabled(!running);
    if (running) address_->setText(tr("Listening on %1\nOpenAI clients: %1/v1").arg(server_->address()));
    else address_->setText(server_->error().isEmpty() ? tr("Off") : server_->error());
}

QWidget* ServersPage::remoteGroup() {
    auto* group = new QGroupBox(tr("Remote server"));
    const RemoteSettings s = remote_->settings();
    remoteEnabled_ = new QCheckBox(tr("Run replies on a remote server instead of this computer"));
    remoteEnabled_->setObjectName("remoteEnabled");
    remoteEnabled_->setChecked(s.enabled);
    url_ = new QLineEdit(s.baseUrl);
    url_->setObjectName("remoteUrl");
    url_->setPlaceholderText(tr("http://gpu-box:8000 (vLLM, SGLang, llama.cpp's llama-server, Hearth)"));
    key_ = new QLineEdit;
    key_->setObjectName("remoteKey");
    key_->setEchoMode(QLineEdit::Password);
    key_->setPlaceholderText(remote_->hasKey() ? tr("saved in the system keychain") : tr("none"));
    connect(key_, &QLineEdit::textEdited, this, [this] { keyEdited_ = true; });
    model_ = new QComboBox;
    model_->setObjectName("remoteModel");
    model_->setEditable(true);
    model_->setMinimumContentsLength(24);
    if (!s.model.isEmpty()) model_->addItem(s.model);
    list_ = new QPushButton(tr("List models"));
    list_->setObjectName("remoteListModels");
    auto* modelRow = new QHBoxLayout;
    modelRow->addWidget(model_, 1);
    modelRow->addWidget(list_);
    timeout_ = new QSpinBox;
    timeout_->setRange(1, 3600);
    timeout_->setValue(s.timeoutSeconds);
    timeout_->setSuffix(tr(" s"));
    timeout_->setToolTip(tr("A reply fails when the server sends nothing for this long"));
    remoteNote_ = new QLabel(remote_->keyNote());
    remoteNote_->setObjectName("remoteNote");
    remoteNote_->setWordWrap(true);
    auto* note =
        new QLabel(tr("Conversations stay saved on this computer; the server keeps nothing of them "
                      "and there is no local KV cache for its replies."));
    note->setWordWrap(true);
    auto* form = new QFormLayout(group);
    form->addRow(remoteEnabled_);
    form->addRow(tr("Address"), url_);
    form->addRow(tr("API key"), key_);
    form->addRow(tr("Model"), modelRow);
    form->addRow(tr("Timeout"), timeout_);
    form->addRow(remoteNote_);
    form->addRow(note);
    connect(list_, &QPushButton::clicked, this, &ServersPage::listModels);
    connect(remote_, &RemoteController::keyChecked, remoteNote_, &QLabel::setText);
    connect(remote_, &RemoteController::modelsListed, this, [this](const QStringList& ids) {
        const QString current = model_->currentText();
        model_->clear();
        model_->addItems(ids);
        if (!current.isEmpty() && ids.contains(current)) model_->setCurrentText(current);
        list_->setEnabled(true);
        remoteNote_->setText(ids.isEmpty() ? tr("The server lists no models.")
                                           : tr("%n model(s) listed.", nullptr, ids.size()));
    });
    connect(remote_, &RemoteController::modelsFailed, this, [this](const QString& message) {
        list_->setEnabled(true);
        remoteNote_->setText(message);
    });
    return group;
}

void ServersPage::listModels() {
    list_->setEnabled(false);
    remoteNote_->setText(tr("Asking %1 for its models…").arg(url_->text()));
    remote_->listModels(url_->text(), keyEdited_ ? std::optional<QString>(key_->text()) : std::nullopt);
}

void ServersPage::apply() {
    if (!remote_) return;
    const RemoteSettings s{.enabled = remoteEnabled_->isChecked(),
                           .baseUrl = url_->text().trimmed(),
                           .model = model_->currentText().trimmed(),
                           .timeoutSeconds = timeout_->value()};
    if (s != remote_->settings() || keyEdited_)
        remote_->apply(s, keyEdited_ ? std::optional<QString>(key_->text()) : std::nullopt);
}

}  // namespace hearth
