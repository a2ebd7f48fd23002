#!/usr/bin/env python3
"""Reference ids for test_bpe_reference: HF `tokenizers` built from a GGUF's byte-level BPE.

Usage: bpe_reference.py MODEL.gguf CORPUS.json  ->  JSON on stdout:
  {"ids": [[...], ...], "decoded": ["...", ...]}, one entry per corpus string.

The tokenizer mirrors SmolLM2's tokenizer.json: BPE(vocab, merges) with the pre-tokenizers
Digits(individual_digits=True) then ByteLevel(add_prefix_space=False, use_regex=True), and the
ByteLevel decoder. Special tokens are not registered: their text is plain text, as in Hearth
for segments that do not allow special tokens. Needs the `gguf` and `tokenizers` packages.
"""
import json
import sys

import gguf
from tokenizers import Tokenizer, decoders, models, pre_tokenizers


def string_array(reader, key):
    field = reader.fields[key]
    return [bytes(field.parts[i]).decode("utf-8") for i in field.data]


def build(path):
    reader = gguf.GGUFReader(path)
    tokens = string_array(reader, "tokenizer.ggml.tokens")
    merges = [tuple(m.split(" ", 1)) for m in string_array(reader, "tokenizer.ggml.merges")]
    vocab = {text: i for i, text in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True),
         pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)])
    tok.decoder = decoders.ByteLevel()
    return tok


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tok = build(sys.argv[1])
    with open(sys.argv[2], encoding="utf-8") as f:
        corpus = json.load(f)["strings"]
    ids = [tok.encode(s, add_special_tokens=False).ids for s in corpus]
    decoded = [tok.decode(i, skip_special_tokens=False) for i in ids]
    json.dump({"ids": ids, "decoded": decoded}, sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
