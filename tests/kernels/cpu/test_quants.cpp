// Unit tests of the reference data-type kernels (kernels/dtype.h, kernels/cpu/reference):
// type facts, half/bfloat16 conversions, hand-built blocks of every type, the activation
// quantizers, dot products against float dots of dequantized data, and matmul.
#include <QTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/reference/matmul.h"
#include "kernels/cpu/reference/quants.h"

using namespace hearth;

namespace {

float fromBits(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t toBits(float f) { return std::bit_cast<uint32_t>(f); }

std::vector<float> dequantized(DType t, const void* src, int64_t n) {
    std::vector<float> out(static_cast<size_t>(n), -12345.0f);
    ref::dequantizeRow(t, src, out.data(), n);
    return out;
}

// ---- Packers written from GGUF.md's layout table: the inverse of what the kernels read ----

void packNibbles(const int* q, uint8_t* qs) {  // element j low nibble, j+16 high nibble
    for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(q[j] | q[j + 16] << 4);
}

void packFifthBits(const int* q, uint8_t* qh) {  // bit j of a little-endian u32
    uint32_t bits = 0;
    for (int j = 0; j < 32; ++j) bits |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
    for (int k = 0; k < 4; ++k) qh[k] = static_cast<uint8_t>(bits >> (8 * k));
}

void packScalesMins(const int* sc, const int* m, uint8_t* s) {
    for (int j = 0; j < 4; ++j) {
        s[j] = static_cast<uint8_t>((sc[j] & 63) | (sc[j + 4] >> 4) << 6);
        s[j + 4] = static_cast<uint8_t>((m[j] & 63) | (m[j + 4] >> 4) << 6);
        s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
    }
}

void packQ4KQuants(const int* q, uint8_t* qs) {  // chunk c: low nibbles then high nibbles
    for (int c = 0; c < 4; ++c)
        for (int l = 0; l < 32; ++l)
            qs[32 * c + l] = static_cast<uint8_t>((q[64 * c + l] & 15) | (q[64 * c + 32 + l] & 15) << 4);
}

void packQ5KHighBits(const int* q, uint8_t* qh) {  // bit k of qh[l]: element 32k + l
    for (int l = 0; l < 32; ++l) {
        qh[l] = 0;
        for (int k = 0; k < 8; ++k) qh[l] = static_cast<uint8_t>(qh[l] | ((q[32 * k + l] >> 4) & 1) << k);
    }
}

void packQ6K(const int* q6, BlockQ6_K& b) {  // q6 in 0..63 (value q6 - 32)
    std::memset(b.ql, 0, sizeof b.ql);
    std::memset(b.qh, 0, sizeof b.qh);
    for (int e = 0; e < 256; ++e) {
        const int half = e / 128, group = (e % 128) / 32, l = e % 32;
        const int qlIndex = 64 * half + (group % 2) * 32 + l;
        const int nibbleShift = group >= 2 ? 4 : 0;
        b.ql[qlIndex] = static_cast<uint8_t>(b.ql[qlIndex] | (q6[e] & 15) << nibbleShift);
        b.qh[32 * half + l] = static_cast<uint8_t>(b.qh[32 * half + l] | (q6[e] >> 4) << (2 * group));
    }
}

// Seeded quants in 0..range-1, so that no two elements or sub-blocks alias by construction
// (a swapped half or nibble then shows up).
std::vector<int> seededQuants(int n, int range, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<int> q(static_cast<size_t>(n));
    for (int& v : q) v = static_cast<int>(rng() % static_cast<unsigned>(range));
    return q;
}

// Activations of the hand cases: d = 1 so the quantized values equal the inputs.
std::vector<float> handActivations32() {  // j - 15 for j < 31, then 127: Σ = 127
    std::vector<float> x(32);
    for (int j = 0; j < 31; ++j) x[j] = static_cast<float>(j - 15);
    x[31] = 127.0f;
    return x;
}

std::vector<float> handActivations256() {  // 127 then 255 ones: Q8_K gives d = -1, q = -x
    std::vector<float> x(256, 1.0f);
    x[0] = 127.0f;
    return x;
}

template <class Block, class Fix>
void fixEach(std::vector<uint8_t>& bytes, Fix fix) {
    auto* blocks = reinterpret_cast<Block*>(bytes.data());
    for (size_t i = 0; i < bytes.size() / sizeof(Block); ++i) fix(blocks[i]);
}

// Weights of every field random but the scales, which are kept in a sane range.
std::vector<uint8_t> randomWeights(DType t, int64_t n, std::mt19937& rng) {
    std::vector<uint8_t> bytes(rowBytes(t, n));
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : bytes) b = static_cast<uint8_t>(byte(rng));
    std::uniform_real_distribution<float> signedScale(-0.05f, 0.05f), scale(0.001f, 0.05f);
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    auto half = [&](std::uniform_real_distribution<float>& dist, float factor = 1.0f) {
        return f32ToF16(factor * dist(rng));
    };
    switch (t) {
    case DType::F32: fixEach<float>(bytes, [&](float& f) { f = value(rng); }); break;
    case DType::F16: fixEach<f16_t>(bytes, [&](f16_t& h) { h = half(value); }); break;
    case DType::BF16: fixEach<bf16_t>(bytes, [&](bf16_t& h) { h = f32ToBf16(value(rng)); }); break;
    case DType::Q4_0: fixEach<BlockQ4_0>(bytes, [&](auto& b) { b.d = half(signedScale); }); break;
    case DType::Q5_0: fixEach<BlockQ5_0>(bytes, [&](auto& b) { b.d = half(signedScale); }); break;
    case DType::Q8_0: fixEach<BlockQ8_0>(bytes, [&](auto& b) { b.d = half(signedScale); }); break;
    case DType::Q4_1: fixEach<BlockQ4_1>(bytes, [&](auto& b) { b.d = half(scale), b.m = half(scale, -8.0f); }); break;
    case DType::Q5_1: fixEach<BlockQ5_1>(bytes, [&](auto& b) { b.d = half(scale), b.m = half(scale, -16.0f); }); break;
    case DType::Q4_K: fixEach<BlockQ4_K>(bytes, [&](auto& b) { b.d = half(scale), b.dmin = half(scale); }); break;
    case DType::Q5_K: fixEach<BlockQ5_K>(bytes, [&](auto& b) { b.d = half(scale), b.dmin = half(scale); }); break;
    case DType::Q6_K: fixEach<BlockQ6_K>(bytes, [&](auto& b) { b.d = half(scale); }); break;
    default: break;
    }
    return bytes;
}

// The rounding of Q8_1's s = f16(d * Σq) against the dequantized activations' d16 * Σq: the
// min term mw * s of a Q4_1/Q5_1 dot may differ from the float dot by this much.
double q8_1SumSlack(DType w, const std::vector<uint8_t>& weights, const std::vector<uint8_t>& act, int64_t n) {
    if (ref::vecDotType(w) != DType::Q8_1) return 0.0;
    const auto* a = reinterpret_cast<const BlockQ8_1*>(act.data());
    double slack = 0.0;
    for (int64_t i = 0; i < n / 32; ++i) {
        const f16_t m = w == DType::Q4_1 ? reinterpret_cast<const BlockQ4_1*>(weights.data())[i].m
                                         : reinterpret_cast<const BlockQ5_1*>(weights.data())[i].m;
        int sum = 0;
        for (int8_t q : a[i].qs) sum += q;
        const double exactS = double(f16ToF32(a[i].d)) * sum;
        slack += std::fabs(f16ToF32(m)) * std::fabs(f16ToF32(a[i].s) - exactS);
    }
    return slack;
}

float handDot(DType w, const void* weights, const std::vector<float>& x) {
    std::vector<uint8_t> act(rowBytes(ref::vecDotType(w), static_cast<int64_t>(x.size())));
    ref::quantizeRow(ref::vecDotType(w), x.data(), act.data(), static_cast<int64_t>(x.size()));
    return ref::vecDot(w, weights, act.data(), static_cast<int64_t>(x.size()));
}

}  // namespace

