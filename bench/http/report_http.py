#!/usr/bin/env python3
"""Prints the HTTP benchmark's table: tollgate serve next to the JS Agent Server.

    bench/http/report_http.py HTTP_JSONL

Reads the JSON lines tollgate_httpload printed (workloads http_hitl and http_pause, field
"server": "tollgate" or "agent-server") and prints one Markdown table with the ratio
"× better" (> 1: Tollgate is faster / smaller), then whether issue 4's aims are met:
>= 20x the JS server's cycles/s, p99 resume < 5 ms, <= 2 KB of RSS per paused thread.

With rows of `tollgate serve` on PostgreSQL (server "tollgate-pg", run_http.sh --postgres
[--replicas N]), a second table: SQLite next to PostgreSQL with 1 and N replicas, with the
database's own work per cycle (workload "http_pg", bench/http/pg_counters.py).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from report import load  # noqa: E402  (bench/report.py: one JSON object per line)


def find(rows, server, workload, concurrency=None, replicas=None):
    for r in rows:
        if r.get("server") == server and r.get("workload") == workload and (
            concurrency is None or r.get("concurrency") == concurrency
        ) and (replicas is None or r.get("replicas", 1) == replicas):
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
    postgres_table(rows)


def plain_ratio(a, b):
    return "-" if not a or not b else f"{a / b:.2f}"


def postgres_table(rows):
    """SQLite, PostgreSQL with 1 replica and with the most replicas measured, side by side."""
    counts = sorted({r.get("replicas", 1) for r in rows if r.get("server") == "tollgate-pg"})
    if not counts:
        return
    many = counts[-1] if counts[-1] > 1 else None
    columns = ["SQLite", "PG, 1 replica"] + ([f"PG, {many} replicas"] if many else [])
    ratios = ["PG 1 ÷ SQLite"] + ([f"PG {many} ÷ PG 1"] if many else [])
    print()
    print("| figure | concurrency | " + " | ".join(columns + ratios) + " |")
    print("| --- " * (2 + len(columns) + len(ratios)) + "|")
    figures = [
        ("cycles/s (median of reps)", "ops_per_s", "http_hitl"),
        ("cycle p50 ms", "p50_ms", "http_hitl"),
        ("cycle p99 ms", "p99_ms", "http_hitl"),
        ("resume p50 ms", "resume_p50_ms", "http_hitl"),
        ("resume p99 ms", "resume_p99_ms", "http_hitl"),
        ("server CPU ms per cycle (tollgate processes)", "cpu_ms_per_op", "http_hitl"),
        ("PostgreSQL CPU ms per cycle (all its processes)", "pg_cpu_ms_per_cycle", "http_pg"),
        ("transactions per cycle (xact_commit, read-only ones too)", "commits_per_cycle", "http_pg"),
        ("commits that wrote (WAL commit records) per cycle", "write_commits_per_cycle", "http_pg"),
        ("WAL flushes per cycle", "wal_syncs_per_cycle", "http_pg"),
        ("WAL KB per cycle", "wal_kb_per_cycle", "http_pg"),
    ]
    for c in (1, 8):
        cells = [
            lambda w: find(rows, "tollgate", w, c),
            lambda w: find(rows, "tollgate-pg", w, c, 1),
            lambda w: find(rows, "tollgate-pg", w, c, many),
        ][: len(columns)]
        for label, key, workload in figures:
            values = [(cell(workload) or {}).get(key) for cell in cells]
            shown = [fmt(v) for v in values]
            shown.append(plain_ratio(values[1], values[0]))
            if many:
                shown.append(plain_ratio(values[2], values[1]))
            print(f"| {label} | {c} | " + " | ".join(shown) + " |")
        # Server and database together: what one cycle costs the machine on PostgreSQL.
        both = []
        for cell in cells:
            hitl, pg = cell("http_hitl") or {}, cell("http_pg") or {}
            a, b = hitl.get("cpu_ms_per_op"), pg.get("pg_cpu_ms_per_cycle")
            both.append(a if a is not None and cell is cells[0] else
                        (a + b if a is not None and b is not None else None))
        shown = [fmt(v) for v in both] + [plain_ratio(both[1], both[0])]
        if many:
            shown.append(plain_ratio(both[2], both[1]))
        print(f"| server + PostgreSQL CPU ms per cycle | {c} | " + " | ".join(shown) + " |")


if __name__ == "__main__":
    main()
