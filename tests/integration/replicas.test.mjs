// Several replicas of one server on one PostgreSQL database (issue 14, docs/deploy.md): any
// replica answers any request. A run executes on the replica it was submitted to; a replica
// that dies (kill -9, here the TOLLGATE_FAULT seam at an exact point of a tool call) has its
// runs taken over by another once its heartbeat is 2 s old; clients of any replica join,
// stream, cancel and decide runs executing elsewhere. PostgreSQL only: skipped unless
// TOLLGATE_TEST_DB_URL is set (scripts/test-integration.sh with TOLLGATE_IT_POSTGRES=1).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { RoundRobinProxy, collect, humanInput, openReviewStream, replicasOf, stopReplicas, waitForStatus } from "./harness.mjs";

const skip = process.env.TOLLGATE_TEST_DB_URL ? false : "PostgreSQL only (set TOLLGATE_TEST_DB_URL)";

// Generous: replicas on a loaded machine; a dead replica is noticed after 2 s.
const kPatience = 60000;

const emailScript = {
  conversations: [
    {
      match: "email",
      replies: [{ tool_calls: [{ name: "send_email", args: { to: "bob@example.com", subject: "Hi", body: "Hello." } }] }, "Done: {tool_results}"],
    },
  ],
};
const config = {
  agents: {
    // send_email waits for a person's approval.
    mailer: {
      model: "scripted",
      script: emailScript,
      tools: ["send_email"],
      interrupt_on: { send_email: { allowed_decisions: ["approve", "reject"] } },
    },
    // ... and here expires after 2 s into a reject (docs/config.md, review deadlines).
    expiring: {
      model: "scripted",
      script: emailScript,
      tools: ["send_email"],
      interrupt_on: { send_email: { allowed_decisions: ["approve", "reject"], timeout: "2s" } },
    },
  },
};
const approve = { resume: { decisions: [{ type: "approve" }] } };

function outboxRows(server) {
  const db = join(server.workdir, "outbox.db");
  return Number(execFileSync("sqlite3", [db, "SELECT COUNT(*) FROM outbox"], { encoding: "utf8" }).trim());
}

async function audit(server, threadId) {
  const response = await fetch(`${server.url}/audit?thread_id=${threadId}`);
  const entries = await response.json();
  assert.equal(response.status, 200, JSON.stringify(entries));
  return entries;
}

// `tollgate audit verify` on the replicas' database: the hash chain holds.
function auditVerifies(server) {
  execFileSync(process.env.TOLLGATE_BIN, ["audit", "verify", "--db", server.db], { encoding: "utf8" });
}

async function pause(until) {
  await new Promise((r) => setTimeout(r, until));
}