class TestQuants : public QObject {
    Q_OBJECT

private slots:
    void typeFacts();
    void f16ToF32Values();
    void f32ToF16Rounding();
    void f16RoundTripsEveryHalf();
    void f16MatchesCompilerConversion();
    void bf16Conversions();
    void dequantQ4_0();
    void dequantQ4_1();
    void dequantQ5_0();
    void dequantQ5_1();
    void dequantQ8_0AndQ8_1();
    void dequantQ4_K();
    void dequantQ5_K();
    void dequantQ6_K();
    void dequantQ8_K();
    void dequantFloatTypes();
    void quantizeQ8_0();
    void quantizeQ8_1();
    void quantizeQ8_K();
    void quantizeQ8_KZeroAndNegativeMax();
    void quantizeNonFinite();
    void quantizeFloatTypes();
    void vecDotMatchesDequantized_data();
    void vecDotMatchesDequantized();
    void vecDotHandCases();
    void vecDotFloatLaneOrder();
    void fusedMultiplyAddRoundsOnce();
    void matmulLayoutAndBatchInvariance();
};

void TestQuants::typeFacts() {
    struct Fact {
        DType t;
        const char* name;
        int elems;
        int bytes;
        bool weight;
    };
    const Fact facts[] = {
        {DType::F32, "F32", 1, 4, true},        {DType::F16, "F16", 1, 2, true},
        {DType::BF16, "BF16", 1, 2, true},      {DType::Q4_0, "Q4_0", 32, 18, true},
        {DType::Q4_1, "Q4_1", 32, 20, true},    {DType::Q5_0, "Q5_0", 32, 22, true},
        {DType::Q5_1, "Q5_1", 32, 24, true},    {DType::Q8_0, "Q8_0", 32, 34, true},
        {DType::Q8_1, "Q8_1", 32, 36, false},   {DType::Q4_K, "Q4_K", 256, 144, true},
        {DType::Q5_K, "Q5_K", 256, 176, true},  {DType::Q6_K, "Q6_K", 256, 210, true},
        {DType::Q8_K, "Q8_K", 256, 292, false},
    };
    for (const Fact& f : facts) {
        const DTypeInfo info = dtypeInfo(f.t);
        QCOMPARE(info.name, f.name);
        QCOMPARE(info.blockElems, f.elems);
        QCOMPARE(info.blockBytes, f.bytes);
        QCOMPARE(isWeightType(f.t), f.weight);
    }
    for (uint32_t unknown : {4u, 5u, 10u, 11u, 16u, 24u, 28u, 29u, 31u, 99u, 0xffffffffu})
        QVERIFY2(dtypeInfo(unknown).name == nullptr, qPrintable(QString::number(unknown)));
    QCOMPARE(rowBytes(DType::Q4_K, 512), size_t(288));
    QCOMPARE(rowBytes(DType::Q8_0, 64), size_t(68));
    QCOMPARE(rowBytes(DType::BF16, 3), size_t(6));
    QCOMPARE(rowBytes(static_cast<DType>(10), 256), size_t(0));  // unknown (Q2_K): no crash
}

