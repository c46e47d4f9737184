// Review deadlines: a tool's `timeout` in the config file expires a waiting review into its
// on_timeout (here the default: reject with the default message), applied and audited as
// system:timeout — also when the deadline passed while the server was down (kill -9).
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { ServerProcess, serveForFile, humanInput, waitForStatus } from "./harness.mjs";

const kTimeoutMessage = "No reviewer decided within the time allowed, so the action was not executed.";

const script = {
  conversations: [
    {
      match: "email",
      replies: [{ tool_calls: [{ name: "send_email", args: { to: "eve@example.com", subject: "Hi", body: "Hello." } }] }, "Done: {tool_results}"],
    },
  ],
};
// A receiver of the server's review.expired webhooks (signatures are checked by
// webhooks.test.mjs; here only what arrives matters).
const expiredEvents = [];
const receiver = createServer((request, response) => {
  let body = "";
  request.on("data", (d) => (body += d));
  request.on("end", () => {
    expiredEvents.push(JSON.parse(body));
    response.writeHead(204).end();
  });
});
await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
after(() => receiver.close());
process.env.TOLLGATE_IT_DEADLINE_SECRET = "whsec_deadlines_0123456789";

const server = new ServerProcess({
  config: {
    webhooks: [
      {
        url: `http://127.0.0.1:${receiver.address().port}/hooks`,
        secret_env: "TOLLGATE_IT_DEADLINE_SECRET",
        events: ["review.expired"],
      },
    ],
    agents: {
      mailer: {
        model: "scripted",
        script,
        tools: ["send_email"],
        interrupt_on: { send_email: { allowed_decisions: ["approve", "reject"], timeout: "2s" } },
      },
    },
  },
});
serveForFile(server);

async function audit(threadId) {
  const response = await fetch(`${server.url}/audit?thread_id=${threadId}`);
  assert.equal(response.status, 200);
  return response.json();
}

// Starts a thread that pauses on send_email; returns its id and the paused review config.
async function pausedMail(client) {
  const thread = await client.threads.create();
  const paused = await client.runs.wait(thread.thread_id, "mailer", { input: humanInput("send the email") });
  const review = paused.__interrupt__[0].value;
  assert.equal(review.action_requests[0].name, "send_email");
  return { threadId: thread.thread_id, config: review.review_configs[0] };
}

// The thread's tool messages once it is idle (generous polling: no timing is asserted).
async function toolMessagesWhenIdle(client, threadId) {
  await waitForStatus(client, threadId, "idle", 30000);
  const state = await client.threads.getState(threadId);
  return state.values.messages.filter((m) => m.type === "tool");
}

test("a paused review shows when it expires and what answers it then", async () => {
  const client = server.client();
  const { threadId, config } = await pausedMail(client);
  const expires = Date.parse(config.expires_at);
  assert.ok(expires > Date.now() - 60000 && expires < Date.now() + 60000, config.expires_at);
  assert.deepEqual(config.on_timeout, { type: "reject", message: kTimeoutMessage });
  const thread = await client.threads.get(threadId);
  const shown = Object.values(thread.interrupts)[0][0].value.review_configs[0];
  assert.equal(shown.expires_at, config.expires_at);
  assert.ok(Date.parse(shown.created_at) <= expires, shown.created_at);
  await toolMessagesWhenIdle(client, threadId);  // let it expire before the next test
});

test("a 2 s timeout expires into a reject with the default message, audited as system:timeout", async () => {
  const client = server.client();
  const { threadId } = await pausedMail(client);
  const tools = await toolMessagesWhenIdle(client, threadId);
  assert.equal(tools.length, 1);
  assert.match(tools[0].content, /No reviewer decided within the time allowed, so the action was not executed\./);
  const decisions = (await audit(threadId)).filter((e) => e.kind === "decision");
  assert.equal(decisions.length, 1);
  assert.equal(decisions[0].reviewer, "system:timeout");
  assert.equal(decisions[0].outcome, "applied");
  // The resume as submitted: a map by interrupt id.
  assert.deepEqual(Object.values(decisions[0].decided), [{ decisions: [{ type: "reject", message: kTimeoutMessage }] }]);
});

test("a deadline that passed while the server was down (kill -9) expires once after restart", async () => {
  let client = server.client();
  const { threadId, config } = await pausedMail(client);
  await server.kill("SIGKILL");
  // Down until well after the deadline.
  const wait = Date.parse(config.expires_at) - Date.now() + 1000;
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  await server.start();
  client = server.client();
  const tools = await toolMessagesWhenIdle(client, threadId);
  assert.equal(tools.length, 1);
  assert.match(tools[0].content, /No reviewer decided within the time allowed/);
  const decisions = (await audit(threadId)).filter((e) => e.kind === "decision");
  assert.equal(decisions.length, 1);
  assert.equal(decisions[0].reviewer, "system:timeout");
});

test("an expired review is told to webhooks as review.expired, decided by system:timeout", async () => {
  const client = server.client();
  const { threadId } = await pausedMail(client);
  await toolMessagesWhenIdle(client, threadId);
  const deadline = Date.now() + 20000;
  let event;
  while (!(event = expiredEvents.find((e) => e.data.thread_id === threadId)) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.ok(event, "no review.expired arrived");
  assert.equal(event.type, "review.expired");
  assert.equal(event.data.decided_by, "system:timeout");
  assert.equal(event.data.outcome, "reject");
  assert.equal(event.data.action_requests[0].name, "send_email");
  assert.equal(expiredEvents.filter((e) => e.data.thread_id === threadId).length, 1);
});
