// Makes a folder this process cannot list: mode 000, and when the tests run as root (CI does),
// the calling thread's effective CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped so that the
// mode applies to it - threads it starts afterwards inherit that (capabilities(7)). Linux only.
#pragma once

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace hearth::test {

inline bool dropFileReadOverride() {
    if (geteuid() != 0) return true;
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    if (syscall(SYS_capget, &header, data) != 0) return false;
    data[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
    return syscall(SYS_capset, &header, data) == 0;
}

// True when the folder now exists and listing it fails.
inline bool makeUnreadable(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::filesystem::permissions(dir, std::filesystem::perms::none, ec);
    if (ec || !dropFileReadOverride()) return false;
    std::filesystem::directory_iterator it(dir, ec);
    return static_cast<bool>(ec);
}

// Gives the folder its mode back (so that the temporary folder can be removed).
inline void makeReadable(const std::filesystem::path& dir) {
    std::error_code ec;
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
}

}  // namespace hearth::test
