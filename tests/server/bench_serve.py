"""Load figure for hearth-cli serve, and the same load against llama.cpp's own llama-server in the
same run: per server, one client alone, then R requests from C concurrent clients, all streamed
through the official openai client. Prints one table: aggregate output tokens/s against the
solo rate, p50/p99 time to first token, failed requests and the server's RSS before and after.

    python3 tests/server/bench_serve.py --cli build/app/hearth-cli --model M.gguf \\
        [--parallel 8] [--threads 2] [--requests 32] [--clients 8] [--max-tokens 64] \\
        [--llama-server PATH | --no-llama-server] [--llama-fa auto|on|off]

Each server is started here on a free loopback port, Hearth's first, then llama-server with
the same model, threads and --parallel (found with packaging/scripts/build-llama-tools.sh
--print unless --llama-server names one; when it is not built, its row says how to build it).
End-of-generation tokens are banned (logit_bias) so that every reply has --max-tokens tokens and
the runs compare like for like."""
import argparse
import concurrent.futures
import os
import re
import socket
import statistics
import subprocess
import sys
import time

import urllib.request

import openai

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_TOOLS = os.path.join(HERE, "..", "..", "packaging", "scripts", "build-llama-tools.sh")

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
    pieces = 0
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces += 1
            if first is None:
                first = time.monotonic() - start
        if chunk.usage:
            usage = chunk.usage
    if usage is None:
        raise RuntimeError("no usage in the stream (%d content pieces)" % pieces)
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


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_hearth(args):
    """hearth-cli serve on a port it picks; returns (process, port) once the model is loaded."""
    server = subprocess.Popen([args.cli, "serve", "--model", args.model, "--port", "0", "--threads", str(args.threads),
                               "--parallel", str(args.parallel), "--queue", str(args.requests)],
                              stderr=subprocess.PIPE, text=True)
    port = None
    for line in server.stderr:
        m = re.search(r"listening on http://[0-9.]+:(\d+)", line)
        port = int(m.group(1)) if m else port
        if "loaded" in line:
            break
    if port is None:
        server.terminate()
        raise RuntimeError("hearth-cli serve did not start")
    return server, port


def find_llama_server(args):
    """llama-server's path, or (None, why)."""
    if args.llama_server:
        return (args.llama_server, None) if os.access(args.llama_server, os.X_OK) else (
            None, "%s is not executable" % args.llama_server)
    out = subprocess.run(["bash", BUILD_TOOLS, "--print"], capture_output=True, text=True)
    path = os.path.join(out.stdout.strip().splitlines()[-1], "llama-server") if out.returncode == 0 and out.stdout.strip() else ""
    if path and os.access(path, os.X_OK):
        return path, None
    return None, "not built: run packaging/scripts/build-llama-tools.sh (once; it prints where it put llama-server)"


def start_llama(args, exe):
    """llama-server with the same model, threads and slots; returns (process, port) once /health says ok."""
    port = free_port()
    log = open(os.devnull, "w") if not args.verbose else None
    # -c: the model's trained context for SmolLM2, as hearth-cli serve uses; shared by the slots.
    server = subprocess.Popen([exe, "-m", args.model, "--host", "127.0.0.1", "--port", str(port), "-t", str(args.threads),
                               "-tb", str(args.threads), "-np", str(args.parallel), "-c", str(args.llama_ctx),
                               "-fa", args.llama_fa], stdout=log, stderr=log)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("llama-server exited with code %d" % server.returncode)
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=2) as r:
                if r.status == 200:
                    return server, port
        except Exception:
            pass
        time.sleep(0.25)
    server.terminate()
    raise RuntimeError("llama-server did not become healthy in 300 s")


