// Chooses the architecture implementation from general.architecture; what every architecture's
// forward entry points share (forward(): the reserving convenience around forwardBatch; the
// per-item checks; a long batch cut into passes).
#include "engine/str_cat.h"
#include "engine/model/model.h"

#include <algorithm>
#include <array>
#include <deque>

#include "engine/model/arch_registry.h"
#include "engine/model/forward_batch.h"
#include "engine/model/gguf.h"

namespace hearth {

namespace {
constexpr std::array kArchitectures{
    ArchEntry{"llama", &loadLlama}, ArchEntry{"qwen2", &loadQwen2},   ArchEntry{"qwen3", &loadQwen3},
    ArchEntry{"phi3", &loadPhi3},   ArchEntry{"gemma2", &loadGemma2}, ArchEntry{"gemma3", &loadGemma3},
};
}  // namespace

Result<std::unique_ptr<Model>> Model::load(const GgufFile& file, const ModelLoadOptions& options) {
    const GgufValue* archValue = file.find("general.architecture");
    if (!archValue || !archValue->asString())
        return fail(ErrorCode::InvalidFormat, "missing metadata key general.architecture");
    const std::string& arch = *archValue->asString();
    for (const ArchEntry& entry : kArchitectures)
        if (entry.name == arch) return entry.load(file, options);
    std::string supported;
    for (const ArchEntry& entry : kArchitectures) supported += strCat(supported.empty() ? "" : ", ", entry.name);
    return fail(ErrorCode::Unsupported,
                strCat("architecture '", arch, "' is not supported (supported: ", supported, ")"));
}

Result<void> Model::forward(Backend& backend, KvCache& cache, std::span<const ForwardItem> items) {
    if (auto r = ForwardBatch::check(*this, items); !r) return r;  // before any reservation
    for (size_t i = 0; i < items.size(); ++i) {
        const ForwardItem& item = items[i];
        if (item.tokens.empty()) continue;
        if (auto r = cache.reserve(*item.seq, item.seq->nTokens + static_cast<int32_t>(item.tokens.size())); !r)
            return std::unexpected(ForwardBatch::itemError(r.error(), i, items.size()));
    }
    if (auto r = forwardBatch(backend, cache, items); !r) return r;
    for (const ForwardItem& item : items) item.seq->nTokens += static_cast<int32_t>(item.tokens.size());
    return {};
}

Result<void> Model::forward(Backend& backend, KvCache& cache, KvSequence& seq, std::span<const int32_t> tokens,
                            std::span<float> logits) {
    const ForwardItem item{&seq, tokens, logits};
    return forward(backend, cache, std::span<const ForwardItem>(&item, 1));
}

int64_t Model::totalRows(std::span<const ForwardItem> items) {
    int64_t n = 0;
    for (const ForwardItem& item : items) n += static_cast<int64_t>(item.tokens.size());
    return n;
}

Result<void> Model::forwardInPasses(Backend& backend, KvCache& cache, std::span<const ForwardItem> items,
                                    int64_t rowsPerPass) {
    if (auto r = ForwardBatch().prepare(*this, cache, items); !r) return r;  // every check, before any pass
    const auto nVocab = static_cast<int64_t>(config_.nVocab);
    std::vector<ForwardItem> pass;
    std::deque<std::vector<int32_t>> rebased;  // pieces' parents, relative to their first token
    int64_t room = rowsPerPass;
    for (const ForwardItem& item : items) {
        const auto n = static_cast<int64_t>(item.tokens.size());
        const int64_t firstWanted =
            n - static_cast<int64_t>(item.logits.size()) / nVocab - static_cast<int64_t>(item.ids.size());
        // A tree's rows off the chain go in one piece (a piece sees the rows before it as a
        // chain): from the first whose parent is not the token before it.
        int64_t treeFirst = n;
        for (int64_t t = 0; t < static_cast<int64_t>(item.parents.size()) && treeFirst == n; ++t)
            if (item.parents[static_cast<size_t>(t)] != t - 1) treeFirst = t;
        for (int64_t a = 0; a < n;) {
            if (treeFirst < n && a >= treeFirst && room < n - a && !pass.empty()) {
                if (auto r = forwardBatch(backend, cache, pass); !r) return r;
                pass.clear();
                room = rowsPerPass;
            }
            int64_t b = a + std::min(room, n - a);
            if (b < n && b > treeFirst) b = std::max(a, treeFirst);
            if (b == a) b = n;  // the tree alone: at most rowsPerPass rows
            const int64_t w = std::max(a, firstWanted);  // rows [w, b) of this piece want logits
            const std::span<float> logits = b > w && !item.logits.empty()
                ? item.logits.subspan(static_cast<size_t>((w - firstWanted) * nVocab),
                                      static_cast<size_t>((b - w) * nVocab))
                : std::span<float>();
            const std::span<int32_t> ids = b > w && !item.ids.empty()
                ? item.ids.subspan(static_cast<size_t>(w - firstWanted), static_cast<size_t>(b - w))
                : std::span<int32_t>();
            const std::span<Backend::TopEntry> top = b > w && item.topK > 0
                ? item.top.subspan(static_cast<size_t>((w - firstWanted) * item.topK),
                                   static_cast<size_t>((b - w) * item.topK))
                : std::span<Backend::TopEntry>();
            const std::span<float> lse = b > w && !item.lse.empty()
                ? item.lse.subspan(static_cast<size_t>(w - firstWanted), static_cast<size_t>(b - w))
                : std::span<float>();
            std::span<const int32_t> parents;
            if (!item.parents.empty()) {
                rebased.emplace_back(item.parents.begin() + a, item.parents.begin() + b);
                for (int32_t& p : rebased.back()) p -= static_cast<int32_t>(a);
                parents = rebased.back();
            }
            pass.push_back({item.seq, item.tokens.subspan(static_cast<size_t>(a), static_cast<size_t>(b - a)), logits,
                            item.offset + static_cast<int32_t>(a), parents, ids, top, top.empty() ? 0 : item.topK,
                            lse});
            room -= b - a;
            a = b;
            if (room > 0) continue;
            if (auto r = forwardBatch(backend, cache, pass); !r) return r;
            pass.clear();
            room = rowsPerPass;
        }
    }
    return pass.empty() ? Result<void>{} : forwardBatch(backend, cache, pass);
}

Result<void> Model::checkItem(const ForwardItem& item) const {
    if (!item.seq) return fail(ErrorCode::InvalidArgument, "no KV sequence");
    if (item.tokens.empty()) return {};
    for (int32_t id : item.tokens)
        if (id < 0 || id >= config_.nVocab)
            return fail(ErrorCode::InvalidArgument, strCat("token id ", id, " outside the vocabulary"));
    const auto nVocab = static_cast<size_t>(config_.nVocab);
    if (item.logits.size() % nVocab != 0 || item.logits.size() / nVocab > item.tokens.size())
        return fail(ErrorCode::InvalidArgument,
                    "logits buffer must hold nVocab floats per row, for at most every token");
    if (!item.ids.empty() && (!item.logits.empty() || item.ids.size() > item.tokens.size()))
        return fail(ErrorCode::InvalidArgument, "an item wants logits or ids, for at most every token");
    if (item.topK != 0 || !item.top.empty()) {
        const size_t rows = item.logits.size() / nVocab;
        if (item.topK < 1 || item.topK > std::min(Backend::kMaxTopK, config_.nVocab) ||
            item.top.size() != rows * static_cast<size_t>(item.topK) || rows == 0)
            return fail(ErrorCode::InvalidArgument,
                        strCat("top logits: ", item.top.size(), " entries of ", item.topK, " a row for ", rows,
                               " rows of logits; 1 to ", std::min(Backend::kMaxTopK, config_.nVocab), " a row"));
    }
    if (!item.lse.empty() && (item.topK == 0 || item.lse.size() != item.logits.size() / nVocab))
        return fail(ErrorCode::InvalidArgument,
                    strCat("log-sum-exps: ", item.lse.size(), " for ", item.logits.size() / nVocab,
                           " rows; one a row, with top logits"));
    if (!item.parents.empty()) {
        if (item.parents.size() != item.tokens.size())
            return fail(ErrorCode::InvalidArgument, "a token tree needs one parent per token");
        const int32_t first = item.seq->nTokens + item.offset;
        for (size_t t = 0; t < item.parents.size(); ++t)
            if (item.parents[t] >= static_cast<int32_t>(t) || first + item.parents[t] < -1)
                return fail(ErrorCode::InvalidArgument,
                            strCat("token ", t, " of a tree has parent ", item.parents[t],
                                   "; a parent is an earlier token of the item or a position before it"));
    }
    return {};
}

}  // namespace hearth
