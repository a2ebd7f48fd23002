"""Drives `hearth-cli serve` with the official `openai` client (and raw HTTP where a client
would not send such a request). One JSON request on stdin names the scenario and the server;
one JSON answer on stdout: {"failures": [...], ...observations}. Used by test_server.cpp."""
import http.client
import json
import math
import subprocess
import sys
import threading
import time

import openai

PROMPTS = [
    "What is the capital of France?",
    "Name three colours.",
    "Write a haiku about the sea.",
    "What is 2 + 2?",
    "Say hello in Spanish.",
    "List two fruits.",
    "What do bees make?",
    "Describe a cat in one sentence.",
]


class Checks:
    def __init__(self):
        self.failures = []

    def check(self, ok, what):
        if not ok:
            self.failures.append(what)
        return ok


def client(req, **kw):
    return openai.OpenAI(base_url=req["base_url"] + "/v1", api_key=req.get("api_key") or "none", max_retries=0, **kw)


def greedy(c, prompt, max_tokens=24, **kw):
    return c.chat.completions.create(model="anything", messages=[{"role": "user", "content": prompt}],
                                     max_tokens=max_tokens, temperature=0, **kw)


def stream_text(c, prompt, max_tokens=24, **kw):
    chunks = list(c.chat.completions.create(model="anything", messages=[{"role": "user", "content": prompt}],
                                            max_tokens=max_tokens, temperature=0, stream=True, **kw))
    text = "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices)
    return text, chunks


def health(req):
    host, port = req["base_url"].removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    headers = {"Authorization": "Bearer " + req["api_key"]} if req.get("api_key") else {}
    conn.request("GET", "/health", headers=headers)
    r = conn.getresponse()
    return r.status, json.loads(r.read())


def raw(req, method, path, body=b"", headers=None, auth=True):
    host, port = req["base_url"].removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    h = {"Content-Type": "application/json"}
    if auth and req.get("api_key"):
        h["Authorization"] = "Bearer " + req["api_key"]
    h.update(headers or {})
    try:
        conn.request(method, path, body=body, headers=h)
        r = conn.getresponse()
        data = r.read()
    except (ConnectionError, BrokenPipeError) as e:
        return -1, {"exception": repr(e)}
    try:
        return r.status, json.loads(data)
    except ValueError:
        return r.status, {"raw": data.decode("utf-8", "replace")}


