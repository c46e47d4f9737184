// The v2 thread protocol: commands and the long-lived event stream, through raw HTTP as
// the @langchain/react transport sends them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ServerProcess, serveForFile, waitForStatus } from "./harness.mjs";

const server = new ServerProcess();
let client;
serveForFile(server, (c) => (client = c));

async function command(threadId, body) {
  const response = await fetch(`${server.url}/threads/${threadId}/commands`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200);
  return response.json();
}

// Reads SSE events from an open /stream/events response until `until` says stop.
async function readEvents(response, until) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const events = [];
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = block.split("\n").find((l) => l.startsWith("data: "));
      if (data) events.push(JSON.parse(data.slice(6)));
    }
    if (until(events)) break;
  }
  await reader.cancel();
  return events;
}

const isTerminal = (e) =>
  e.method === "lifecycle" && e.params.namespace.length === 0 && ["completed", "interrupted", "failed"].includes(e.params.data.event);

test("run.start on a client-minted thread id creates it; the stream shows lifecycle, values and input.requested", async () => {
  const threadId = randomUUID();
  const started = await command(threadId, {
    id: 1,
    method: "run.start",
    params: { assistant_id: "hitl", input: { messages: [{ type: "human", content: "x", id: "client-1" }] } },
  });
  assert.equal(started.type, "success");
  assert.ok(started.result.run_id);
  assert.equal(started.meta.thread_id, threadId);
  const response = await fetch(`${server.url}/threads/${threadId}/stream/events`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ channels: ["values", "lifecycle", "input", "messages"], namespaces: [[]], depth: 1 }),
  });
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  const events = await readEvents(response, (es) => es.some(isTerminal));
  assert.equal(events[0].method, "lifecycle");
  assert.equal(events[0].params.data.event, "running");
  assert.ok(events[0].event_id.startsWith(`synth:${started.result.run_id}:`));
  const requested = events.find((e) => e.method === "input.requested");
  assert.equal(requested.params.data.payload.question, "Approve tool call delete_file?");
  assert.equal(events.find(isTerminal).params.data.event, "interrupted");
  const values = events.filter((e) => e.method === "values").at(-1);
  assert.equal(values.params.data.messages[0].id, "client-1");
  for (let i = 1; i < events.length; i++) assert.ok(events[i].seq > events[i - 1].seq);
});

test("input.respond resumes the paused thread and the stream ends the run with completed", async () => {
  const threadId = randomUUID();
  await command(threadId, { id: 1, method: "run.start", params: { assistant_id: "hitl", input: { messages: [] } } });
  await waitForStatus(client, threadId, "interrupted");
  const state = await client.threads.getState(threadId);
  const interruptId = state.tasks[0].interrupts[0].id;
  const responded = await command(threadId, {
    id: 3,
    method: "input.respond",
    params: { namespace: [], interrupt_id: interruptId, response: "approve" },
  });
  assert.equal(responded.type, "success");
  const response = await fetch(`${server.url}/threads/${threadId}/stream/events`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ channels: ["lifecycle"], since: responded.meta.applied_through_seq }),
  });
  const events = await readEvents(response, (es) => es.some(isTerminal));
  assert.equal(events.find(isTerminal).params.data.event, "completed");
  assert.equal((await client.threads.getState(threadId)).values.decision, "approve");
});

test("state.get returns values and the checkpoint", async () => {
  const threadId = randomUUID();
  await command(threadId, { id: 1, method: "run.start", params: { assistant_id: "hitl", input: { messages: [] } } });
  await waitForStatus(client, threadId, "interrupted");
  const answer = await command(threadId, { id: 2, method: "state.get", params: { namespace: [] } });
  assert.equal(answer.type, "success");
  assert.ok(answer.result.checkpoint.id);
  assert.ok(Array.isArray(answer.result.values.messages));
});

test("a thread's stream replayed after a restart, each values event written back from its checkpoint, reads as it did live", async () => {
  const threadId = randomUUID();
  await command(threadId, { id: 1, method: "run.start", params: { assistant_id: "hitl", input: { messages: [] } } });
  await waitForStatus(client, threadId, "interrupted");
  const state = await client.threads.getState(threadId);
  const interruptId = state.tasks[0].interrupts[0].id;
  await command(threadId, {
    id: 2,
    method: "input.respond",
    params: { namespace: [], interrupt_id: interruptId, response: "approve" },
  });
  await waitForStatus(client, threadId, "idle");
  const everything = { channels: ["values", "checkpoints", "tasks", "updates", "lifecycle", "input", "messages"] };
  const replay = async () => {
    const response = await fetch(`${server.url}/threads/${threadId}/stream/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(everything),
    });
    // Both runs' terminal lifecycle events: the whole thread so far.
    return readEvents(response, (es) => es.filter(isTerminal).length === 2);
  };
  const live = await replay();
  const values = live.filter((e) => e.method === "values");
  assert.ok(values.length >= 4);
  // Each values event shows the state of the checkpoint named just before it.
  for (let i = 1; i < live.length; i++) {
    if (live[i].method !== "values" || live[i - 1].method !== "checkpoints") continue;
    const at = await client.threads.getState(threadId, live[i - 1].params.data.id);
    assert.deepEqual(live[i].params.data, at.values);
  }
  await server.kill("SIGTERM");
  await server.start();
  client = server.client();
  assert.deepEqual(await replay(), live);
});
