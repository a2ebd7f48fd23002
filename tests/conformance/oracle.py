#!/usr/bin/env python3
"""The conformance oracle: llama.cpp through llama-cpp-python, asked the same questions as
Hearth. Reads one JSON request on stdin, writes one JSON answer on stdout. Answers are cached
in $HEARTH_ORACLE_CACHE keyed by (oracle version, model SHA-256, request), so a warm run does
not recompute them.

If the native library dies (a fault or an illegal instruction), faulthandler prints the Python
stack to stderr before the process ends with the signal; the caller reports the signal.

Requests:
  {"op": "info"}                                   -> {"version", "build"}: build is the
      instruction-set list setup-oracle.sh built llama.cpp for (hearth-oracle-build.txt)
  {"op": "forward", "model": P}                    -> {"n_vocab", "argmax", "finite"}: one forward
      pass over a few tokens, never cached (the oracle's health check)
  {"op": "tokenize", "model": P, "texts": [...]}   -> {"tokens": [[ids], ...]}  (BOS as the
      vocabulary asks, special-token text kept as plain text: llama.cpp's defaults)
      Optional: "vocab_only": true loads only the vocabulary (a file without tensors, such as
      llama.cpp's ggml-vocab-*.gguf); "add_special": false adds no BOS whatever the vocabulary
      asks (as llama.cpp's test-tokenizer-0 tokenizes its .inp cases).
  {"op": "greedy", "model": P, "prompts": [[ids], ...], "n": 64, "logit_positions": 8,
   "stop_ids": [...], "flash_attn": true}
      -> {"runs": [{"tokens": [...], "n_logits": k, "gaps": [top1-top2, ...]}], "n_vocab": V,
          "logits_file": F}
      F holds float32 rows [run][position][V] for the first "logit_runs" runs (k rows each):
      row 0 follows the last prompt token; row i chose tokens[i].
  {"op": "chat", "cases": [{"template", "bos_token", "eos_token", "messages", "add_generation_prompt"}]}
      -> {"renders": [{"text": T} or {"error": E}]}: Jinja2 as transformers renders chat templates
      (sandboxed, trim_blocks, lstrip_blocks, raise_exception); not cached (no model). A case's
      optional "enable_thinking" is passed as that template variable (Qwen 3's switch), as
      apply_chat_template passes its extra keyword arguments.
  {"op": "chat_tokens", "model": P, "bos_token", "eos_token", "messages", "add_generation_prompt",
   "eog_candidates": [ids]}
      -> {"text": T, "tokens": [ids], "eog": [ids]}: the file's own tokenizer.chat_template
      rendered as "chat" renders it, tokenized by llama.cpp as its server does (special tokens
      parsed, BOS added when the vocabulary asks, but one BOS only), and which candidates llama.cpp's vocabulary ends
      generation on (llama_vocab_is_eog). The vocabulary alone is loaded.
  {"op": "quantize", "model": F32 P, "out": Q, "ftype": "Q4_0"|...|"BF16"}
      -> {"ok": true}: llama_model_quantize with pure = true (every 2-D tensor the one type);
      not cached (the output file is the result, and the test compares its tensor types).
  {"op": "logits", "model": P, "prompts": [[ids], ...], "flash_attn": true}
      -> {"n_vocab": V, "logits_file": F}: F holds float32 rows [prompt][position][V], every
      position of every prompt (logits_all).
  {"op": "perplexity", "model": P, "tokens": [ids], "n_ctx": 512, "first": 256}
      -> {"chunks": [{"nll": sum, "n": count}], "n_scored": N, "ppl": exp(mean nll)}: chunks of
      n_ctx tokens (BOS first), token i of a chunk scored by the logits at i - 1 for i >= first.
"""
import faulthandler
import hashlib
import json
import os
import sys

faulthandler.enable()


