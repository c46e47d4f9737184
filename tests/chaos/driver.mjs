// The chaos run (scripts/chaos.sh, docs/chaos.md): `tollgate serve` with the demo agent on SQLite,
// driven by concurrent clients of the official @langchain/langgraph-sdk while a killer ends the
// server with kill -9 and starts it again on the same database, and a filler fills the
// database's disk for a few seconds at a time. Then, with the server up and every run settled,
// the invariants are checked and printed; the exit status is 1 when one fails.
//
//   TOLLGATE_BIN=build/src/main/tollgate node tests/chaos/driver.mjs --db-dir DIR [options]
//     --clients N      concurrent clients (8)           --kills N         kill -9 count (20)
//     --seconds S      how long the clients run (120)   --disk-full N     disk-full windows (3)
//     --disk-full-ms M how long each window lasts (3000)
//     --tmpfs          DIR is a small tmpfs of its own: fill it for the disk-full windows
//     --out FILE       also write the summary as JSON to FILE
import { execFileSync } from "node:child_process";
import { appendFileSync, closeSync, mkdirSync, openSync, rmSync, statfsSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ServerProcess } from "../integration/harness.mjs";

const options = parseArguments(process.argv.slice(2));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const random = (lo, hi) => lo + Math.random() * (hi - lo);
const log = (text) => console.log(`[chaos ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${text}`);
const started = Date.now();

function parseArguments(argv) {
  const o = { clients: 8, kills: 20, seconds: 120, diskFull: 3, diskFullMs: 3000, tmpfs: false, dbDir: "", out: "" };
  const names = { "--clients": "clients", "--kills": "kills", "--seconds": "seconds", "--disk-full": "diskFull", "--disk-full-ms": "diskFullMs" };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === "--tmpfs") o.tmpfs = true;
    else if (a === "--db-dir") o.dbDir = argv[++i];
    else if (a === "--out") o.out = argv[++i];
    else if (names[a]) {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 0) throw new Error(`${a}: must be a whole number >= 0, got '${argv[i]}'`);
      o[names[a]] = v;
    } else throw new Error(`unknown argument '${a}'`);
  }
  if (!o.dbDir) throw new Error("--db-dir: required (the folder of the server's database)");
  return o;
}

// ---------------------------------------------------------------------------------------------
// What happened: HTTP statuses by call, client outcomes, and the ledger of decisions.

const stats = {
  cycles: 0, // client loops that reached a decision
  started: 0, // client loops begun
  kills: 0,
  restarts: 0,
  restartMs: [],
  diskFullWindows: 0,
  statuses: {}, // call -> status -> count ("network" for a dropped connection)
  outcomes: {}, // what a client loop ended with
  doubleSubmits: 0,
  doubleAcked: [], // double submits both answered 200
  cancels: 0,
  disk: { readProbes: {}, writeProbes: {}, recoveredMs: [], notRecovered: 0, clientStatuses: {} },
};
const threads = new Map(); // thread_id -> { recipient, decisions: [{type, to, status, acked, via, cancelled}] }
const attempted = new Set(); // recipients some approval or edit was sent for
let diskFull = false;

function count(map, key, n = 1) {
  map[key] = (map[key] ?? 0) + n;
}
function countStatus(call, status) {
  stats.statuses[call] ??= {};
  count(stats.statuses[call], String(status));
  if (diskFull) count(stats.disk.clientStatuses, String(status));
}

// ---------------------------------------------------------------------------------------------
// The server, the killer and the disk filler.

const server = new ServerProcess({ args: ["--workdir", join(options.dbDir, "..", "demo")] });
server.db = join(options.dbDir, "tollgate.db");
const outboxDb = join(options.dbDir, "..", "demo", "outbox.db");
let up = null; // resolves while the server is up; replaced while it restarts
let upNow = true;
let markUp = () => {};

async function startServer() {
  for (let attempt = 1; ; ++attempt) {
    try {
      await server.start();
      return;
    } catch (e) {
      if (attempt >= 5) throw e;
      log(`start failed (attempt ${attempt}): ${String(e.message).slice(0, 300)}`);
      await sleep(500);
    }
  }
}

async function whenUp() {
  if (!upNow) await up;
}

async function restart() {
  upNow = false;
  up = new Promise((resolve) => (markUp = resolve));
  await server.kill("SIGKILL");
  stats.kills++;
  const t0 = Date.now();
  await startServer();
  stats.restarts++;
  stats.restartMs.push(Date.now() - t0);
  upNow = true;
  markUp();
}