def measure(args, server, port, ban):
    """The load on one started server; stops it."""
    try:
        c = openai.OpenAI(base_url="http://127.0.0.1:%d/v1" % port, api_key="none", max_retries=0, timeout=600)
        rss_before = rss_kib(server.pid)
        one_request(c, 0, 4, ban)  # warm-up
        solo, solo_failed, solo_s = run(c, args.solo, 1, args.max_tokens, ban, 100)
        many, failed, many_s = run(c, args.requests, args.clients, args.max_tokens, ban, 0)
        rss_after = rss_kib(server.pid)
    finally:
        server.terminate()
        server.wait()
    solo_rate = sum(r["tokens"] for r in solo) / solo_s if solo else 0
    rate = sum(r["tokens"] for r in many) / many_s if many else 0
    ttft = [r["ttft_ms"] for r in many]
    return {"solo_rate": solo_rate, "solo_ttft": statistics.median(r["ttft_ms"] for r in solo) if solo else 0,
            "rate": rate, "seconds": many_s, "p50": percentile(ttft, 50) if ttft else 0,
            "p99": percentile(ttft, 99) if ttft else 0, "failed": failed + solo_failed,
            "rss_before": rss_before / 1024, "rss_after": rss_after / 1024,
            "tokens": sum(r["tokens"] for r in many)}


def host_line():
    model, flags = "unknown CPU", []
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown CPU":
                model = value.strip()
            if key.strip() == "flags" and not flags:
                have = value.split()
                flags = [x for x in ("avx2", "avx_vnni", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile") if x in have]
    return "%s, %d CPUs, flags %s" % (model, os.cpu_count(), " ".join(flags))


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
    ap.add_argument("--llama-server", help="llama.cpp's llama-server (default: build-llama-tools.sh --print)")
    ap.add_argument("--no-llama-server", action="store_true", help="Hearth's server only")
    ap.add_argument("--llama-fa", default="auto", choices=["auto", "on", "off"], help="llama-server's flash attention")
    ap.add_argument("--llama-ctx", type=int, default=8192, help="llama-server's -c (shared by its slots)")
    ap.add_argument("--verbose", action="store_true", help="show llama-server's log")
    args = ap.parse_args()
    info = subprocess.run([args.cli, "info", "--model", args.model], capture_output=True, text=True).stdout
    ban = [int(m) for m in re.findall(r"EOS (\d+)", info)]  # the model's end-of-generation token
    rows = [("hearth-cli serve", measure(args, *start_hearth(args), ban))]
    llama_note = None
    if not args.no_llama_server:
        exe, why = find_llama_server(args)
        if exe:
            rows.append(("llama-server (-fa %s)" % args.llama_fa, measure(args, *start_llama(args, exe), ban)))
        else:
            llama_note = "llama-server: %s" % why
    print("model %s, --parallel %d, %d threads, %d-token replies (greedy), %d clients x %d requests" % (
        args.model.split("/")[-1], args.parallel, args.threads, args.max_tokens, args.clients, args.requests))
    print("host: %s" % host_line())
    print("| server | 1 client t/s | 1 client TTFT p50 ms | %d clients t/s | vs 1 client | output tokens | wall s | "
          "TTFT p50 ms | TTFT p99 ms | failed | RSS before MiB | RSS after MiB |" % args.clients)
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r in rows:
        print("| %s | %.1f | %.0f | %.1f | %.2fx | %d | %.1f | %.0f | %.0f | %d | %.1f | %.1f |" % (
            name, r["solo_rate"], r["solo_ttft"], r["rate"], r["rate"] / r["solo_rate"] if r["solo_rate"] else 0,
            r["tokens"], r["seconds"], r["p50"], r["p99"], r["failed"], r["rss_before"], r["rss_after"]))
    if len(rows) == 2 and rows[1][1]["rate"] > 0:
        print("hearth / llama-server, %d clients: %.2fx output tokens/s" % (args.clients, rows[0][1]["rate"] / rows[1][1]["rate"]))
    if llama_note:
        print(llama_note)
    return 1 if any(r["failed"] for _, r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