def basics(req, out):
    k = Checks()
    c = client(req)
    whole = greedy(c, PROMPTS[0])
    text = whole.choices[0].message.content
    k.check(whole.object == "chat.completion" and whole.choices[0].message.role == "assistant", "chat object shape")
    k.check(len(text) > 0, "chat reply is empty")
    k.check(whole.choices[0].finish_reason in ("stop", "length"), "finish_reason " + str(whole.choices[0].finish_reason))
    u = whole.usage
    k.check(u.prompt_tokens > 5 and 0 < u.completion_tokens <= 24 and u.total_tokens == u.prompt_tokens + u.completion_tokens,
            "usage " + str(u))
    streamed, chunks = stream_text(c, PROMPTS[0], stream_options={"include_usage": True})
    k.check(streamed == text, "streamed text %r differs from the whole reply %r" % (streamed, text))
    k.check(chunks[0].choices[0].delta.role == "assistant", "the first chunk names the role")
    k.check(chunks[-1].choices == [] and chunks[-1].usage is not None, "the last chunk carries usage")
    k.check(chunks[-1].usage.completion_tokens == u.completion_tokens, "streamed usage %s" % chunks[-1].usage)
    # The same prompt again: its whole blocks come from the prefix cache.
    k.check(chunks[-1].usage.prompt_tokens_details.cached_tokens > 0, "no cached prompt tokens on a repeated prompt")
    out["chat_text"] = text
    out["cached_tokens"] = chunks[-1].usage.prompt_tokens_details.cached_tokens

    # Stop strings: stopping at a word of the greedy reply cuts the reply before it.
    words = [w for w in text.split() if len(w) > 3]
    if k.check(len(words) > 1, "reply too short to pick a stop word: %r" % text):
        stop = words[1]
        stopped = greedy(c, PROMPTS[0], stop=[stop])
        k.check(stopped.choices[0].message.content == text[:text.index(stop)], "stop %r: %r" % (stop, stopped.choices[0].message.content))
        k.check(stopped.choices[0].finish_reason == "stop", "stop string finish_reason")
        st, _ = stream_text(c, PROMPTS[0], stop=stop)
        k.check(st == text[:text.index(stop)], "streamed stop %r: %r" % (stop, st))

    # Log-probabilities: log-softmax of the raw logits; greedy picks the most likely token.
    lp = greedy(c, PROMPTS[1], max_tokens=8, logprobs=True, top_logprobs=3)
    content = lp.choices[0].logprobs.content
    k.check(len(content) > 0, "no logprobs")
    for t in content:
        k.check(t.logprob <= 0 and len(t.top_logprobs) == 3, "logprob entry %s" % t)
        k.check(abs(t.top_logprobs[0].logprob - t.logprob) < 1e-6 and t.top_logprobs[0].token == t.token, "greedy token is not the top one")
        k.check(all(a.logprob >= b.logprob for a, b in zip(t.top_logprobs, t.top_logprobs[1:])), "top_logprobs not sorted")
        k.check(sum(math.exp(x.logprob) for x in t.top_logprobs) <= 1 + 1e-4, "top probabilities sum above 1")
        k.check(bytes(t.bytes).decode("utf-8", "replace") == t.token or "\ufffd" in t.token, "bytes do not spell the token")
    k.check("".join(t.token for t in content) == lp.choices[0].message.content, "logprob tokens do not spell the reply")
    out["first_logprob"] = content[0].logprob if content else None

    # Completions, whole and streamed, with the legacy logprobs.
    comp = c.completions.create(model="x", prompt="The capital of France is", max_tokens=8, temperature=0, logprobs=2)
    ctext = comp.choices[0].text
    k.check(comp.object == "text_completion" and "Paris" in ctext, "completion %r" % ctext)
    k.check(len(comp.choices[0].logprobs.tokens) == comp.usage.completion_tokens, "completion logprobs count")
    cs = list(c.completions.create(model="x", prompt="The capital of France is", max_tokens=8, temperature=0, stream=True))
    k.check("".join(ch.choices[0].text for ch in cs if ch.choices) == ctext, "streamed completion differs")
    out["completion_text"] = ctext

    # Sampling options are taken (and a seed repeats a sampled reply).
    kw = dict(temperature=0.9, top_p=0.9, presence_penalty=0.5, frequency_penalty=0.5, seed=7,
              extra_body={"repeat_penalty": 1.1, "top_k": 20, "min_p": 0.01})
    a = c.chat.completions.create(model="x", messages=[{"role": "user", "content": PROMPTS[2]}], max_tokens=16, **kw)
    b = c.chat.completions.create(model="x", messages=[{"role": "user", "content": PROMPTS[2]}], max_tokens=16, **kw)
    k.check(a.choices[0].message.content == b.choices[0].message.content, "the same seed gave different replies")
    # logit_bias: banning " Paris" (its id from hearth-cli tokenize) changes the completion.
    ids = json.loads(subprocess.run([req["cli"], "tokenize", "--model", req["model"], "--text", " Paris", "--no-bos", "--json"],
                                    capture_output=True, text=True, check=True).stdout)["tokens"]
    if k.check(len(ids) == 1, "' Paris' is not one token: %s" % ids):
        banned = c.completions.create(model="x", prompt="The capital of France is", max_tokens=8, temperature=0,
                                      logit_bias={str(ids[0]): -100})
        k.check(not banned.choices[0].text.startswith(" Paris"), "logit_bias did not ban ' Paris': %r" % banned.choices[0].text)
    models = c.models.list()
    k.check(len(models.data) == 1 and models.data[0].id, "models list")
    out["model"] = models.data[0].id
    return k


def errors(req, out):
    k = Checks()
    c = client(req)
    status, body = raw(req, "POST", "/v1/chat/completions", b"{not json")
    k.check(status == 400 and body.get("error", {}).get("type") == "invalid_request_error", "malformed JSON: %s %s" % (status, body))
    try:
        c.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}], temperature="hot")
        k.check(False, "a string temperature was accepted")
    except openai.BadRequestError as e:
        k.check(e.status_code == 400 and e.body.get("param") == "temperature", "wrong type: %s" % e.body)
    try:
        c.chat.completions.create(model="x", messages="hello")
        k.check(False, "messages as a string was accepted")
    except openai.BadRequestError as e:
        k.check(e.body.get("param") == "messages", "messages type: %s" % e.body)
    try:
        c.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}], n=2)
        k.check(False, "n=2 was accepted")
    except openai.BadRequestError as e:
        k.check(e.body.get("param") == "n", "n: %s" % e.body)
    try:
        c.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}], logit_bias={"99999999": 5})
        k.check(False, "an out-of-vocabulary logit_bias id was accepted")
    except openai.BadRequestError as e:
        k.check(e.status_code == 400, "logit_bias id: %s" % e.body)
    if req.get("api_key"):
        for key in ("", "wrong"):
            try:
                openai.OpenAI(base_url=req["base_url"] + "/v1", api_key=key or "x", max_retries=0,
                              default_headers={} if key else {"Authorization": ""}).models.list()
                k.check(False, "key %r was accepted" % key)
            except openai.AuthenticationError as e:
                k.check(e.status_code == 401 and e.body.get("type") == "authentication_error", "401: %s" % e.body)
        status, body = raw(req, "GET", "/health", auth=False)
        k.check(status == 401, "/health without a key: %s" % status)
    status, body = raw(req, "GET", "/v1/nothing")
    k.check(status == 404 and body.get("error", {}).get("type") == "not_found_error", "404: %s %s" % (status, body))
    big = json.dumps({"model": "x", "messages": [{"role": "user", "content": "a" * (req["max_body"] + 10)}]}).encode()
    status, body = raw(req, "POST", "/v1/chat/completions", big)
    k.check(status == 413 and body.get("error", {}).get("code") == "request_too_large", "oversized body: %s %s" % (status, body))
    # Still serving.
    k.check(len(greedy(c, "Hi", max_tokens=4).choices[0].message.content) > 0, "no reply after the errors")
    return k