let chaosLock = Promise.resolve(); // a kill and a disk-full window never overlap
function exclusive(fn) {
  const next = chaosLock.then(fn);
  chaosLock = next.catch(() => {});
  return next;
}

// Fills the tmpfs of the database: a ballast file as large as the free space, then the rest in
// small writes until ENOSPC.
function fillDisk(path) {
  const { bavail, bsize } = statfsSync(options.dbDir);
  const free = Number(bavail) * Number(bsize);
  try {
    execFileSync("fallocate", ["-l", String(free), path]);
  } catch {
    writeFileSync(path, "");
  }
  const fd = openSync(path, "a");
  const chunk = Buffer.alloc(4096, 0x2a);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if (e.code !== "ENOSPC") throw e;
  } finally {
    closeSync(fd);
  }
}

async function probe(kind, request) {
  try {
    const response = await fetch(`${server.url}${request.path}`, {
      method: request.method,
      headers: { "content-type": "application/json" },
      body: request.body ? JSON.stringify(request.body) : undefined,
    });
    await response.text();
    count(stats.disk[kind], String(response.status));
    return response.status;
  } catch {
    count(stats.disk[kind], "network");
    return "network";
  }
}

async function diskFullWindow() {
  const ballast = join(options.dbDir, "ballast");
  log("disk full: filling the database's tmpfs");
  diskFull = true;
  stats.diskFullWindows++;
  try {
    fillDisk(ballast);
    const until = Date.now() + options.diskFullMs;
    const known = [...threads.keys()].slice(-1)[0];
    while (Date.now() < until) {
      await probe("readProbes", { method: "POST", path: "/threads/search", body: { limit: 5 } });
      if (known) await probe("readProbes", { method: "GET", path: `/threads/${known}` });
      await probe("writeProbes", { method: "POST", path: "/threads", body: { metadata: { chaos_probe: true } } });
      await sleep(250);
    }
  } finally {
    rmSync(ballast, { force: true });
    diskFull = false;
  }
  const t0 = Date.now();
  for (;;) {
    const status = await probe("writeProbes", { method: "POST", path: "/threads", body: { metadata: { chaos_probe: true } } });
    if (status === 200) {
      stats.disk.recoveredMs.push(Date.now() - t0);
      log(`disk freed: writes answered again after ${Date.now() - t0} ms`);
      return;
    }
    if (Date.now() - t0 > 15000) {
      stats.disk.notRecovered++;
      log("disk freed: writes still fail after 15 s");
      return;
    }
    await sleep(100);
  }
}

