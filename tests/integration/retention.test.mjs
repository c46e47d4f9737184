// Retention through the SDK: POST /threads/prune (delete, keep_latest) and thread TTLs
// (`ttl` on create and update) deleted by the server's background pass.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ServerProcess, serveForFile, collect, humanInput } from "./harness.mjs";

// The background pass every second, so that a TTL of a fraction of a minute runs out here.
const server = new ServerProcess({ config: { retention: { interval: "1s" } } });
let client;
serveForFile(server, (c) => (client = c));

async function pausedThread() {
  const thread = await client.threads.create();
  await collect(client.runs.stream(thread.thread_id, "hitl", { input: humanInput("x") }));
  return thread.thread_id;
}

async function gone(threadId) {
  try {
    await client.threads.get(threadId);
    return false;
  } catch (e) {
    if (e.status === 404) return true;
    throw e;
  }
}

async function waitGone(threadId, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await gone(threadId))) {
    if (Date.now() > deadline) throw new Error(`thread ${threadId} was never deleted`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("prune keep_latest leaves a paused thread's latest state, and the thread still resumes", async () => {
  const threadId = await pausedThread();
  const before = await client.threads.getState(threadId);
  assert.ok((await client.threads.getHistory(threadId, { limit: 100 })).length > 1);
  assert.deepEqual(await client.threads.prune([threadId], { strategy: "keep_latest" }), { pruned_count: 1 });
  const history = await client.threads.getHistory(threadId, { limit: 100 });
  assert.equal(history.length, 1);
  const after = await client.threads.getState(threadId);
  assert.deepEqual(after.values, before.values);
  assert.deepEqual(after.next, before.next);
  assert.deepEqual(after.tasks[0].interrupts, before.tasks[0].interrupts);
  const done = await collect(client.runs.stream(threadId, "hitl", { command: { resume: "after-prune" } }));
  assert.equal(done.at(-1).data.decision, "after-prune");
});

test("prune delete removes the threads and counts only those it removed", async () => {
  const a = (await client.threads.create()).thread_id;
  const b = (await client.threads.create()).thread_id;
  const unknown = "00000000-0000-4000-8000-000000000000";
  assert.deepEqual(await client.threads.prune([a, b, unknown]), { pruned_count: 2 });
  assert.ok(await gone(a));
  assert.ok(await gone(b));
});

test("prune refuses a strategy it does not know", async () => {
  await assert.rejects(client.threads.prune([], { strategy: "forget" }), (e) => e.status === 400 && /strategy/.test(e.text ?? e.message));
});

test("a thread created with a ttl is deleted once it ran out, one without is kept", async () => {
  const kept = (await client.threads.create()).thread_id;
  const doomed = (await client.threads.create({ ttl: { ttl: 0.01, strategy: "delete" } })).thread_id;
  await waitGone(doomed);
  assert.equal(await gone(kept), false);
});

test("a ttl set by update deletes the thread too", async () => {
  const threadId = (await client.threads.create()).thread_id;
  await client.threads.update(threadId, { metadata: { k: 1 }, ttl: 0.01 });
  await waitGone(threadId);
});

test("a paused thread is not deleted by its ttl", async () => {
  const threadId = await pausedThread();
  await client.threads.update(threadId, { ttl: 0.01 });
  // A thread updated later with a ttl runs out as well: once it is gone, the pass has run
  // over the paused one too.
  const marker = (await client.threads.create({ ttl: 0.01 })).thread_id;
  await waitGone(marker);
  assert.equal((await client.threads.get(threadId)).status, "interrupted");
});

test("a ttl that is not a positive number of minutes is refused naming the field", async () => {
  await assert.rejects(client.threads.create({ ttl: { ttl: -1 } }), (e) => e.status === 400 && /ttl/.test(e.text ?? e.message));
});