def concurrent(req, out):
    k = Checks()
    c = client(req)
    solo = [stream_text(c, p, max_tokens=32)[0] for p in PROMPTS]
    together = [None] * len(PROMPTS)
    peak = {"running": 0}

    def run(i):
        together[i] = stream_text(client(req), PROMPTS[i], max_tokens=32)[0]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(PROMPTS))]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        status, h = health(req)
        peak["running"] = max(peak["running"], h["requests"]["running"])
        time.sleep(0.01)
    for t in threads:
        t.join()
    for i, (a, b) in enumerate(zip(solo, together)):
        k.check(a == b, "prompt %d: concurrent %r != solo %r" % (i, b, a))
    out["peak_running"] = peak["running"]
    return k


def stream_forever(req):
    """Child process: streams a long reply, printing a line per chunk, until killed."""
    c = client(req)
    s = c.chat.completions.create(model="x", messages=[{"role": "user", "content": "Tell me a very long story."}],
                                  max_tokens=2000, temperature=0.8, stream=True,
                                  extra_body={"logit_bias": {str(t): -100 for t in req.get("ban", [])}})
    for _ in s:
        print("chunk", flush=True)


def cancel(req, out):
    """A client killed mid-stream: its request ends and its blocks come back. The engine keeps the
    last finished sequence's blocks for a continuation (one sequence), so "idle" is measured
    after the same short request before and after."""
    k = Checks()
    c = client(req)
    greedy(c, "Hi", max_tokens=1)
    _, idle = health(req)
    child = subprocess.Popen([sys.executable, __file__, "--child"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    child.stdin.write(json.dumps(req))
    child.stdin.close()
    for _ in range(20):
        child.stdout.readline()
    _, busy = health(req)
    child.kill()
    killed = time.monotonic()
    child.wait()
    while health(req)[1]["requests"]["running"] > 0 and time.monotonic() - killed < 5:
        time.sleep(0.002)
    out["freed_ms"] = (time.monotonic() - killed) * 1000
    greedy(c, "Hi", max_tokens=1)
    _, after = health(req)
    out["idle"], out["busy"], out["after"] = idle["kv_blocks"], busy["kv_blocks"], after["kv_blocks"]
    k.check(busy["kv_blocks"]["used"] > idle["kv_blocks"]["used"] and busy["requests"]["running"] == 1,
            "the stream held no blocks: %s" % busy)
    k.check(after["requests"]["running"] == 0, "the killed stream is still running: %s" % after)
    k.check(after["kv_blocks"]["used"] == idle["kv_blocks"]["used"], "blocks not returned: idle %s, after %s" % (idle, after))
    b = after["kv_blocks"]
    k.check(b["free"] + b["cached"] + b["used"] == b["total"], "block counts do not add up: %s" % b)
    return k


def queue(req, out):
    """Against a server with --parallel 1 --queue 1: a third request while two are in is refused."""
    k = Checks()
    results = [None] * 2

    def run(i):
        results[i] = stream_text(client(req), PROMPTS[i], max_tokens=64)[0]

    first = threading.Thread(target=run, args=(0,))
    first.start()
    while health(req)[1]["requests"]["running"] < 1:
        time.sleep(0.005)
    second = threading.Thread(target=run, args=(1,))
    second.start()
    while health(req)[1]["requests"]["waiting"] < 1:
        time.sleep(0.005)
    try:
        greedy(client(req), PROMPTS[2], max_tokens=4)
        k.check(False, "a request beyond the queue was accepted")
    except openai.RateLimitError as e:
        k.check(e.status_code == 429 and e.body.get("code") == "queue_full", "429: %s" % e.body)
    first.join()
    second.join()
    k.check(all(results), "the queued requests did not finish: %s" % results)
    return k


SCENARIOS = {"basics": basics, "errors": errors, "concurrent": concurrent, "cancel": cancel, "queue": queue}

if __name__ == "__main__":
    request = json.load(sys.stdin)
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        stream_forever(request)
        sys.exit(0)
    answer = {}
    checks = SCENARIOS[request["scenario"]](request, answer)
    answer["failures"] = checks.failures
    print(json.dumps(answer))
