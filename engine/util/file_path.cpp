// UTF-8 paths on every system (file_path.h).
#include "engine/util/file_path.h"

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#endif

namespace hearth {

#if defined(_WIN32)

std::wstring widen(const std::string& utf8) {
    if (utf8.empty()) return {};
    const int n = MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
    std::wstring out(static_cast<size_t>(n), L'\0');
    MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), out.data(), n);
    return out;
}

std::string narrow(const std::wstring& wide) {
    if (wide.empty()) return {};
    const int n =
        WideCharToMultiByte(CP_UTF8, 0, wide.data(), static_cast<int>(wide.size()), nullptr, 0, nullptr, nullptr);
    std::string out(static_cast<size_t>(n), '\0');
    WideCharToMultiByte(CP_UTF8, 0, wide.data(), static_cast<int>(wide.size()), out.data(), n, nullptr, nullptr);
    return out;
}

std::wstring widePath(const std::string& path) {
    std::wstring w = widen(path);
    // Short paths go as they are (relative ones stay relative); CreateDirectoryW's limit is
    // MAX_PATH - 12, hence the margin.
    if (w.size() < MAX_PATH - 12 || w.starts_with(L"\\\\?\\")) return w;
    const DWORD n = GetFullPathNameW(w.c_str(), 0, nullptr, nullptr);
    if (n == 0) return w;
    std::wstring full(n, L'\0');
    const DWORD written = GetFullPathNameW(w.c_str(), n, full.data(), nullptr);
    if (written == 0 || written >= n) return w;
    full.resize(written);
    for (wchar_t& c : full)
        if (c == L'/') c = L'\\';
    if (full.starts_with(L"\\\\")) return L"\\\\?\\UNC\\" + full.substr(2);  // \\server\share
    return L"\\\\?\\" + full;
}

std::FILE* openFile(const std::string& path, const char* mode) {
    return _wfopen(widePath(path).c_str(), widen(mode).c_str());
}

std::filesystem::path fsPath(const std::string& path) { return std::filesystem::path(widePath(path)); }

#else

std::FILE* openFile(const std::string& path, const char* mode) { return std::fopen(path.c_str(), mode); }

std::filesystem::path fsPath(const std::string& path) { return std::filesystem::path(path); }

#endif

bool readWholeFile(const std::string& path, std::string& out) {
    std::FILE* f = openFile(path, "rb");
    if (f == nullptr) return false;
    std::string text;
    char buf[65536];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    const bool ok = std::ferror(f) == 0;
    std::fclose(f);
    if (ok) out = std::move(text);
    return ok;
}

}  // namespace hearth
