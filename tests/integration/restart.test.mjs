// Durability: kill -9 while a thread is paused, restart, and resume on both protocols.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ServerProcess, serveForFile, collect, humanInput, waitForStatus } from "./harness.mjs";

const server = new ServerProcess();
serveForFile(server);

test("a thread paused before kill -9 is still interrupted after restart and resumes (legacy)", async () => {
  let client = server.client();
  const thread = await client.threads.create();
  const events = await collect(client.runs.stream(thread.thread_id, "hitl", { input: humanInput("x") }));
  const interrupt = events.at(-1).data.__interrupt__[0];
  await server.kill("SIGKILL");
  await server.start();
  client = server.client();
  const t = await client.threads.get(thread.thread_id);
  assert.equal(t.status, "interrupted");
  assert.deepEqual(Object.values(t.interrupts)[0], [interrupt]);
  const state = await client.threads.getState(thread.thread_id);
  assert.deepEqual(state.tasks[0].interrupts, [interrupt]);
  const done = await collect(client.runs.stream(thread.thread_id, "hitl", { command: { resume: "after-restart" } }));
  assert.equal(done.at(-1).data.decision, "after-restart");
});

test("a thread paused before kill -9 resumes with v2 input.respond after restart", async () => {
  let client = server.client();
  const thread = await client.threads.create();
  await collect(client.runs.stream(thread.thread_id, "hitl", { input: humanInput("x") }));
  await server.kill("SIGKILL");
  await server.start();
  client = server.client();
  const state = await client.threads.getState(thread.thread_id);
  const interruptId = state.tasks[0].interrupts[0].id;
  const response = await fetch(`${server.url}/threads/${thread.thread_id}/commands`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      id: 1,
      method: "input.respond",
      params: { namespace: [], interrupt_id: interruptId, response: "v2-after-restart" },
    }),
  });
  assert.equal((await response.json()).type, "success");
  await waitForStatus(client, thread.thread_id, "idle");
  assert.equal((await client.threads.getState(thread.thread_id)).values.decision, "v2-after-restart");
});

test("a run executing at kill -9 is marked error on restart and the thread can run again", async () => {
  let client = server.client();
  const thread = await client.threads.create();
  const run = await client.runs.create(thread.thread_id, "sleepy", { input: { seconds: 30 } });
  for (let i = 0; i < 200 && (await client.runs.get(thread.thread_id, run.run_id)).status !== "running"; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await server.kill("SIGKILL");
  await server.start();
  client = server.client();
  const dead = await client.runs.get(thread.thread_id, run.run_id);
  assert.equal(dead.status, "error");
  const t = await client.threads.get(thread.thread_id);
  assert.equal(t.status, "error");
  const retry = await client.runs.wait(thread.thread_id, "sleepy", { input: { seconds: 0 } });
  assert.equal(retry.slept, 0);
});
