// PieceTable: the piece texts in one buffer and their linear-probing text -> id index.
#include "engine/tokenizer/piece_table.h"

#include <functional>

namespace hearth {

PieceTable::PieceTable(const std::vector<std::string>& texts) {
    size_t total = 0;
    for (const std::string& t : texts) total += t.size();
    bytes_.reserve(total);
    ends_.reserve(texts.size());
    for (const std::string& t : texts) {
        bytes_.insert(bytes_.end(), t.begin(), t.end());
        ends_.push_back(bytes_.size());
    }
    size_t nSlots = 16;
    while (nSlots < 2 * texts.size()) nSlots *= 2;
    slots_.assign(nSlots, -1);
    for (size_t i = 0; i < texts.size(); ++i) slots_[slotOf(texts[i])] = static_cast<int32_t>(i);
}

size_t PieceTable::slotOf(std::string_view text) const {
    const size_t mask = slots_.size() - 1;
    size_t s = std::hash<std::string_view>{}(text)&mask;
    while (slots_[s] >= 0 && (*this)[static_cast<size_t>(slots_[s])] != text) s = (s + 1) & mask;
    return s;
}

int32_t PieceTable::find(std::string_view text) const { return slots_.empty() ? -1 : slots_[slotOf(text)]; }

}  // namespace hearth
