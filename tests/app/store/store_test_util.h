// Shared by the store's engine tests: tiny Llama files, engines, greedy generation with all
// logits, a store in a temporary directory.
#pragma once

#include <QtTest>
#include <cmath>
#include <cstring>
#include <limits>

#include "app/store/conversation_store.h"
#include "app/store/kv_block_store.h"
#include "app/store/stored_kv.h"
#include "engine/engine.h"
#include "tests/support/tiny_llama.h"

namespace hearth::test {

inline std::string writeTinyModel(const QString& dir, uint32_t seed) {
    TinyLlamaShape shape;
    shape.seed = seed;
    shape.context = 512;
    const std::string path = (dir + "/tiny-" + QString::number(seed) + ".gguf").toStdString();
    if (!tinyLlama(shape).writeFile(path)) return {};
    return path;
}

inline std::unique_ptr<Engine> loadTiny(const std::string& path, int32_t blockSize = 16) {
    EngineOptions o;
    o.kvBlockSize = blockSize;
    auto e = Engine::load(path, o);
    if (!e) qWarning("%s", e.error().message.c_str());
    return e ? std::move(*e) : nullptr;
}

// Greedy, end-of-generation tokens banned so that every run has n tokens; all logits kept.
inline GenerateResult greedy(Engine& e, const std::vector<TokenId>& prompt, int32_t n) {
    GenerateRequest req;
    req.prompt = prompt;
    req.maxTokens = n;
    req.sampling.temperature = 0;
    for (TokenId id = 0; id < e.tokenizer().nVocab(); ++id)
        if (e.tokenizer().isEndOfGeneration(id))
            req.sampling.logitBias.push_back({id, -std::numeric_limits<float>::infinity()});
    req.nTopLogits = e.config().nVocab;
    auto r = e.generate(req, [](TokenId, std::string_view) { return true; });
    return r ? *r : GenerateResult{};
}

// Every (id, logit) pair identical, logits compared bit for bit.
inline bool bitwiseEqual(const std::vector<std::pair<TokenId, float>>& a,
                         const std::vector<std::pair<TokenId, float>>& b) {
    if (a.size() != b.size() || a.empty()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i].first != b[i].first || std::memcmp(&a[i].second, &b[i].second, sizeof(float)) != 0) return false;
    return true;
}

inline std::vector<TokenId> tinyPrompt(uint32_t seed, int n) {
    std::mt19937 rng(seed);
    std::vector<TokenId> p{1};
    while (std::ssize(p) < n) p.push_back(static_cast<TokenId>(3 + rng() % 256));
    return p;
}

inline std::vector<TokenId> concat(std::vector<TokenId> a, std::span<const TokenId> b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace hearth::test
