#!/usr/bin/env python3
"""Prints what the reference reader (gguf.GGUFReader, the `gguf` package) sees in a GGUF file,
as JSON, for test_gguf_models to compare with Hearth's reader.

Integers are written as decimal strings and strings as hex of their bytes, so that nothing is
lost in the JSON (u64 values beyond 2^53, bytes that are not UTF-8). Floats are JSON numbers
(Python's repr round-trips a double exactly; f32 values convert to double exactly). Each
tensor carries the SHA-1 of its data bytes.
Usage: gguf_dump.py FILE > out.json
"""
import hashlib
import json
import sys

import gguf
from gguf import GGUFValueType as VT

INT_TYPES = {VT.UINT8, VT.INT8, VT.UINT16, VT.INT16, VT.UINT32, VT.INT32, VT.UINT64, VT.INT64}


def scalar(vtype, part):
    if vtype == VT.STRING:
        return bytes(part).hex()
    value = part.tolist()[0]
    if vtype in INT_TYPES:
        return str(int(value))
    if vtype == VT.BOOL:
        return bool(value)
    return float(value)


def field_json(field):
    vtype = VT(int(field.parts[2][0]))  # parts: key length, key bytes, value type, value parts
    out = {"type": int(vtype)}
    if vtype != VT.ARRAY:
        out["value"] = scalar(vtype, field.parts[field.data[0]])
        return out
    elem = VT(int(field.parts[3][0]))
    out["elem_type"] = int(elem)
    out["count"] = int(field.parts[4][0])
    if elem == VT.ARRAY:  # the reference reader flattens nested arrays; compare counts only
        return out
    out["items"] = [scalar(elem, field.parts[i]) for i in field.data]
    return out


def main():
    reader = gguf.GGUFReader(sys.argv[1])
    fields = {k: f for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    dump = {
        "version": int(reader.fields["GGUF.version"].parts[0][0]),
        "alignment": int(reader.alignment),
        "data_offset": int(reader.data_offset),
        "metadata": {k: field_json(f) for k, f in fields.items()},
        "tensors": [
            {
                "name": t.name,
                "dims": [int(d) for d in t.shape],
                "type": int(t.tensor_type),
                "data_offset": int(t.data_offset),
                "n_bytes": int(t.n_bytes),
                "sha1": hashlib.sha1(reader.data[t.data_offset:t.data_offset + t.n_bytes]).hexdigest(),
            }
            for t in reader.tensors
        ],
    }
    json.dump(dump, sys.stdout)


if __name__ == "__main__":
    main()