void TestQuants::f16ToF32Values() {
    QCOMPARE(f16ToF32(0x3c00), 1.0f);
    QCOMPARE(f16ToF32(0xc000), -2.0f);
    QCOMPARE(f16ToF32(0x3555), 0.333251953125f);
    QCOMPARE(f16ToF32(0x7bff), 65504.0f);
    QCOMPARE(f16ToF32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
    QCOMPARE(f16ToF32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
    QCOMPARE(f16ToF32(0x03ff), std::ldexp(1023.0f, -24));  // largest subnormal
    QCOMPARE(f16ToF32(0x8001), -std::ldexp(1.0f, -24));
    QCOMPARE(toBits(f16ToF32(0x8000)), 0x80000000u);  // -0 keeps its sign
    QCOMPARE(f16ToF32(0x7c00), std::numeric_limits<float>::infinity());
    QCOMPARE(f16ToF32(0xfc00), -std::numeric_limits<float>::infinity());
    QVERIFY(std::isnan(f16ToF32(0x7e00)));
    QVERIFY(std::isnan(f16ToF32(0x7c01)));  // signalling NaN stays NaN
}

void TestQuants::f32ToF16Rounding() {
    QCOMPARE(f32ToF16(1.0f), f16_t(0x3c00));
    QCOMPARE(f32ToF16(-0.0f), f16_t(0x8000));
    QCOMPARE(f32ToF16(fromBits(0x3f801000)), f16_t(0x3c00));  // 1 + 2^-11: tie, to even
    QCOMPARE(f32ToF16(fromBits(0x3f803000)), f16_t(0x3c02));  // 1 + 3·2^-11: tie, to even
    QCOMPARE(f32ToF16(fromBits(0x3f801001)), f16_t(0x3c01));  // just above the tie
    QCOMPARE(f32ToF16(65504.0f), f16_t(0x7bff));
    QCOMPARE(f32ToF16(65519.99f), f16_t(0x7bff));
    QCOMPARE(f32ToF16(65520.0f), f16_t(0x7c00));  // halfway to 2^16: inf
    QCOMPARE(f32ToF16(-1e10f), f16_t(0xfc00));
    QCOMPARE(f32ToF16(std::numeric_limits<float>::infinity()), f16_t(0x7c00));
    QCOMPARE(f32ToF16(std::ldexp(1.0f, -24)), f16_t(0x0001));
    QCOMPARE(f32ToF16(std::ldexp(1.0f, -25)), f16_t(0x0000));  // tie between 0 and 2^-24
    QCOMPARE(f32ToF16(std::ldexp(1.5f, -25)), f16_t(0x0001));
    QCOMPARE(f32ToF16(std::ldexp(3.0f, -25)), f16_t(0x0002));  // 1.5 units: tie, to even
    QCOMPARE(f32ToF16(std::ldexp(1023.5f, -24)), f16_t(0x0400));  // rounds up into normals
    QCOMPARE(f32ToF16(std::ldexp(1.0f, -14)), f16_t(0x0400));
    QCOMPARE(f32ToF16(fromBits(0x00000001)), f16_t(0x0000));  // float subnormal
    QCOMPARE(f32ToF16(-std::ldexp(1.0f, -30)), f16_t(0x8000));
    const f16_t nan = f32ToF16(std::numeric_limits<float>::quiet_NaN());
    QVERIFY((nan & 0x7c00) == 0x7c00 && (nan & 0x3ff) != 0);
    const f16_t payloadLow = f32ToF16(fromBits(0x7f800001));  // payload below half's mantissa
    QVERIFY((payloadLow & 0x7c00) == 0x7c00 && (payloadLow & 0x3ff) != 0);
}

void TestQuants::f16RoundTripsEveryHalf() {
    for (uint32_t h = 0; h <= 0xffff; ++h) {
        const float f = f16ToF32(static_cast<f16_t>(h));
        if (std::isnan(f)) continue;
        QCOMPARE(f32ToF16(f), f16_t(h));
    }
}

void TestQuants::f16MatchesCompilerConversion() {
#if defined(__FLT16_MAX__)
    // GCC's _Float16 conversion (libgcc soft-fp, round to nearest even) as an independent oracle
    // on random bit patterns and on the neighbours of every half boundary.
    std::mt19937 rng(7);
    auto check = [](uint32_t bits) {
        const float f = fromBits(bits);
        if (std::isnan(f)) return true;
        const _Float16 h = static_cast<_Float16>(f);
        return std::bit_cast<uint16_t>(h) == f32ToF16(f);
    };
    for (int i = 0; i < 2000000; ++i) {
        const uint32_t bits = rng();
        QVERIFY2(check(bits), qPrintable(QString::number(bits, 16)));
    }
    for (uint32_t h = 0; h < 0x7c00; ++h) {
        const uint32_t center = toBits(f16ToF32(static_cast<f16_t>(h)));
        for (uint32_t bits : {center + 0x0fffu, center + 0x1000u, center + 0x1001u, center - 1})
            QVERIFY2(check(bits), qPrintable(QString::number(bits, 16)));
    }
#else
    QSKIP("this compiler has no _Float16");
#endif
}

void TestQuants::bf16Conversions() {
    QCOMPARE(bf16ToF32(0x3f80), 1.0f);
    QCOMPARE(bf16ToF32(0x4049), 3.140625f);
    QCOMPARE(bf16ToF32(0xc2f7), -123.5f);
    QCOMPARE(f32ToBf16(1.0f), bf16_t(0x3f80));
    QCOMPARE(f32ToBf16(fromBits(0x3f808000)), bf16_t(0x3f80));  // tie, to even
    QCOMPARE(f32ToBf16(fromBits(0x3f818000)), bf16_t(0x3f82));  // tie, to even
    QCOMPARE(f32ToBf16(fromBits(0x3f808001)), bf16_t(0x3f81));
    QCOMPARE(f32ToBf16(fromBits(0x3f807fff)), bf16_t(0x3f80));
    QCOMPARE(f32ToBf16(fromBits(0x7f7fffff)), bf16_t(0x7f80));  // largest float rounds to inf
    QCOMPARE(f32ToBf16(-std::numeric_limits<float>::infinity()), bf16_t(0xff80));
    QCOMPARE(f32ToBf16(-0.0f), bf16_t(0x8000));
    for (uint32_t nanBits : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu}) {
        const bf16_t b = f32ToBf16(fromBits(nanBits));
        QVERIFY2(std::isnan(bf16ToF32(b)), qPrintable(QString::number(nanBits, 16)));
        QCOMPARE(b & 0x8000, (nanBits >> 16) & 0x8000);
    }
}

void TestQuants::dequantQ4_0() {
    BlockQ4_0 b[2];
    int q[32];
    for (int j = 0; j < 32; ++j) q[j] = (j * 7 + j / 16) % 16;  // the halves differ by 1
    for (auto& blk : b) packNibbles(q, blk.qs);
    b[0].d = f32ToF16(0.5f);
    b[1].d = f32ToF16(-2.0f);
    const auto y = dequantized(DType::Q4_0, b, 64);
    for (int j = 0; j < 32; ++j) {
        QCOMPARE(y[j], (q[j] - 8) * 0.5f);
        QCOMPARE(y[32 + j], (q[j] - 8) * -2.0f);
    }
    QCOMPARE(y[1], -0.5f);  // q = 7
    QCOMPARE(y[16], -3.5f);  // q = (112 + 1) % 16 = 1
}

void TestQuants::dequantQ4_1() {
    BlockQ4_1 b;
    int q[32];
    for (int j = 0; j < 32; ++j) q[j] = (j * 5 + j / 16) % 16;  // the halves differ by 1
    packNibbles(q, b.qs);
    b.d = f32ToF16(0.25f);
    b.m = f32ToF16(-1.5f);
    const auto y = dequantized(DType::Q4_1, &b, 32);
    for (int j = 0; j < 32; ++j) QCOMPARE(y[j], q[j] * 0.25f - 1.5f);
    QCOMPARE(y[0], -1.5f);  // q 0
    QCOMPARE(y[31], 1.5f);  // q (155 + 1) % 16 = 12
}

void TestQuants::dequantQ5_0() {
    BlockQ5_0 b;
    const std::vector<int> q = seededQuants(32, 32, 50);
    int low[32];
    for (int j = 0; j < 32; ++j) low[j] = q[j] & 15;
    packNibbles(low, b.qs);
    packFifthBits(q.data(), b.qh);
    b.d = f32ToF16(0.125f);
    const auto y = dequantized(DType::Q5_0, &b, 32);
    for (int j = 0; j < 32; ++j) QCOMPARE(y[j], (q[j] - 16) * 0.125f);
}

void TestQuants::dequantQ5_1() {
    BlockQ5_1 b;
    const std::vector<int> q = seededQuants(32, 32, 70);
    int low[32];
    for (int j = 0; j < 32; ++j) low[j] = q[j] & 15;
    packNibbles(low, b.qs);
    packFifthBits(q.data(), b.qh);
    b.d = f32ToF16(0.5f);
    b.m = f32ToF16(-3.0f);
    const auto y = dequantized(DType::Q5_1, &b, 32);
    for (int j = 0; j < 32; ++j) QCOMPARE(y[j], q[j] * 0.5f - 3.0f);
}

void TestQuants::dequantQ8_0AndQ8_1() {
    BlockQ8_0 a;
    BlockQ8_1 c;
    a.d = c.d = f32ToF16(0.25f);
    c.s = f32ToF16(1000.0f);  // s does not enter the values
    for (int j = 0; j < 32; ++j) a.qs[j] = c.qs[j] = static_cast<int8_t>(j * 8 - 128);
    const auto ya = dequantized(DType::Q8_0, &a, 32), yc = dequantized(DType::Q8_1, &c, 32);
    for (int j = 0; j < 32; ++j) {
        QCOMPARE(ya[j], (j * 8 - 128) * 0.25f);
        QCOMPARE(yc[j], ya[j]);
    }
}

void TestQuants::dequantQ4_K() {
    // Scales and mins above 15 exercise the two high bits stored apart for sub-blocks 4..7.
    const int sc[8] = {1, 63, 17, 5, 48, 33, 2, 60}, m[8] = {0, 7, 63, 16, 31, 62, 40, 1};
    const std::vector<int> q = seededQuants(256, 16, 41);
    BlockQ4_K b;
    b.d = f32ToF16(0.5f);
    b.dmin = f32ToF16(0.25f);
    packScalesMins(sc, m, b.scales);
    packQ4KQuants(q.data(), b.qs);
    const auto y = dequantized(DType::Q4_K, &b, 256);
    for (int e = 0; e < 256; ++e) QCOMPARE(y[e], 0.5f * sc[e / 32] * q[e] - 0.25f * m[e / 32]);
}

void TestQuants::dequantQ5_K() {
    const int sc[8] = {63, 1, 20, 47, 16, 5, 39, 58}, m[8] = {3, 60, 0, 21, 63, 15, 16, 44};
    const std::vector<int> q = seededQuants(256, 32, 51);
    BlockQ5_K b;
    b.d = f32ToF16(0.25f);
    b.dmin = f32ToF16(0.5f);
    packScalesMins(sc, m, b.scales);
    packQ4KQuants(q.data(), b.qs);
    packQ5KHighBits(q.data(), b.qh);
    const auto y = dequantized(DType::Q5_K, &b, 256);
    for (int e = 0; e < 256; ++e) QCOMPARE(y[e], 0.25f * sc[e / 32] * q[e] - 0.5f * m[e / 32]);
}

void TestQuants::dequantQ6_K() {
    const std::vector<int> q6 = seededQuants(256, 64, 61);
    BlockQ6_K b;
    packQ6K(q6.data(), b);
    for (int s = 0; s < 16; ++s) b.scales[s] = static_cast<int8_t>(s * 17 - 128);  // -128..127
    b.d = f32ToF16(0.125f);
    const auto y = dequantized(DType::Q6_K, &b, 256);
    for (int e = 0; e < 256; ++e) QCOMPARE(y[e], 0.125f * b.scales[e / 16] * (q6[e] - 32));
}

void TestQuants::dequantQ8_K() {
    BlockQ8_K b{};
    b.d = -0.375f;
    for (int j = 0; j < 256; ++j) b.qs[j] = static_cast<int8_t>(j - 128);
    const auto y = dequantized(DType::Q8_K, &b, 256);
    for (int j = 0; j < 256; ++j) QCOMPARE(y[j], (j - 128) * -0.375f);
}

void TestQuants::dequantFloatTypes() {
    const float f32[3] = {1.5f, -0.0f, 3e38f};
    const f16_t f16[3] = {0x3c00, 0x0001, 0xfc00};
    const bf16_t bf16[3] = {0x3f80, 0xc2f7, 0x0001};
    QCOMPARE(dequantized(DType::F32, f32, 3), std::vector<float>(f32, f32 + 3));
    const float inf = std::numeric_limits<float>::infinity();
    QCOMPARE(dequantized(DType::F16, f16, 3), (std::vector<float>{1.0f, std::ldexp(1.0f, -24), -inf}));
    QCOMPARE(dequantized(DType::BF16, bf16, 3), (std::vector<float>{1.0f, -123.5f, fromBits(0x00010000)}));
}

void TestQuants::quantizeQ8_0() {
    // amax 63.5 gives d = 0.5 exactly, so q = roundf(2x); roundf takes halves away from zero.
    float x[64] = {};
    const float head[] = {63.5f, -63.5f, 0.25f, -0.25f, 1.25f, -1.25f, 0.74f, 10.0f, -0.2f};
    std::copy(std::begin(head), std::end(head), x);
    const int8_t expected[] = {127, -127, 1, -1, 3, -3, 1, 20, 0};
    BlockQ8_0 b[2];
    ref::quantizeRow(DType::Q8_0, x, b, 64);
    QCOMPARE(b[0].d, f16_t(0x3800));
    for (size_t j = 0; j < std::size(expected); ++j) QCOMPARE(b[0].qs[j], expected[j]);
    for (int j = int(std::size(expected)); j < 32; ++j) QCOMPARE(b[0].qs[j], int8_t(0));
    QCOMPARE(b[1].d, f16_t(0));  // an all-zero block
    for (int8_t q : b[1].qs) QCOMPARE(q, int8_t(0));
}

void TestQuants::quantizeQ8_1() {
    // x = q · 1.0004 with integer q (127 the largest, Σq = 1000): d = 1.0004 is stored as f16
    // 1.0, and s = f16(1000.4) = 1000.5 shows that s is computed with the f32 d, as ggml does
    // (with the f16 d it would be 1000).
    float x[32] = {};
    x[0] = 127 * 1.0004f;
    for (int j = 1; j <= 28; ++j) x[j] = 30 * 1.0004f;
    x[29] = -33 * 1.0004f;
    x[30] = 66 * 1.0004f;
    BlockQ8_1 b;
    ref::quantizeRow(DType::Q8_1, x, &b, 32);
    QCOMPARE(b.d, f16_t(0x3c00));
    const int expected[] = {127, 30, -33, 66, 0};
    QCOMPARE(int(b.qs[0]), expected[0]);
    for (int j = 1; j <= 28; ++j) QCOMPARE(int(b.qs[j]), expected[1]);
    QCOMPARE(int(b.qs[29]), expected[2]);
    QCOMPARE(int(b.qs[30]), expected[3]);
    QCOMPARE(int(b.qs[31]), expected[4]);
    QCOMPARE(f16ToF32(b.s), 1000.5f);
}

void TestQuants::quantizeQ8_K() {
    // max = +254 gives iscale = -0.5 and d = -2; nearest-int rounds halves to even.
    std::vector<float> x(512, 0.0f);
    const float head[] = {254.0f, 1.0f, 3.0f, 5.0f, -1.0f, -254.0f, 100.2f, 7.0f};
    const int8_t expected[] = {-127, 0, -2, -2, 0, 127, -50, -4};
    std::copy(std::begin(head), std::end(head), x.begin());
    for (int j = 16; j < 32; ++j) x[j] = -6.0f;  // second group of 16: q = 3 each, Σ 48
    for (int j = 256; j < 512; ++j) x[j] = static_cast<float>(j - 384) / 64.0f;  // max -2
    BlockQ8_K b[2];
    ref::quantizeRow(DType::Q8_K, x.data(), b, 512);
    QCOMPARE(b[0].d, -2.0f);
    for (size_t j = 0; j < std::size(expected); ++j) QCOMPARE(b[0].qs[j], expected[j]);
    QCOMPARE(b[0].bsums[0], int16_t(-127 + 0 - 2 - 2 + 0 + 127 - 50 - 4));
    QCOMPARE(b[0].bsums[1], int16_t(48));
    QCOMPARE(b[0].bsums[2], int16_t(0));
    // Second block: the largest magnitude is -2.0 (x = -128/64), so iscale = 63.5 and d = 1/63.5.
    QCOMPARE(b[1].d, 1.0f / 63.5f);
    QCOMPARE(b[1].qs[0], int8_t(-127));
    QCOMPARE(b[1].qs[255], int8_t(126));  // 127/64 · 63.5 = 126.008
}

void TestQuants::quantizeQ8_KZeroAndNegativeMax() {
    std::vector<float> x(256, 0.0f);
    BlockQ8_K b;
    std::memset(&b, 0x55, sizeof b);
    ref::quantizeRow(DType::Q8_K, x.data(), &b, 256);
    QCOMPARE(b.d, 0.0f);
    for (int8_t q : b.qs) QCOMPARE(q, int8_t(0));
    for (int16_t s : b.bsums) QCOMPARE(s, int16_t(0));
    x[10] = -127.0f;  // negative max: iscale = +1, q = x
    x[11] = 126.5f;  // rounds to even 126
    x[12] = 125.5f;  // rounds to even 126
    ref::quantizeRow(DType::Q8_K, x.data(), &b, 256);
    QCOMPARE(b.d, 1.0f);
    QCOMPARE(b.qs[10], int8_t(-127));
    QCOMPARE(b.qs[11], int8_t(126));
    QCOMPARE(b.qs[12], int8_t(126));
    QCOMPARE(b.bsums[0], int16_t(125));
}

// A diverged model's NaN/inf activations give defined (if useless) blocks, not UB (the
// sanitizer build checks the conversions).
void TestQuants::quantizeNonFinite() {
    std::vector<float> x(256, 1.0f);
    x[3] = std::numeric_limits<float>::quiet_NaN();
    x[40] = std::numeric_limits<float>::infinity();
    BlockQ8_0 b8[8];
    BlockQ8_K bk;
    ref::quantizeRow(DType::Q8_0, x.data(), b8, 256);
    ref::quantizeRow(DType::Q8_K, x.data(), &bk, 256);
    QCOMPARE(b8[0].qs[3], int8_t(0));
    QCOMPARE(b8[1].d, f16_t(0x7c00));  // d = inf/127
    QCOMPARE(b8[2].qs[0], int8_t(127));
}

void TestQuants::quantizeFloatTypes() {
    const float x[4] = {1.0f, fromBits(0x3f801000), -65520.0f, fromBits(0x3f818000)};
    f16_t h[4];
    bf16_t b[4];
    float f[4];
    ref::quantizeRow(DType::F16, x, h, 4);
    ref::quantizeRow(DType::BF16, x, b, 4);
    ref::quantizeRow(DType::F32, x, f, 4);
    QCOMPARE(h[0], f16_t(0x3c00));
    QCOMPARE(h[1], f16_t(0x3c00));
    QCOMPARE(h[2], f16_t(0xfc00));
    QCOMPARE(b[3], bf16_t(0x3f82));
    QCOMPARE(b[2], bf16_t(0xc780));  // -65520 = -1.9995 * 2^15 rounds to -2^16
    QCOMPARE(std::memcmp(f, x, sizeof x), 0);
}

void TestQuants::vecDotMatchesDequantized_data() {
    QTest::addColumn<int>("type");
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                    DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K})
        QTest::newRow(dtypeInfo(t).name) << int(t);
}

