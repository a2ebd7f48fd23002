#!/usr/bin/env python3
"""llama.cpp's side of `hearth-cli bench --compare-oracle`: times prefill and decode of the same
model file with llama-cpp-python's low-level API, on request, so that Hearth's and llama.cpp's
runs can be interleaved. Test/benchmark dependency only; nothing in Hearth loads llama.cpp.

    oracle_bench.py --model PATH --threads N --ctx N
prints {"ready": true, "version": V, "n_vocab": N} once the model is loaded, then answers each
request line {"prompt": [ids], "gen": G} with
    {"prefill_tokens", "prefill_ms", "decode_tokens", "decode_ms"}
prefill: one llama_decode of the whole prompt (n_batch = n_ubatch = 512, logits for the last
token only); decode: G - 1 single-token llama_decode calls, each token the argmax of the
previous logits (the first generated token comes from the prefill's logits, as in Hearth).
The KV memory is cleared before each request, so nothing is shared between requests.
A request {"quantize": {"in": P, "out": Q, "ftype": "Q4_K_M"}} (before or without --model)
runs llama.cpp's quantizer instead and answers {"ok": true}.
"""
import argparse
import ctypes
import json
import sys
import time


def quantize(spec):
    import llama_cpp
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, "LLAMA_FTYPE_MOSTLY_" + spec["ftype"])
    params.nthread = int(spec.get("threads", 2))
    rc = llama_cpp.llama_model_quantize(spec["in"].encode(), spec["out"].encode(), ctypes.byref(params))
    return {"ok": rc == 0, "rc": rc}


class Runner:
    def __init__(self, path, threads, n_ctx):
        import llama_cpp as L
        self.L = L
        L.llama_backend_init()
        mparams = L.llama_model_default_params()
        self.model = L.llama_model_load_from_file(path.encode(), mparams)
        if not self.model:
            raise RuntimeError("llama.cpp cannot load " + path)
        cparams = L.llama_context_default_params()
        cparams.n_ctx = n_ctx
        cparams.n_batch = 512
        cparams.n_ubatch = 512
        cparams.n_threads = threads
        cparams.n_threads_batch = threads
        self.ctx = L.llama_init_from_model(self.model, cparams)
        if not self.ctx:
            raise RuntimeError("llama.cpp cannot create a context")
        self.n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(self.model))
        self.batch = L.llama_batch_init(max(n_ctx, 512), 0, 1)

    def decode(self, ids, pos0):
        b = self.batch
        b.n_tokens = len(ids)
        for i, tok in enumerate(ids):
            b.token[i] = tok
            b.pos[i] = pos0 + i
            b.n_seq_id[i] = 1
            b.seq_id[i][0] = 0
            b.logits[i] = 1 if i == len(ids) - 1 else 0
        rc = self.L.llama_decode(self.ctx, b)
        if rc != 0:
            raise RuntimeError("llama_decode returned %d" % rc)

    def argmax_last(self):
        import numpy as np
        row = self.L.llama_get_logits_ith(self.ctx, -1)
        return int(np.argmax(np.ctypeslib.as_array(row, shape=(self.n_vocab,))))

    def run(self, prompt, gen):
        self.L.llama_memory_clear(self.L.llama_get_memory(self.ctx), True)
        t0 = time.perf_counter()
        for start in range(0, len(prompt), 512):  # one call for prompts up to n_batch
            self.decode(prompt[start:start + 512], start)
        tok = self.argmax_last()
        t1 = time.perf_counter()
        for i in range(gen - 1):
            self.decode([tok], len(prompt) + i)
            tok = self.argmax_last()
        t2 = time.perf_counter()
        return {"prefill_tokens": len(prompt), "prefill_ms": (t1 - t0) * 1e3,
                "decode_tokens": max(gen - 1, 0), "decode_ms": (t2 - t1) * 1e3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ctx", type=int, default=1024)
    args = ap.parse_args()
    import llama_cpp
    runner = Runner(args.model, args.threads, args.ctx) if args.model else None
    print(json.dumps({"ready": True, "version": llama_cpp.__version__,
                      "n_vocab": runner.n_vocab if runner else 0}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            if "quantize" in req:
                answer = quantize(req["quantize"])
            else:
                answer = runner.run(req["prompt"], int(req["gen"]))
        except Exception as e:  # one line the caller can show
            answer = {"error": str(e)}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
