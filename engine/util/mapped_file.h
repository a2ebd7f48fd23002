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
    // The whole file copied into the process's own memory (2 MiB-aligned, huge pages advised),
    // for data read again and again: a file mapping's 4 KiB pages cost a streaming reader TLB
    // misses (the pack cache's weights decoded ~6% slower mapped). Copied in slices, each
    // released from the mapping after it is copied, so the process holds one copy. Errors:
    // open's, and OutOfMemory. release() is a no-op on the copy.
    static Result<std::unique_ptr<MappedFile>> readIntoMemory(const std::string& path);
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
    uint8_t* heap_ = nullptr;  // readIntoMemory's copy (bytes_ then points into it)
    size_t heapAlignment_ = 0;
};

}  // namespace hearth