// vecDot against Σ w·a in double over the dequantized weights and dequantized activations: the
// difference is float rounding only (plus, for Q8_1, the rounding of its stored s).
void TestQuants::vecDotMatchesDequantized() {
    QFETCH(int, type);
    const auto w = static_cast<DType>(type);
    const DType actType = ref::vecDotType(w);
    std::mt19937 rng(1234 + type);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t n : {256, 1024}) {
        const std::vector<uint8_t> weights = randomWeights(w, n, rng);
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = normal(rng);
        std::vector<uint8_t> act(rowBytes(actType, n));
        ref::quantizeRow(actType, x.data(), act.data(), n);
        const auto wf = dequantized(w, weights.data(), n), af = dequantized(actType, act.data(), n);
        double expected = 0.0, magnitude = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            expected += double(wf[i]) * af[i];
            magnitude += std::fabs(double(wf[i]) * af[i]);
        }
        const double got = ref::vecDot(w, weights.data(), act.data(), n);
        const double bound = 1e-5 * magnitude + q8_1SumSlack(w, weights, act, n);
        QVERIFY2(std::fabs(got - expected) <= bound,
                 qPrintable(QStringLiteral("n=%1 got %2 expected %3 bound %4")
                                .arg(n)
                                .arg(got, 0, 'g', 9)
                                .arg(expected, 0, 'g', 9)
                                .arg(bound)));
        QVERIFY(magnitude > 1.0);  // the data is not degenerate
    }
}

