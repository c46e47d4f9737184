// Cancellation, multitask strategies and bad input, through the SDK Client and raw fetch.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ServerProcess, serveForFile, collect, humanInput, waitForStatus } from "./harness.mjs";

const server = new ServerProcess();
let client;
serveForFile(server, (c) => (client = c));

async function waitForRun(threadId, runId, status) {
  for (let i = 0; i < 500; i++) {
    const run = await client.runs.get(threadId, runId);
    if (run.status === status) return run;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`run ${runId} never became ${status}`);
}

test("cancel stops a running run: run interrupted, thread idle", async () => {
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "sleepy", { input: { seconds: 30 } });
  await waitForRun(thread.thread_id, run.run_id, "running");
  await client.runs.cancel(thread.thread_id, run.run_id, true);
  assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, "interrupted");
  assert.equal((await client.threads.get(thread.thread_id)).status, "idle");
});

test("reject: a second run on a busy thread is refused with 409", async () => {
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "sleepy", { input: { seconds: 30 } });
  await assert.rejects(
    client.runs.create(thread.thread_id, "sleepy", { input: { seconds: 0 } }),
    (e) => e.status === 409 && /already running/.test(e.message),
  );
  await client.runs.cancel(thread.thread_id, run.run_id, true);
});

test("enqueue: the second run waits for the first and both succeed", async () => {
  const thread = await client.threads.create();
  const first = await client.runs.create(thread.thread_id, "sleepy", { input: { seconds: 0.3 } });
  const second = await client.runs.create(thread.thread_id, "sleepy", {
    input: { seconds: 0 },
    multitaskStrategy: "enqueue",
  });
  assert.equal(second.status, "pending");
  await client.runs.join(thread.thread_id, second.run_id);
  assert.equal((await client.runs.get(thread.thread_id, first.run_id)).status, "success");
  assert.equal((await client.runs.get(thread.thread_id, second.run_id)).status, "success");
});

test("interrupt: the new run cancels the running one", async () => {
  const thread = await client.threads.create();
  const first = await client.runs.create(thread.thread_id, "sleepy", { input: { seconds: 30 } });
  await waitForRun(thread.thread_id, first.run_id, "running");
  const second = await client.runs.create(thread.thread_id, "sleepy", {
    input: { seconds: 0 },
    multitaskStrategy: "interrupt",
  });
  await client.runs.join(thread.thread_id, second.run_id);
  assert.equal((await client.runs.get(thread.thread_id, first.run_id)).status, "interrupted");
  assert.equal((await client.runs.get(thread.thread_id, second.run_id)).status, "success");
});

test("rollback: the new run cancels and deletes the running one", async () => {
  const thread = await client.threads.create();
  const first = await client.runs.create(thread.thread_id, "sleepy", { input: { seconds: 30 } });
  await waitForRun(thread.thread_id, first.run_id, "running");
  const second = await client.runs.create(thread.thread_id, "sleepy", {
    input: { seconds: 0 },
    multitaskStrategy: "rollback",
  });
  await client.runs.join(thread.thread_id, second.run_id);
  await assert.rejects(client.runs.get(thread.thread_id, first.run_id), (e) => e.status === 404);
});

test("on_disconnect cancel: closing the stream cancels the run", async () => {
  const thread = await client.threads.create();
  const controller = new AbortController();
  let runId;
  const stream = client.runs.stream(thread.thread_id, "sleepy", {
    input: { seconds: 30 },
    onDisconnect: "cancel",
    signal: controller.signal,
    onRunCreated: (meta) => (runId = meta.run_id),
  });
  const iterator = stream[Symbol.asyncIterator]();
  await iterator.next();  // metadata
  controller.abort();
  await iterator.return?.().catch(() => {});
  await waitForRun(thread.thread_id, runId, "interrupted");
  await waitForStatus(client, thread.thread_id, "idle");
});

test("deleting a thread while its run executes is a 409; once the run ends the delete leaves nothing", async () => {
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "sleepy", { input: { seconds: 30 } });
  await waitForRun(thread.thread_id, run.run_id, "running");
  await assert.rejects(client.threads.delete(thread.thread_id), (e) => e.status === 409);
  assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, "running");
  await client.runs.cancel(thread.thread_id, run.run_id, true);
  await client.threads.delete(thread.thread_id);
  await assert.rejects(client.threads.get(thread.thread_id), (e) => e.status === 404);
  await assert.rejects(client.runs.get(thread.thread_id, run.run_id), (e) => e.status === 404);
});

test("the system assistant of a registered graph cannot be deleted, and runs keep working", async () => {
  const system = await client.assistants.get("hitl");
  await assert.rejects(client.assistants.delete(system.assistant_id), (e) => e.status === 409);
  const thread = await client.threads.create();
  const paused = await client.runs.wait(thread.thread_id, "hitl", { input: humanInput("x") });
  assert.ok(paused.__interrupt__);
});

