// hearth-cli of the Qt-free build (hearth-cli.exe for Windows): the composition root of the core
// commands. On Windows the arguments are read as UTF-16 (GetCommandLineW) and passed on as
// UTF-8, so that a path such as C:\Users\Zoë Li\模型\model.gguf reaches the engine whole
// whatever the ANSI code page; output is written as bytes (UTF-8, "\n" line ends).
#include <string>
#include <vector>

#include "app/cli_core/core_commands.h"

#if defined(_WIN32)
#define WIN32_LEAN_AND_MEAN
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// shellapi.h needs windows.h first.
#include <fcntl.h>
#include <io.h>
#include <shellapi.h>

#include <cstdio>

#include "engine/util/file_path.h"
#endif

int main(int argc, char** argv) {
    std::vector<std::string> args;
#if defined(_WIN32)
    (void)argc;
    (void)argv;
    int n = 0;
    wchar_t** wide = CommandLineToArgvW(GetCommandLineW(), &n);
    for (int i = 1; wide != nullptr && i < n; ++i) args.push_back(hearth::narrow(wide[i]));
    if (wide != nullptr) LocalFree(wide);
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
    SetConsoleOutputCP(CP_UTF8);
#else
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
#endif
    return hearth::cli::core::runCoreCli(args);
}
