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
