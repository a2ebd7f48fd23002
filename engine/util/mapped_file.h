// MappedFile: a whole regular file mapped read-only into memory (POSIX mmap, Win32
// CreateFileMapping), so that code above it (the GGUF reader) stays free of OS calls.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "engine/error.h"

namespace hearth {

class MappedFile {
public:
    // Maps the file at path (UTF-8). Errors: Io, with a one-line message naming the step that
    // failed ("open", "stat", "map") and the system's reason; a path that is not a regular file
    // is Io too. An empty file maps to an empty span.
    static Result<std::unique_ptr<MappedFile>> open(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    // Valid while this object lives; any thread may read it.
    std::span<const uint8_t> bytes() const { return bytes_; }
    // Drops the whole pages of range that lie in this mapping from the process's memory (they
    // are read from the file again when touched; the mapping is read-only, so nothing is lost).
    // Other bytes are ignored. No-op on Windows.
    void release(std::span<const uint8_t> range) const;

private:
    MappedFile() = default;
    std::span<const uint8_t> bytes_;
    void* mapping_ = nullptr;  // the view's base address (nullptr for an empty file)
};

}  // namespace hearth