def build_info():
    """What setup-oracle.sh wrote beside the environment: version, instruction sets, CMake flags."""
    try:
        with open(os.path.join(sys.prefix, "hearth-oracle-build.txt")) as f:
            return f.read().strip()
    except OSError:
        return "unknown (no hearth-oracle-build.txt in %s: not installed by setup-oracle.sh)" % sys.prefix


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
    key = json.dumps({"oracle": llama_cpp.__version__, "build": build_info(), "settings": SETTINGS,
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
    if req.get("vocab_only"):
        from llama_cpp import Llama
        llm = Llama(model_path=req["model"], vocab_only=True, verbose=False)
    else:
        llm = load(req["model"], n_ctx=64)
    add_bos = req.get("add_special", True)
    return {"tokens": [llm.tokenize(t.encode("utf-8"), add_bos=add_bos, special=False) for t in req["texts"]]}


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
            # The top two as a stable sort of -row would order them (the lower index first
            # among equals), by two argmax passes: sorting a 262k vocabulary took longer than
            # the model's decode step.
            tok = int(np.argmax(row))
            rest = row.copy()
            rest[tok] = -np.inf
            second = int(np.argmax(rest))
            tokens.append(tok)
            gaps.append(float(row[tok] - row[second]))
            if i < req.get("logit_positions", 0) and r < req.get("logit_runs", 0):
                out.write(row.tobytes())
                logits.append(1)
            if llm.token_eos() == tok or tok in req.get("stop_ids", []):
                break
            llm.eval([tok])
        runs.append({"tokens": tokens, "n_logits": len(logits), "gaps": gaps})
    out.close()
    return {"runs": runs, "n_vocab": llm.n_vocab(), "logits_file": logits_path}


def op_forward(req):
    import numpy as np
    llm = load(req["model"], n_ctx=64)
    tokens = llm.tokenize(b"Hello, world. Once upon a time", add_bos=True, special=False)
    llm.eval(tokens)
    row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
    return {"n_vocab": llm.n_vocab(), "argmax": int(row.argmax()), "finite": bool(np.isfinite(row).all())}


def op_chat_tokens(req):
    import llama_cpp
    from llama_cpp import Llama
    llm = Llama(model_path=req["model"], vocab_only=True, verbose=False)
    case = {k: req[k] for k in ("bos_token", "eos_token", "messages", "add_generation_prompt")}
    case["template"] = llm.metadata["tokenizer.chat_template"]
    render = op_chat({"cases": [case]})["renders"][0]
    if "error" in render:
        raise SystemExit("the template rejects the conversation: " + render["error"])
    # As llama.cpp's server tokenizes a rendered prompt (special tokens parsed, BOS added when
    # the vocabulary asks), less the second BOS it then has when the template wrote one too.
    tokens = llm.tokenize(render["text"].encode("utf-8"), add_bos=True, special=True)
    if len(tokens) >= 2 and tokens[0] == tokens[1] == llm.token_bos():
        tokens = tokens[1:]
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    eog = [i for i in req["eog_candidates"] if llama_cpp.llama_vocab_is_eog(vocab, i)]
    return {"text": render["text"], "tokens": tokens, "eog": eog}


def op_chat(req):
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise ValueError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    renders = []
    for case in req["cases"]:
        try:
            extra = {"enable_thinking": case["enable_thinking"]} if "enable_thinking" in case else {}
            text = env.from_string(case["template"]).render(
                messages=case["messages"], add_generation_prompt=case["add_generation_prompt"],
                bos_token=case["bos_token"], eos_token=case["eos_token"], **extra)
            renders.append({"text": text})
        except Exception as e:  # the template rejects the conversation
            renders.append({"error": str(e)})
    return {"renders": renders}


# llama_ftype values of llama.cpp's include/llama.h; with pure = true the K-quant "_M" ftypes
# give every 2-D tensor the one base type.
FTYPES = {"F16": 1, "Q4_0": 2, "Q4_1": 3, "Q8_0": 7, "Q5_0": 8, "Q5_1": 9, "Q4_K": 15, "Q5_K": 17,
          "Q6_K": 18, "BF16": 32}


def op_quantize(req):
    import ctypes
    import llama_cpp
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = FTYPES[req["ftype"]]
    params.pure = True
    params.nthread = SETTINGS["n_threads"]
    rc = llama_cpp.llama_model_quantize(req["model"].encode(), req["out"].encode(), ctypes.byref(params))
    if rc != 0:
        raise SystemExit("llama_model_quantize failed: %d" % rc)
    return {"ok": True}


def op_logits(req, logits_path):
    import numpy as np
    llm = load(req["model"], n_ctx=max(len(p) for p in req["prompts"]) + 8, flash_attn=req.get("flash_attn", True))
    with open(logits_path, "wb") as out:
        for prompt in req["prompts"]:
            llm.reset()
            llm.eval(prompt)
            out.write(np.array(llm.scores[:len(prompt)], dtype=np.float32).tobytes())
    return {"n_vocab": llm.n_vocab(), "logits_file": logits_path}


def op_perplexity(req):
    import numpy as np
    n_ctx, first, tokens = req["n_ctx"], req["first"], req["tokens"]
    llm = load(req["model"], n_ctx=n_ctx)
    chunks = []
    for start in range(0, len(tokens) - n_ctx + 1, n_ctx):
        chunk = tokens[start:start + n_ctx]
        llm.reset()
        llm.eval(chunk)
        logits = np.array(llm.scores[first - 1:n_ctx - 1], dtype=np.float64)
        top = logits.max(axis=1, keepdims=True)
        logz = np.log(np.exp(logits - top).sum(axis=1)) + top[:, 0]
        targets = np.array(chunk[first:n_ctx])
        nll = float((logz - logits[np.arange(len(targets)), targets]).sum())
        chunks.append({"nll": nll, "n": len(targets)})
    n = sum(c["n"] for c in chunks)
    return {"chunks": chunks, "n_scored": n, "ppl": float(np.exp(sum(c["nll"] for c in chunks) / max(n, 1)))}


def main():
    req = json.load(sys.stdin)
    if req["op"] == "info":
        import llama_cpp
        print(json.dumps({"version": llama_cpp.__version__, "build": build_info()}))
        return
    if req["op"] == "forward":
        print(json.dumps(op_forward(req)))
        return
    if req["op"] in ("chat", "quantize"):
        print(json.dumps(op_chat(req) if req["op"] == "chat" else op_quantize(req)))
        return
    path = cache_path(req)
    if os.path.exists(path):
        sys.stdout.write(open(path).read())
        return
    if req["op"] == "greedy":
        answer = op_greedy(req, path[:-len(".json")] + ".logits.f32")
    elif req["op"] == "logits":
        answer = op_logits(req, path[:-len(".json")] + ".logits.f32")
    elif req["op"] == "perplexity":
        answer = op_perplexity(req)
    elif req["op"] == "chat_tokens":
        answer = op_chat_tokens(req)
    else:
        answer = op_tokenize(req)
    text = json.dumps(answer)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
