// MappedFile (engine/util/mapped_file.h) on files this test writes: the bytes read back through
// the mapping and through readIntoMemory's copy, an empty file, and the errors for a missing
// path and a folder.
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <fstream>

#include "engine/util/mapped_file.h"

using namespace hearth;

class TestMappedFile : public QObject {
    Q_OBJECT
private slots:
    void mapsTheFilesBytes() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("data.bin").toStdString();
        std::string content(70000, '\0');  // more than one page
        for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 + (i >> 9));
        std::ofstream(path, std::ios::binary).write(content.data(), static_cast<std::streamsize>(content.size()));
        auto mapped = MappedFile::open(path);
        QVERIFY2(mapped.has_value(), mapped ? "" : mapped.error().message.c_str());
        const auto bytes = (*mapped)->bytes();
        QCOMPARE(bytes.size(), content.size());
        QVERIFY(std::equal(bytes.begin(), bytes.end(), reinterpret_cast<const uint8_t*>(content.data())));
    }

    // readIntoMemory: the same bytes in the process's own memory, across several copy slices
    // (16 MiB) and a tail, 2 MiB-aligned; release() leaves the copy as it is; errors as open's.
    void readsTheFileIntoMemory() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("big.bin").toStdString();
        std::string content((size_t{35} << 20) + 12345, '\0');
        for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 13 + (i >> 11));
        std::ofstream(path, std::ios::binary).write(content.data(), static_cast<std::streamsize>(content.size()));
        auto copy = MappedFile::readIntoMemory(path);
        QVERIFY2(copy.has_value(), copy ? "" : copy.error().message.c_str());
        const auto bytes = (*copy)->bytes();
        QCOMPARE(bytes.size(), content.size());
        QCOMPARE(reinterpret_cast<uintptr_t>(bytes.data()) % (uintptr_t{2} << 20), uintptr_t{0});
        QVERIFY(std::equal(bytes.begin(), bytes.end(), reinterpret_cast<const uint8_t*>(content.data())));
        (*copy)->release(bytes);
        QVERIFY(std::equal(bytes.begin(), bytes.end(), reinterpret_cast<const uint8_t*>(content.data())));
        QVERIFY(!MappedFile::readIntoMemory(dir.filePath("absent.bin").toStdString()));
        const std::string empty = dir.filePath("empty.bin").toStdString();
        std::ofstream(empty, std::ios::binary).flush();
        auto none = MappedFile::readIntoMemory(empty);
        QVERIFY(none.has_value() && (*none)->bytes().empty());
    }

    void emptyFileIsAnEmptySpan() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("empty.bin").toStdString();
        std::ofstream(path, std::ios::binary).flush();
        auto mapped = MappedFile::open(path);
        QVERIFY(mapped.has_value());
        QCOMPARE((*mapped)->bytes().size(), size_t{0});
    }

    void missingPathIsAnIoError() {
        QTemporaryDir dir;
        auto mapped = MappedFile::open(dir.filePath("absent.gguf").toStdString());
        QVERIFY(!mapped);
        QCOMPARE(mapped.error().code, ErrorCode::Io);
        QVERIFY(mapped.error().message.find("cannot open") != std::string::npos);
        QVERIFY(mapped.error().message.find("absent.gguf") != std::string::npos);
    }

    void folderIsAnIoError() {
        QTemporaryDir dir;
        auto mapped = MappedFile::open(dir.path().toStdString());
        QVERIFY(!mapped);
        QCOMPARE(mapped.error().code, ErrorCode::Io);
    }
};

QTEST_GUILESS_MAIN(TestMappedFile)
#include "test_mapped_file.moc"
