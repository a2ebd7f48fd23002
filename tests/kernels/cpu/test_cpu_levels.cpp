// HEARTH_CPU: names, capping at what the host runs, the switches the AVX2 backend reads, the
// reference fallback's note, and CPUID's reading against the kernel's (/proc/cpuinfo).
#include <QTest>

#include <fstream>
#include <string>

#include "kernels/backend.h"
#include "kernels/cpu/cpu_features.h"
#include "tests/support/scoped_env.h"

using namespace hearth;
using hearth::test::ScopedEnv;

namespace {

// The flags line of /proc/cpuinfo with a space at each end, or "" where there is none.
std::string procCpuFlags() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line))
        if (line.rfind("flags", 0) == 0) return " " + line + " ";
    return "";
}

}  // namespace

class TestCpuLevels : public QObject {
    Q_OBJECT
private slots:
    void namesRoundTrip() {
        for (CpuLevel l : kCpuLevels) {
            CpuLevel parsed = CpuLevel::Reference;
            QVERIFY(parseCpuLevel(cpuLevelName(l), &parsed));
            QCOMPARE(parsed, l);
        }
        CpuLevel parsed = CpuLevel::Avx2;
        QVERIFY(!parseCpuLevel("avx3", &parsed));
        QVERIFY(!parseCpuLevel("", &parsed));
        QVERIFY(!parseCpuLevel(nullptr, &parsed));
        QCOMPARE(parsed, CpuLevel::Avx2);  // untouched on failure
    }

    void levelsAreNested() {
        // A host that runs a level runs every level below it that it can name (avx2-vnni may be
        // missing under avx512: AVX-512 CPUs without AVX-VNNI exist), and always the reference.
        QVERIFY(hostRuns(CpuLevel::Reference));
        if (hostRuns(CpuLevel::Avx2Vnni) || hostRuns(CpuLevel::Avx512)) QVERIFY(hostRuns(CpuLevel::Avx2));
        QVERIFY(hostRuns(bestHostLevel()));
        for (CpuLevel l : kCpuLevels)
            if (l > bestHostLevel()) QVERIFY(!hostRuns(l));
    }

    void unsetMeansBest() {
        const ScopedEnv env("HEARTH_CPU", std::nullopt);
        const CpuLevelChoice c = cpuLevelChoice();
        QCOMPARE(c.used, bestHostLevel());
        QVERIFY(c.valid);
        QVERIFY(c.requested.empty());
        QCOMPARE(avx2Enabled(), hostRuns(CpuLevel::Avx2));
        QCOMPARE(avxVnniEnabled(), cpuFeatures().canRunVnni());
        QCOMPARE(avx512Enabled(), cpuFeatures().canRunAvx512());
    }

    void eachLevelCapsTheSwitches() {
        for (CpuLevel l : kCpuLevels) {
            const ScopedEnv env("HEARTH_CPU", QByteArray(cpuLevelName(l)));
            const CpuLevelChoice c = cpuLevelChoice();
            QVERIFY(c.valid);
            QVERIFY(c.used <= l);
            QVERIFY(hostRuns(c.used));
            QCOMPARE(c.used == l, hostRuns(l));
            QVERIFY2(c.why.find("HEARTH_CPU=") == 0, c.why.c_str());
            QCOMPARE(avx2Enabled(), c.used >= CpuLevel::Avx2);
            QVERIFY(!avxVnniEnabled() || (l >= CpuLevel::Avx2Vnni && cpuFeatures().canRunVnni()));
            QVERIFY(!avx512Enabled() || (l >= CpuLevel::Avx512 && cpuFeatures().canRunAvx512()));
            // The AVX2 backend runs exactly when the level allows it, and the note says why not.
            const bool avx2Backend = makeBestCpuBackend(1)->name() == "CPU (AVX2)";
            QCOMPARE(avx2Backend, c.used >= CpuLevel::Avx2);
            QCOMPARE(cpuFallbackNote().empty(), avx2Backend);
        }
    }

    void unknownNameFallsBackToBest() {
        const ScopedEnv env("HEARTH_CPU", QByteArray("sse9"));
        const CpuLevelChoice c = cpuLevelChoice();
        QVERIFY(!c.valid);
        QCOMPARE(c.used, bestHostLevel());
        QVERIFY2(c.why.find("names no level") != std::string::npos, c.why.c_str());
    }

    void detectionAgreesWithTheKernel() {
        const std::string flags = procCpuFlags();
        if (flags.empty()) QSKIP("no /proc/cpuinfo flags line");
        // Linux lists an AVX extension only where XCR0 enables its state, as Hearth requires.
        const CpuFeatures& f = cpuFeatures();
        QCOMPARE(f.canRunAvx2(),
                 flags.find(" avx2 ") != std::string::npos && flags.find(" fma ") != std::string::npos &&
                     flags.find(" f16c ") != std::string::npos);
        QCOMPARE(f.avxVnni, flags.find(" avx_vnni ") != std::string::npos);
        QCOMPARE(f.avx512f && f.osSavesZmm, flags.find(" avx512f ") != std::string::npos);
        QCOMPARE(f.amxListed, flags.find(" amx_tile ") != std::string::npos);
        QVERIFY(!f.amxOsEnabled || f.amxListed);
    }
};

QTEST_GUILESS_MAIN(TestCpuLevels)
#include "test_cpu_levels.moc"
