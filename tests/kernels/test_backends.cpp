// The backend registry: the CPU reference is always there; CUDA says why it is unavailable
// in a build without the toolkit (the CUDA parity tests arrive with the CUDA issue).
#include <QLibrary>
#include <QtTest>

#include "kernels/backend.h"
#include "kernels/cuda/cuda_start_error.h"

using namespace hearth;

class TestBackends : public QObject {
    Q_OBJECT
private slots:
    void listsEveryBackendWithAReason() {
        const std::vector<BackendInfo> list = listBackends();
        bool haveReference = false, haveCuda = false;
        for (const BackendInfo& b : list) {
            if (b.name == "CPU (reference)") haveReference = b.available;
            if (b.name == "CUDA") {
                haveCuda = true;
                if (!b.available) QVERIFY(!b.reason.empty());
            }
            if (!b.available) QVERIFY2(!b.reason.empty(), b.name.c_str());
        }
        QVERIFY(haveReference);
        QVERIFY(haveCuda);
    }
    // The reason CUDA cannot start names the cause a user can act on; the runtime's own text
    // ("CUDA driver version is insufficient for CUDA runtime version") only for other errors.
    void cudaStartErrorsInPlainWords() {
        const std::string text = "CUDA driver version is insufficient for CUDA runtime version";
        QCOMPARE(describeCudaStartError(35, 0, 13000, text), std::string("no NVIDIA driver is installed"));
        QCOMPARE(describeCudaStartError(34, 0, 13000, "stub"), std::string("no NVIDIA driver is installed"));
        QCOMPARE(
            describeCudaStartError(35, 12040, 13000, text),
            std::string("the NVIDIA driver supports CUDA 12.4, older than this build's CUDA 13.0: update the driver"));
        QCOMPARE(describeCudaStartError(100, 13000, 13000, "no CUDA-capable device is detected"),
                 std::string("no NVIDIA GPU was found"));
        QCOMPARE(describeCudaStartError(999, 13000, 13000, "unknown error"),
                 std::string("CUDA cannot start: unknown error (error 999)"));
#if defined(__linux__)
        // This machine kind has the CUDA libraries but no driver: the listed reason says so.
        if (QFile::exists("/dev/nvidiactl")) return;
        for (const BackendInfo& b : listBackends())
            if (b.name == "CUDA" && !b.available && b.reason.find("cannot load the CUDA plugin") == std::string::npos &&
                b.reason.find("not compiled with CUDA") == std::string::npos)
                QVERIFY2(b.reason.find("no NVIDIA driver is installed") != std::string::npos, b.reason.c_str());
#endif
    }
    // The loader's own look at the driver (issue 27): no driver, no device, a driver of an older
    // CUDA major version than the build; a fine driver and device leave the cause to the probe.
    void cudaProblemFromDriverFacts() {
        QCOMPARE(cudaProblem({}), BackendProblem::NoDriver);
        QCOMPARE(cudaProblem({.driverLoaded = true, .initStatus = 100, .driverVersion = 13000}),
                 BackendProblem::NoDevice);
        QCOMPARE(cudaProblem({.driverLoaded = true, .initStatus = 0, .driverVersion = 13000, .deviceCount = 0}),
                 BackendProblem::NoDevice);
        QCOMPARE(cudaProblem({.driverLoaded = true,
                              .initStatus = 0,
                              .driverVersion = 12040,
                              .deviceCount = 1,
                              .buildVersion = 13000}),
                 BackendProblem::DriverTooOld);
        // Minor versions are compatible within a major version.
        QCOMPARE(cudaProblem({.driverLoaded = true,
                              .initStatus = 0,
                              .driverVersion = 13000,
                              .deviceCount = 1,
                              .buildVersion = 13010}),
                 BackendProblem::None);
        QCOMPARE(cudaProblem({.driverLoaded = true, .initStatus = 999, .driverVersion = 13000}), BackendProblem::Other);
#if defined(__linux__)
        // A machine without the NVIDIA kernel driver and its libcuda: the CUDA entry says NoDriver
        // (unless this build has no CUDA at all), whatever the runtime's own error was.
        if (QFile::exists("/proc/driver/nvidia/version") || QLibrary("libcuda.so.1").load()) return;
        for (const BackendInfo& b : listBackends())
            if (b.name == "CUDA" && b.problem != BackendProblem::NotBuilt) {
                QVERIFY(!b.available);
                QCOMPARE(b.problem, BackendProblem::NoDriver);
            }
#endif
    }
    // Without the NVIDIA driver the CUDA plugin is not even loaded: loading it mapped cuBLAS,
    // 150-190 MiB of resident memory and 60 ms at every start, only to learn there was no driver.
    void noDriverLoadsNoPlugin() {
#if defined(__linux__)
        if (QFile::exists("/proc/driver/nvidia/version") || QLibrary("libcuda.so.1").load())
            QSKIP("this machine has the NVIDIA driver");
        for (const BackendInfo& b : listBackends())
            if (b.name == "CUDA" && b.problem != BackendProblem::NotBuilt)
                QCOMPARE(QString::fromStdString(b.reason), QString("no NVIDIA driver is installed"));
        QFile maps("/proc/self/maps");
        QVERIFY(maps.open(QIODevice::ReadOnly));
        const QByteArray mapped = maps.readAll();
        QVERIFY2(!mapped.contains("libhearth_cuda") && !mapped.contains("libcublas"), "the CUDA plugin was loaded");
#else
        QSKIP("Linux only");
#endif
    }
    void referenceOpsOnFixedInputs() {
        auto be = makeCpuReferenceBackend();
        const float x[4] = {1, 2, 3, 4}, w[4] = {1, 1, 1, 2};
        float y[4];
        be->rmsNorm(x, w, 1, 4, 0.0f, y);
        const float rms = std::sqrt(30.0f / 4.0f);
        QVERIFY(std::abs(y[3] - 8.0f / rms) < 1e-6f);
        // RoPE at position 0 is the identity; pairwise at position 1 rotates (x0, x1) by 1 rad.
        float q[4] = {1, 0, 1, 0};
        const int32_t p0[1] = {0}, p1[1] = {1};
        be->rope(q, 1, 1, 4, 4, p0, 10000.0f, RopeStyle::Pairwise, nullptr);
        QCOMPARE(q[0], 1.0f);
        be->rope(q, 1, 1, 4, 4, p1, 10000.0f, RopeStyle::Pairwise, nullptr);
        QVERIFY(std::abs(q[0] - std::cos(1.0f)) < 1e-6f && std::abs(q[1] - std::sin(1.0f)) < 1e-6f);
        float h[4] = {1, 0, 0, 0};  // half-split pairs (x0, x2): rotated by 1 rad too
        be->rope(h, 1, 1, 4, 4, p1, 10000.0f, RopeStyle::HalfSplit, nullptr);
        QVERIFY(std::abs(h[2] - std::sin(1.0f)) < 1e-6f && h[1] == 0.0f);
        const float g[2] = {0.0f, 2.0f}, u[2] = {5.0f, 1.0f};
        float s[2];
        be->swiglu(g, u, 2, s);
        QCOMPARE(s[0], 0.0f);
        QVERIFY(std::abs(s[1] - 2.0f / (1.0f + std::exp(-2.0f))) < 1e-6f);
    }
};

QTEST_APPLESS_MAIN(TestBackends)
#include "test_backends.moc"