// Scales chosen so every float operation is exact: the results are exact integers (or halves).
void TestQuants::vecDotHandCases() {
    const auto x32 = handActivations32();
    const auto x256 = handActivations256();
    int q[256], low[32];

    BlockQ8_0 q8[2];  // block 0: d 0.5, all +1 → 0.5·127; block 1: d 2, ±1 over [j..., 127]
    q8[0].d = f32ToF16(0.5f);
    q8[1].d = f32ToF16(2.0f);
    for (int j = 0; j < 32; ++j) {
        q8[0].qs[j] = 1;
        q8[1].qs[j] = static_cast<int8_t>(j % 2 ? -1 : 1);
    }
    std::vector<float> x64(64);
    for (int j = 0; j < 64; ++j) x64[j] = j < 32 ? x32[j] : (j < 63 ? float(j - 32) : 127.0f);
    QCOMPARE(handDot(DType::Q8_0, q8, x64), -160.5f);

    BlockQ4_0 q40;
    for (int j = 0; j < 32; ++j) q[j] = j % 16;
    packNibbles(q, q40.qs);
    q40.d = f32ToF16(0.25f);
    QCOMPARE(handDot(DType::Q4_0, &q40, x32), 362.25f);

    BlockQ4_1 q41;
    packNibbles(q, q41.qs);
    q41.d = f32ToF16(1.0f);
    q41.m = f32ToF16(-8.0f);
    QCOMPARE(handDot(DType::Q4_1, &q41, x32), 1449.0f);

    BlockQ5_0 q50;
    for (int j = 0; j < 32; ++j) {
        q[j] = 31 - j;
        low[j] = q[j] & 15;
    }
    packNibbles(low, q50.qs);
    packFifthBits(q, q50.qh);
    q50.d = f32ToF16(0.5f);
    QCOMPARE(handDot(DType::Q5_0, &q50, x32), -2256.0f);

    BlockQ5_1 q51;
    for (int j = 0; j < 32; ++j) {
        q[j] = j;
        low[j] = j & 15;
    }
    packNibbles(low, q51.qs);
    packFifthBits(q, q51.qh);
    q51.d = f32ToF16(0.5f);
    q51.m = f32ToF16(-4.0f);
    QCOMPARE(handDot(DType::Q5_1, &q51, x32), 2700.5f);

    // K-quants: d 1, dmin 0.5, sub-block scale k+1, min 2, against 127 then ones (Q8_K d = -1).
    const int sc[8] = {1, 2, 3, 4, 5, 6, 7, 8}, mins[8] = {2, 2, 2, 2, 2, 2, 2, 2};
    BlockQ4_K q4k;
    for (int e = 0; e < 256; ++e) q[e] = 3;
    packScalesMins(sc, mins, q4k.scales);
    packQ4KQuants(q, q4k.qs);
    q4k.d = f32ToF16(1.0f);
    q4k.dmin = f32ToF16(0.5f);
    QCOMPARE(handDot(DType::Q4_K, &q4k, x256), 3452.0f);

    BlockQ5_K q5k;
    for (int e = 0; e < 256; ++e) q[e] = 19;
    packScalesMins(sc, mins, q5k.scales);
    packQ4KQuants(q, q5k.qs);
    packQ5KHighBits(q, q5k.qh);
    q5k.d = f32ToF16(1.0f);
    q5k.dmin = f32ToF16(0.5f);
    QCOMPARE(handDot(DType::Q5_K, &q5k, x256), 23900.0f);

    BlockQ6_K q6k;  // q - 32 = 1 everywhere, scale of sub-block s is s - 8, d 0.25
    for (int e = 0; e < 256; ++e) q[e] = 33;
    packQ6K(q, q6k);
    for (int s = 0; s < 16; ++s) q6k.scales[s] = static_cast<int8_t>(s - 8);
    q6k.d = f32ToF16(0.25f);
    QCOMPARE(handDot(DType::Q6_K, &q6k, x256), -284.0f);

    const f16_t wh[3] = {f32ToF16(1.5f), f32ToF16(-2.0f), f32ToF16(0.25f)};
    const bf16_t wb[3] = {f32ToBf16(1.5f), f32ToBf16(-2.0f), f32ToBf16(0.25f)};
    const float wf[3] = {1.5f, -2.0f, 0.25f};
    const std::vector<float> x3 = {4.0f, 3.0f, -8.0f};
    QCOMPARE(handDot(DType::F16, wh, x3), -2.0f);
    QCOMPARE(handDot(DType::BF16, wb, x3), -2.0f);
    QCOMPARE(handDot(DType::F32, wf, x3), -2.0f);
}

