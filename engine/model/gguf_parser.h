// Internal to the GGUF reader: parses and validates a GgufFile's bytes into its metadata, tensor
// directory and layout (GGUF spec, docs/gguf.md in ggml). Callers use GgufFile::open/fromBytes.
#pragma once

#include "engine/error.h"
#include "engine/model/gguf.h"
#include "engine/model/gguf_cursor.h"

namespace hearth {

class GgufParser {
public:
    // Reads file.bytes_ and fills every other member of file. On error file is left unusable.
    static Result<void> parse(GgufFile& file);

private:
    static Result<void> parseHeader(GgufFile& file, gguf_detail::Cursor& cursor, uint64_t& nTensors, uint64_t& nKv);
    static Result<void> parseMetadata(GgufFile& file, gguf_detail::Cursor& cursor, uint64_t nKv);
    static Result<void> parseTensorInfos(GgufFile& file, gguf_detail::Cursor& cursor, uint64_t nTensors);
};

}  // namespace hearth
