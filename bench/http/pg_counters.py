#!/usr/bin/env python3
"""What the PostgreSQL server did during an HTTP benchmark measurement, per cycle.

    bench/http/pg_counters.py snapshot URL POSTMASTER_PID > BEFORE.json
    bench/http/pg_counters.py per-cycle BEFORE.json AFTER.json CYCLES SERVER REPLICAS CONCURRENCY \
        [PG_WAL_DIR]

`snapshot` reads the database's committed transactions (pg_stat_database.xact_commit), the
cluster's WAL counters (pg_stat_wal: records, bytes, writes, syncs — a sync is one flush of
the WAL to disk, which every synchronous commit waits for unless a neighbour's flush covered
it) and the CPU time (user + system) of the postmaster and all its children: the backends
serving the replicas, the WAL writer, the checkpointer. `per-cycle` prints one JSON line
(workload "http_pg") with the differences divided by CYCLES, for report_http.py. With
PG_WAL_DIR (the cluster's pg_wal) it also counts the commit records written in between
(pg_waldump): the transactions that wrote something, each a synchronous commit — whereas
xact_commit also counts read-only transactions, which flush nothing.

The statistics are flushed by each backend at most once a second (PostgreSQL 15), so over a
measurement of many seconds the counts are exact to about a second of traffic.
"""
import json
import os
import re
import subprocess
import sys

BIN = os.environ.get("TOLLGATE_PG_BIN", "/usr/lib/postgresql/15/bin")

QUERY = (
    "select (select xact_commit from pg_stat_database where datname = current_database()),"
    " wal_records, wal_bytes, wal_write, wal_sync, pg_current_wal_insert_lsn() from pg_stat_wal"
)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def parent(pid):
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def postgres_cpu_seconds(postmaster):
    total = 0.0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        try:
            if pid == postmaster or parent(pid) == postmaster:
                total += cpu_seconds(pid)
        except (OSError, IndexError, ValueError):
            pass  # a process that ended meanwhile
    return total


def snapshot(url, postmaster):
    out = subprocess.run([os.path.join(BIN, "psql"), url, "-XAtqc", QUERY], check=True,
                         capture_output=True, text=True).stdout.strip()
    *counters, lsn = out.split("|")
    commits, records, wal_bytes, writes, syncs = (float(x) for x in counters)
    return {"xact_commit": commits, "wal_records": records, "wal_bytes": wal_bytes,
            "wal_write": writes, "wal_sync": syncs,
            "cpu_s": postgres_cpu_seconds(int(postmaster)), "lsn": lsn}


def commit_records(wal_dir, start, end):
    """Commit records in the WAL between two LSNs; None when pg_waldump cannot tell."""
    done = subprocess.run([os.path.join(BIN, "pg_waldump"), "--stats=record", "-p", wal_dir,
                           "-s", start, "-e", end], capture_output=True, text=True)
    found = re.search(r"^Transaction/COMMIT\s+(\d+)", done.stdout, re.M)
    return int(found.group(1)) if found else None


def per_cycle(before, after, cycles, server, replicas, concurrency, wal_dir=None):
    lsns = before.pop("lsn"), after.pop("lsn")
    d = {k: after[k] - before[k] for k in before}
    r3 = lambda x: round(x, 3)  # noqa: E731
    written = commit_records(wal_dir, *lsns) if wal_dir else None
    return {"workload": "http_pg", "server": server, "replicas": replicas,
            "write_commits_per_cycle": None if written is None else r3(written / cycles),
            "concurrency": concurrency, "cycles": cycles,
            "commits_per_cycle": r3(d["xact_commit"] / cycles),
            "wal_syncs_per_cycle": r3(d["wal_sync"] / cycles),
            "wal_writes_per_cycle": r3(d["wal_write"] / cycles),
            "wal_records_per_cycle": r3(d["wal_records"] / cycles),
            "wal_kb_per_cycle": r3(d["wal_bytes"] / 1024 / cycles),
            "pg_cpu_ms_per_cycle": r3(d["cpu_s"] * 1000 / cycles)}


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "snapshot":
        print(json.dumps(snapshot(sys.argv[2], sys.argv[3])))
    elif len(sys.argv) in (8, 9) and sys.argv[1] == "per-cycle":
        with open(sys.argv[2], encoding="utf-8") as f:
            before = json.load(f)
        with open(sys.argv[3], encoding="utf-8") as f:
            after = json.load(f)
        print(json.dumps(per_cycle(before, after, int(sys.argv[4]), sys.argv[5],
                                   int(sys.argv[6]), int(sys.argv[7]), *sys.argv[8:])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
