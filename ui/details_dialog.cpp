// A QMessageBox opened with open(), not exec(): the window goes on painting, and tests find it.
#include "ui/details_dialog.h"

#include <QCoreApplication>
#include <QMessageBox>

namespace hearth {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("hearth::DetailsDialog", text); }

}  // namespace

void showTechnicalDetails(QWidget* parent, const QString& details, const QString& summary) {
    auto* box = new QMessageBox(parent);
    box->setObjectName("detailsDialog");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setIcon(QMessageBox::Information);
    box->setWindowTitle(tr("Details — Hearth"));
    box->setTextFormat(Qt::PlainText);
    box->setText(summary.isEmpty() ? tr("Technical details (in English):") : summary);
    box->setInformativeText(summary.isEmpty() ? details : tr("Technical details (in English):") + '\n' + details);
    box->setTextInteractionFlags(Qt::TextSelectableByMouse);
    box->setStandardButtons(QMessageBox::Close);
    box->open();
}

}  // namespace hearth
