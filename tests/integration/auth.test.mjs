// API keys through the official SDK Client: 401 without a key, 404 across users, a reviewer
// deciding another user's review, and a foreign page refused.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ServerProcess, serveForFile } from "./harness.mjs";

const sha256 = (key) => createHash("sha256").update(key).digest("hex");
const dir = mkdtempSync(join(tmpdir(), "tollgate-auth-"));
const config = join(dir, "tollgate.json");
writeFileSync(
  config,
  JSON.stringify({
    auth: {
      users: [
        { id: "alice", roles: ["user"], api_key_sha256: sha256("key-alice") },
        { id: "bob", roles: ["user"], api_key_sha256: sha256("key-bob") },
        { id: "rita", name: "Rita", roles: ["reviewer"], api_key_sha256: sha256("key-rita") },
      ],
    },
  }),
);

const server = new ServerProcess({ args: ["--config", config] });
serveForFile(server);
after(() => rmSync(dir, { recursive: true, force: true }));
const as = (key) => server.client(key);

test("without a key the SDK gets 401 and nothing is created", async () => {
  await assert.rejects(as(null).threads.create(), (e) => e.status === 401);
  await assert.rejects(as("key-mallory").threads.search(), (e) => e.status === 401);
  assert.equal((await as("key-alice").threads.search()).length, 0);
});

test("/info answers without a key and says auth is on", async () => {
  const info = await (await fetch(`${server.url}/info`)).json();
  assert.equal(info.auth.enabled, true);
  assert.equal(info.auth.identity, null);
});

test("another user's thread is 404 and left out of search", async () => {
  const thread = await as("key-alice").threads.create();
  await assert.rejects(as("key-bob").threads.get(thread.thread_id), (e) => e.status === 404);
  await assert.rejects(as("key-bob").threads.getState(thread.thread_id), (e) => e.status === 404);
  await assert.rejects(as("key-bob").runs.list(thread.thread_id), (e) => e.status === 404);
  assert.equal((await as("key-bob").threads.search()).length, 0);
  assert.equal((await as("key-alice").threads.get(thread.thread_id)).metadata.owner, "alice");
});

test("a reviewer sees a pending review of another user and decides it", async () => {
  const alice = as("key-alice");
  const thread = await alice.threads.create();
  await alice.runs.wait(thread.thread_id, "hitl", { input: { messages: [{ role: "user", content: "delete it" }] } });
  const rita = as("key-rita");
  const pending = await rita.threads.search({ status: "interrupted" });
  assert.ok(pending.some((t) => t.thread_id === thread.thread_id));
  await rita.runs.wait(thread.thread_id, "hitl", { command: { resume: "approve" } });
  const runs = await alice.runs.list(thread.thread_id);
  assert.equal(runs[0].kwargs.decided_by.id, "rita");
  assert.equal(runs[0].kwargs.started_by.id, "alice");
});

test("a page of another site cannot post, even with a key", async () => {
  const response = await fetch(`${server.url}/threads`, {
    method: "POST",
    headers: { origin: "https://evil.example", "x-api-key": "key-alice", "content-type": "application/json" },
    body: "{}",
  });
  assert.equal(response.status, 403);
});
