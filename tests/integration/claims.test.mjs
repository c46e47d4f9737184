// Review claims through the official SDK Client and plain fetch, with two reviewers' API keys:
// rita claims alice's pending review, sam sees who holds it on the thread the SDK reads and is
// refused a claim (409 naming rita), the claim is told on GET /reviews/stream, and — claims
// being advisory — sam's decision still applies and ends the claim.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ServerProcess, serveForFile, humanInput, openReviewStream } from "./harness.mjs";

const sha256 = (key) => createHash("sha256").update(key).digest("hex");
const config = {
  claim_ttl: "2m",
  auth: {
    users: [
      { id: "alice", roles: ["user"], api_key_sha256: sha256("key-alice") },
      { id: "rita", roles: ["reviewer"], api_key_sha256: sha256("key-rita") },
      { id: "sam", roles: ["reviewer"], api_key_sha256: sha256("key-sam") },
    ],
  },
  agents: {
    writer: {
      model: "scripted",
      script: { conversations: [{ match: "file", replies: [{ tool_calls: [{ name: "write_file", args: { path: "a.txt", content: "a" } }] }, "Done."] }] },
      tools: ["write_file"],
      interrupt_on: { write_file: { allowed_decisions: ["approve", "reject"] } },
    },
  },
};

const server = new ServerProcess({ config });
serveForFile(server);
const as = (user) => server.client(`key-${user}`);
const claim = (user, threadId, method = "POST") =>
  fetch(`${server.url}/threads/${threadId}/claim`, { method, headers: { "x-api-key": `key-${user}`, "content-type": "application/json" }, body: "{}" });

async function paused() {
  const thread = await as("alice").threads.create();
  const run = await as("alice").runs.wait(thread.thread_id, "writer", { input: humanInput("write the file") });
  assert.equal(run.__interrupt__.length, 1);
  return thread.thread_id;
}

const configOf = (thread) => Object.values(thread.interrupts)[0][0].value.review_configs[0];

async function until(check, what, timeoutMs = 10000) {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const openStream = (user, into) => openReviewStream(server.url, `key-${user}`, into);

test("a claim by one reviewer is seen by another through the SDK and refuses their claim, naming the holder", async () => {
  const threadId = await paused();
  const taken = await claim("rita", threadId);
  assert.equal(taken.status, 200);
  const body = await taken.json();
  assert.equal(body.claimed_by, "rita");
  assert.equal(Date.parse(body.expires_at) - Date.parse(body.claimed_at), 120000);

  const seen = configOf(await as("sam").threads.get(threadId));
  assert.equal(seen.claimed_by, "rita");
  assert.equal(seen.claim_expires_at, body.expires_at);
  const [listed] = await as("sam").threads.search({ status: "interrupted" });
  assert.equal(configOf(listed).claimed_by, "rita");

  const refused = await claim("sam", threadId);
  assert.equal(refused.status, 409);
  assert.match((await refused.json()).detail, /'rita' has claimed/);
  const notHis = await claim("sam", threadId, "DELETE");
  assert.equal(notHis.status, 403);
});

test("claims are told on GET /reviews/stream as review.claimed and review.released", async () => {
  const events = [];
  const stream = openStream("sam", events);
  await stream.opened;
  try {
    const threadId = await paused();
    assert.equal((await claim("rita", threadId)).status, 200);
    assert.equal((await claim("rita", threadId, "DELETE")).status, 200);
    await until(() => events.some((e) => e.type === "review.released" && e.data.thread_id === threadId), "the release is told");
    const mine = events.filter((e) => e.data.thread_id === threadId && e.type.startsWith("review.") && e.type !== "review.requested");
    assert.deepEqual(mine.map((e) => e.type), ["review.claimed", "review.released"]);
    assert.equal(mine[0].data.claimed_by, "rita");
    assert.equal(mine[1].data.released_by, "rita");
  } finally {
    stream.close();
  }
});

test("a claim is advisory: another reviewer's decision applies and ends it", async () => {
  const threadId = await paused();
  assert.equal((await claim("rita", threadId)).status, 200);
  await as("sam").runs.wait(threadId, "writer", { command: { resume: { decisions: [{ type: "approve" }] } } });
  const runs = await as("alice").runs.list(threadId);
  assert.equal(runs[0].kwargs.decided_by.id, "sam");
  const thread = await as("alice").threads.get(threadId);
  assert.equal(thread.status, "idle");
  assert.equal((await claim("rita", threadId)).status, 404);
});
