// Refused resumes and bad input on every resume route: a decision the HITL middleware rejects
// is a 422 with the middleware's message and the thread stays paused and answerable; a resume
// that cannot apply is a 409; nothing is persisted for a refused request.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ServerProcess, serveForFile, collect, humanInput, waitForStatus } from "./harness.mjs";

const server = new ServerProcess();
let client;
serveForFile(server, (c) => (client = c));

const NOT_ALLOWED = /^Unexpected human decision: .*Decision type 'respond' is not allowed for tool 'delete_file'\./;
const badDecision = { decisions: [{ type: "respond", message: "no" }] };

// A demo-agent thread paused at its review of one delete_file call.
async function pausedThread() {
  const thread = await client.threads.create();
  const paused = await client.runs.wait(thread.thread_id, "agent", { input: humanInput("please delete notes.txt") });
  const interrupt = paused.__interrupt__[0];
  assert.equal(interrupt.value.action_requests[0].name, "delete_file");
  return { threadId: thread.thread_id, interrupt };
}

// The thread is still paused at the same interrupt, and nothing was recorded for the refusal.
async function assertStillPaused(threadId, interrupt, runsBefore) {
  const thread = await client.threads.get(threadId);
  assert.equal(thread.status, "interrupted");
  // The thread record adds when each review began (review_configs[i].created_at).
  const shown = Object.values(thread.interrupts).flat();
  for (const config of shown.flatMap((i) => i.value.review_configs)) {
    assert.ok(!Number.isNaN(Date.parse(config.created_at)), JSON.stringify(config));
    delete config.created_at;
  }
  assert.deepEqual(shown, [interrupt]);
  const state = await client.threads.getState(threadId);
  assert.deepEqual(state.tasks.flatMap((t) => t.interrupts), [interrupt]);
  assert.equal((await client.runs.list(threadId)).length, runsBefore);
}

// ...and a valid decision still finishes it.
async function assertAnswerable(threadId) {
  const done = await client.runs.wait(threadId, "agent", { command: { resume: { decisions: [{ type: "approve" }] } } });
  assert.equal(done.__interrupt__, undefined);
  assert.equal((await client.threads.get(threadId)).status, "idle");
}

const detailOf = (e) => JSON.parse(e.text).detail;

test("a rejected decision on /runs/wait is a 422 with the middleware's message; the thread stays paused", async () => {
  const { threadId, interrupt } = await pausedThread();
  await assert.rejects(client.runs.wait(threadId, "agent", { command: { resume: badDecision } }), (e) => {
    assert.equal(e.status, 422);
    assert.match(detailOf(e), NOT_ALLOWED);
    return true;
  });
  await assertStillPaused(threadId, interrupt, 1);
  await assertAnswerable(threadId);
});

test("a rejected decision on /runs/stream is a 422 before any stream opens", async () => {
  const { threadId, interrupt } = await pausedThread();
  const response = await fetch(`${server.url}/threads/${threadId}/runs/stream`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ assistant_id: "agent", command: { resume: badDecision }, stream_mode: ["values", "updates", "tasks", "debug"] }),
  });
  assert.equal(response.status, 422);
  assert.match(response.headers.get("content-type"), /application\/json/);
  assert.match((await response.json()).detail, NOT_ALLOWED);
  await assertStillPaused(threadId, interrupt, 1);
  await assertAnswerable(threadId);
});

test("a rejected decision through the SDK's runs.stream throws the 422", async () => {
  const { threadId, interrupt } = await pausedThread();
  await assert.rejects(collect(client.runs.stream(threadId, "agent", { command: { resume: badDecision } })), (e) => {
    assert.equal(e.status, 422);
    assert.match(detailOf(e), NOT_ALLOWED);
    return true;
  });
  await assertStillPaused(threadId, interrupt, 1);
});

test("a rejected decision on /runs (background) is a 422 and no run is created", async () => {
  const { threadId, interrupt } = await pausedThread();
  await assert.rejects(client.runs.create(threadId, "agent", { command: { resume: badDecision } }), (e) => {
    assert.equal(e.status, 422);
    assert.match(detailOf(e), NOT_ALLOWED);
    return true;
  });
  await assertStillPaused(threadId, interrupt, 1);
  await assertAnswerable(threadId);
});

test("an accepted resume on /runs (background) answers with the run", async () => {
  const { threadId } = await pausedThread();
  const run = await client.runs.create(threadId, "agent", { command: { resume: { decisions: [{ type: "approve" }] } } });
  assert.ok(["pending", "running", "success"].includes(run.status), run.status);
  await client.runs.join(threadId, run.run_id);
  assert.equal((await client.runs.get(threadId, run.run_id)).status, "success");
  await waitForStatus(client, threadId, "idle");
});