async function waitForRun(client, threadId, runId, status, timeoutMs = kPatience) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await client.runs.get(threadId, runId);
    if (run.status === status) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status}, never ${status}`);
    await pause(50);
  }
}

// A new thread of `assistant` paused at its review of send_email, started through `server`.
async function pausedMail(server, assistant = "mailer") {
  const client = server.client();
  const thread = await client.threads.create();
  const paused = await client.runs.wait(thread.thread_id, assistant, { input: humanInput("email bob") });
  assert.equal(paused.__interrupt__[0].value.action_requests[0].name, "send_email");
  return thread.thread_id;
}

// The replica that logged taking over `runId` after its owner died.
function takenOverBy(servers, runId) {
  return servers.filter((s) => s.output.includes(`run ${runId} was cut off`)).map((s) => s.replicaId);
}

// Starts replicas a, b, c (`servers`), a with `fault` (the TOLLGATE_FAULT seam): a dies when
// the approval it executes reaches send_email. Returns the thread and the approval run once a
// has died.
async function approvalKillsA(servers, fault) {
  const [a, b, c] = servers;
  await a.start({ env: { TOLLGATE_FAULT: fault } });
  await b.start();
  await c.start();
  const threadId = await pausedMail(a);
  // a may die before it answers: the run is found through c.
  await a.client().runs.create(threadId, "mailer", { command: approve }).catch(() => {});
  await a.exited();
  assert.equal(a.child.exitCode, 137);
  const [run] = await c.client().runs.list(threadId, { limit: 1 });
  return { threadId, runId: run.run_id };
}

// Runs `body` with `count` fresh replicas of the config above, stopped after it.
async function withReplicas(count, body) {
  const servers = replicasOf(count, { config });
  try {
    await body(servers);
  } finally {
    await stopReplicas(servers);
  }
}

describe("a replica that dies mid-run", { skip }, () => {
  test("three replicas: a dies before send_email, the run finishes on b or c, c's stream sees the end, one email", () =>
    withReplicas(3, async (servers) => {
      const { threadId, runId } = await approvalKillsA(servers, "crash_before_tool:send_email");
      const [, b, c] = servers;
      // c follows the run from its first event while no replica executes it, until it ends.
      const streamed = collect(c.client().runs.joinStream(threadId, runId, { lastEventId: "-1" }));
      const joined = await c.client().runs.join(threadId, runId);
      assert.match(joined.messages.at(-1).content, /placed in the outbox/);
      const events = await streamed;
      const last = events.filter((e) => e.event === "values").at(-1);
      assert.match(last.data.messages.at(-1).content, /placed in the outbox/);
      assert.equal((await b.client().runs.get(threadId, runId)).status, "success");
      assert.equal(takenOverBy(servers, runId).length, 1, "b or c took the run over");
      assert.equal(outboxRows(b), 1);
      assert.equal((await c.client().threads.get(threadId)).status, "idle");
      const decisions = (await audit(c, threadId)).filter((e) => e.kind === "decision").map((e) => e.outcome);
      assert.deepEqual(decisions, ["applied"]);
      auditVerifies(b);
    }));

  test("a dies right after send_email returned: b shows the effect_uncertain review, approving it on c keeps one email", () =>
    withReplicas(3, async (servers) => {
      const { threadId, runId } = await approvalKillsA(servers, "crash_after_tool:send_email");
      const [, b, c] = servers;
      assert.equal(outboxRows(b), 1);
      const thread = await waitForStatus(b.client(), threadId, "interrupted", kPatience);
      const [interrupt] = Object.values(thread.interrupts)[0];
      assert.equal(interrupt.value.review_configs[0].reason, "effect_uncertain");
      assert.equal((await b.client().runs.get(threadId, runId)).status, "success"); // ended, paused at the review
      const done = await c.client().runs.wait(threadId, "mailer", { command: approve });
      assert.match(done.messages.at(-1).content, /placed in the outbox/);
      assert.equal(outboxRows(c), 1);
      assert.equal((await b.client().threads.get(threadId)).status, "idle");
      const outcomes = (await audit(b, threadId)).map((e) => e.outcome);
      assert.ok(outcomes.includes("effect_uncertain"), JSON.stringify(outcomes));
      auditVerifies(c);
    }));
});

// Starts replicas a and b; on a, a run of the thread sleeps for a minute and another waits
// behind it. Returns the thread and both runs once the first is running.
async function sleepingWithOneQueued(servers) {
  const [a, b] = servers;
  for (const server of servers) await server.start();
  const { thread_id: threadId } = await a.client().threads.create();
  const first = await a.client().runs.create(threadId, "sleepy", { input: { seconds: 60 } });
  const second = await a.client().runs.create(threadId, "sleepy", { input: { seconds: 0 }, multitaskStrategy: "enqueue" });
  await waitForRun(b.client(), threadId, first.run_id, "running");
  return { threadId, first, second };
}

describe("a replica that goes away while its run sleeps, another queued behind it", { skip }, () => {
  test("kill -9: b fails the sleeping run (a graph that does not re-run cut-off steps) and runs the queued one", () =>
    withReplicas(2, async (servers) => {
      const [a, b] = servers;
      const { threadId, first, second } = await sleepingWithOneQueued(servers);
      await a.kill("SIGKILL");
      await waitForRun(b.client(), threadId, second.run_id, "success");
      assert.equal((await b.client().runs.get(threadId, first.run_id)).status, "error");
      assert.deepEqual(takenOverBy(servers, first.run_id), ["b"]);
      assert.equal((await waitForStatus(b.client(), threadId, "idle", kPatience)).status, "idle");
      assert.equal((await b.client().threads.getState(threadId)).values.slept, 0);
    }));

  test("a clean stop (SIGTERM): the queued run is taken up by b and runs there", () =>
    withReplicas(2, async (servers) => {
      const [a, b] = servers;
      const { threadId, second } = await sleepingWithOneQueued(servers);
      await a.kill("SIGTERM");
      await waitForRun(b.client(), threadId, second.run_id, "success");
      assert.equal((await waitForStatus(b.client(), threadId, "idle", kPatience)).status, "idle");
    }));
});

describe("two live replicas", { skip }, () => {
  const servers = skip ? [] : replicasOf(2, { config });
  const [a, b] = servers;
  let proxy;
  before(async () => {
    for (const server of servers) await server.start();
    proxy = await new RoundRobinProxy(servers).start();
  });
  after(async () => {
    await proxy?.stop();
    await stopReplicas(servers);
  });

  test("one decision sent to both replicas at once is applied once: one 200, one 409, one email", async () => {
    const threadId = await pausedMail(a);
    const emails = outboxRows(a);
    const answers = await Promise.allSettled(
      [a, b].map((s) => s.client().runs.wait(threadId, "mailer", { command: approve })),
    );
    const statuses = answers.map((r) => (r.status === "fulfilled" ? 200 : r.reason.status)).sort();
    assert.deepEqual(statuses, [200, 409], await told(answers, threadId));
    assert.equal(outboxRows(a) - emails, 1);
    assert.equal((await b.client().threads.get(threadId)).status, "idle");
    // The 409 is a refusal at submit (the thread was busy: no entry) or, when the other request
    // arrived once the first run had ended, a run refused as it starts (nothing left to resume:
    // an entry settled `refused`, docs/audit.md). Either way one decision was applied.
    const outcomes = (await audit(b, threadId)).filter((e) => e.kind === "decision").map((e) => e.outcome);
    assert.deepEqual(outcomes.filter((o) => o !== "refused"), ["applied"], JSON.stringify(outcomes));
  });

  test("one decision enqueued on both replicas at once: the second finds the review answered (409), one email", async () => {
    const threadId = await pausedMail(b);
    const emails = outboxRows(a);
    const answers = await Promise.allSettled(
      [a, b].map((s) => s.client().runs.wait(threadId, "mailer", { command: approve, multitaskStrategy: "enqueue" })),
    );
    const refused = answers.filter((r) => r.status === "rejected");
    assert.equal(refused.length, 1, await told(answers, threadId));
    assert.equal(refused[0].reason.status, 409);
    assert.equal(outboxRows(a) - emails, 1);
    assert.equal((await a.client().threads.get(threadId)).status, "idle");
  });

  // What both replicas answered and what the thread's runs hold (for a failure's message).
  async function told(answers, threadId) {
    const runs = await a.client().runs.list(threadId);
    return JSON.stringify({
      answers: answers.map((r) => (r.status === "fulfilled" ? r.value.messages?.at(-1)?.content : r.reason.message)),
      runs: runs.map((r) => [r.run_id, r.status, r.kwargs.command]),
    });
  }

  test("a run executing on a, joined and streamed through b, is seen to its end", async () => {
    const thread = await a.client().threads.create();
    const run = await a.client().runs.create(thread.thread_id, "sleepy", { input: { seconds: 2 }, streamMode: ["values", "updates"] });
    const streamed = collect(b.client().runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }));
    const joined = await b.client().runs.join(thread.thread_id, run.run_id);
    assert.equal(joined.slept, 2);
    const events = await streamed;
    assert.deepEqual(events.at(-1).data, { seconds: 2, slept: 2 });
    // What a itself holds for the run: the same events, in the same order, with the same ids.
    const onA = await collect(a.client().runs.joinStream(thread.thread_id, run.run_id, { lastEventId: "-1" }));
    assert.deepEqual(events.map((e) => [e.id, e.event]), onA.map((e) => [e.id, e.event]));
  });

  test("Last-Event-ID resumes on another replica: a stream cut mid-run reconnects through the proxy and misses nothing", async () => {
    const client = proxy.client();
    const thread = await client.threads.create();
    const seen = [];
    let cut = false;
    for await (const event of client.runs.stream(thread.thread_id, "sleepy", {
      input: { seconds: 5 },
      streamMode: ["values", "updates"],
      streamResumable: true,
    })) {
      seen.push(event);
      if (!cut && event.event === "values") {
        cut = true;
        proxy.cutStreams(); // the SDK reconnects with Last-Event-ID, to the other replica
      }
    }
    const streams = proxy.requests.filter((r) => r.path.endsWith("/stream"));
    assert.ok(streams.length >= 2, JSON.stringify(proxy.requests));
    assert.notEqual(streams[0].replica, streams[1].replica);
    assert.equal(streams[1].method, "GET");
    assert.deepEqual(seen.at(-1).data, { seconds: 5, slept: 5 });
    const runId = streams[1].path.split("/runs/")[1].split("/")[0];
    const all = await collect(a.client().runs.joinStream(thread.thread_id, runId, { lastEventId: "-1" }));
    assert.deepEqual(seen.map((e) => [e.id, e.event]), all.map((e) => [e.id, e.event]));
  });

  test("reject: a run asked on b while the thread runs on a is refused with 409", async () => {
    const thread = await a.client().threads.create();
    const run = await a.client().runs.create(thread.thread_id, "sleepy", { input: { seconds: 30 } });
    await waitForRun(b.client(), thread.thread_id, run.run_id, "running");
    await assert.rejects(
      b.client().runs.create(thread.thread_id, "sleepy", { input: { seconds: 0 } }),
      (e) => e.status === 409,
    );
    await b.client().runs.cancel(thread.thread_id, run.run_id, true);
    assert.equal((await a.client().runs.list(thread.thread_id)).length, 1);
  });

  test("enqueue: a run enqueued on b runs after the one executing on a, not beside it", async () => {
    const thread = await a.client().threads.create();
    const first = await a.client().runs.create(thread.thread_id, "sleepy", { input: { seconds: 3 } });
    const second = await b.client().runs.create(thread.thread_id, "sleepy", { input: { seconds: 0 }, multitaskStrategy: "enqueue" });
    assert.equal(second.status, "pending");
    await b.client().runs.join(thread.thread_id, second.run_id);
    assert.equal((await b.client().runs.get(thread.thread_id, first.run_id)).status, "success");
    assert.equal((await a.client().runs.get(thread.thread_id, second.run_id)).status, "success");
    // The thread's checkpoints, newest first: every one of the second run before the first's.
    const history = await a.client().threads.getHistory(thread.thread_id, { limit: 100 });
    const runs = history.map((h) => h.metadata.run_id);
    const lastOfSecond = runs.lastIndexOf(second.run_id);
    const firstOfFirst = runs.indexOf(first.run_id);
    assert.ok(lastOfSecond >= 0 && firstOfFirst > lastOfSecond, JSON.stringify(runs));
  });

  for (const strategy of ["interrupt", "rollback"]) {
    test(`${strategy}: a run asked on b cancels the one executing on a, then runs`, async () => {
      const thread = await a.client().threads.create();
      const first = await a.client().runs.create(thread.thread_id, "sleepy", { input: { seconds: 30 } });
      await waitForRun(b.client(), thread.thread_id, first.run_id, "running");
      const second = await b.client().runs.create(thread.thread_id, "sleepy", { input: { seconds: 0 }, multitaskStrategy: strategy });
      const result = await b.client().runs.join(thread.thread_id, second.run_id);
      assert.equal(result.slept, 0);
      assert.equal((await a.client().runs.get(thread.thread_id, second.run_id)).status, "success");
      if (strategy === "interrupt") {
        assert.equal((await a.client().runs.get(thread.thread_id, first.run_id)).status, "interrupted");
      } else {
        await assert.rejects(a.client().runs.get(thread.thread_id, first.run_id), (e) => e.status === 404);
      }
    });
  }

  test("a cancel sent to b stops the run executing on a: run interrupted, thread idle", async () => {
    const thread = await a.client().threads.create();
    const run = await a.client().runs.create(thread.thread_id, "sleepy", { input: { seconds: 30 } });
    await waitForRun(b.client(), thread.thread_id, run.run_id, "running");
    await b.client().runs.cancel(thread.thread_id, run.run_id, true);
    assert.equal((await a.client().runs.get(thread.thread_id, run.run_id)).status, "interrupted");
    assert.equal((await waitForStatus(a.client(), thread.thread_id, "idle", kPatience)).status, "idle");
  });

  test("the v2 thread stream read through b shows runs executing on a: interrupted, then completed", async () => {
    const thread = await a.client().threads.create();
    const stream = await openThreadStream(b, thread.thread_id);
    try {
      const started = await command(a, thread.thread_id, { id: 1, method: "run.start", params: { assistant_id: "hitl", input: { messages: [] } } });
      assert.equal(started.type, "success");
      const paused = await stream.until((es) => es.some(isTerminal));
      assert.equal(paused.find(isTerminal).params.data.event, "interrupted");
      assert.equal(paused.find((e) => e.method === "input.requested").params.data.payload.question, "Approve tool call delete_file?");
      const state = await a.client().threads.getState(thread.thread_id);
      const responded = await command(a, thread.thread_id, {
        id: 2,
        method: "input.respond",
        params: { namespace: [], interrupt_id: state.tasks[0].interrupts[0].id, response: "approve" },
      });
      assert.equal(responded.type, "success");
      const all = await stream.until((es) => es.filter(isTerminal).length === 2);
      assert.equal(all.filter(isTerminal)[1].params.data.event, "completed");
      for (let i = 1; i < all.length; i++) assert.ok(all[i].seq > all[i - 1].seq, JSON.stringify(all.map((e) => e.seq)));
      assert.equal((await b.client().threads.getState(thread.thread_id)).values.decision, "approve");
    } finally {
      await stream.close();
    }
  });

  test("input.respond sent to b the moment a's thread stream says interrupted is accepted", async () => {
    // As the @langchain/react hook does: it answers the pause as soon as its stream tells it.
    const refused = [];
    for (let i = 0; i < 10; i++) {
      const thread = await a.client().threads.create();
      const stream = await openThreadStream(a, thread.thread_id);
      try {
        await command(a, thread.thread_id, { id: 1, method: "run.start", params: { assistant_id: "hitl", input: { messages: [] } } });
        const events = await stream.until((es) => es.some(isTerminal));
        const interruptId = events.find((e) => e.method === "input.requested").params.data.interrupt_id;
        const answer = await command(b, thread.thread_id, {
          id: 2,
          method: "input.respond",
          params: { namespace: [], interrupt_id: interruptId, response: "approve" },
        });
        if (answer.type !== "success") refused.push(answer.message);
        await waitForStatus(a.client(), thread.thread_id, answer.type === "success" ? "idle" : "interrupted", kPatience);
      } finally {
        await stream.close();
      }
    }
    assert.deepEqual(refused, []);
  });

  test("GET /reviews/stream on b tells a review requested by a run on a", async () => {
    const told = [];
    const stream = openReviewStream(b.url, null, told);
    await stream.opened;
    try {
      const threadId = await pausedMail(a);
      const deadline = Date.now() + 20000;
      while (!told.some((e) => e.type === "review.requested" && e.data.thread_id === threadId)) {
        if (Date.now() > deadline) throw new Error(`b's review stream never told it: ${JSON.stringify(told)}`);
        await pause(100);
      }
    } finally {
      stream.close();
    }
  });

  test("a review deadline passes with two replicas up: expired once, one system:timeout decision", async () => {
    const threadId = await pausedMail(a, "expiring");
    await waitForStatus(b.client(), threadId, "idle", kPatience);
    const state = await b.client().threads.getState(threadId);
    const tools = state.values.messages.filter((m) => m.type === "tool");
    assert.equal(tools.length, 1);
    assert.match(tools[0].content, /No reviewer decided within the time allowed/);
    const decisions = (await audit(a, threadId)).filter((e) => e.kind === "decision");
    assert.deepEqual(decisions.map((d) => d.reviewer), ["system:timeout"]);
    assert.equal(decisions[0].outcome, "applied");
    assert.equal((await a.client().runs.list(threadId)).length, 2); // the first turn and the expiry
  });
});

