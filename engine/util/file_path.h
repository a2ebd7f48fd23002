// Opening files by UTF-8 path on every system. On Windows a narrow fopen() or
// std::filesystem::path(std::string) reads the path in the ANSI code page, so a model under
// "C:\Users\Zoë Li\模型" would not open; these helpers widen the path (UTF-8 -> UTF-16) and use
// the wide APIs, with the \\?\ prefix on long absolute paths (beyond MAX_PATH). Elsewhere they
// are the plain calls.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

namespace hearth {

// fopen(path, mode) for a UTF-8 path; mode as fopen's ("rb", "wb").
[[nodiscard]] std::FILE* openFile(const std::string& path, const char* mode);
// The whole file into out; false when it cannot be opened or read.
[[nodiscard]] bool readWholeFile(const std::string& path, std::string& out);
// A std::filesystem::path of a UTF-8 path.
[[nodiscard]] std::filesystem::path fsPath(const std::string& path);

#if defined(_WIN32)
// UTF-8 -> UTF-16 (invalid sequences become U+FFFD) and back.
[[nodiscard]] std::wstring widen(const std::string& utf8);
[[nodiscard]] std::string narrow(const std::wstring& wide);
// The wide form of a path for CreateFileW and the other wide calls: a path longer than
// MAX_PATH - 12 becomes an absolute \\?\ (or \\?\UNC\) path with backslashes.
[[nodiscard]] std::wstring widePath(const std::string& path);
#endif

}  // namespace hearth
