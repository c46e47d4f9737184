// Who may decide, with real API keys through the official SDK Client: the reviewer rules of a
// tool's policy (reviewers, self_approval, approvals_required) refuse a decision with 403 naming the rule, the
// attempt is audited with the identity that made it, and the thread stays paused and answerable.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ServerProcess, serveForFile, humanInput } from "./harness.mjs";

const sha256 = (key) => createHash("sha256").update(key).digest("hex");
const writer = (name, rules) => ({
  model: "scripted",
  script: {
    conversations: [
      {
        match: "file",
        replies: [{ tool_calls: [{ name: "write_file", args: { path: `${name}.txt`, content: name } }] }, "Done."],
      },
    ],
  },
  tools: ["write_file"],
  interrupt_on: { write_file: { allowed_decisions: ["approve", "reject"], ...rules } },
});
const config = {
  auth: {
    users: [
      { id: "alice", roles: ["user"], api_key_sha256: sha256("key-alice") },
      { id: "rita", name: "Rita", roles: ["reviewer"], api_key_sha256: sha256("key-rita") },
      { id: "sam", roles: ["reviewer"], api_key_sha256: sha256("key-sam") },
      { id: "root", roles: ["admin"], api_key_sha256: sha256("key-root") },
    ],
  },
  agents: {
    four_eyes: writer("four_eyes", { self_approval: false }),
    rita_only: writer("rita_only", { reviewers: ["user:rita"] }),
    two_person: writer("two_person", { approvals_required: 2 }),
  },
};

const server = new ServerProcess({ config });
serveForFile(server);
const as = (user) => server.client(`key-${user}`);
const approve = { resume: { decisions: [{ type: "approve" }] } };
const reject = { resume: { decisions: [{ type: "reject", message: "not now" }] } };
const written = (name) => existsSync(join(server.dir, "tollgate-demo", "sandbox", `${name}.txt`));

// A thread of alice's paused at the review of `agent`'s write.
async function paused(agent) {
  const thread = await as("alice").threads.create();
  const run = await as("alice").runs.wait(thread.thread_id, agent, { input: humanInput("write the file") });
  assert.equal(run.__interrupt__.length, 1);
  return thread.thread_id;
}

async function refusals(threadId) {
  const response = await fetch(`${server.url}/audit?thread_id=${threadId}`, { headers: { "x-api-key": "key-root" } });
  assert.equal(response.status, 200);
  const body = await response.json();
  const entries = Array.isArray(body) ? body : body.entries;
  return entries.filter((e) => e.kind === "refusal");
}

test("self_approval false: the owner's own approval is 403 naming the rule; a reviewer's runs the call", async () => {
  const threadId = await paused("four_eyes");
  await assert.rejects(as("alice").runs.wait(threadId, "four_eyes", { command: approve }), (e) => {
    assert.equal(e.status, 403);
    assert.match(JSON.parse(e.text).detail, /self_approval false/);
    return true;
  });
  assert.ok(!written("four_eyes"));
  assert.equal((await as("alice").threads.get(threadId)).status, "interrupted");
  const [refusal] = await refusals(threadId);
  assert.equal(refusal.reviewer, "alice");
  assert.match(refusal.message, /self_approval/);

  await as("rita").runs.wait(threadId, "four_eyes", { command: approve });
  assert.ok(written("four_eyes"));
  const runs = await as("alice").runs.list(threadId);
  assert.equal(runs[0].kwargs.decided_by.id, "rita");
});

test("self_approval false still lets the owner reject its own call", async () => {
  const threadId = await paused("four_eyes");
  const done = await as("alice").runs.wait(threadId, "four_eyes", { command: reject });
  assert.equal(done.__interrupt__, undefined);
  assert.equal((await as("alice").threads.get(threadId)).status, "idle");
});

