// The backend registry: the CPU reference is always there; CUDA says why it is unavailable
// in a build without the toolkit (the CUDA parity tests arrive with the CUDA issue).
#include <QtTest>

#include "kernels/backend.h"

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
