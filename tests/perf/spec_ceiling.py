#!/usr/bin/env python3
"""How far copying drafters can speed up one greedy reply, given what a verified row costs.

Reads `hearth-cli generate --temp 0 --json` outputs (the prompt's and the reply's token ids) and
replays the reply step by step under a cost model: a verify step costs one plain step plus
ROW_COST plain steps for every drafted token (the extra rows), a step keeps the drafted tokens
that match the reply plus one more. Printed per reply:

  ngram     the n-gram drafter as NGramDrafter drafts (longest suffix match of 4..2 tokens in
            the prompt and the reply so far, most recent occurrence; the draft length grows by
            2 after a fully kept draft and drops to just past the last kept token otherwise);
            its estimate checks the cost model against bench-spec's measured speedup
  precise   the same matches, drafting only the tokens that will be kept (no wasted rows):
            the most any cut-off rule for n-gram drafts could reach
  copy      a drafter that always knows the longest stretch of the reply (up to MAX_DRAFT
            tokens) that occurs after the same token in the prompt, the reply so far or (--store)
            one stored message: the most any drafter that copies earlier text could reach

With several replies a last line sums them (total tokens over total cost), as bench-spec's
history table does for set B. The replies and the store come from
`hearth-cli bench-spec --dump DIR` (or `generate --temp 0 --json`).

Usage: spec_ceiling.py [--row-cost 0.22] [--max-draft 8] [--store STORE.json] REPLY.json...
"""
import argparse
import json


def occurs(text, window):
    n = len(window)
    return any(text[s:s + n] == window for s in range(len(text) - n + 1))


def ngram_lookup(context, max_tokens, min_n=2, max_n=4):
    size = len(context)
    for n in range(min(max_n, size - 1), min_n - 1, -1):
        suffix = context[-n:]
        for start in range(size - n - 1, -1, -1):
            if context[start:start + n] == suffix:
                return context[start + n:start + n + max_tokens]
    return []


def kept(draft, reply, at):
    k = 0
    while k < len(draft) and at + k < len(reply) and draft[k] == reply[at + k]:
        k += 1
    return k


def replay(prompt, reply, drafter, row_cost):
    """The cost of the reply in plain steps; drafter(context, at) -> (drafted, kept)."""
    at, cost = 0, 0.0
    while at < len(reply):
        drafted, k = drafter(prompt + reply[:at], at)
        cost += 1.0 + row_cost * drafted
        at += k + 1
    return cost


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--row-cost", type=float, default=0.22, help="an extra verified row, in plain steps")
    ap.add_argument("--max-draft", type=int, default=8)
    ap.add_argument("--store", help="stored messages a copying drafter may also copy from")
    ap.add_argument("replies", nargs="+")
    a = ap.parse_args()
    store = []
    if a.store:
        with open(a.store) as f:
            store = json.load(f)["messages"]
    totals = [0, 0.0, 0.0, 0.0]  # tokens, then the cost under each drafter
    for path in a.replies:
        with open(path) as f:
            d = json.load(f)
        prompt, reply = d["prompt_tokens"], d["tokens"]
        length = [4]

        def ngram(context, at):
            draft = ngram_lookup(context, length[0])
            k = kept(draft, reply, at)
            if draft:
                length[0] = min(length[0] + 2, a.max_draft) if k == len(draft) else max(1, k + 1)
            return len(draft), k

        def precise(context, at):
            k = kept(ngram_lookup(context, a.max_draft), reply, at)
            return k, k

        def copy(context, at):
            for m in range(min(a.max_draft, len(reply) - at), 0, -1):
                window = [context[-1]] + reply[at:at + m]
                if occurs(context, window) or any(occurs(message, window) for message in store):
                    return m, m
            return 0, 0

        cost = [replay(prompt, reply, fn, a.row_cost) for fn in (ngram, precise, copy)]
        totals[0] += len(reply)
        for i in range(3):
            totals[i + 1] += cost[i]
        print(f"{path}: {len(reply)} tokens, row cost {a.row_cost:.2f} of a step: " +
              ", ".join(f"{n} {len(reply) / c:.2f}x" for n, c in zip(("ngram", "precise", "copy"), cost)))
    if len(a.replies) > 1:
        print(f"all {len(a.replies)} replies: {totals[0]} tokens: " +
              ", ".join(f"{n} {totals[0] / c:.2f}x" for n, c in zip(("ngram", "precise", "copy"), totals[1:])))


if __name__ == "__main__":
    main()
