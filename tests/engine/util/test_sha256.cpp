// SHA-256 against the FIPS 180-2 example vectors (one block, two blocks, 1,000,000 x 'a'),
// lengths around the padding boundaries, and incremental updates in odd-sized pieces.
#include <QtTest>
#include <string>

#include "engine/util/sha256.h"

using namespace hearth;

class TestSha256 : public QObject {
    Q_OBJECT
private slots:
    void standardVectors() {
        QCOMPARE(toHex(sha256("")), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
        QCOMPARE(toHex(sha256("abc")), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
        QCOMPARE(toHex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
                 std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
        QCOMPARE(toHex(sha256("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
                              "lmnopqrsmnopqrstnopqrstu")),
                 std::string("cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"));
    }
    void millionA() {
        const std::string a(1000000, 'a');
        QCOMPARE(toHex(sha256(a)), std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
        Sha256 h;  // the same in 1000 pieces of 1000
        for (int i = 0; i < 1000; ++i) h.update(std::string_view(a).substr(0, 1000));
        QCOMPARE(toHex(h.finish()), std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
    }
    void paddingBoundaries_data() {
        QTest::addColumn<int>("length");
        QTest::addColumn<QString>("hex");  // from Python's hashlib
        QTest::newRow("55") << 55 << "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318";
        QTest::newRow("56") << 56 << "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a";
        QTest::newRow("57") << 57 << "f13b2d724659eb3bf47f2dd6af1accc87b81f09f59f2b75e5c0bed6589dfe8c6";
        QTest::newRow("63") << 63 << "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34";
        QTest::newRow("64") << 64 << "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb";
        QTest::newRow("65") << 65 << "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0";
        QTest::newRow("119") << 119 << "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb";
        QTest::newRow("120") << 120 << "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c";
        QTest::newRow("128") << 128 << "6836cf13bac400e9105071cd6af47084dfacad4e5e302c94bfed24e013afb73e";
    }
    void paddingBoundaries() {
        QFETCH(int, length);
        QFETCH(QString, hex);
        QCOMPARE(QString::fromStdString(toHex(sha256(std::string(static_cast<size_t>(length), 'a')))), hex);
    }
    void incrementalMatchesOneShot() {
        std::string bytes;  // 0..255 five times: 1280 bytes, 20 blocks
        for (int r = 0; r < 5; ++r)
            for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
        const std::string expected = "d414b085826eb06778483ba35564dc849e643359f69ed9747878ba6e54985bed";
        QCOMPARE(toHex(sha256(bytes)), expected);
        for (size_t piece : {size_t{1}, size_t{3}, size_t{7}, size_t{63}, size_t{64}, size_t{65}, size_t{1000}}) {
            Sha256 h;
            for (size_t at = 0; at < bytes.size(); at += piece) h.update(std::string_view(bytes).substr(at, piece));
            QCOMPARE(toHex(h.finish()), expected);
        }
        Sha256 h;  // finish() resets: the hasher is reusable
        h.update("garbage");
        (void)h.finish();
        QCOMPARE(toHex(h.update("abc").finish()),
                 std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    }
};

QTEST_APPLESS_MAIN(TestSha256)
#include "test_sha256.moc"
