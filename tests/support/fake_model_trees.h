// Fake folder trees of every layout the model discovery reads (app/models/model_sources.h),
// written under a temporary "home" with tiny Llamas from tiny_llama.h:
// - Ollama: manifests/<host>/<namespace>/<model>/<tag>, each a JSON object whose "layers" list
//   {mediaType, digest, size}; the weights are the layer of media type
//   "application/vnd.ollama.image.model", stored as blobs/sha256-<hex> for digest "sha256:<hex>".
//   Layout checked against Ollama's own description of its manifest (ollama/ollama,
//   server/internal/manifest/manifest.go: "layers", "digest", "mediaType", "size") and a real
//   manifest quoted in GDKAYKY/llama.cpp-desktop, docs/MODEL_PATH.md (schemaVersion 2, a config
//   layer, then model, system, template and license layers; blob file sha256-<hex>). The manifests
//   here are written by the test with digests of the blobs it writes.
// - the Hugging Face hub cache: hub/models--<org>--<repo>/snapshots/<revision>/<file>, a symbolic
//   link to ../../blobs/<hash> (huggingface_hub's cache layout).
// - LM Studio: models/<publisher>/<repo>/<file>.gguf; GPT4All: files directly in its folder;
//   Jan: nested folders under data/models; llama.cpp: files directly in ~/.cache/llama.cpp.
#pragma once

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>

#include "engine/model/gguf.h"
#include "tests/support/split_gguf.h"
#include "tests/support/tiny_llama.h"

namespace hearth::test {

inline bool writeTiny(const QString& path, uint32_t seed = 1) {
    TinyLlamaShape shape;
    shape.seed = seed;
    QDir().mkpath(QFileInfo(path).absolutePath());
    return tinyLlama(shape).writeFile(path.toStdString()).has_value();
}

inline QByteArray sha256Hex(const QByteArray& bytes) {
    return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
}

// Writes a blob and the manifest naming it under an Ollama models root; blobBytes empty: the
// manifest names a blob that is not there.
inline bool writeOllamaModel(const QString& root, const QString& name, const QByteArray& blobBytes,
                             const QByteArray& missingDigest = {}) {
    const QByteArray digest = blobBytes.isEmpty() ? missingDigest : sha256Hex(blobBytes);
    QDir().mkpath(root + "/blobs");
    if (!blobBytes.isEmpty()) {
        QFile blob(root + "/blobs/sha256-" + digest);
        if (!blob.open(QIODevice::WriteOnly) || blob.write(blobBytes) != blobBytes.size()) return false;
    }
    const QByteArray params = R"({"stop":["<|im_end|>"]})";
    const QJsonObject manifest{{"schemaVersion", 2},
                               {"mediaType", "application/vnd.docker.distribution.manifest.v2+json"},
                               {"config",
                                QJsonObject{{"mediaType", "application/vnd.docker.container.image.v1+json"},
                                            {"digest", "sha256:" + QString(sha256Hex("config"))},
                                            {"size", 6}}},
                               {"layers",
                                QJsonArray{QJsonObject{{"mediaType", "application/vnd.ollama.image.model"},
                                                       {"digest", "sha256:" + QString(digest)},
                                                       {"size", blobBytes.size()}},
                                           QJsonObject{{"mediaType", "application/vnd.ollama.image.params"},
                                                       {"digest", "sha256:" + QString(sha256Hex(params))},
                                                       {"size", params.size()}}}}};
    const QString path = root + "/manifests/" + name;
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(QJsonDocument(manifest).toJson()) > 0;
}

inline QByteArray tinyBytes(uint32_t seed) {
    TinyLlamaShape shape;
    shape.seed = seed;
    const auto image = tinyLlama(shape).toBytes();
    return QByteArray(reinterpret_cast<const char*>(image.bytes.data()), static_cast<qsizetype>(image.bytes.size()));
}

// A model split in `parts` files named <prefix>-0000i-of-0000N.gguf.
inline bool writeTinySplit(const QString& prefix, int parts) {
    const QString whole = prefix + ".whole.tmp";
    if (!writeTiny(whole, 7)) return false;
    bool ok = false;
    {
        auto file = GgufFile::open(whole.toStdString());  // unmapped at the end of the block
        ok = file && writeSplit(**file, prefix.toStdString(), parts).size() == static_cast<size_t>(parts);
    }
    return QFile::remove(whole) && ok;
}

// A Hugging Face cache repository: blobs/<hash> holding each file, snapshots/<revision>/<name>
// linking to it.
inline bool writeHfFile(const QString& hub, const QString& repo, const QString& revision, const QString& name,
                        const QByteArray& bytes) {
    const QString repoDir = hub + "/models--" + QString(repo).replace('/', "--");
    const QString blob = repoDir + "/blobs/" + sha256Hex(bytes);
    QDir().mkpath(repoDir + "/blobs");
    QDir().mkpath(QFileInfo(repoDir + "/snapshots/" + revision + "/" + name).absolutePath());
    QFile f(blob);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) return false;
    f.close();
    const QString link = repoDir + "/snapshots/" + revision + "/" + name;
    return QFile::link(QDir(QFileInfo(link).absolutePath()).relativeFilePath(blob), link);
}

inline QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace hearth::test
