"""Load figure for hearth-cli serve: one client alone, then R requests from C concurrent
clients, all streamed through the official openai client. Prints aggregate output tokens/s
against the solo rate, p50/p99 time to first token, failed requests and the server's RSS
before and after.

    python3 tests/server/bench_serve.py --cli build/app/hearth-cli --model M.gguf \\
        [--parallel 8] [--threads 2] [--requests 32] [--clients 8] [--max-tokens 64]

The server is started here on a free loopback port. End-of-generation tokens are banned
(logit_bias) so that every reply has --max-tokens tokens and the runs compare like for like."""
import argparse
import concurrent.futures
import re
import statistics
import subprocess
import sys
import time

import openai

TOPICS = ["the sea", "a mountain", "a city at night", "an old library", "a garden in spring", "a train journey",
          "a snowy forest", "a market", "the moon", "a river", "a lighthouse", "a desert", "a small cafe",
          "a thunderstorm", "a museum", "a harbour"]


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def one_request(c, i, max_tokens, ban):
    start = time.monotonic()
    first = None
    usage = None
    stream = c.chat.completions.create(
        model="hearth", messages=[{"role": "user", "content": "Write a short story about %s." % TOPICS[i % len(TOPICS)]}],
        max_tokens=max_tokens, temperature=0, stream=True, stream_options={"include_usage": True},
        logit_bias={str(t): -100 for t in ban})
    for chunk in stream:
        if first is None and chunk.choices and chunk.choices[0].delta.content:
            first = time.monotonic() - start
        if chunk.usage:
            usage = chunk.usage
    return {"ttft_ms": first * 1000, "tokens": usage.completion_tokens, "seconds": time.monotonic() - start}


def run(c, count, clients, max_tokens, ban, offset):
    results, failed = [], 0
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        futures = [pool.submit(one_request, c, offset + i, max_tokens, ban) for i in range(count)]
        for f in futures:
            try:
                results.append(f.result())
            except Exception as e:  # counted, and shown
                failed += 1
                print("failed: %r" % e, file=sys.stderr)
    return results, failed, time.monotonic() - start


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--solo", type=int, default=4, help="requests of the single client")
    args = ap.parse_args()
    info = subprocess.run([args.cli, "info", "--model", args.model], capture_output=True, text=True).stdout
    ban = [int(m) for m in re.findall(r"EOS (\d+)", info)]  # the model's end-of-generation token
    server = subprocess.Popen([args.cli, "serve", "--model", args.model, "--port", "0", "--threads", str(args.threads),
                               "--parallel", str(args.parallel), "--queue", str(args.requests)],
                              stderr=subprocess.PIPE, text=True)
    try:
        port = None
        for line in server.stderr:
            m = re.search(r"listening on http://[0-9.]+:(\d+)", line)
            port = int(m.group(1)) if m else port
            if "loaded" in line:
                break
        c = openai.OpenAI(base_url="http://127.0.0.1:%d/v1" % port, api_key="none", max_retries=0, timeout=600)
        rss_before = rss_kib(server.pid)
        one_request(c, 0, 4, ban)  # warm-up
        solo, solo_failed, solo_s = run(c, args.solo, 1, args.max_tokens, ban, 100)
        many, failed, many_s = run(c, args.requests, args.clients, args.max_tokens, ban, 0)
        rss_after = rss_kib(server.pid)
    finally:
        server.terminate()
        server.wait()
    solo_rate = sum(r["tokens"] for r in solo) / solo_s
    rate = sum(r["tokens"] for r in many) / many_s
    ttft = [r["ttft_ms"] for r in many]
    print("model %s, --parallel %d, %d threads, %d-token replies (greedy)" % (args.model.split("/")[-1], args.parallel,
                                                                              args.threads, args.max_tokens))
    print("1 client, %d requests: %.1f output tokens/s, TTFT p50 %.0f ms" % (len(solo), solo_rate,
                                                                          statistics.median(r["ttft_ms"] for r in solo)))
    print("%d clients, %d requests: %.1f output tokens/s aggregate (%.2fx one client), %.1f s" % (
        args.clients, args.requests, rate, rate / solo_rate, many_s))
    print("time to first token: p50 %.0f ms, p99 %.0f ms" % (percentile(ttft, 50), percentile(ttft, 99)))
    print("failed requests: %d" % (failed + solo_failed))
    print("server RSS: %.1f MiB before, %.1f MiB after" % (rss_before / 1024, rss_after / 1024))
    return 1 if failed + solo_failed else 0


if __name__ == "__main__":
    sys.exit(main())
