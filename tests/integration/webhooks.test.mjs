// Notifications against a real `tollgate serve`: signed webhooks to the example receiver
// (examples/webhook_receiver/receiver.mjs) on 127.0.0.1, a receiver down for a while, the
// delivery log, and GET /reviews/stream filtered by who may see what.
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, createHmac } from "node:crypto";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ServerProcess, serveForFile, humanInput, openReviewStream } from "./harness.mjs";

const RECEIVER = join(dirname(fileURLToPath(import.meta.url)), "../../examples/webhook_receiver/receiver.mjs");
const SECRET = "whsec_integration_0123456789";
process.env.TOLLGATE_IT_WEBHOOK_SECRET = SECRET;

const sha256 = (key) => createHash("sha256").update(key).digest("hex");
const freePort = () =>
  new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
const receiverPort = await freePort();

const server = new ServerProcess({
  config: {
    auth: {
      users: [
        { id: "alice", roles: ["user"], api_key_sha256: sha256("key-alice") },
        { id: "bob", roles: ["user"], api_key_sha256: sha256("key-bob") },
        { id: "rita", roles: ["reviewer"], api_key_sha256: sha256("key-rita") },
        { id: "ada", roles: ["admin"], api_key_sha256: sha256("key-ada") },
      ],
    },
    webhooks: [
      {
        url: `http://127.0.0.1:${receiverPort}/hooks`,
        secret_env: "TOLLGATE_IT_WEBHOOK_SECRET",
        events: ["review.requested", "review.decided", "review.expired", "run.finished", "run.failed"],
        first_retry_seconds: 0.2,
        jitter: 0,
      },
    ],
  },
});
serveForFile(server);

// The example receiver as its own process; its stdout has one line of JSON per new event.
let receiver = null;
const received = [];
function startReceiver() {
  receiver = spawn(process.execPath, [RECEIVER, String(receiverPort)], {
    env: { ...process.env, TOLLGATE_WEBHOOK_SECRET: SECRET },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let buffered = "";
  receiver.stdout.on("data", (d) => {
    buffered += d;
    let end;
    while ((end = buffered.indexOf("\n")) >= 0) {
      received.push(JSON.parse(buffered.slice(0, end)));
      buffered = buffered.slice(end + 1);
    }
  });
  return new Promise((resolve) => {
    let err = "";
    receiver.stderr.on("data", (d) => {
      err += d;
      if (err.includes("listening on")) resolve();
    });
  });
}
after(() => receiver?.kill());

async function until(check, what, timeoutMs = 20000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function pausedThread(client) {
  const thread = await client.threads.create();
  const paused = await client.runs.wait(thread.thread_id, "agent", { input: humanInput("please delete notes.txt") });
  assert.equal(paused.__interrupt__[0].value.action_requests[0].name, "delete_file");
  return thread.thread_id;
}

const approve = { command: { resume: { decisions: [{ type: "approve" }] } } };

test("a receiver down for a while gets every delivery once it is up, each id once, the request before the decision", async () => {
  const alice = server.client("key-alice");
  const threadId = await pausedThread(alice);
  await server.client("key-rita").runs.wait(threadId, "agent", approve);
  // Tries failed meanwhile: nothing listened on the receiver's port.
  const deliveries = async () =>
    (await fetch(`${server.url}/webhooks/deliveries`, { headers: { "x-api-key": "key-ada" } })).json();
  await until(async () => (await deliveries()).some((d) => d.status === "pending" && d.last_error), "a try fails");

  await startReceiver();
  const mine = () => received.filter((e) => e.data.thread_id === threadId);
  await until(() => mine().filter((e) => e.type === "run.finished").length === 2, "both run ends arrive");
  const types = mine().map((e) => e.type);
  assert.deepEqual(types, ["review.requested", "run.finished", "review.decided", "run.finished"]);
  assert.equal(new Set(mine().map((e) => e.id)).size, 4);
  const [requested, , decided] = mine();
  assert.equal(requested.data.action_requests[0].name, "delete_file");
  assert.equal(decided.data.decided_by, "rita");
  assert.equal(decided.data.outcome, "approve");
  assert.equal(decided.data.interrupt_id, requested.data.interrupt_id);
  assert.ok(requested.data.console_url.endsWith(`/#/t/${threadId}`));
});

test("the receiver refuses a forged or stale signature and accepts a valid one", async () => {
  if (!receiver) await startReceiver();
  const body = JSON.stringify({ id: "manual-1", type: "run.finished", created_at: "", data: {} });
  const post = (signature) =>
    fetch(`http://127.0.0.1:${receiverPort}/hooks`, { method: "POST", headers: { "tollgate-signature": signature }, body });
  const sign = (t) => `t=${t},v1=` + createHmac("sha256", SECRET).update(`${t}.${body}`).digest("hex");
  const now = Math.floor(Date.now() / 1000);
  // A forgery: the first hex digit of the signature changed (to one it is not).
  const forged = sign(now).replace(/v1=(.)/, (_, digit) => `v1=${digit === "0" ? "1" : "0"}`);
  assert.equal((await post(forged)).status, 401);
  assert.equal((await post(sign(now - 3600))).status, 401);
  assert.equal((await post(sign(now))).status, 204);
  assert.equal((await post(sign(now))).status, 204); // a duplicate is acknowledged, handled once
  await until(() => received.some((e) => e.id === "manual-1"), "the valid delivery is printed");
  assert.equal(received.filter((e) => e.id === "manual-1").length, 1);
});

test("the delivery log is for admins", async () => {
  const refused = await fetch(`${server.url}/webhooks/deliveries`, { headers: { "x-api-key": "key-alice" } });
  assert.equal(refused.status, 403);
  const log = await (await fetch(`${server.url}/webhooks/deliveries?status=delivered`, { headers: { "x-api-key": "key-ada" } })).json();
  assert.ok(log.length >= 4);
  assert.ok(log.every((d) => d.status === "delivered" && d.attempts >= 1));
});

const openStream = (key, into) => openReviewStream(server.url, key, into);

test("GET /reviews/stream shows each caller the events of threads they may see", async () => {
  const rita = [];
  const bob = [];
  const ritaStream = openStream("key-rita", rita);
  const bobStream = openStream("key-bob", bob);
  await Promise.all([ritaStream.opened, bobStream.opened]);
  try {
    const aliceThread = await pausedThread(server.client("key-alice"));
    await until(() => rita.some((e) => e.type === "review.requested" && e.data.thread_id === aliceThread), "rita sees alice's review");
    const bobThread = await pausedThread(server.client("key-bob"));
    await until(() => bob.some((e) => e.type === "review.requested" && e.data.thread_id === bobThread), "bob sees his own review");
    assert.ok(bob.every((e) => e.data.thread_id === bobThread), JSON.stringify(bob));
  } finally {
    ritaStream.close();
    bobStream.close();
  }
});