// The float types sum over 8 float lanes (quants.h): 2^60 + 1 - 2^60 keeps the 1 only
// because the large terms sit in lanes 0 and 4 and the 1 in lane 1; a sequential sum gives 0.
void TestQuants::vecDotFloatLaneOrder() {
    std::vector<float> w(16, 0.0f), a(16, 0.0f);
    w[0] = a[0] = std::ldexp(1.0f, 30);
    w[1] = a[1] = 1.0f;
    w[4] = -std::ldexp(1.0f, 30);
    a[4] = std::ldexp(1.0f, 30);
    QCOMPARE(ref::vecDot(DType::F32, w.data(), a.data(), 16), 1.0f);
    w[9] = 1.0f;  // lane 1 again, after the cancellation: exactly 1 + 1
    a[9] = 1.0f;
    QCOMPARE(ref::vecDot(DType::F32, w.data(), a.data(), 16), 2.0f);
}

// ref::fusedMultiplyAdd (double arithmetic rounded to odd) against std::fmaf: random bit
// patterns of every class (subnormal, huge, infinite, NaN), and products that land one half
// float ulp from c's neighbourhood plus a tiny third term: exactly where a plain double sum
// rounded to float rounds twice and goes the wrong way.
void TestQuants::fusedMultiplyAddRoundsOnce() {
    std::mt19937 rng(77);
    std::uniform_int_distribution<uint32_t> bits;
    const auto same = [](float x, float y) {
        return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y) || (std::isnan(x) && std::isnan(y));
    };
    for (int i = 0; i < 200000; ++i) {
        const float a = std::bit_cast<float>(bits(rng)), b = std::bit_cast<float>(bits(rng) & 0xbfffffffu),
                    c = std::bit_cast<float>(bits(rng));
        QVERIFY2(same(ref::fusedMultiplyAdd(a, b, c), std::fmaf(a, b, c)), qPrintable(QString::number(i)));
    }
    int nTies = 0;
    std::uniform_int_distribution<int> small(1, 4095), exponent(-40, 40), sign(0, 1);
    for (int i = 0; i < 200000; ++i) {
        // a, b with 12-bit mantissas: a·b has up to 24 bits beyond its leading one, so it often
        // sits exactly between two floats; ±tiny decides the direction.
        const float a = std::ldexp(1.0f + static_cast<float>(small(rng)) * 0x1p-12f, exponent(rng));
        const float b = (sign(rng) ? -1.0f : 1.0f) * (1.0f + static_cast<float>(small(rng)) * 0x1p-12f);
        const float tiny = (sign(rng) ? -1.0f : 1.0f) * std::ldexp(1.0f, std::ilogb(a) - 60 + small(rng) % 20);
        const float want = std::fmaf(a, b, tiny), plain = static_cast<float>(static_cast<double>(a) * b + tiny);
        nTies += want != plain;
        QVERIFY2(same(ref::fusedMultiplyAdd(a, b, tiny), want), qPrintable(QString::number(i)));
    }
    QVERIFY(nTies > 1000);  // the cases that need the rounding to odd did occur
}

