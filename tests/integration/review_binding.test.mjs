// Decisions bound to what was shown: a decision answers the interrupt pending when it was
// accepted, and is refused (409, nothing changed) once that interrupt is no longer pending —
// a double click, a retry or a second tab never approves an action nobody saw.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ServerProcess, serveForFile, humanInput } from "./harness.mjs";

// An agent that writes a.txt, then b.txt, each call reviewed.
const config = {
  agents: {
    writer: {
      model: "scripted",
      script: {
        conversations: [
          {
            match: "files",
            replies: [
              { tool_calls: [{ name: "write_file", args: { path: "a.txt", content: "A" } }] },
              { tool_calls: [{ name: "write_file", args: { path: "b.txt", content: "B" } }] },
              "Done: {tool_results}",
            ],
          },
        ],
      },
      tools: ["write_file"],
      interrupt_on: { write_file: { allowed_decisions: ["approve", "reject"] } },
    },
  },
};

const server = new ServerProcess({ config });
let client;
serveForFile(server, (c) => (client = c));

const approve = { resume: { decisions: [{ type: "approve" }] } };
const written = (name) => existsSync(join(server.dir, "tollgate-demo", "sandbox", name));
const pendingPaths = (thread) =>
  Object.values(thread.interrupts).flat().map((i) => i.value.action_requests[0].args.path);

// A new thread paused at its review of `write_file a.txt`, and that interrupt.
async function pausedAtA() {
  const thread = await client.threads.create();
  const paused = await client.runs.wait(thread.thread_id, "writer", { input: humanInput("write the files") });
  const interrupt = paused.__interrupt__[0];
  assert.equal(interrupt.value.action_requests[0].args.path, "a.txt");
  return { threadId: thread.thread_id, interrupt };
}

test("two plain approvals sent while a.txt is pending: a.txt is written, b.txt stays pending and unwritten", async () => {
  const { threadId } = await pausedAtA();
  // The first is held a moment, and the second is sent once the first is accepted (listed, not
  // yet run), so it surely arrives second and while a.txt is still pending; enqueue lets it
  // wait for the first instead of being turned away as busy.
  const firstWait = client.runs.wait(threadId, "writer", { command: approve, afterSeconds: 2 });
  const accepted = Date.now() + 30000;
  while ((await client.runs.list(threadId)).length < 2) {
    assert.ok(Date.now() < accepted, "the first approval was never accepted");
    await new Promise((r) => setTimeout(r, 20));
  }
  const [first, second] = await Promise.allSettled([
    firstWait,
    client.runs.wait(threadId, "writer", { command: approve, multitaskStrategy: "enqueue" }),
  ]);
  assert.equal(first.status, "fulfilled", String(first.reason));
  assert.equal(first.value.__interrupt__[0].value.action_requests[0].args.path, "b.txt");
  assert.equal(second.status, "rejected");
  assert.equal(second.reason.status, 409);
  assert.match(JSON.parse(second.reason.text).detail, /no longer pending/);
  assert.ok(written("a.txt"));
  assert.ok(!written("b.txt"));
  const thread = await client.threads.get(threadId);
  assert.equal(thread.status, "interrupted");
  assert.deepEqual(pendingPaths(thread), ["b.txt"]);
  assert.equal((await client.runs.list(threadId)).length, 2);
});

test("a plain approval is bound to the interrupt pending when it was accepted", async () => {
  const { threadId, interrupt } = await pausedAtA();
  const run = await client.runs.create(threadId, "writer", { command: approve });
  assert.deepEqual(run.kwargs.command.resume, { [interrupt.id]: approve.resume });
  await client.runs.join(threadId, run.run_id);
});

test("a decision by id for an interrupt already answered is a 409 and changes nothing", async () => {
  const { threadId, interrupt } = await pausedAtA();
  await client.runs.wait(threadId, "writer", { command: approve });
  const before = await client.threads.getState(threadId);
  await assert.rejects(
    client.runs.wait(threadId, "writer", { command: { resume: { [interrupt.id]: approve.resume } } }),
    (e) => e.status === 409,
  );
  const after = await client.threads.getState(threadId);
  assert.equal(after.checkpoint.checkpoint_id, before.checkpoint.checkpoint_id);
  assert.equal((await client.threads.get(threadId)).status, "interrupted");
  assert.ok(!written("b.txt"));
});

test("answering a checkpoint that is no longer the latest is a 409 that leaves the thread as it was", async () => {
  const { threadId } = await pausedAtA();
  const stale = (await client.threads.getState(threadId)).checkpoint.checkpoint_id;
  await client.runs.wait(threadId, "writer", { command: approve });
  const before = await client.threads.get(threadId);
  const stateBefore = await client.threads.getState(threadId);
  const historyBefore = (await client.threads.getHistory(threadId)).length;
  await assert.rejects(client.runs.wait(threadId, "writer", { command: approve, checkpointId: stale }), (e) => {
    assert.equal(e.status, 409);
    assert.match(JSON.parse(e.text).detail, new RegExp(`answers checkpoint ${stale}`));
    return true;
  });
  const after = await client.threads.get(threadId);
  assert.equal(after.status, "interrupted");
  assert.deepEqual(after.interrupts, before.interrupts);
  const stateAfter = await client.threads.getState(threadId);
  assert.equal(stateAfter.checkpoint.checkpoint_id, stateBefore.checkpoint.checkpoint_id);
  assert.equal((await client.threads.getHistory(threadId)).length, historyBefore);
  assert.ok(!written("b.txt"));
  // ...and the thread is still answerable (the last test of the file: b.txt is written now).
  const done = await client.runs.wait(threadId, "writer", { command: approve });
  assert.equal(done.__interrupt__, undefined);
  assert.ok(written("b.txt"));
});
