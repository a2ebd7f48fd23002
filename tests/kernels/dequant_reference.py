#!/usr/bin/env python3
# The independent side of test_dequant_reference: gguf-py (gguf.GGUFReader, gguf.quants) reads
# and dequantizes GGUF tensors and writes JSON lines the C++ test checks Hearth's kernels against.
"""Usage:
  dequant_reference.py tensors FILE.gguf
      One JSON line per tensor, flushed as soon as it is ready: name, type (GGML id), dims
      (GGUF order, dims[0] contiguous), offset (absolute file offset of the raw data),
      nbytes, and the BLAKE2b-256 of the tensor dequantized to little-endian float32.
  dequant_reference.py synthetic OUTDIR
      Seeded random rows quantized with gguf.quants.quantize (covering types no test model
      holds); writes input.f32, <TYPE>.raw and <TYPE>.f32 (the reference dequantization)
      into OUTDIR and prints one JSON line per type.
  dequant_reference.py dump FILE.gguf TENSOR OUT.f32
      Writes one tensor's reference dequantization (for diagnosing a mismatch).
"""
import hashlib
import json
import os
import sys

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import GGUFReader
from gguf.quants import dequantize, quantize


def reference_values(tensor) -> np.ndarray:
    values = dequantize(tensor.data, tensor.tensor_type)
    return np.ascontiguousarray(values, dtype="<f4")


def cmd_tensors(path: str) -> None:
    reader = GGUFReader(path)
    for tensor in reader.tensors:
        values = reference_values(tensor)  # one tensor at a time: gemma's embedding is ~670 MB
        line = {
            "name": tensor.name,
            "type": int(tensor.tensor_type),
            "dims": [int(d) for d in tensor.shape],
            "offset": int(tensor.data_offset),
            "nbytes": int(tensor.n_bytes),
            "blake2b": hashlib.blake2b(memoryview(values).cast("B"), digest_size=32).hexdigest(),
        }
        del values
        print(json.dumps(line), flush=True)


def synthetic_input(rng: np.random.Generator, n_rows: int, n_cols: int) -> np.ndarray:
    """Rows of different character: scaled normals, one-sided rows, a zero row, outliers."""
    rows = rng.standard_normal((n_rows, n_cols)).astype(np.float32)
    rows *= np.exp2(rng.integers(-12, 8, size=(n_rows, 1))).astype(np.float32)
    rows[1] = np.abs(rows[1])          # all positive: min > 0 for the Q*_1 types
    rows[2] = -np.abs(rows[2]) - 3.0   # all negative
    rows[3] = 0.0                      # all-zero blocks: d = 0
    rows[4, ::37] = 1.0e4              # outliers
    rows[5] = rng.integers(-8, 8, size=n_cols)  # exact small integers
    rows[6] = rng.integers(-254, 255, size=n_cols) / 4.0  # quarters: Q8_0 hits ties
    rows[6, ::32] = 63.5                        # amax 63.5 per block: d = 0.5, x/d = k + 0.5
    return rows


def float_edge_values() -> np.ndarray:
    """Values where half and bfloat16 rounding is easy to get wrong (quiet NaN only: the
    payload of a signalling NaN is handled differently by numpy and by F16C)."""
    bits = np.array([
        0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
        0x33000000, 0x33000001, 0x33800000, 0x387FC000, 0x387FE000, 0x38800000,
        0x3F801000, 0x3F803000, 0x3F801001, 0x477FE000, 0x477FEFFF, 0x477FF000,
        0x7F7FFFFF, 0x3F808000, 0x3F818000, 0x3F808001, 0x00000001, 0x007FFFFF,
    ], dtype=np.uint32)
    return bits.view(np.float32)


def cmd_synthetic(out_dir: str) -> None:
    rng = np.random.default_rng(20261129)
    rows = synthetic_input(rng, 16, 512)
    edge = float_edge_values()
    floats = rows.copy().ravel()
    floats[: edge.size] = edge  # the float formats also see the special values
    cases = [
        (T.Q4_0, rows), (T.Q4_1, rows), (T.Q5_0, rows), (T.Q5_1, rows), (T.Q8_0, rows),
        (T.F16, floats.reshape(rows.shape)), (T.BF16, floats.reshape(rows.shape)),
    ]
    for qtype, data in cases:
        name = qtype.name
        data.astype("<f4").tofile(os.path.join(out_dir, f"{name}.input.f32"))
        with np.errstate(all="ignore"):  # inf/nan inputs of the float formats
            raw = np.ascontiguousarray(quantize(data, qtype))
        raw.view(np.uint8).tofile(os.path.join(out_dir, f"{name}.raw"))
        ref = np.ascontiguousarray(dequantize(raw, qtype), dtype="<f4")
        ref.tofile(os.path.join(out_dir, f"{name}.f32"))
        print(json.dumps({"type": int(qtype), "name": name, "rows": data.shape[0],
                          "cols": data.shape[1]}), flush=True)


def cmd_dump(path: str, tensor_name: str, out_path: str) -> None:
    for tensor in GGUFReader(path).tensors:
        if tensor.name == tensor_name:
            reference_values(tensor).tofile(out_path)
            return
    sys.exit(f"no tensor {tensor_name} in {path}")


def main(argv: list[str]) -> None:
    if len(argv) == 3 and argv[1] == "tensors":
        cmd_tensors(argv[2])
    elif len(argv) == 3 and argv[1] == "synthetic":
        cmd_synthetic(argv[2])
    elif len(argv) == 5 and argv[1] == "dump":
        cmd_dump(argv[2], argv[3], argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
