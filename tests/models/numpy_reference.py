#!/usr/bin/env python3
"""A float64 numpy reference of the forward pass over a GGUF file's dequantized weights, for
the tests to compare Hearth's logits with. Independent of Hearth: weights are dequantized by
the `gguf` package (gguf-py), activations are never quantized, attention is a plain softmax.

Architectures: "llama" (pairwise RoPE, SwiGLU) and "gemma3" (embeddings x sqrt(n_embd), per-head
Q/K RMSNorm, NeoX RoPE with a local/global base, sliding-window local layers, sandwich norms,
GELU-tanh gated FFN, 1/sqrt(head_dim) query scale; the facts llama.cpp's gemma3 graph uses).

With --ggml-numerics the matmul inputs are rounded as ggml's CPU kernels (and Hearth's) round
them: activations quantized to Q8_0 (for Q4_0/Q5_0/Q8_0 weights) or Q8_K (for K-quants), K/V and
queries to F16. That separates quantization noise from structural differences.

Usage: numpy_reference.py MODEL.gguf IDS [IDS ...] [--top N] [--logits OUT.f32] [--ggml-numerics]
Each IDS is one prompt's token ids, comma-separated (weights are dequantized once for all).
Prints one JSON line per prompt: {"n_tokens", "top": [[id, logit], ...]} for its last position;
--logits writes the last position's logits of every prompt, [n_prompts, n_vocab] little-endian
float32.
"""
import argparse
import json
import math
import sys

import numpy as np
import gguf
from gguf.quants import dequantize


Q8_0_WEIGHTS = {"Q4_0", "Q5_0", "Q8_0", "Q4_1", "Q5_1"}
Q8_K_WEIGHTS = {"Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K"}


def round_q8_0(x):
    """Quantize-dequantize rows in blocks of 32: d = amax/127 stored as F16, q = round(x/d)."""
    b = x.reshape(-1, 32).astype(np.float32)
    d = np.abs(b).max(-1, keepdims=True) / np.float32(127)
    inv = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d != 0)
    y = b * inv
    q = np.clip(np.sign(y) * np.floor(np.abs(y) + np.float32(0.5)), -128, 127)  # roundf: ties away from 0
    return (q * d.astype(np.float16).astype(np.float32)).reshape(x.shape).astype(np.float64)


def round_q8_k(x):
    """Blocks of 256 scaled by the signed element of largest magnitude (it becomes -127)."""
    b = x.reshape(-1, 256).astype(np.float32)
    idx = np.abs(b).argmax(-1)
    mx = b[np.arange(len(b)), idx][:, None]
    iscale = np.divide(np.float32(-127), mx, out=np.zeros_like(mx), where=mx != 0)
    q = np.minimum(np.round(iscale * b), 127)  # nearest_int: ties to even, as np.round
    d = np.divide(np.float32(1), iscale, out=np.zeros_like(iscale), where=iscale != 0)
    return (q * d).reshape(x.shape).astype(np.float64)


def round_f16(x):
    return x.astype(np.float16).astype(np.float64)


class Weights:
    def __init__(self, path, ggml_numerics=False):
        self.reader = gguf.GGUFReader(path)
        self.tensors = {t.name: t for t in self.reader.tensors}
        self.cache = {}
        self.ggml_numerics = ggml_numerics

    def act(self, name, x):
        """x as the matmul with weight `name` sees it."""
        if not self.ggml_numerics:
            return x
        kind = self.tensors[name].tensor_type.name
        if kind in Q8_0_WEIGHTS:
            return round_q8_0(x)
        if kind in Q8_K_WEIGHTS:
            return round_q8_k(x)
        if kind == "F16":
            return round_f16(x)
        return x

    def mm(self, x, name):
        """x @ W^T with x rounded as the kernels round it."""
        return self.act(name, x) @ self.matrix(name).T

    def field(self, key, default=None):
        f = self.reader.fields.get(key)
        return f.contents() if f is not None else default

    def has(self, name):
        return name in self.tensors

    def matrix(self, name):
        """[rows, cols] float32 (GGUF dims are [cols, rows]), dequantized once."""
        if name not in self.cache:
            t = self.tensors[name]
            a = dequantize(t.data, t.tensor_type).astype(np.float32)
            self.cache[name] = a.reshape([int(x) for x in reversed(t.shape)])
        return self.cache[name]

    def rows(self, name, ids):
        """Selected rows of a matrix, dequantized one by one (token_embd is large)."""
        t = self.tensors[name]
        data = t.data.reshape(int(t.shape[-1]), -1) if t.data.ndim == 1 else t.data
        return np.stack([dequantize(data[i], t.tensor_type).astype(np.float64).reshape(-1) for i in ids])

    def project(self, name, h, chunk=16384):
        """h @ W^T for a large [rows, cols] matrix, in chunks of rows to bound memory."""
        t = self.tensors[name]
        n_rows = int(t.shape[-1])
        data = t.data.reshape(n_rows, -1) if t.data.ndim == 1 else t.data
        out = np.empty(n_rows)
        h = self.act(name, h)
        for r0 in range(0, n_rows, chunk):
            w = dequantize(data[r0:r0 + chunk], t.tensor_type).astype(np.float64)
            out[r0:r0 + chunk] = w.reshape(min(chunk, n_rows - r0), -1) @ h
        return out


def rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def rope(x, pos, base, half_split):
    """x: [n, heads, head_dim]; rotates all head_dim dims (n_rot = head_dim)."""
    n, _, hd = x.shape
    i = np.arange(hd // 2)
    theta = pos[:, None] * base ** (-2.0 * i / hd)
    c = np.cos(theta)[:, None, :]
    s = np.sin(theta)[:, None, :]
    x = x.copy()
    if half_split:  # NeoX: pairs (i, i + hd/2)
        a, b = x[..., : hd // 2].copy(), x[..., hd // 2:].copy()
        x[..., : hd // 2], x[..., hd // 2:] = a * c - b * s, a * s + b * c
    else:  # pairs (2i, 2i+1)
        a, b = x[..., 0::2].copy(), x[..., 1::2].copy()
        x[..., 0::2], x[..., 1::2] = a * c - b * s, a * s + b * c
    return x


def attention(q, k, v, scale, window):
    """q [n, H, hd], k/v [n, KV, hd]; causal, and with window > 0 query p sees keys p0 with
    p - p0 < window (llama.cpp's LLAMA_SWA_TYPE_STANDARD)."""
    n, n_heads, hd = q.shape
    group = n_heads // k.shape[1]
    p = np.arange(n)
    allowed = p[None, :] <= p[:, None]
    if window > 0:
        allowed &= (p[:, None] - p[None, :]) < window
    out = np.zeros_like(q)
    for h in range(n_heads):
        s = q[:, h, :] @ k[:, h // group, :].T * scale
        s = np.where(allowed, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        out[:, h, :] = s @ v[:, h // group, :]
    return out


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def forward_llama(w, toks):
    arch = "llama"
    n_layers = w.field(arch + ".block_count")
    n_embd = w.field(arch + ".embedding_length")
    n_heads = w.field(arch + ".attention.head_count")
    n_kv = w.field(arch + ".attention.head_count_kv", n_heads)
    eps = w.field(arch + ".attention.layer_norm_rms_epsilon")
    base = w.field(arch + ".rope.freq_base", 10000.0)
    hd = n_embd // n_heads
    n = len(toks)
    pos = np.arange(n, dtype=np.float64)
    x = w.rows("token_embd.weight", toks)
    for il in range(n_layers):
        p = f"blk.{il}."
        h = rms_norm(x, w.matrix(p + "attn_norm.weight"), eps)
        q = (h @ w.matrix(p + "attn_q.weight").T).reshape(n, n_heads, hd)
        k = (h @ w.matrix(p + "attn_k.weight").T).reshape(n, n_kv, hd)
        v = (h @ w.matrix(p + "attn_v.weight").T).reshape(n, n_kv, hd)
        q, k = rope(q, pos, base, False), rope(k, pos, base, False)
        att = attention(q, k, v, 1.0 / math.sqrt(hd), 0).reshape(n, -1)
        x = x + att @ w.matrix(p + "attn_output.weight").T
        h = rms_norm(x, w.matrix(p + "ffn_norm.weight"), eps)
        g = h @ w.matrix(p + "ffn_gate.weight").T
        u = h @ w.matrix(p + "ffn_up.weight").T
        x = x + (g / (1 + np.exp(-g)) * u) @ w.matrix(p + "ffn_down.weight").T
    h = rms_norm(x[-1], w.matrix("output_norm.weight"), eps)
    return w.project("output.weight" if w.has("output.weight") else "token_embd.weight", h)


def forward_gemma3(w, toks):
    arch = "gemma3"
    n_layers = w.field(arch + ".block_count")
    n_embd = w.field(arch + ".embedding_length")
    n_heads = w.field(arch + ".attention.head_count")
    n_kv = w.field(arch + ".attention.head_count_kv", n_heads)
    hd = w.field(arch + ".attention.key_length", n_embd // n_heads)
    eps = w.field(arch + ".attention.layer_norm_rms_epsilon")
    base_global = w.field(arch + ".rope.freq_base", 10000.0)
    base_local = w.field(arch + ".rope.freq_base_swa", 10000.0)
    window = w.field(arch + ".attention.sliding_window", 0)
    period = w.field(arch + ".attention.sliding_window_pattern", 6)
    softcap = w.field(arch + ".final_logit_softcapping", 0.0)
    scale = 1.0 / math.sqrt(n_embd // n_heads if n_layers == 62 else hd)
    n = len(toks)
    pos = np.arange(n, dtype=np.float64)
    x = w.rows("token_embd.weight", toks) * math.sqrt(n_embd)
    for il in range(n_layers):
        p = f"blk.{il}."
        local = window > 0 and (period == 0 or il % period < period - 1)
        base = base_local if local else base_global
        h = rms_norm(x, w.matrix(p + "attn_norm.weight"), eps)
        q = w.mm(h, p + "attn_q.weight").reshape(n, n_heads, hd)
        k = w.mm(h, p + "attn_k.weight").reshape(n, n_kv, hd)
        v = w.mm(h, p + "attn_v.weight").reshape(n, n_kv, hd)
        q = rms_norm(q, w.matrix(p + "attn_q_norm.weight"), eps)
        k = rms_norm(k, w.matrix(p + "attn_k_norm.weight"), eps)
        q, k = rope(q, pos, base, True), rope(k, pos, base, True)
        if w.ggml_numerics:  # F16 cache and F16 queries in attention
            q, k, v = round_f16(q), round_f16(k), round_f16(v)
        att = attention(q, k, v, scale, window if local else 0).reshape(n, -1)
        o = w.mm(att, p + "attn_output.weight")
        x = x + rms_norm(o, w.matrix(p + "post_attention_norm.weight"), eps)
        h = rms_norm(x, w.matrix(p + "ffn_norm.weight"), eps)
        g = w.mm(h, p + "ffn_gate.weight")
        u = w.mm(h, p + "ffn_up.weight")
        f = w.mm(gelu_tanh(g) * u, p + "ffn_down.weight")
        x = x + rms_norm(f, w.matrix(p + "post_ffw_norm.weight"), eps)
    h = rms_norm(x[-1], w.matrix("output_norm.weight"), eps)
    logits = w.project("output.weight" if w.has("output.weight") else "token_embd.weight", h)
    if softcap and softcap > 0:
        logits = softcap * np.tanh(logits / softcap)
    return logits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("prompts", nargs="+", help="comma-separated token ids, one argument per prompt")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--logits")
    ap.add_argument("--ggml-numerics", action="store_true")
    args = ap.parse_args()
    w = Weights(args.model, args.ggml_numerics)
    arch = w.field("general.architecture")
    forward = {"llama": forward_llama, "gemma3": forward_gemma3}.get(arch)
    if forward is None:
        sys.exit(f"unsupported architecture {arch}")
    all_logits = []
    for prompt in args.prompts:
        toks = [int(t) for t in prompt.split(",") if t]
        logits = forward(w, toks)
        all_logits.append(logits)
        top = np.argsort(-logits, kind="stable")[: args.top]
        print(json.dumps({"n_tokens": len(toks), "top": [[int(i), float(logits[i])] for i in top]}), flush=True)
    if args.logits:
        np.stack(all_logits).astype("<f4").tofile(args.logits)


if __name__ == "__main__":
    main()
