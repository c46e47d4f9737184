#!/usr/bin/env python3
"""Prints the HTTP benchmark's table: tollgate serve next to the JS Agent Server.

    bench/http/report_http.py HTTP_JSONL

Reads the JSON lines tollgate_httpload printed (workloads http_hitl and http_pause, field
"server": "tollgate" or "agent-server") and prints one Markdown table with the ratio
"× better" (> 1: Tollgate is faster / smaller), then whether issue 4's aims are met:
>= 20x the JS server's cycles/s, p99 resume < 5 ms, <= 2 KB of RSS per paused thread.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report import load  # noqa: E402  (bench/report.py: one JSON object per line)


def find(rows, server, workload, concurrency=None):
    for r in rows:
        if r.get("server") == server and r.get("workload") == workload and (
            concurrency is None or r.get("concurrency") == concurrency
        ):
            return r
    return None


def fmt(x):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def ratio(ours, peer, higher_is_better):
    if ours is None or peer is None or ours == 0 or peer == 0:
        return "-"
    r = ours / peer if higher_is_better else peer / ours
    return f"{r:,.1f}×"


def main():
    rows = load(sys.argv[1])
    out = [
        "| figure | concurrency | Tollgate | JS Agent Server | × better |",
        "| --- | --- | --- | --- | --- |",
    ]
    figures = [
        ("cycles/s (median of reps)", "ops_per_s", True),
        ("cycle p50 ms", "p50_ms", False),
        ("cycle p99 ms", "p99_ms", False),
        ("resume p50 ms", "resume_p50_ms", False),
        ("resume p99 ms", "resume_p99_ms", False),
        ("server CPU ms per cycle", "cpu_ms_per_op", False),
        ("client CPU ms per cycle", "client_cpu_ms_per_op", None),
    ]
    for c in (1, 8):
        ours = find(rows, "tollgate", "http_hitl", c) or {}
        peer = find(rows, "agent-server", "http_hitl", c) or {}
        for label, key, better in figures:
            a, b = ours.get(key), peer.get(key)
            r = "-" if better is None else ratio(a, b, better)
            out.append(f"| {label} | {c} | {fmt(a)} | {fmt(b)} | {r} |")
    ours_p = find(rows, "tollgate", "http_pause") or {}
    peer_p = find(rows, "agent-server", "http_pause") or {}
    out.append(
        f"| paused threads | 8 | {ours_p.get('n', '-')} | {peer_p.get('n', '-')} | - |"
    )
    out.append(
        "| server RSS before → after, MB | 8 | "
        + " | ".join(
            f"{fmt(p['rss_before_kb'] / 1024)} → {fmt(p['rss_after_kb'] / 1024)}" if p else "-"
            for p in (ours_p, peer_p)
        )
        + " | - |"
    )
    out.append(
        f"| KB RSS per paused thread | 8 | {fmt(ours_p.get('kb_per_paused_thread'))} | "
        f"{fmt(peer_p.get('kb_per_paused_thread'))} | "
        f"{ratio(ours_p.get('kb_per_paused_thread'), peer_p.get('kb_per_paused_thread'), False)} |"
    )
    out.append(
        f"| pauses/s while filling | 8 | {fmt(ours_p.get('ops_per_s'))} | "
        f"{fmt(peer_p.get('ops_per_s'))} | "
        f"{ratio(ours_p.get('ops_per_s'), peer_p.get('ops_per_s'), True)} |"
    )
    print("\n".join(out))
    print()

    def aim(text, ok):
        state = "n/a" if ok is None else ("met" if ok else "NOT met")
        print(f"- {text}: {state}")

    for c in (1, 8):
        a = (find(rows, "tollgate", "http_hitl", c) or {}).get("ops_per_s")
        b = (find(rows, "agent-server", "http_hitl", c) or {}).get("ops_per_s")
        aim(f">= 20× the JS server's cycles/s at concurrency {c}",
            None if not a or not b else a / b >= 20)
    p99 = (find(rows, "tollgate", "http_hitl", 1) or {}).get("resume_p99_ms")
    aim("p99 resume < 5 ms (concurrency 1)", None if p99 is None else p99 < 5)
    kb = ours_p.get("kb_per_paused_thread")
    aim("<= 2 KB RSS per paused thread", None if kb is None else kb <= 2)


if __name__ == "__main__":
    main()
