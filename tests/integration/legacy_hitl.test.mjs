// The legacy REST + SSE protocol driven by @langchain/langgraph-sdk's Client.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ServerProcess, serveForFile, collect, humanInput, waitForStatus } from "./harness.mjs";

const server = new ServerProcess();
let client;
serveForFile(server, (c) => (client = c));

async function runToInterrupt(threadId, extra = {}) {
  return collect(
    client.runs.stream(threadId, "hitl", {
      input: humanInput("please delete /tmp/x"),
      streamMode: ["values", "updates", "messages-tuple"],
      ...extra,
    }),
  );
}

test("a streamed run pauses at the interrupt and reports it last, twice", async () => {
  const thread = await client.threads.create({ metadata: { purpose: "it" } });
  const events = await runToInterrupt(thread.thread_id);
  assert.equal(events[0].event, "metadata");
  assert.ok(events[0].data.run_id);
  const last = events.at(-1);
  const beforeLast = events.at(-2);
  assert.equal(beforeLast.event, "updates");
  assert.ok(beforeLast.data.__interrupt__);
  assert.equal(last.event, "values");
  assert.deepEqual(Object.keys(last.data), ["__interrupt__"]);
  assert.equal(last.data.__interrupt__[0].value.question, "Approve tool call delete_file?");
  const tokens = events.filter((e) => e.event === "messages");
  assert.ok(tokens.length >= 8, "token chunks are streamed as messages events");
  assert.equal(tokens[0].data[1].langgraph_node, "agent");
});

test("a paused thread is interrupted and shows its interrupt in thread and state", async () => {
  const thread = await client.threads.create();
  const events = await runToInterrupt(thread.thread_id);
  const interrupt = events.at(-1).data.__interrupt__[0];
  const t = await client.threads.get(thread.thread_id);
  assert.equal(t.status, "interrupted");
  assert.deepEqual(Object.values(t.interrupts)[0], [interrupt]);
  assert.equal(t.metadata.graph_id, "hitl");
  const state = await client.threads.getState(thread.thread_id);
  assert.deepEqual(state.next, ["review"]);
  assert.deepEqual(state.tasks[0].interrupts, [interrupt]);
  assert.equal(state.values.messages[0].type, "human");
  assert.ok(state.values.messages[0].id);
});

test("resuming with command.resume finishes the run and the thread is idle", async () => {
  const thread = await client.threads.create();
  await runToInterrupt(thread.thread_id);
  const events = await collect(
    client.runs.stream(thread.thread_id, "hitl", {
      input: null,
      command: { resume: "approve" },
      streamMode: ["values", "updates"],
    }),
  );
  assert.ok(!events.some((e) => e.data && e.data.__interrupt__));
  assert.equal(events.at(-1).data.decision, "approve");
  const t = await client.threads.get(thread.thread_id);
  assert.equal(t.status, "idle");
  assert.deepEqual(t.interrupts, {});
  const state = await client.threads.getState(thread.thread_id);
  assert.deepEqual(state.next, []);
  assert.equal(state.values.messages.at(-1).content, "Done. Human said: approve");
});

test("history lists checkpoints newest first, linked by parents", async () => {
  const thread = await client.threads.create();
  await runToInterrupt(thread.thread_id);
  await collect(client.runs.stream(thread.thread_id, "hitl", { command: { resume: "ok" } }));
  const history = await client.threads.getHistory(thread.thread_id, { limit: 10 });
  assert.ok(history.length >= 4);
  assert.deepEqual(history[0].next, []);
  for (let i = 0; i + 1 < history.length; i++) {
    assert.equal(history[i].parent_checkpoint.checkpoint_id, history[i + 1].checkpoint.checkpoint_id);
  }
  const older = await client.threads.getHistory(thread.thread_id, {
    limit: 10,
    before: { configurable: { checkpoint_id: history[0].checkpoint.checkpoint_id } },
  });
  assert.equal(older.length, history.length - 1);
});

