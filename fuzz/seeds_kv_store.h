// make_seeds' seeds for the kv_import and store fuzz targets (seeds_kv_store.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hearth::fuzz {

struct Seed {
    std::string name;
    std::vector<uint8_t> bytes;
};

// (target, its seeds), each seed written by Hearth's own code.
std::vector<std::pair<std::string, std::vector<Seed>>> kvAndStoreSeeds();

}  // namespace hearth::fuzz
