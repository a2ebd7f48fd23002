#!/usr/bin/env python3
"""The conformance oracle: llama.cpp through llama-cpp-python, asked the same questions as
Hearth. Reads one JSON request on stdin, writes one JSON answer on stdout. Answers are cached
in $HEARTH_ORACLE_CACHE keyed by (oracle version, model SHA-256, request), so a warm run does
not recompute them.

Requests:
  {"op": "info"}                                   -> {"version", "llama_cpp_commit"?}
  {"op": "tokenize", "model": P, "texts": [...]}   -> {"tokens": [[ids], ...]}  (BOS as the
      vocabulary asks, special-token text kept as plain text: llama.cpp's defaults)
  {"op": "greedy", "model": P, "prompts": [[ids], ...], "n": 64, "logit_positions": 8,
   "stop_ids": [...], "flash_attn": true}
      -> {"runs": [{"tokens": [...], "n_logits": k, "gaps": [top1-top2, ...]}], "n_vocab": V,
          "logits_file": F}
      F holds float32 rows [run][position][V] for the first "logit_runs" runs (k rows each):
      row 0 follows the last prompt token; row i chose tokens[i].
"""
import hashlib
import json
import os
import sys


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# How the oracle runs, part of the cache key: flash attention on, as llama.cpp chooses on CPU
# (and as ../shared/testdata's references were made); 2 threads; batches of 512.
SETTINGS = {"flash_attn": True, "n_threads": 2, "n_batch": 512}


def cache_path(request):
    import llama_cpp
    key = json.dumps({"oracle": llama_cpp.__version__, "settings": SETTINGS,
                      "model_sha256": sha256_file(request["model"]) if "model" in request else None,
                      "request": {k: v for k, v in request.items() if k != "model"}}, sort_keys=True)
    folder = os.environ.get("HEARTH_ORACLE_CACHE", os.path.expanduser("~/.cache/hearth/oracle-results"))
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, hashlib.sha256(key.encode()).hexdigest() + ".json")


def load(path, n_ctx=2048, flash_attn=True):
    from llama_cpp import Llama
    settings = dict(SETTINGS, flash_attn=flash_attn)
    return Llama(model_path=path, n_ctx=n_ctx, logits_all=True, verbose=False, **settings)


def op_tokenize(req):
    llm = load(req["model"], n_ctx=64)
    return {"tokens": [llm.tokenize(t.encode("utf-8"), add_bos=True, special=False) for t in req["texts"]]}


def op_greedy(req, logits_path):
    import numpy as np
    n_ctx = max(len(p) for p in req["prompts"]) + req["n"] + 8
    # flash_attn false gives the control run: llama.cpp against itself, which measures how far
    # two correct engines drift apart on this model.
    llm = load(req["model"], n_ctx=n_ctx, flash_attn=req.get("flash_attn", True))
    runs = []
    out = open(logits_path, "wb")
    for r, prompt in enumerate(req["prompts"]):
        llm.reset()
        llm.eval(prompt)
        tokens, logits, gaps = [], [], []
        for i in range(req["n"]):
            row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
            top = np.argsort(-row, kind="stable")[:2]
            tok = int(top[0])
            tokens.append(tok)
            gaps.append(float(row[top[0]] - row[top[1]]))
            if i < req.get("logit_positions", 0) and r < req.get("logit_runs", 0):
                out.write(row.tobytes())
                logits.append(1)
            if llm.token_eos() == tok or tok in req.get("stop_ids", []):
                break
            llm.eval([tok])
        runs.append({"tokens": tokens, "n_logits": len(logits), "gaps": gaps})
    out.close()
    return {"runs": runs, "n_vocab": llm.n_vocab(), "logits_file": logits_path}


def main():
    req = json.load(sys.stdin)
    if req["op"] == "info":
        import llama_cpp
        print(json.dumps({"version": llama_cpp.__version__}))
        return
    path = cache_path(req)
    if os.path.exists(path):
        sys.stdout.write(open(path).read())
        return
    if req["op"] == "greedy":
        answer = op_greedy(req, path[:-len(".json")] + ".logits.f32")
    else:
        answer = op_tokenize(req)
    text = json.dumps(answer)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
