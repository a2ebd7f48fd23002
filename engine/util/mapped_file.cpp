// MappedFile's two implementations: POSIX (open, fstat, mmap) and Win32 (CreateFileW,
// CreateFileMappingW, MapViewOfFile). The file handle is closed once mapped: the view keeps
// the file's pages.
#include "engine/util/mapped_file.h"

#include "engine/util/file_path.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#ifndef NOMINMAX  // libstdc++'s mingw configuration defines it already
#define NOMINMAX
#endif
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace hearth {

namespace {

std::unexpected<Error> mapError(const std::string& what, const std::string& path, const std::string& reason) {
    return fail(ErrorCode::Io, "cannot " + what + " '" + path + "': " + reason);
}

}  // namespace

#if defined(_WIN32)

namespace {

std::string lastErrorText() {
    const DWORD code = GetLastError();
    // The wide call: a localized Windows' message in UTF-8, not in the ANSI code page.
    wchar_t text[512] = {};
    const DWORD n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0, text,
                                   sizeof text / sizeof text[0], nullptr);
    std::string out = narrow(std::wstring(text, n));
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == '.')) out.pop_back();
    return out.empty() ? "error " + std::to_string(code) : out;
}

}  // namespace

Result<std::unique_ptr<MappedFile>> MappedFile::open(const std::string& path) {
    // Wide and, beyond MAX_PATH, \\?\-prefixed (file_path.h): any name the user's folders have.
    HANDLE file = CreateFileW(widePath(path).c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr, OPEN_EXISTING,
                              FILE_ATTRIBUTE_NORMAL, nullptr);
    if (file == INVALID_HANDLE_VALUE) return mapError("open", path, lastErrorText());
    LARGE_INTEGER size{};
    if (GetFileType(file) != FILE_TYPE_DISK || !GetFileSizeEx(file, &size)) {
        CloseHandle(file);
        return fail(ErrorCode::Io, "'" + path + "' is not a regular file");
    }
    std::unique_ptr<MappedFile> mapped(new (std::nothrow) MappedFile());
    if (!mapped) {
        CloseHandle(file);
        return fail(ErrorCode::OutOfMemory, "out of memory");
    }
    if (size.QuadPart > 0) {  // a mapping of 0 bytes fails; an empty file is an empty span
        HANDLE mapping = CreateFileMappingW(file, nullptr, PAGE_READONLY, 0, 0, nullptr);
        void* view = mapping ? MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0) : nullptr;
        const std::string reason = view ? std::string() : lastErrorText();
        if (mapping) CloseHandle(mapping);
        if (!view) {
            CloseHandle(file);
            return mapError("map", path, reason);
        }
        mapped->mapping_ = view;
        mapped->bytes_ = {static_cast<const uint8_t*>(view), static_cast<size_t>(size.QuadPart)};
    }
    CloseHandle(file);
    return mapped;
}

MappedFile::~MappedFile() {
    if (mapping_ != nullptr) UnmapViewOfFile(mapping_);
    if (heap_ != nullptr) ::operator delete[](heap_, std::align_val_t{heapAlignment_});
}

void MappedFile::release(std::span<const uint8_t>) const {}

#else

Result<std::unique_ptr<MappedFile>> MappedFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return mapError("open", path, std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const auto error = mapError("stat", path, std::strerror(errno));
        ::close(fd);
        return error;
    }
    if (!S_ISREG(st.st_mode)) {
        ::close(fd);
        return fail(ErrorCode::Io, "'" + path + "' is not a regular file");
    }
    std::unique_ptr<MappedFile> mapped(new (std::nothrow) MappedFile());
    if (!mapped) {
        ::close(fd);
        return fail(ErrorCode::OutOfMemory, "out of memory");
    }
    const auto size = static_cast<size_t>(st.st_size);
    if (size > 0) {  // mmap of 0 bytes fails; an empty file is an empty span
        void* view = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (view == MAP_FAILED) {
            const auto error = mapError("map", path, std::strerror(errno));
            ::close(fd);
            return error;
        }
        mapped->mapping_ = view;
        mapped->bytes_ = {static_cast<const uint8_t*>(view), size};
    }
    ::close(fd);
    return mapped;
}

MappedFile::~MappedFile() {
    if (mapping_ != nullptr) ::munmap(mapping_, bytes_.size());
    if (heap_ != nullptr) ::operator delete[](heap_, std::align_val_t{heapAlignment_});
}

void MappedFile::release(std::span<const uint8_t> range) const {
    if (heap_ != nullptr) return;  // a copy: dropping its pages would lose the bytes
    const auto begin = reinterpret_cast<uintptr_t>(range.data()), end = begin + range.size();
    const auto mapBegin = reinterpret_cast<uintptr_t>(bytes_.data()), mapEnd = mapBegin + bytes_.size();
    if (range.empty() || begin < mapBegin || end > mapEnd) return;
    const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;
    if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

#endif

Result<std::unique_ptr<MappedFile>> MappedFile::readIntoMemory(const std::string& path) {
    auto mapped = open(path);
    if (!mapped) return mapped;
    const std::span<const uint8_t> src = (*mapped)->bytes();
    std::unique_ptr<MappedFile> copy(new (std::nothrow) MappedFile());
    if (!copy) return fail(ErrorCode::OutOfMemory, "out of memory");
    if (src.empty()) return copy;
    constexpr size_t kHuge = size_t{2} << 20;
    const size_t alignment = src.size() >= kHuge ? kHuge : 64;
    auto* p = static_cast<uint8_t*>(::operator new[](src.size(), std::align_val_t{alignment}, std::nothrow));
    if (!p)
        return fail(ErrorCode::OutOfMemory,
                    "out of memory reading '" + path + "' (" + std::to_string(src.size()) + " bytes)");
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (alignment == kHuge) ::madvise(p, src.size() / kHuge * kHuge, MADV_HUGEPAGE);  // advice: failure is harmless
#endif
    // In slices, each dropped from the mapping once copied: the process never holds both copies.
    constexpr size_t kSlice = size_t{16} << 20;
    for (size_t at = 0; at < src.size(); at += kSlice) {
        const size_t n = std::min(kSlice, src.size() - at);
        std::memcpy(p + at, src.data() + at, n);
        (*mapped)->release(src.subspan(at, n));
    }
    copy->heap_ = p;
    copy->heapAlignment_ = alignment;
    copy->bytes_ = {p, src.size()};
    return copy;
}

}  // namespace hearth
