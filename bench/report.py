#!/usr/bin/env python3
"""Prints the side-by-side table of one bench/run.sh run.

    bench/report.py RESULTS_DIR        (reads tollgate.jsonl and langgraphjs.jsonl in it)

Each input line is one measurement as printed by tollgate_bench or the peer's bench.mjs (same
field names). The table pairs each of our figures with the peer's matching one and prints the
ratio as "how many times better we are" (>1: Tollgate is faster / smaller). Missing figures
print as "-". Writes the table to stdout and to RESULTS_DIR/table.md.
"""
import json
import os
import sys

# Published NeoGraph figures for this machine class (from the issue), for reference only.
NEOGRAPH = {
    ("chain", "none"): "9.2 µs",
    ("hitl_cycle", "memory"): "7,800/s",
    ("hitl_cycle", "sqlite"): "640/s",
    ("hitl_agent", "memory"): "4,300/s (ToolGate cycle)",
}


def load(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return rows


def find(rows, workload, saver, n=None, durability=None):
    for r in rows:
        if r.get("workload") != workload or r.get("saver") != saver:
            continue
        if n is not None and r.get("n") != n:
            continue
        if durability is not None and r.get("durability") != durability:
            continue
        return r
    return None


def fmt(x, unit=""):
    if x is None:
        return "-"
    if abs(x) >= 100:
        s = f"{x:,.0f}"
    elif abs(x) >= 10:
        s = f"{x:.1f}"
    else:
        s = f"{x:.2f}"
    return s + unit


def fmt_bytes(x):
    if x is None:
        return "-"
    for unit, scale in (("MB", 1e6), ("KB", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.1f} {unit}"
    return f"{x:.0f} B"


def ratio(ours, peer, higher_is_better):
    if ours is None or peer is None or ours <= 0 or peer <= 0:
        return "-"
    r = ours / peer if higher_is_better else peer / ours
    return f"{r:,.1f}×" if r >= 10 else f"{r:.2f}×"


def peer_long_thread_bytes_per_turn(rows, saver):
    """The peer reports cumulative bytes at each milestone; per turn = delta / turns."""
    series = sorted((r for r in rows if r.get("workload") == "long_thread" and r.get("saver") == saver
                     and r.get("messages", "reduced") == "reduced"), key=lambda r: r["n"])
    out, prev = {}, 0
    for r in series:
        if r.get("bytes_total") is not None and r.get("ops"):
            out[r["n"]] = (r["bytes_total"] - prev) / r["ops"]
            prev = r["bytes_total"]
    return out


def agent_rows(ours, peer, row):
    """W2 agent-level: create_agent + HumanInTheLoop vs the peer's createAgent +
    humanInTheLoopMiddleware (its hitl_cycle workload, approve)."""
    label = "W2 agent HITL cycle"
    for saver in ("memory", "sqlite", "postgres"):
        o = find(ours, "hitl_agent", saver)
        p = find(peer, "hitl_cycle_approve", saver)
        if not o and not p:
            continue
        size = f"{(o or p)['n']} threads"
        neo = NEOGRAPH.get(("hitl_agent", saver))
        aim = ("aim ≥ 50× peer" if saver == "postgres" else "aim ≥ 100× peer") + \
            (", ≥ 8,600/s (2× NeoGraph)" if saver == "memory" else "")
        row(label, saver, size, "cycles/s", o and o.get("ops_per_s"), p and p.get("ops_per_s"), True,
            f"{aim}; NeoGraph {neo}" if neo else aim)
        row(label, saver, size, "cycle p50 ms", o and o.get("p50_ms"), p and p.get("cycle_p50_ms"),
            False)
        row(label, saver, size, "CPU ms per cycle", o and o.get("cpu_ms_per_op"),
            p and p.get("cpu_ms_per_op"), False)
        if o and o.get("checkpoints_per_cycle") is not None:
            row(label, saver, size, "checkpoints per cycle", o.get("checkpoints_per_cycle"),
                p and p.get("checkpoints_per_cycle"), False)
    for saver in ("memory", "sqlite"):
        series = sorted((r for r in ours if r.get("workload") == "hitl_agent_thread"
                         and r.get("saver") == saver), key=lambda r: r["n"])
        for r in series:
            size = f"after {r['n']:,} cycles"
            row(label + ", one thread", saver, size, "cycle p50 ms", r.get("p50_ms"), None, False,
                "aim: flat as the thread grows")
            row(label + ", one thread", saver, size, "CPU ms per cycle", r.get("cpu_ms_per_op"), None,
                False)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    folder = sys.argv[1]
    ours = load(os.path.join(folder, "tollgate.jsonl"))
    peer = load(os.path.join(folder, "langgraphjs.jsonl"))
    lines = []
    add = lines.append
    add("| workload | saver | size | figure | Tollgate | LangGraph.js | × better | note |")
    add("| --- | --- | --- | --- | --- | --- | --- | --- |")

    def row(workload, saver, size, figure, o, p, higher_is_better, note="", unit=""):
        add(f"| {workload} | {saver} | {size} | {figure} | {fmt(o, unit)} | {fmt(p, unit)} | "
            f"{ratio(o, p, higher_is_better)} | {note} |")

    chain = find(ours, "chain", "none")
    if chain:
        row("W1 chain (3 nodes)", "none", chain["n"], "µs per invoke", chain.get("us_per_invoke"),
            None, False, "NeoGraph 9.2 µs; aim ≤ 4 µs")
        row("W1 chain (3 nodes)", "none", chain["n"], "p50 µs per invoke",
            chain.get("p50_ms", 0) * 1e3, None, False)
        row("W1 chain (3 nodes)", "none", chain["n"], "CPU µs per invoke",
            chain.get("cpu_ms_per_op", 0) * 1e3, None, False)

    for saver in ("none", "memory", "sqlite", "postgres"):
        o = find(ours, "steps", saver)
        p = find(peer, "steps", saver, durability="default(async)")
        ps = find(peer, "steps", saver, durability="sync")
        if not o and not p:
            continue
        size = (o or p)["n"]
        row("W1 steps (1-node loop)", saver, size, "µs per superstep", o and o.get("per_step_us"),
            p and p.get("per_step_us"), False, "peer: default async durability")
        if ps:
            row("W1 steps (1-node loop)", saver, size, "µs per superstep, both sync",
                o and o.get("per_step_us"), ps.get("per_step_us"), False)
        row("W1 steps (1-node loop)", saver, size, "p50 µs per superstep",
            o and o.get("p50_ms", 0) * 1e3, p and p.get("p50_ms", 0) * 1e3, False)
        row("W1 steps (1-node loop)", saver, size, "CPU µs per superstep",
            o and o.get("cpu_ms_per_op", 0) * 1e3, p and p.get("cpu_ms_per_op", 0) * 1e3, False)

    for saver in ("memory", "sqlite"):
        o = find(ours, "hitl_cycle", saver)
        p = find(peer, "fanout", saver, n=1)
        if o or p:
            size = f"{o['n']} threads" if o else "-"
            row("W2 interrupt→resume (1 node)", saver, size, "cycles/s",
                o and o.get("ops_per_s"), p and p.get("ops_per_s"), True,
                f"peer: its W4 fanout P=1; NeoGraph {NEOGRAPH.get(('hitl_cycle', saver), '-')}")
            row("W2 interrupt→resume (1 node)", saver, size, "cycle p50 ms",
                o and o.get("p50_ms"), p and p.get("p50_ms"), False)
            row("W2 interrupt→resume (1 node)", saver, size, "CPU ms per cycle",
                o and o.get("cpu_ms_per_op"), p and p.get("cpu_ms_per_op"), False)
        for branches in (1, 10):
            o = find(ours, "fanout", saver, n=branches)
            p = find(peer, "fanout", saver, n=branches)
            if not o and not p:
                continue
            row(f"W2 fanout P={branches} (peer W4)", saver, branches, "cycles/s",
                o and o.get("ops_per_s"), p and p.get("ops_per_s"), True, "same graph shape")
            row(f"W2 fanout P={branches} (peer W4)", saver, branches, "CPU ms per cycle",
                o and o.get("cpu_ms_per_op"), p and p.get("cpu_ms_per_op"), False)

    agent_rows(ours, peer, row)

    for saver in ("memory", "sqlite"):
        ours_rows = {r["n"]: r for r in ours if r.get("workload") == "long_thread" and r.get("saver") == saver}
        peer_rows = {r["n"]: r for r in peer if r.get("workload") == "long_thread" and r.get("saver") == saver
                     and r.get("messages", "reduced") == "reduced"}
        peer_bytes = peer_long_thread_bytes_per_turn(peer, saver)
        for size in sorted(set(ours_rows) | (set(peer_rows) & {100, 500})):
            o, p = ours_rows.get(size), peer_rows.get(size)
            note = "peer: createAgent + HITL middleware (7 ckpts/turn)" if p else ""
            row("W3 long thread", saver, f"{size} msgs", "ms per turn (p50)", o and o.get("p50_ms"),
                p and p.get("p50_ms"), False, note)
            row("W3 long thread", saver, f"{size} msgs", "CPU ms per turn", o and o.get("cpu_ms_per_op"),
                p and p.get("cpu_ms_per_op"), False)
            o_bytes = o and o.get("bytes_per_turn")
            p_bytes = peer_bytes.get(size)
            add(f"| W3 long thread | {saver} | {size} msgs | bytes written per turn | {fmt_bytes(o_bytes)} | "
                f"{fmt_bytes(p_bytes)} | {ratio(o_bytes, p_bytes, False)} | "
                f"{'ours: saver-encoded bytes' if o else ''} |")
            if o and o.get("bytes_total") and o.get("turns_total"):
                add(f"| W3 long thread | {saver} | {size} msgs | bytes per turn, mean since turn 1 | "
                    f"{fmt_bytes(o['bytes_total'] / o['turns_total'])} | - | - | full snapshots amortized |")
            if o and o.get("file_bytes_per_turn") is not None:
                add(f"| W3 long thread | {saver} | {size} msgs | SQLite file growth per turn | "
                    f"{fmt_bytes(o['file_bytes_per_turn'])} | - | - | |")

    add("")
    loads = [r.get("load1") for r in ours + peer if r.get("load1") is not None]
    if loads:
        add(f"Machine load (1-min load average during the runs): {min(loads):.1f}–{max(loads):.1f} "
            f"on {os.cpu_count()} cores.")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(folder, "table.md"), "w", encoding="utf-8") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
