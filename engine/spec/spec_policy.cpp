// Draft length from acceptance; on/off from measured ms per output token with and without.
#include "engine/spec/spec_policy.h"

#include <algorithm>

namespace hearth {

SpecPolicy::SpecPolicy(SpecPolicyConfig config) : config_(config) {
    config_.maxDraft = std::max(1, config_.maxDraft);
    length_ = std::min(4, config_.maxDraft);
    config_.maxTreeNodes = std::max(0, config_.maxTreeNodes);
    if (config_.maxTreeNodes > 0) width_ = config_.allowSwitchOff ? 0 : config_.maxTreeNodes;
}

int32_t SpecPolicy::treeNodes() const {
    const int32_t length = draftLength();
    if (length == 0 || config_.maxTreeNodes == 0) return length;
    const int32_t width = width_ > 0 ? width_ : (linearSinceProbe_ >= config_.treeProbeEvery ? 2 : 0);
    return std::max(length, std::min(config_.maxTreeNodes, length + width));
}

void SpecPolicy::recordTree(int32_t nNodes, int32_t nFirstPath, int32_t gain) {
    if (config_.maxTreeNodes == 0) return;
    if (nNodes <= nFirstPath) {
        ++linearSinceProbe_;
        return;
    }
    linearSinceProbe_ = 0;
    ++treeSteps_;
    treeGain_ += gain;
    treeExtraRows_ += nNodes - nFirstPath;
    if (treeSteps_ < config_.treeWindow) return;
    if (config_.allowSwitchOff) {
        // A token kept saves about a plain step's time; an extra row costs rowMs().
        const double tokenMs = plainMsPerToken() > 0 ? plainMsPerToken() : specMsPerToken();
        const double row = rowMs();
        const bool pays = row <= 0.0 ? treeGain_ > 0 : treeGain_ * tokenMs > treeExtraRows_ * row;
        width_ = pays ? std::min(std::max(2, 2 * width_), config_.maxTreeNodes) : width_ / 2;
        if (width_ == 1) width_ = 0;
    }
    treeSteps_ = 0;
    treeGain_ = treeExtraRows_ = 0;
}

double SpecPolicy::rowMs() const {
    const double n = static_cast<double>(rowTimes_.size());
    if (n < 2) return 0.0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const auto& [rows, ms] : rowTimes_) {
        sx += rows, sy += ms, sxx += double{1.0} * rows * rows, sxy += rows * ms;
    }
    const double var = sxx - sx * sx / n;
    if (var <= 1e-9) return 0.0;
    return std::max(0.0, (sxy - sx * sy / n) / var);
}

int32_t SpecPolicy::draftLength() const {
    if (!active_) return 0;
    // Plain speed is measured first (two steps), then now and then while speculating.
    if (config_.allowSwitchOff && (nPlain_ < 2 || stepsSinceProbe_ >= config_.plainProbeEvery)) return 0;
    return length_;
}

void SpecPolicy::recordStep(int32_t nDrafted, int32_t nAccepted, int32_t nOutput, double ms, bool allKept) {
    rowTimes_.emplace_back(1 + nDrafted, ms);
    if (rowTimes_.size() > 32) rowTimes_.pop_front();
    if (nDrafted == 0) {
        plainMs_.push_back(ms);
        if (plainMs_.size() > 8) plainMs_.pop_front();
        ++nPlain_;
        stepsSinceProbe_ = 0;
        return;
    }
    ++stepsSinceProbe_;
    length_ = allKept ? std::min(length_ + 2, config_.maxDraft) : std::max(1, nAccepted + 1);
    ++specSteps_;
    specMs_ += ms;
    specTokens_ += nOutput;
    if (specSteps_ >= config_.window) judge();
}

double SpecPolicy::plainMsPerToken() const {
    return plainMs_.empty() ? 0.0 : *std::min_element(plainMs_.begin(), plainMs_.end());
}

void SpecPolicy::judge() {
    if (config_.allowSwitchOff && nPlain_ > 0 && specMsPerToken() > plainMsPerToken()) {
        active_ = false;
        ++nOff_;
        guesses_.clear();
    }
    specSteps_ = 0;
    specMs_ = specTokens_ = 0.0;
}

void SpecPolicy::recordGuess(bool hit) {
    if (active_) return;
    guesses_.push_back(hit);
    if (std::ssize(guesses_) > config_.repeatWindow) guesses_.pop_front();
    if (std::count(guesses_.begin(), guesses_.end(), true) >= config_.repeatHits) switchOn();
}

void SpecPolicy::switchOn() {
    active_ = true;
    ++nOn_;
    length_ = std::min(4, config_.maxDraft);
    guesses_.clear();
    specSteps_ = 0;
    specMs_ = specTokens_ = 0.0;
}

}  // namespace hearth