test("join stream replays a resumable run from Last-Event-ID", async () => {
  const thread = await client.threads.create();
  let runId;
  const original = await collect(
    client.runs.stream(thread.thread_id, "hitl", {
      input: humanInput("x"),
      streamMode: ["values", "updates"],
      streamResumable: true,
      onRunCreated: (meta) => (runId = meta.run_id),
    }),
  );
  assert.ok(runId, "Content-Location gives the run id");
  const replay = await collect(client.runs.joinStream(thread.thread_id, runId, { lastEventId: "-1" }));
  assert.deepEqual(
    replay.map((e) => e.event),
    original.map((e) => e.event),
  );
  const run = await client.runs.get(thread.thread_id, runId);
  assert.equal(run.status, "success");
});

test("wait returns the state with the pending interrupt", async () => {
  const thread = await client.threads.create();
  const result = await client.runs.wait(thread.thread_id, "hitl", { input: humanInput("x") });
  assert.ok(result.messages.length >= 3);
  assert.equal(result.__interrupt__.length, 1);
});

test("a stateless run streams without a thread", async () => {
  const events = await collect(client.runs.stream(null, "sleepy", { input: { seconds: 0 } }));
  assert.equal(events[0].event, "metadata");
  assert.equal(events.at(-1).data.slept, 0);
});

test("subgraph interrupts reach the root and show their namespace with stream_subgraphs", async () => {
  const thread = await client.threads.create();
  const events = await collect(
    client.runs.stream(thread.thread_id, "hitl_sub", {
      input: humanInput("x"),
      streamMode: ["values", "updates"],
      streamSubgraphs: true,
    }),
  );
  assert.ok(events.some((e) => e.event.startsWith("updates|child:")));
  assert.ok(events.at(-1).data.__interrupt__);
  await waitForStatus(client, thread.thread_id, "interrupted");
  const done = await collect(client.runs.stream(thread.thread_id, "hitl_sub", { command: { resume: "yes" } }));
  assert.equal(done.at(-1).data.decision, "yes");
});

test("the legacy messages mode streams metadata, cumulative partials and complete messages", async () => {
  const thread = await client.threads.create();
  const events = await collect(
    client.runs.stream(thread.thread_id, "hitl", { input: humanInput("please delete /tmp/x"), streamMode: ["messages"] }),
  );
  assert.ok(!events.some((e) => e.event === "messages"), "no messages-tuple events");
  const partials = events.filter((e) => e.event === "messages/partial").map((e) => e.data[0]);
  assert.ok(partials.length >= 2);
  for (let i = 1; i < partials.length; i++) {
    assert.ok(partials[i].content.startsWith(partials[i - 1].content), "partials are cumulative");
  }
  assert.equal(partials.at(-1).content, "Approve?");
  const metadata = events.find((e) => e.event === "messages/metadata");
  assert.ok(events.indexOf(metadata) < events.findIndex((e) => e.event === "messages/partial"));
  assert.equal(metadata.data[partials[0].id].metadata.langgraph_node, "agent");
  const complete = events.filter((e) => e.event === "messages/complete").flatMap((e) => e.data);
  assert.equal(complete[0].type, "human");
  assert.equal(complete[0].content, "please delete /tmp/x");
  const streamed = complete.find((m) => m.id === partials[0].id);
  assert.equal(streamed.content, "Approve?");
  assert.equal(new Set(complete.map((m) => m.id)).size, complete.length, "each message completes once");
});

test("a resume in messages mode completes only the messages new in that run", async () => {
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, "hitl", { input: humanInput("please delete /tmp/x") });
  const events = await collect(
    client.runs.stream(thread.thread_id, "hitl", { command: { resume: "approve" }, streamMode: ["messages"] }),
  );
  const complete = events.filter((e) => e.event === "messages/complete").flatMap((e) => e.data);
  assert.deepEqual(
    complete.map((m) => m.content),
    ["decision=approve", "Done. Human said: approve"],
  );
});
