// The attention softmax's exponential (kernels/cpu/reference/softmax_exp.h): within 2 ulp of the
// correctly rounded exp over [-87, 0], 1 at 0, 0 below the range and for NaN, and the AVX2 lanes
// give the reference's bits for every input tried.
#include <QTest>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/reference/softmax_exp.h"

namespace hearth::test {
void softmaxExpLanes(const float* x, float* y, int n);  // softmax_exp_lanes.cpp
}

using namespace hearth;

namespace {

// Every `step`-th float of [-87, 0] (bit patterns from -0 up to -87), and the ends.
std::vector<float> sweep(uint32_t step) {
    std::vector<float> xs;
    const uint32_t last = std::bit_cast<uint32_t>(softmax_exp::kMin);
    for (uint64_t b = 0x80000000u; b <= last; b += step) xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
    xs.push_back(softmax_exp::kMin);
    while (xs.size() % 8 != 0) xs.push_back(-1.0f);
    return xs;
}

// Distance in units in the last place between two positive finite floats.
int64_t ulps(float a, float b) {
    return std::abs(static_cast<int64_t>(std::bit_cast<uint32_t>(a)) -
                    static_cast<int64_t>(std::bit_cast<uint32_t>(b)));
}

}  // namespace

class TestSoftmaxExp : public QObject {
    Q_OBJECT
private slots:
    void withinTwoUlpOfExp() {
        int64_t worst = 0;
        float worstX = 0;
        for (float x : sweep(1021)) {
            const float want = static_cast<float>(std::exp(static_cast<double>(x)));
            const int64_t d = ulps(softmaxExp(x), want);
            if (d > worst) worst = d, worstX = x;
        }
        qInfo("largest error over [-87, 0]: %lld ulp (x = %.9g)", static_cast<long long>(worst), worstX);
        QVERIFY2(worst <= 2, qPrintable(QString("x = %1: %2 ulp").arg(worstX, 0, 'g', 9).arg(worst)));
    }

    void edges() {
        QCOMPARE(std::bit_cast<uint32_t>(softmaxExp(0.0f)), std::bit_cast<uint32_t>(1.0f));
        QCOMPARE(std::bit_cast<uint32_t>(softmaxExp(-0.0f)), std::bit_cast<uint32_t>(1.0f));
        for (float x : {-87.0001f, -88.0f, -1e30f, -std::numeric_limits<float>::infinity(), std::nanf("")})
            QCOMPARE(softmaxExp(x), 0.0f);
        QVERIFY(softmaxExp(softmax_exp::kMin) > 0.0f);
        QVERIFY(softmaxExp(softmax_exp::kMin) >= std::numeric_limits<float>::min());  // normal, not subnormal
    }

    void lanesAreBitwiseReference() {
        if (!cpuFeatures().canRunAvx2()) QSKIP("no AVX2/FMA/F16C on this CPU");
        std::vector<float> xs = sweep(509);
        for (float x :
             {-87.0001f, -1e30f, -std::numeric_limits<float>::infinity(), std::nanf(""), 0.0f, -0.0f, 0.5f, 3.0f})
            xs.push_back(x);
        while (xs.size() % 8 != 0) xs.push_back(0.0f);
        std::vector<float> got(xs.size());
        test::softmaxExpLanes(xs.data(), got.data(), static_cast<int>(xs.size()));
        for (size_t i = 0; i < xs.size(); ++i)
            if (std::bit_cast<uint32_t>(got[i]) != std::bit_cast<uint32_t>(softmaxExp(xs[i])))
                QFAIL(qPrintable(QString("x = %1: lanes %2, reference %3")
                                     .arg(xs[i], 0, 'g', 9)
                                     .arg(got[i], 0, 'g', 9)
                                     .arg(softmaxExp(xs[i]), 0, 'g', 9)));
    }
};

QTEST_APPLESS_MAIN(TestSoftmaxExp)
#include "test_softmax_exp.moc"
