// Loads the CUDA plugin at run time (dlopen) so that Hearth starts where CUDA is absent:
// looks next to the executable and in ../lib/hearth (install and build tree), and
// keeps the first reason it could not load (dlerror text) for the backend list.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_start_error.h"
#include "kernels/cuda/plugin_api.h"

namespace hearth {
namespace {

constexpr const char* kPluginFile = "libhearth_cuda.so";

struct Plugin {
    HearthCudaProbeFn probe = nullptr;
    HearthCudaCreateFn create = nullptr;
    HearthCudaBandwidthFn bandwidth = nullptr;
    HearthCudaMatvecFn matvec = nullptr;
    CudaDriverFacts driver;  // read once, before the plugin
    std::string error;  // why it did not load; empty when loaded
};

std::filesystem::path executableDir() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path() : exe.parent_path();
}

// HEARTH_CUDA_PLUGIN (a file) first, then next to the executable, then <prefix>/lib/hearth
// (the install layout, and the build tree's: executables one folder below lib/hearth).
std::vector<std::filesystem::path> candidates() {
    std::vector<std::filesystem::path> out;
    if (const char* env = std::getenv("HEARTH_CUDA_PLUGIN"); env != nullptr && *env != '\0') out.emplace_back(env);
    const auto dir = executableDir();
    if (!dir.empty()) {
        out.push_back(dir / kPluginFile);
        out.push_back(dir.parent_path() / "lib" / "hearth" / kPluginFile);
    }
    return out;
}

template <class Fn>
bool bind(void* handle, const char* symbol, Fn& fn, std::string& error) {
    fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
    if (fn == nullptr) error = std::string("the CUDA plugin lacks ") + symbol;
    return fn != nullptr;
}

// The driver API's own answers, through dlopen (no CUDA header: these four functions' C ABI is
// stable, cuda.h), read once before the plugin: whether there is a driver at all, and what is
// missing when the plugin cannot start.
CudaDriverFacts readDriverFacts() {
    CudaDriverFacts f;
#if defined(HEARTH_CUDA_BUILD_VERSION)
    f.buildVersion = HEARTH_CUDA_BUILD_VERSION;
#endif
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);  // kept: the plugin uses it too
    if (lib == nullptr) return f;
    f.driverLoaded = true;
    using InitFn = int (*)(unsigned);
    using IntOutFn = int (*)(int*);
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
    auto version = reinterpret_cast<IntOutFn>(dlsym(lib, "cuDriverGetVersion"));
    auto count = reinterpret_cast<IntOutFn>(dlsym(lib, "cuDeviceGetCount"));
    if (version != nullptr && version(&f.driverVersion) != 0) f.driverVersion = 0;
    if (init == nullptr) return f;
    f.initStatus = init(0);
    if (f.initStatus == 0 && count != nullptr && count(&f.deviceCount) != 0) f.deviceCount = -1;
    return f;
}

Plugin load() {
    Plugin p;
    // Without the NVIDIA driver the plugin could only say so, after mapping cuBLAS: 140-190 MiB
    // of resident memory (its code and relocated data) on every machine without an NVIDIA GPU.
    // The driver's library decides first.
    p.driver = readDriverFacts();
    if (!p.driver.driverLoaded) {
        p.error = "no NVIDIA driver is installed";
        return p;
    }
    for (const auto& path : candidates()) {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) continue;
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
            const char* e = dlerror();
            p.error = std::string("cannot load the CUDA plugin: ") + (e != nullptr ? e : path.string());
            return p;
        }
        HearthCudaAbiFn abi = nullptr;
        if (!bind(handle, "hearth_cuda_abi", abi, p.error)) return p;
        if (abi() != HEARTH_CUDA_PLUGIN_ABI) {
            p.error = "the CUDA plugin " + path.string() + " is from another Hearth version";
            return p;
        }
        if (bind(handle, "hearth_cuda_probe", p.probe, p.error) &&
            bind(handle, "hearth_cuda_create", p.create, p.error))
            if (bind(handle, "hearth_cuda_read_bandwidth", p.bandwidth, p.error))
                bind(handle, "hearth_cuda_matvec_bandwidth", p.matvec, p.error);
        return p;
    }
    p.error = std::string("the CUDA plugin ") + kPluginFile +
        " is not installed (looked next to the executable and in lib/hearth)";
    return p;
}

// Loaded once, never unloaded: backends created from it may live until exit.
const Plugin& plugin() {
    static const Plugin p = load();
    return p;
}

// The plugin's reason as a value: the driver's facts, else Other (its words say why).
BackendProblem problemOf() {
    const BackendProblem p = cudaProblem(plugin().driver);
    return p == BackendProblem::None ? BackendProblem::Other : p;
}

}  // namespace

CudaProbe probeCuda() {
    const Plugin& p = plugin();
    if (!p.error.empty()) return {false, p.error, "", problemOf()};
    char device[256] = {}, why[512] = {};
    if (p.probe(device, sizeof device, why, sizeof why) == 0) return {false, why, "", problemOf()};
    return {true, "", device, BackendProblem::None};
}

std::unique_ptr<Backend> makeCudaBackend(std::string* whyNot) {
    const Plugin& p = plugin();
    std::string reason = p.error;
    Backend* backend = nullptr;
    if (reason.empty()) {
        char why[512] = {};
        backend = p.create(why, sizeof why);
        if (backend == nullptr) reason = why;
    }
    if (backend == nullptr && whyNot != nullptr) *whyNot = reason;
    return std::unique_ptr<Backend>(backend);
}

double measureCudaReadBandwidth(size_t bytes, std::string* whyNot) {
    const Plugin& p = plugin();
    if (!p.error.empty()) {
        if (whyNot != nullptr) *whyNot = p.error;
        return 0.0;
    }
    char why[512] = {};
    const double gbps = p.bandwidth(bytes, why, sizeof why);
    if (gbps < 0.0 && whyNot != nullptr) *whyNot = why;
    return gbps < 0.0 ? 0.0 : gbps;
}

double measureCudaMatvec(int dtype, long long rows, long long cols, std::string* whyNot) {
    const Plugin& p = plugin();
    if (!p.error.empty()) {
        if (whyNot != nullptr) *whyNot = p.error;
        return 0.0;
    }
    char why[512] = {};
    const double gbps = p.matvec(dtype, rows, cols, why, sizeof why);
    if (gbps < 0.0 && whyNot != nullptr) *whyNot = why;
    return gbps < 0.0 ? 0.0 : gbps;
}

}  // namespace hearth