test("a resume for a thread that is not paused is a 409 and changes nothing", async () => {
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, "sleepy", { input: { seconds: 0 } });
  const history = await client.threads.getHistory(thread.thread_id, { limit: 100 });
  await assert.rejects(
    collect(client.runs.stream(thread.thread_id, "sleepy", { command: { resume: "yes" } })),
    (e) => e.status === 409,
  );
  assert.equal((await client.threads.getHistory(thread.thread_id, { limit: 100 })).length, history.length);
  assert.equal((await client.threads.get(thread.thread_id)).status, "idle");
});

test("unknown thread, run and assistant are 404", async () => {
  const missing = "00000000-0000-4000-8000-000000000000";
  await assert.rejects(client.threads.get(missing), (e) => e.status === 404);
  const thread = await client.threads.create();
  await assert.rejects(client.runs.get(thread.thread_id, missing), (e) => e.status === 404);
  await assert.rejects(client.runs.create(thread.thread_id, "nope", {}), (e) => e.status === 404);
});

test("malformed JSON is a 400 naming the problem", async () => {
  const response = await fetch(`${server.url}/threads`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"metadata":',
  });
  assert.equal(response.status, 400);
  assert.match((await response.json()).detail, /not valid JSON/);
});

test("an oversized body is a 413", async () => {
  const response = await fetch(`${server.url}/threads`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ metadata: { blob: "x".repeat(5 * 1024 * 1024) } }),
  });
  assert.equal(response.status, 413);
});

test("a bad field is a 400 naming it", async () => {
  const thread = await client.threads.create();
  await assert.rejects(
    client.runs.create(thread.thread_id, "hitl", { multitaskStrategy: "sometimes" }),
    (e) => e.status === 400 && /multitask_strategy/.test(e.message),
  );
});

test("CORS preflight allows a loopback page and exposes content-location", async () => {
  const response = await fetch(`${server.url}/threads`, {
    method: "OPTIONS",
    headers: { origin: "http://localhost:5173", "access-control-request-headers": "content-type,last-event-id" },
  });
  assert.equal(response.status, 204);
  assert.equal(response.headers.get("access-control-allow-origin"), "http://localhost:5173");
  assert.equal(response.headers.get("access-control-allow-headers"), "content-type,last-event-id");
  assert.match(response.headers.get("access-control-expose-headers"), /content-location/);
});

test("a page of another site can neither preflight nor post", async () => {
  const preflight = await fetch(`${server.url}/threads`, {
    method: "OPTIONS",
    headers: { origin: "https://evil.example", "access-control-request-headers": "content-type" },
  });
  assert.equal(preflight.status, 403);
  assert.equal(preflight.headers.get("access-control-allow-origin"), null);
  const before = await client.threads.count({});
  const post = await fetch(`${server.url}/threads`, {
    method: "POST",
    headers: { origin: "https://evil.example", "content-type": "text/plain" },
    body: "{}",
  });
  assert.equal(post.status, 403);
  assert.equal(await client.threads.count({}), before);
});

test("thread search, count, patch and copy", async () => {
  const thread = await client.threads.create({ metadata: { owner: "grace" } });
  await client.threads.update(thread.thread_id, { metadata: { team: "x" } });
  const found = await client.threads.search({ metadata: { owner: "grace", team: "x" } });
  assert.deepEqual(found.map((t) => t.thread_id), [thread.thread_id]);
  assert.equal(await client.threads.count({ metadata: { owner: "grace" } }), 1);
  const copy = await client.threads.copy(thread.thread_id);
  assert.notEqual(copy.thread_id, thread.thread_id);
  assert.equal(copy.metadata.owner, "grace");
});

test("runs.createBatch starts stateless background runs and answers with them", async () => {
  const runs = await client.runs.createBatch([
    { assistantId: "sleepy", input: { seconds: 0 } },
    { assistantId: "sleepy", input: { seconds: 0 } },
  ]);
  assert.equal(runs.length, 2);
  assert.notEqual(runs[0].run_id, runs[1].run_id);
  for (const run of runs) assert.ok(["pending", "running", "success"].includes(run.status));
});

test("a batch with one bad run starts none and names the bad one", async () => {
  const before = (await client.threads.search({ limit: 1000 })).length;
  await assert.rejects(
    client.runs.createBatch([{ assistantId: "sleepy", input: { seconds: 0 } }, { assistantId: "sleepy", multitask_strategy: "bogus" }]),
    (e) => e.status === 400 && /\[1\]\.multitask_strategy/.test(e.message),
  );
  // (stateless threads of earlier tests may be going away meanwhile, never new ones coming)
  assert.ok((await client.threads.search({ limit: 1000 })).length <= before);
});