async function command(threadId, body) {
  const response = await fetch(`${server.url}/threads/${threadId}/commands`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

test("a rejected decision on v2 input.respond is a 422 protocol error with the middleware's message", async () => {
  const { threadId, interrupt } = await pausedThread();
  const refused = await command(threadId, {
    id: 7,
    method: "input.respond",
    params: { namespace: [], interrupt_id: interrupt.id, response: badDecision },
  });
  assert.equal(refused.status, 422);
  assert.equal(refused.body.type, "error");
  assert.equal(refused.body.id, 7);
  assert.match(refused.body.message, NOT_ALLOWED);
  await assertStillPaused(threadId, interrupt, 1);
  const accepted = await command(threadId, {
    id: 8,
    method: "input.respond",
    params: { namespace: [], interrupt_id: interrupt.id, response: { decisions: [{ type: "approve" }] } },
  });
  assert.equal(accepted.status, 200);
  assert.equal(accepted.body.type, "success");
  await waitForStatus(client, threadId, "idle");
});

test("v2 run.start with input on a paused thread resumes it, and a rejected decision there is a 422", async () => {
  const { threadId, interrupt } = await pausedThread();
  const refused = await command(threadId, { id: 3, method: "run.start", params: { assistant_id: "agent", input: badDecision } });
  assert.equal(refused.status, 422);
  assert.equal(refused.body.type, "error");
  assert.match(refused.body.message, NOT_ALLOWED);
  await assertStillPaused(threadId, interrupt, 1);
  const accepted = await command(threadId, {
    id: 4,
    method: "run.start",
    params: { assistant_id: "agent", input: { decisions: [{ type: "approve" }] } },
  });
  assert.equal(accepted.status, 200);
  assert.ok(accepted.body.result.run_id);
  await waitForStatus(client, threadId, "idle");
});

test("v2 input.respond for an unknown interrupt id is a 409 and changes nothing", async () => {
  const { threadId, interrupt } = await pausedThread();
  const refused = await command(threadId, {
    id: 1,
    method: "input.respond",
    params: { namespace: [], interrupt_id: "not-an-interrupt", response: "x" },
  });
  assert.equal(refused.status, 409);
  assert.equal(refused.body.error, "no_such_interrupt");
  await assertStillPaused(threadId, interrupt, 1);
});

test("v2 input.respond on a thread that is not paused is a 409", async () => {
  const thread = await client.threads.create();
  const refused = await command(thread.thread_id, {
    id: 1,
    method: "input.respond",
    params: { namespace: [], interrupt_id: "x", response: "x" },
  });
  assert.equal(refused.status, 409);
  assert.equal(refused.body.message, "input.respond can only be used while the run is interrupted.");
});

test("a resume naming an unknown interrupt id is a 409 and the thread stays paused", async () => {
  const { threadId, interrupt } = await pausedThread();
  await assert.rejects(
    client.runs.wait(threadId, "agent", { command: { resume: { "0123456789abcdef0123456789abcdef": { decisions: [{ type: "approve" }] } } } }),
    (e) => {
      assert.equal(e.status, 409);
      assert.ok(detailOf(e).length > 0);
      return true;
    },
  );
  await assertStillPaused(threadId, interrupt, 1);
});

test("a resume on a thread that never ran is a 409 on /runs/wait", async () => {
  const thread = await client.threads.create();
  await assert.rejects(client.runs.wait(thread.thread_id, "agent", { command: { resume: "x" } }), (e) => e.status === 409);
  assert.equal((await client.threads.get(thread.thread_id)).status, "idle");
  assert.deepEqual(await client.runs.list(thread.thread_id), []);
});

test("/stream/events refuses unknown fields, naming them", async () => {
  const { threadId } = await pausedThread();
  const response = await fetch(`${server.url}/threads/${threadId}/stream/events`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ channels: ["values"], chanels: ["lifecycle"] }),
  });
  assert.equal(response.status, 400);
  assert.match((await response.json()).detail, /chanels/);
});

test("malformed JSON on a resume is a 400 naming the problem and leaves the thread paused", async () => {
  const { threadId, interrupt } = await pausedThread();
  const response = await fetch(`${server.url}/threads/${threadId}/runs/wait`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"assistant_id":"agent","command":{"resume":',
  });
  assert.equal(response.status, 400);
  assert.match((await response.json()).detail, /not valid JSON/);
  await assertStillPaused(threadId, interrupt, 1);
});

test("an oversized resume is a 413 and leaves the thread paused", async () => {
  const { threadId, interrupt } = await pausedThread();
  const response = await fetch(`${server.url}/threads/${threadId}/runs/wait`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ assistant_id: "agent", command: { resume: { decisions: [{ type: "respond", message: "x".repeat(5 << 20) }] } } }),
  });
  assert.equal(response.status, 413);
  await assertStillPaused(threadId, interrupt, 1);
});

test("an accepted resume streamed in tasks mode alone streams its task events", async () => {
  const { threadId } = await pausedThread();
  const events = await collect(
    client.runs.stream(threadId, "agent", { command: { resume: { decisions: [{ type: "approve" }] } }, streamMode: ["tasks"] }),
  );
  assert.equal(events[0].event, "metadata");
  const results = events.filter((e) => e.event === "tasks" && "result" in e.data);
  assert.ok(results.some((e) => e.data.name === "tools"), JSON.stringify(events.map((e) => e.data?.name)));
  await waitForStatus(client, threadId, "idle");
});

test("a rejected decision streamed in tasks mode alone is still a 422", async () => {
  const { threadId, interrupt } = await pausedThread();
  await assert.rejects(collect(client.runs.stream(threadId, "agent", { command: { resume: badDecision }, streamMode: ["tasks"] })), (e) => {
    assert.equal(e.status, 422);
    return true;
  });
  await assertStillPaused(threadId, interrupt, 1);
});