void TestQuants::matmulLayoutAndBatchInvariance() {
    const int64_t nRows = 3, nCols = 512, nTokens = 4;
    std::mt19937 rng(99);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (DType w : {DType::Q8_0, DType::Q4_K, DType::F16}) {
        const std::vector<uint8_t> weights = randomWeights(w, nRows * nCols, rng);
        std::vector<float> x(static_cast<size_t>(nTokens * nCols));
        for (float& v : x) v = normal(rng);
        std::vector<float> y(static_cast<size_t>(nTokens * nRows), -1.0f);
        ref::matmul(w, weights.data(), nRows, nCols, x.data(), nTokens, y.data());
        const size_t rowSize = rowBytes(w, nCols);
        for (int64_t t = 0; t < nTokens; ++t) {
            float single[3];  // the same token alone: bit-identical
            ref::matmul(w, weights.data(), nRows, nCols, x.data() + t * nCols, 1, single);
            for (int64_t r = 0; r < nRows; ++r) {
                QCOMPARE(y[t * nRows + r], single[r]);
                const auto wf = dequantized(w, weights.data() + r * rowSize, nCols);
                double dot = 0.0, magnitude = 0.0;
                for (int64_t i = 0; i < nCols; ++i) {
                    dot += double(wf[i]) * x[t * nCols + i];
                    magnitude += std::fabs(double(wf[i]) * x[t * nCols + i]);
                }
                // Activation quantization (8 bits) dominates the error; a transposed layout
                // would be off by the whole magnitude.
                QVERIFY2(std::fabs(y[t * nRows + r] - dot) <= 0.02 * magnitude,
                         qPrintable(QStringLiteral("%1 t=%2 r=%3: %4 vs %5")
                                        .arg(dtypeInfo(w).name)
                                        .arg(t)
                                        .arg(r)
                                        .arg(y[t * nRows + r])
                                        .arg(dot)));
            }
        }
    }
}

QTEST_APPLESS_MAIN(TestQuants)
#include "test_quants.moc"
