// The data-driven HITL scenarios (tests/scenarios/*.json, the library runner's files) over HTTP:
// scenario_server serves each file as its own assistant (graph id = scenario name) and the
// official SDK Client walks its steps: input -> interrupt payload -> decisions -> messages, tool
// executions, model calls, and refused decisions (status, message, the thread still paused).
// Run by the CTest test server_scenarios, which sets TOLLGATE_SCENARIO_SERVER.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";

const BINARY = process.env.TOLLGATE_SCENARIO_SERVER;
const SCENARIO_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "scenarios");
const files = readdirSync(SCENARIO_DIR)
  .filter((f) => f.endsWith(".json"))
  .sort();

let child;
let client;
let recordDir;

before(async () => {
  if (!BINARY) return;
  recordDir = mkdtempSync(join(tmpdir(), "tollgate-scenarios-"));
  child = spawn(BINARY, [recordDir], { stdio: ["pipe", "pipe", "inherit"] });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("scenario_server did not start: " + out)), 20000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`scenario_server exited with ${code}: ${out}`)));
  });
  client = new Client({ apiUrl: url, apiKey: null, callerOptions: { maxRetries: 0 } });
});

after(async () => {
  if (!child) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.stdin.end();
  await exited;
  rmSync(recordDir, { recursive: true, force: true });
});

// `expected` is contained in `actual`: objects by key, arrays element-wise with equal length,
// scalars equal (the library runner's rule). Returns the first mismatch's path or "".
function mismatch(expected, actual, path = "$") {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) {
      return `${path}: expected ${expected.length} items, got ${JSON.stringify(actual)}`;
    }
    for (let i = 0; i < expected.length; i++) {
      const m = mismatch(expected[i], actual[i], `${path}[${i}]`);
      if (m) return m;
    }
    return "";
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) {
      return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    }
    for (const [key, value] of Object.entries(expected)) {
      if (!(key in actual)) return `${path}.${key}: missing`;
      const m = mismatch(value, actual[key], `${path}.${key}`);
      if (m) return m;
    }
    return "";
  }
  if (expected !== actual) return `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
  return "";
}

const jsonLines = (file) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
// JSON with object keys in sorted order, so equal values sort alike whatever their key order.
const canonical = (value) =>
  JSON.stringify(value, (key, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
      : v);
const sortedByJson = (list) => [...list].sort((a, b) => (canonical(a) < canonical(b) ? -1 : 1));

// Paused = the thread is interrupted and its state has a pending task with an interrupt.
async function isPaused(threadId) {
  const thread = await client.threads.get(threadId);
  const state = await client.threads.getState(threadId);
  const hasInterrupt = state.tasks.some((t) => t.interrupts.length > 0);
  return thread.status === "interrupted" && state.next.length > 0 && hasInterrupt;
}

async function runStep(spec, threadId, step, where) {
  const expect = step.expect ?? {};
  const payload = "input" in step ? { input: step.input } : { command: { resume: step.resume } };
  let result;
  try {
    result = await client.runs.wait(threadId, spec.name, payload);
  } catch (e) {
    assert.ok(expect.error, `${where}: unexpected error ${e.message}`);
    if (expect.error.http_status) assert.equal(e.status, expect.error.http_status, `${where}: status`);
    assert.equal(JSON.parse(e.text).detail, expect.error.message, `${where}: message`);
    if ("paused" in expect) assert.equal(await isPaused(threadId), expect.paused, `${where}: paused`);
    return;
  }
  assert.ok(!expect.error, `${where}: expected the error ${JSON.stringify(expect.error)}, got ${JSON.stringify(result)}`);
  const state = await client.threads.getState(threadId);
  if (expect.interrupts) {
    const values = (result.__interrupt__ ?? []).map((i) => i.value);
    assert.deepEqual(values, expect.interrupts, `${where}: interrupt values`);
  }
  if ("paused" in expect) assert.equal(await isPaused(threadId), expect.paused, `${where}: paused`);
  if (expect.next) assert.deepEqual(state.next, expect.next, `${where}: next`);
  if (expect.values) {
    assert.equal(mismatch(expect.values, state.values), "", `${where}: values`);
  }
  if (expect.messages) {
    assert.equal(mismatch(expect.messages, state.values.messages), "", `${where}: messages`);
  }
}

for (const file of files) {
  const spec = JSON.parse(readFileSync(join(SCENARIO_DIR, file), "utf8"));
  test(`scenario ${spec.name} over HTTP`, { skip: BINARY ? false : "set TOLLGATE_SCENARIO_SERVER (ctest -R server_scenarios)" }, async () => {
    const thread = await client.threads.create({ metadata: { scenario: spec.name } });
    for (const [i, step] of spec.steps.entries()) {
      await runStep(spec, thread.thread_id, step, `${spec.name} step ${i}`);
    }
    if (spec.tools_executed) {
      const executed = jsonLines(join(recordDir, `${spec.name}.tools.jsonl`));
      assert.deepEqual(sortedByJson(executed), sortedByJson(spec.tools_executed), "tools executed");
    }
    if (spec.model_calls) {
      const calls = jsonLines(join(recordDir, `${spec.name}.model.jsonl`));
      assert.equal(mismatch(spec.model_calls, calls), "", "model calls");
    }
  });
}
