// Draft length from acceptance; on/off from measured ms per output token with and without.
#include "engine/spec/spec_policy.h"

#include <algorithm>

namespace hearth {

SpecPolicy::SpecPolicy(SpecPolicyConfig config) : config_(config) {
    config_.maxDraft = std::max(1, config_.maxDraft);
    length_ = std::min(4, config_.maxDraft);
}

int32_t SpecPolicy::draftLength() const {
    if (!active_) return 0;
    // Plain speed is measured first (two steps), then now and then while speculating.
    if (config_.allowSwitchOff && (nPlain_ < 2 || stepsSinceProbe_ >= config_.plainProbeEvery)) return 0;
    return length_;
}

void SpecPolicy::recordStep(int32_t nDrafted, int32_t nAccepted, int32_t nOutput, double ms) {
    if (nDrafted == 0) {
        plainMs_.push_back(ms);
        if (plainMs_.size() > 8) plainMs_.pop_front();
        ++nPlain_;
        stepsSinceProbe_ = 0;
        return;
    }
    ++stepsSinceProbe_;
    length_ = nAccepted == nDrafted ? std::min(length_ + 2, config_.maxDraft) : std::max(1, nAccepted + 1);
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