test("reviewers [user:rita]: another reviewer is 403 and rita's decision applies", async () => {
  const threadId = await paused("rita_only");
  await assert.rejects(as("sam").runs.wait(threadId, "rita_only", { command: approve }), (e) => {
    assert.equal(e.status, 403);
    assert.match(JSON.parse(e.text).detail, /rule reviewers \["user:rita"\]/);
    return true;
  });
  await assert.rejects(as("alice").runs.wait(threadId, "rita_only", { command: approve }), (e) => e.status === 403);
  assert.equal((await as("rita").threads.get(threadId)).status, "interrupted");
  assert.deepEqual((await refusals(threadId)).map((r) => r.reviewer).sort(), ["alice", "sam"]);

  await as("rita").runs.wait(threadId, "rita_only", { command: approve });
  assert.ok(written("rita_only"));
});

test("two reviewers approving the same card: one decision applies, the other is refused", async () => {
  const threadId = await paused("four_eyes");
  // Both are held a moment, so that each surely arrives while the card is still pending.
  const held = { command: approve, afterSeconds: 1, multitaskStrategy: "enqueue" };
  const results = await Promise.allSettled([
    as("rita").runs.wait(threadId, "four_eyes", held),
    as("sam").runs.wait(threadId, "four_eyes", held),
  ]);
  const fulfilled = results.filter((r) => r.status === "fulfilled");
  const rejected = results.filter((r) => r.status === "rejected");
  assert.equal(fulfilled.length, 1);
  assert.equal(rejected.length, 1);
  assert.equal(rejected[0].reason.status, 409);
  const runs = await as("alice").runs.list(threadId);
  assert.equal(runs.filter((r) => r.kwargs.decided_by).length, 1);
});

test("approvals_required 2: the first approval is recorded and the call waits for a second reviewer", async () => {
  const threadId = await paused("two_person");
  const first = await as("rita").runs.wait(threadId, "two_person", { command: approve });
  assert.equal(first.__interrupt__.length, 1);
  assert.ok(!written("two_person"));
  const thread = await as("alice").threads.get(threadId);
  assert.equal(thread.status, "interrupted");
  const [config] = Object.values(thread.interrupts).flat()[0].value.review_configs;
  assert.equal(config.approvals_required, 2);
  assert.deepEqual(config.approvals.map((a) => a.by), ["rita"]);

  await assert.rejects(as("rita").runs.wait(threadId, "two_person", { command: approve }), (e) => {
    assert.equal(e.status, 409);
    assert.match(JSON.parse(e.text).detail, /already approved/);
    return true;
  });
  assert.ok(!written("two_person"));

  const done = await as("sam").runs.wait(threadId, "two_person", { command: approve });
  assert.equal(done.__interrupt__, undefined);
  assert.ok(written("two_person"));
  const response = await fetch(`${server.url}/audit?thread_id=${threadId}`, { headers: { "x-api-key": "key-root" } });
  const body = await response.json();
  const entries = (Array.isArray(body) ? body : body.entries).filter((e) => e.kind === "decision");
  assert.deepEqual(entries.map((e) => [e.reviewer, e.outcome]).sort(), [["rita", "recorded"], ["sam", "applied"]]);
});

test("approvals_required 2: a rejection by one allowed reviewer ends the review at once", async () => {
  const threadId = await paused("two_person");
  await as("rita").runs.wait(threadId, "two_person", { command: approve });
  const done = await as("sam").runs.wait(threadId, "two_person", { command: reject });
  assert.equal(done.__interrupt__, undefined);
  assert.equal((await as("alice").threads.get(threadId)).status, "idle");
});

test("reviewer fields in the request body are ignored: the audit and the run name the key's identity", async () => {
  const threadId = await paused("four_eyes");
  const forged = { reviewer: "rita", decided_by: { id: "rita", roles: ["admin"] }, owner: "rita" };
  await assert.rejects(
    as("alice").runs.wait(threadId, "four_eyes", {
      command: approve,
      metadata: forged,
      config: { configurable: forged },
    }),
    (e) => e.status === 403,
  );
  const [refusal] = await refusals(threadId);
  assert.equal(refusal.reviewer, "alice");
  assert.equal((await as("alice").threads.get(threadId)).metadata.owner, "alice");
  await as("sam").runs.wait(threadId, "four_eyes", { command: approve, metadata: forged });
  const [run] = await as("alice").runs.list(threadId);
  assert.equal(run.kwargs.decided_by.id, "sam");
});
