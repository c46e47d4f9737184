// The effect ledger through the SDK (docs/effects.md): the server is killed by the TOLLGATE_FAULT
// test seam right after send_email returned, before its result was saved, on SQLite. After the
// restart the outbox holds exactly one row and the thread waits with an effect_uncertain review
// of the call; approve keeps one row (the idempotency key), reject tells the model the call did
// not happen, respond makes the reviewer's text the result. crash_before_tool leaves nothing
// uncertain: after the restart the run finishes by itself (the agent re-runs a cut-off step),
// running the call once, without a review and without anyone continuing it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { ServerProcess, humanInput, waitForStatus } from "./harness.mjs";

const script = {
  conversations: [
    {
      match: "email",
      replies: [{ tool_calls: [{ name: "send_email", args: { to: "bob@example.com", subject: "Hi", body: "Hello." } }] }, "Done: {tool_results}"],
    },
  ],
};
const config = {
  agents: {
    mailer: {
      model: "scripted",
      script,
      tools: ["send_email"],
      interrupt_on: { send_email: { allowed_decisions: ["approve", "reject"] } },
      description: "Scripted mailer",
    },
  },
};

function outboxRows(server) {
  const db = join(server.dir, "tollgate-demo", "outbox.db");
  return Number(execFileSync("sqlite3", [db, "SELECT COUNT(*) FROM outbox"], { encoding: "utf8" }).trim());
}

// Runs the mailer to its review of send_email, approves it with the server started under
// `fault`, waits for the seam to end the process and starts the server again without it.
async function approveAndCrash(server, fault) {
  let client = server.client();
  const thread = await client.threads.create();
  const paused = await client.runs.wait(thread.thread_id, "mailer", { input: humanInput("email bob") });
  assert.equal(paused.__interrupt__.length, 1);
  await server.kill("SIGKILL");
  await server.start({ env: { TOLLGATE_FAULT: fault } });
  client = server.client();
  await client.runs.wait(thread.thread_id, "mailer", { command: { resume: { decisions: [{ type: "approve" }] } } }).catch(() => {});
  await server.exited();
  assert.equal(server.child.exitCode, 137);
  await server.start();
  return { client: server.client(), threadId: thread.thread_id };
}

async function uncertainReview(client, threadId) {
  const thread = await waitForStatus(client, threadId, "interrupted");
  const [interrupt] = Object.values(thread.interrupts)[0];
  assert.equal(interrupt.value.review_configs[0].reason, "effect_uncertain");
  assert.match(interrupt.value.action_requests[0].description, /started before the server stopped and may have run/);
  return interrupt;
}

function withServer(name, body) {
  test(name, async () => {
    const server = new ServerProcess({ config });
    await server.start();
    try {
      await body(server);
    } finally {
      await server.stop();
    }
  });
}

withServer("kill -9 after send_email returned: one outbox row, an effect_uncertain review, approve keeps one row", async (server) => {
  const { client, threadId } = await approveAndCrash(server, "crash_after_tool:send_email");
  assert.equal(outboxRows(server), 1);
  await uncertainReview(client, threadId);
  const done = await client.runs.wait(threadId, "mailer", { command: { resume: { decisions: [{ type: "approve" }] } } });
  assert.match(done.messages.at(-1).content, /placed in the outbox/);
  assert.equal(outboxRows(server), 1);
  const response = await fetch(`${server.url}/audit?thread_id=${threadId}`);
  const audit = await response.json();
  assert.equal(response.status, 200, JSON.stringify(audit));
  const outcomes = audit.map((e) => e.outcome);
  assert.ok(outcomes.includes("effect_uncertain"), JSON.stringify(outcomes));
});

withServer("reject of the effect_uncertain review tells the model the call did not happen", async (server) => {
  const { client, threadId } = await approveAndCrash(server, "crash_after_tool:send_email");
  await uncertainReview(client, threadId);
  const done = await client.runs.wait(threadId, "mailer", { command: { resume: { decisions: [{ type: "reject" }] } } });
  const toolMessage = done.messages.find((m) => m.type === "tool");
  assert.match(toolMessage.content, /decided it did not happen/);
  assert.equal(outboxRows(server), 1);
});

withServer("respond to the effect_uncertain review makes the reviewer's text the result", async (server) => {
  const { client, threadId } = await approveAndCrash(server, "crash_after_tool:send_email");
  await uncertainReview(client, threadId);
  const done = await client.runs.wait(threadId, "mailer", {
    command: { resume: { decisions: [{ type: "respond", message: "Sent at 10:02, message 1." }] } },
  });
  assert.equal(done.messages.find((m) => m.type === "tool").content, "Sent at 10:02, message 1.");
});

withServer("kill -9 just before send_email started: the run finishes by itself after the restart, with one outbox row", async (server) => {
  const { client, threadId } = await approveAndCrash(server, "crash_before_tool:send_email");
  const [approval] = await client.runs.list(threadId, { limit: 1 });
  const done = await client.runs.join(threadId, approval.run_id);
  assert.match(done.messages.at(-1).content, /placed in the outbox/);
  assert.equal((await client.runs.get(threadId, approval.run_id)).status, "success");
  assert.equal((await client.threads.get(threadId)).status, "idle");
  assert.equal(outboxRows(server), 1);
  assert.equal((await client.runs.list(threadId)).length, 2); // the first turn and the approval: no new run
  const audit = await (await fetch(`${server.url}/audit?thread_id=${threadId}`)).json();
  const decisions = audit.filter((e) => e.kind === "decision").map((e) => e.outcome);
  assert.deepEqual(decisions, ["applied"]);
});