// Random moments over the run: `kills` kill -9s and `diskFull` windows, never at once.
async function chaos(stopAt) {
  const events = [
    ...Array.from({ length: options.kills }, () => ({ kind: "kill", at: random(0.03, 0.97) })),
    ...(options.tmpfs ? Array.from({ length: options.diskFull }, () => ({ kind: "disk", at: random(0.1, 0.9) })) : []),
  ].sort((a, b) => a.at - b.at);
  const span = stopAt - Date.now();
  const t0 = Date.now();
  for (const event of events) {
    const wait = t0 + event.at * span - Date.now();
    if (wait > 0) await sleep(wait);
    await exclusive(async () => {
      if (event.kind === "kill") {
        log(`kill -9 #${stats.kills + 1}`);
        await restart();
      } else {
        await diskFullWindow();
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The clients.

class Answer {
  constructor(ok, status, value) {
    Object.assign(this, { ok, status, value });
  }
}

// Calls the SDK once; answers with the status (200, an HTTP error's status, or "network").
async function call(name, fn) {
  await whenUp();
  try {
    const value = await fn(server.client());
    countStatus(name, 200);
    return new Answer(true, 200, value);
  } catch (e) {
    const status = typeof e?.status === "number" ? e.status : "network";
    countStatus(name, status);
    if (status === "network") await whenUp();
    return new Answer(false, status, e);
  }
}

function pendingInterrupts(state) {
  return (state?.tasks ?? []).flatMap((t) => t.interrupts ?? []);
}

// What a failed invariant's report says of a thread: its latest checkpoint (step, next, each
// task's interrupts and whether it has a result) and its runs, oldest first.
async function describeThread(threadId, state) {
  const tasks = (state?.tasks ?? [])
    .map((t) => `${t.name}${t.interrupts?.length ? ` ${t.interrupts.length} interrupt(s)` : ""}${t.result ? " +result" : ""}`)
    .join(", ");
  const runs = await call("runs.list", (c) => c.runs.list(threadId, { limit: 20 }));
  const history = runs.ok
    ? [...runs.value].reverse().map((r) => `${r.run_id.slice(-6)} ${r.status}${r.kwargs?.command ? " (resume)" : ""}`).join(" -> ")
    : `runs ${runs.status}`;
  return `${threadId} [checkpoint ${state?.checkpoint?.checkpoint_id ?? "-"} step ${state?.metadata?.step ?? "-"}, ` +
    `next [${(state?.next ?? []).join(", ")}], tasks [${tasks}]; runs: ${history}]`;
}

// The thread once no run is pending or running on it (null after `timeoutMs`).
async function settled(threadId, timeoutMs = 60000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const thread = await call("threads.get", (c) => c.threads.get(threadId));
    if (thread.ok && thread.value.status !== "busy") {
      const state = await call("threads.getState", (c) => c.threads.getState(threadId));
      if (state.ok) return { thread: thread.value, state: state.value };
    }
    await sleep(thread.ok ? 100 : 300);
  }
  return null;
}

const resume = (decision) => ({ command: { resume: { decisions: [decision] } } });

function decisionFor(type, request, recipient) {
  if (type === "approve") return { decision: { type }, to: request.args.to };
  if (type === "reject") return { decision: { type, message: "chaos: not this one" }, to: null };
  if (type === "respond") return { decision: { type, message: "chaos: answered by hand" }, to: null };
  const to = `edited-${recipient}`;
  return { decision: { type: "edit", edited_action: { name: "send_email", args: { ...request.args, to } } }, to };
}

function acked(answer) {
  return answer.ok && !(answer.value && typeof answer.value === "object" && "__error__" in answer.value);
}

// Sends a decision once (or twice at once, or with a cancel right after); records what it got.
async function decide(threadId, record, type, request) {
  const { decision, to } = decisionFor(type, request, record.recipient);
  if (to) attempted.add(to);
  const entry = { type, to, via: "wait", status: null, acked: false, cancelled: false };
  record.decisions.push(entry);
  const roll = Math.random();
  if (roll < 0.15) {
    stats.doubleSubmits++;
    entry.via = "double";
    const [a, b] = await Promise.all([0, 1].map(() => call("runs.wait(resume)", (c) => c.runs.wait(threadId, "agent", resume(decision)))));
    entry.status = `${a.status}+${b.status}`;
    entry.acked = acked(a) || acked(b);
    if (acked(a) && acked(b)) stats.doubleAcked.push(threadId);
  } else if (roll < 0.25) {
    stats.cancels++;
    entry.via = "create+cancel";
    const run = await call("runs.create(resume)", (c) => c.runs.create(threadId, "agent", resume(decision)));
    entry.status = run.status;
    if (run.ok) {
      entry.cancelled = true;
      await sleep(random(0, 30));
      await call("runs.cancel", (c) => c.runs.cancel(threadId, run.value.run_id, false));
    }
  } else if (roll < 0.4) {
    entry.via = "create+join";
    const run = await call("runs.create(resume)", (c) => c.runs.create(threadId, "agent", resume(decision)));
    entry.status = run.status;
    entry.acked = run.ok;
    if (run.ok) await call("runs.join", (c) => c.runs.join(threadId, run.value.run_id));
  } else {
    const answer = await call("runs.wait(resume)", (c) => c.runs.wait(threadId, "agent", resume(decision)));
    entry.status = answer.status;
    entry.acked = acked(answer);
  }
  return entry;
}

async function cycle(clientNo, n) {
  stats.started++;
  const recipient = `c${clientNo}n${n}x${Math.random().toString(36).slice(2, 8)}@example.com`;
  const created = await call("threads.create", (c) => c.threads.create({ metadata: { chaos_recipient: recipient } }));
  if (!created.ok) {
    await sleep(200); // a 503 (disk full) or a restart: do not spin
    return count(stats.outcomes, `threads.create ${created.status}`);
  }
  const threadId = created.value.thread_id;
  const record = { recipient, decisions: [] };
  threads.set(threadId, record);
  const input = { input: { messages: [{ role: "user", content: `email ${recipient} about chaos cycle ${n}` }] } };
  const cancelled = Math.random() < 0.05;
  if (cancelled) {
    stats.cancels++;
    const run = await call("runs.create(input)", (c) => c.runs.create(threadId, "agent", input));
    if (run.ok) await call("runs.cancel", (c) => c.runs.cancel(threadId, run.value.run_id, false));
  } else {
    const first = await call("runs.wait(input)", (c) => c.runs.wait(threadId, "agent", input));
    if (!first.ok && first.status !== "network") await sleep(200);
  }
  // Up to two tries at deciding: a decision cut off by a kill is sent again once the thread
  // reads paused after the restart, as a reviewer would.
  for (let attempt = 0; attempt < 2; ++attempt) {
    const now = await settled(threadId);
    if (!now) return count(stats.outcomes, "thread busy for 60 s");
    const [interrupt] = pendingInterrupts(now.state);
    if (!interrupt) return count(stats.outcomes, `no pause (thread ${now.thread.status}${cancelled ? ", first run cancelled" : ""})`);
    const request = interrupt.value?.action_requests?.[0];
    if (request?.name !== "send_email" || request.args?.to !== recipient) {
      return count(stats.outcomes, `unexpected pause ${JSON.stringify(request).slice(0, 80)}`);
    }
    if (attempt === 0) stats.cycles++;
    const type = ["approve", "approve", "approve", "edit", "reject", "respond"][Math.floor(Math.random() * 6)];
    const entry = await decide(threadId, record, type, request);
    if (entry.status !== "network") return count(stats.outcomes, `${type} ${entry.via} ${entry.status}`);
    count(stats.outcomes, `${type} ${entry.via} cut off by a kill`);
  }
}

async function client(clientNo, stopAt) {
  for (let n = 0; Date.now() < stopAt; ++n) {
    try {
      await cycle(clientNo, n);
    } catch (e) {
      count(stats.outcomes, `client error: ${String(e?.message ?? e).slice(0, 120)}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The invariants, checked with the server up and no client left.

function sqlite(db, sql) {
  // A busy run leaves tens of thousands of rows: past execFileSync's default 1 MB of output.
  return execFileSync("sqlite3", ["-cmd", ".timeout 5000", db, sql], { encoding: "utf8", maxBuffer: 256 << 20 }).trim();
}
function rows(db, sql) {
  const out = sqlite(db, sql);
  return out === "" ? [] : out.split("\n").map((line) => line.split("|"));
}

async function allThreads() {
  const all = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await call("threads.search", (c) => c.threads.search({ limit: 1000, offset }));
    if (!page.ok) throw new Error(`threads.search answered ${page.status}`);
    all.push(...page.value);
    if (page.value.length < 1000) return all;
  }
}

async function settleAll(timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = Number(sqlite(server.db, "SELECT count(*) FROM server_runs WHERE status IN ('pending','running')"));
    const busy = (await allThreads()).filter((t) => t.status === "busy").length;
    if (open === 0 && busy === 0) return true;
    if (Date.now() > deadline) return false;
    await sleep(250);
  }
}

const results = [];
function check(name, ok, detail = "") {
  results.push({ name, ok, detail });
}

async function invariants() {
  const settledInTime = await settleAll(90000);
  check("all runs settled within 90 s of the clients stopping", settledInTime);

  const integrity = sqlite(server.db, "PRAGMA integrity_check");
  check("PRAGMA integrity_check of the server database", integrity === "ok", integrity.slice(0, 300));

  const open = rows(server.db, "SELECT run_id, thread_id, status FROM server_runs WHERE status IN ('pending','running')");
  check("no run left pending or running", open.length === 0, open.slice(0, 5).map((r) => r.join(" ")).join("; "));
  let listed = await allThreads();
  const busy = listed.filter((t) => t.status === "busy");
  check("no thread stuck busy", busy.length === 0, busy.slice(0, 5).map((t) => t.thread_id).join(", "));

  // Every pause is shown as one and can be answered: approve it through the SDK.
  const wrongStatus = [];
  const phantom = [];
  const unanswerable = [];
  let answered = 0;
  for (const t of listed) {
    const state = await call("threads.getState", (c) => c.threads.getState(t.thread_id));
    if (!state.ok) {
      unanswerable.push(`${t.thread_id}: getState ${state.status}`);
      continue;
    }
    const pending = pendingInterrupts(state.value);
    if (pending.length === 0) {
      if (t.status === "interrupted") phantom.push(await describeThread(t.thread_id, state.value));
      continue;
    }
    if (t.status !== "interrupted") wrongStatus.push(`${t.thread_id} (${t.status})`);
    const record = threads.get(t.thread_id);
    const request = pending[0].value?.action_requests?.[0];
    if (record && request?.args?.to) attempted.add(request.args.to);
    const answer = await call("final approve", (c) => c.runs.wait(t.thread_id, "agent", resume({ type: "approve" })));
    const after = await settled(t.thread_id, 30000);
    const again = after ? pendingInterrupts(after.state) : [];
    const proceeded = after && !(again.length > 0 && again[0].id === pending[0].id);
    if (!acked(answer) || !proceeded) {
      unanswerable.push(`${t.thread_id}: ${answer.status} ${answer.ok ? "" : String(answer.value?.message ?? "").slice(0, 160)}`);
    } else {
      answered++;
      if (record && request?.args?.to) record.decisions.push({ type: "approve", to: request.args.to, via: "final", status: 200, acked: true });
    }
  }
  check("every thread with pending interrupts reads interrupted", wrongStatus.length === 0, wrongStatus.slice(0, 5).join(", "));
  check("no thread reads interrupted with nothing to answer", phantom.length === 0, phantom.slice(0, 5).join(", "));
  check(`every pause is answerable: approve through the SDK is 200 and the run proceeds (${answered} approved)`,
    unanswerable.length === 0, unanswerable.slice(0, 5).join("; "));
  await settleAll(30000);

  // Effects: one outbox row per approved call, none without an approval.
  const outbox = new Map(rows(outboxDb, "SELECT to_address, count(*) FROM outbox GROUP BY to_address").map(([to, n]) => [to, Number(n)]));
  const twice = [...outbox].filter(([, n]) => n > 1);
  check("no approved effect ran twice (outbox rows per recipient <= 1)", twice.length === 0, twice.slice(0, 5).map(([to, n]) => `${to}: ${n}`).join(", "));
  const unasked = [...outbox.keys()].filter((to) => !attempted.has(to));
  check("no effect without an approval or edit sent for it", unasked.length === 0, unasked.slice(0, 5).join(", "));

  const audit = new Map();
  for (const [threadId, outcome] of rows(server.db, "SELECT thread_id, outcome FROM server_audit_log WHERE kind = 'decision'")) {
    if (!audit.has(threadId)) audit.set(threadId, new Set());
    audit.get(threadId).add(outcome);
  }
  listed = await allThreads();
  const statusOf = new Map(listed.map((t) => [t.thread_id, t.status]));
  const missing = [];
  let ackedApprovals = 0;
  let excused = 0;
  for (const [threadId, record] of threads) {
    const targets = new Set(record.decisions.filter((d) => d.acked && d.to && !d.cancelled).map((d) => d.to));
    if (targets.size === 0 || statusOf.get(threadId) === "interrupted" || statusOf.get(threadId) === "busy") continue;
    ackedApprovals += targets.size;
    const outcomes = audit.get(threadId) ?? new Set();
    for (const to of targets) {
      if ((outbox.get(to) ?? 0) === 1) continue;
      if (outcomes.has("effect_uncertain") || outcomes.has("pending")) {
        excused++;
        continue;
      }
      missing.push(`${to} (thread ${threadId}, audit: ${[...outcomes].join("/")})`);
    }
  }
  check(`no approval acknowledged with 200 whose effect never happened (${ackedApprovals} acknowledged, ${excused} excused by the audit)`,
    missing.length === 0, missing.slice(0, 5).join("; "));
  check("no double submit acknowledged twice", stats.doubleAcked.length === 0, stats.doubleAcked.slice(0, 5).join(", "));

  let verify;
  try {
    verify = { ok: true, text: execFileSync(process.env.TOLLGATE_BIN, ["audit", "verify", "--db", server.db], { encoding: "utf8" }).trim() };
  } catch (e) {
    verify = { ok: false, text: `${e.stdout ?? ""}${e.stderr ?? ""}`.trim() };
  }
  check("audit chain verifies (tollgate audit verify)", verify.ok, verify.text);

  if (options.tmpfs && options.diskFull > 0) {
    const reads = Object.entries(stats.disk.readProbes).filter(([s]) => s !== "200");
    check("reads are served while the disk is full", reads.length === 0, reads.map(([s, n]) => `${s}: ${n}`).join(", "));
    const writes = Object.entries(stats.disk.writeProbes).filter(([s]) => s !== "200" && s !== "503");
    check("writes fail with 503 (or succeed) while the disk is full", writes.length === 0, writes.map(([s, n]) => `${s}: ${n}`).join(", "));
    check("writes work again without a restart once space is back", stats.disk.notRecovered === 0, `${stats.disk.notRecovered} windows did not recover`);
  }
  check("the server never ended by itself (only the killer's kill -9)", server.ends.length === 0, server.ends.join("\n").slice(0, 500));
}

// ---------------------------------------------------------------------------------------------

function fiveXX() {
  const out = {};
  for (const byStatus of Object.values(stats.statuses)) {
    for (const [status, n] of Object.entries(byStatus)) if (/^5/.test(status)) count(out, status, n);
  }
  return out;
}

function summary() {
  const ms = stats.restartMs.slice().sort((a, b) => a - b);
  return {
    clients: options.clients,
    seconds: options.seconds,
    cycles: stats.cycles,
    client_loops: stats.started,
    threads: threads.size,
    kills: stats.kills,
    restart_ms_median: ms.length ? ms[Math.floor(ms.length / 2)] : null,
    restart_ms_max: ms.length ? ms.at(-1) : null,
    disk_full_windows: stats.diskFullWindows,
    disk: stats.disk,
    double_submits: stats.doubleSubmits,
    cancels: stats.cancels,
    five_xx: fiveXX(),
    statuses: stats.statuses,
    outcomes: stats.outcomes,
    invariants: results,
    passed: results.every((r) => r.ok),
  };
}

function print(s) {
  console.log("\n=== chaos summary ===");
  console.log(`clients ${s.clients}, ${s.seconds} s: ${s.cycles} cycles (${s.client_loops} loops, ${s.threads} threads)`);
  console.log(`kill -9: ${s.kills} (restart median ${s.restart_ms_median} ms, max ${s.restart_ms_max} ms)`);
  console.log(`disk-full windows: ${s.disk_full_windows}${options.tmpfs ? "" : " (skipped: no tmpfs)"}; probes: reads ${JSON.stringify(s.disk.readProbes)}, writes ${JSON.stringify(s.disk.writeProbes)}, recovered in ${JSON.stringify(s.disk.recoveredMs)} ms; client answers meanwhile ${JSON.stringify(s.disk.clientStatuses)}`);
  console.log(`double submits ${s.double_submits}, cancels ${s.cancels}`);
  console.log(`5xx by code: ${JSON.stringify(s.five_xx)}`);
  console.log("answers by call:");
  for (const [name, byStatus] of Object.entries(s.statuses).sort()) console.log(`  ${name.padEnd(22)} ${JSON.stringify(byStatus)}`);
  console.log("client loops ended with:");
  for (const [name, n] of Object.entries(s.outcomes).sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(5)}  ${name}`);
  console.log("invariants:");
  for (const r of s.invariants) console.log(`  ${r.ok ? "PASS" : "FAIL"}  ${r.name}${r.ok || !r.detail ? "" : `\n          ${r.detail}`}`);
  console.log(s.passed ? "chaos: every invariant holds" : "chaos: INVARIANTS FAILED");
}

async function main() {
  mkdirSync(join(options.dbDir, "..", "demo"), { recursive: true });
  await startServer();
  log(`tollgate serve on ${server.url}, database ${server.db}${options.tmpfs ? " (tmpfs)" : ""}`);
  const stopAt = Date.now() + options.seconds * 1000;
  const chaosDone = chaos(stopAt);
  await Promise.all(Array.from({ length: options.clients }, (_, i) => client(i, stopAt)));
  await chaosDone;
  log("clients stopped; waiting for every run to settle");
  await whenUp();
  try {
    await invariants();
  } catch (e) {
    check("the invariants could be checked", false, String(e?.stack ?? e).slice(0, 500));
  }
  const s = summary();
  print(s);
  if (options.out) writeFileSync(options.out, JSON.stringify(s, null, 2) + "\n");
  appendFileSync(join(options.dbDir, "..", "server.log"), server.output);
  await server.stop().catch((e) => {
    console.log(`server stop: ${String(e.message).slice(0, 500)}`);
  });
  process.exit(s.passed ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
