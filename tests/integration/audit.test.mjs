// The review audit log: every decision sent to a paused thread, its outcome, after a restart too.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { ServerProcess, humanInput } from "./harness.mjs";

const server = new ServerProcess();
before(() => server.start());
after(() => server.stop());

async function audit(query = "") {
  const response = await fetch(`${server.url}/audit${query}`);
  assert.equal(response.status, 200);
  return response.json();
}

async function pausedDemoThread(client) {
  const thread = await client.threads.create();
  const paused = await client.runs.wait(thread.thread_id, "agent", { input: humanInput("please delete notes.txt") });
  assert.equal(paused.__interrupt__[0].value.action_requests[0].name, "delete_file");
  return thread.thread_id;
}

test("an approved decision is logged with what was shown and decided, as applied", async () => {
  const client = server.client();
  const threadId = await pausedDemoThread(client);
  await client.runs.wait(threadId, "agent", { command: { resume: { decisions: [{ type: "approve" }] } } });
  const [entry] = await audit(`?thread_id=${threadId}`);
  assert.equal(entry.outcome, "applied");
  assert.equal(entry.graph_id, "agent");
  assert.equal(Object.values(entry.shown)[0][0].value.action_requests[0].name, "delete_file");
  assert.deepEqual(entry.decided, { decisions: [{ type: "approve" }] });
  assert.equal(entry.reviewer, null);
  assert.ok(entry.settled_at >= entry.received_at);
});

test("a refused decision is logged as refused with the middleware's message", async () => {
  const client = server.client();
  const threadId = await pausedDemoThread(client);
  const response = await fetch(`${server.url}/threads/${threadId}/runs/wait`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ assistant_id: "agent", command: { resume: { decisions: [{ type: "respond", message: "x" }] } } }),
  });
  assert.ok(response.status >= 400, `status ${response.status}`);
  const [entry] = await audit(`?thread_id=${threadId}`);
  assert.equal(entry.outcome, "refused");
  assert.match(entry.message, /not allowed/);
  assert.equal((await client.threads.get(threadId)).status, "interrupted");
});

test("the log outlives kill -9 and `tollgate audit` prints it", async () => {
  const client = server.client();
  const threadId = await pausedDemoThread(client);
  await client.runs.wait(threadId, "agent", { command: { resume: { decisions: [{ type: "reject", message: "keep it" }] } } });
  await server.kill("SIGKILL");
  await server.start();
  const [entry] = await audit(`?thread_id=${threadId}`);
  assert.equal(entry.outcome, "applied");
  assert.deepEqual(entry.decided.decisions[0], { type: "reject", message: "keep it" });
  const printed = execFileSync(process.env.TOLLGATE_BIN, ["audit", "--db", server.db, "--thread", threadId], {
    encoding: "utf8",
  });
  assert.match(printed, /applied/);
  assert.match(printed, /delete_file/);
  assert.match(printed, /reject "keep it"/);
});

test("bad audit queries are refused naming the parameter", async () => {
  for (const [query, field] of [["?limit=0", "limit"], ["?before=x", "before"], ["?thread_id=nope", "thread_id"]]) {
    const response = await fetch(`${server.url}/audit${query}`);
    assert.equal(response.status, 400);
    assert.match((await response.json()).detail, new RegExp(field));
  }
});

test("the reviewer is the identity, never a field of the body: a forged reviewer is ignored", async () => {
  const client = server.client();
  const threadId = await pausedDemoThread(client);
  await client.runs.wait(threadId, "agent", {
    command: { resume: { decisions: [{ type: "approve" }] } },
    metadata: { reviewer: "mallory" },
    config: { configurable: { reviewer: "mallory", user_id: "mallory" } },
  });
  for (const entry of await audit(`?thread_id=${threadId}`)) assert.equal(entry.reviewer, null);
});

test("a direct state write is audited with what was pending and what it wrote", async () => {
  const client = server.client();
  const threadId = await pausedDemoThread(client);
  await client.threads.updateState(threadId, { values: { messages: [] } });
  const [entry] = await audit(`?thread_id=${threadId}`);
  assert.equal(entry.kind, "state_write");
  assert.equal(entry.outcome, "applied");
  assert.equal(Object.values(entry.shown)[0][0].value.action_requests[0].name, "delete_file");
  assert.deepEqual(entry.decided.values, { messages: [] });
});

test("runs are audited at their start, and the chain exports as JSON lines and CSV", async () => {
  const client = server.client();
  const threadId = await pausedDemoThread(client);
  const entries = await audit(`?thread_id=${threadId}`);
  assert.equal(entries.at(-1).kind, "run_start");
  const jsonl = await (await fetch(`${server.url}/audit?format=jsonl`)).text();
  const lines = jsonl.trim().split("\n").map((line) => JSON.parse(line));
  for (let i = 1; i < lines.length; i++) assert.equal(lines[i].prev_hash, lines[i - 1].hash);
  assert.ok(lines.some((e) => e.kind === "outcome"));
  const csv = await fetch(`${server.url}/audit?format=csv`);
  assert.match(csv.headers.get("content-type"), /text\/csv/);
  assert.match(await csv.text(), /^audit_id,kind,refers_to,/);
  const bad = await fetch(`${server.url}/audit?format=xml`);
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).detail, /format/);
});

test("`tollgate audit verify` passes on the server's log and names the row edited behind its back", async () => {
  const verify = () => {
    try {
      return { code: 0, out: execFileSync(process.env.TOLLGATE_BIN, ["audit", "verify", "--db", server.db], { encoding: "utf8" }) };
    } catch (e) {
      return { code: e.status, out: e.stdout };
    }
  };
  const intact = verify();
  assert.equal(intact.code, 0, intact.out);
  assert.match(intact.out, /intact/);
  const [entry] = await audit();
  await server.kill("SIGTERM");
  server.sql(`UPDATE server_audit_log SET decided = '"forged"' WHERE audit_id = ${entry.audit_id}`);
  const broken = verify();
  assert.equal(broken.code, 1);
  assert.match(broken.out, new RegExp(`broken at entry #${entry.audit_id}: its hash does not match`));
  await server.start();
});
