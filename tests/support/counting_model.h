// A Model that counts its forwardBatch calls and their items and passes them to a real model:
// tests check that a runner makes one batched forward pass per step.
#pragma once

#include <span>
#include <vector>

#include "engine/model/model.h"

namespace hearth::test {

class CountingModel final : public Model {
public:
    explicit CountingModel(Model& inner) : inner_(inner) { config_ = inner.config(); }
    Result<void> forwardBatch(Backend& b, KvCache& cache, std::span<const ForwardItem> items) override {
        itemsPerCall.push_back(static_cast<int>(items.size()));
        return inner_.forwardBatch(b, cache, items);
    }
    std::vector<int> itemsPerCall;  // items of each call, in order

private:
    Model& inner_;
};

}  // namespace hearth::test