// v2 protocol helpers (as @langchain/react's transport sends them).
// Sends a v2 command; a protocol error (a 4xx with type "error") is returned as the answer.
async function command(server, threadId, body) {
  const response = await fetch(`${server.url}/threads/${threadId}/commands`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  assert.ok(response.status === 200 || answer.type === "error", JSON.stringify(answer));
  return answer;
}

const isTerminal = (e) =>
  e.method === "lifecycle" && e.params.namespace.length === 0 && ["completed", "interrupted", "failed"].includes(e.params.data.event);

// The thread's v2 event stream on `server`, read in the background; until(predicate) resolves
// with every event so far once the predicate holds for them.
async function openThreadStream(server, threadId) {
  const controller = new AbortController();
  const response = await fetch(`${server.url}/threads/${threadId}/stream/events`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ channels: ["values", "lifecycle", "input"], namespaces: [[]], depth: 1 }),
    signal: controller.signal,
  });
  assert.equal(response.status, 200);
  const events = [];
  let wake = () => {};
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const data = buffer.slice(0, cut).split("\n").find((l) => l.startsWith("data: "));
          buffer = buffer.slice(cut + 2);
          if (data) events.push(JSON.parse(data.slice(6)));
        }
        wake();
      }
    } catch {
      // closed
    }
    wake();
  })();
  return {
    async until(predicate, timeoutMs = kPatience) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(events)) {
        if (Date.now() > deadline) throw new Error(`the thread stream never showed it: ${JSON.stringify(events)}`);
        await Promise.race([new Promise((r) => (wake = r)), pause(200)]);
      }
      return [...events];
    },
    async close() {
      controller.abort();
      await reading;
    },
  };
}
