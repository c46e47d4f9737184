// GET /threads/{id}/timeline (plain fetch) on the demo agent's paused-then-resumed thread: the
// JSON shape a client reads, and the OpenTelemetry form.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ServerProcess, humanInput } from "./harness.mjs";

const server = new ServerProcess();
before(() => server.start());
after(() => server.stop());

async function resumedThread() {
  const client = server.client();
  const thread = await client.threads.create();
  await client.runs.wait(thread.thread_id, "agent", { input: humanInput("please delete notes.txt") });
  await client.runs.wait(thread.thread_id, "agent", { command: { resume: { decisions: [{ type: "approve" }] } } });
  return thread.thread_id;
}

async function timeline(threadId, query = "") {
  const response = await fetch(`${server.url}/threads/${threadId}/timeline${query}`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type"), /application\/json/);
  return response.json();
}

const isTime = (value) => typeof value === "string" && !Number.isNaN(Date.parse(value));

test("the timeline lists both runs, their steps, the decision and the checkpoints", async () => {
  const threadId = await resumedThread();
  const t = await timeline(threadId);
  assert.equal(t.thread_id, threadId);
  assert.deepEqual(Object.keys(t).sort(), ["checkpoints", "created_at", "runs", "state_updates", "status", "steps_outside_runs", "thread_id", "unknown", "updated_at"]);
  assert.equal(t.runs.length, 2);
  const [paused, resumed] = t.runs;
  for (const run of t.runs) {
    assert.ok(isTime(run.created_at) && isTime(run.updated_at));
    assert.ok(Array.isArray(run.steps) && run.steps.length > 0);
    for (const step of run.steps) {
      assert.equal(typeof step.kind, "string");
      assert.equal(typeof step.node, "string");
      assert.equal(typeof step.checkpoint_id, "string");
    }
  }
  assert.equal(resumed.resumed_run_id, paused.run_id);
  const pause = paused.steps.find((s) => s.kind === "interrupt");
  assert.equal(pause.gated[0].name, "delete_file");
  assert.equal(pause.decisions[0].outcome, "applied");
  assert.deepEqual(pause.decisions[0].decided, { decisions: [{ type: "approve" }] });
  assert.ok(isTime(pause.decisions[0].received_at));
  assert.equal(pause.decisions[0].decided_by, null); // no auth: single-user mode
  assert.ok(paused.steps.some((s) => s.kind === "model_call" && s.input.message_count >= 1));
  const tool = resumed.steps.find((s) => s.kind === "tool_call");
  assert.equal(tool.name, "delete_file");
  assert.ok(isTime(tool.started_at) && isTime(tool.ended_at) && tool.duration_ms >= 0);
  assert.ok(t.checkpoints.every((c) => typeof c.checkpoint_id === "string" && typeof c.branch === "boolean"));
  assert.ok(t.checkpoints.some((c) => c.checkpoint_id === pause.checkpoint_id && c.interrupted));
  assert.ok(t.unknown.length > 0);
});

test("?format=otel is one trace of OTLP/JSON spans, a span per run with its steps as children", async () => {
  const threadId = await resumedThread();
  const t = await timeline(threadId);
  const otel = await timeline(threadId, "?format=otel");
  const spans = otel.resourceSpans[0].scopeSpans[0].spans;
  const runSpans = spans.filter((s) => s.parentSpanId === "");
  assert.equal(runSpans.length, 2);
  assert.equal(spans.length, 2 + t.runs[0].steps.length + t.runs[1].steps.length);
  for (const span of spans) {
    assert.equal(span.traceId, threadId.replaceAll("-", ""));
    assert.match(span.spanId, /^[0-9a-f]{16}$/);
    assert.match(span.startTimeUnixNano, /^\d+$/);
    assert.match(span.endTimeUnixNano, /^\d+$/);
    assert.ok(Array.isArray(span.attributes));
    if (span.parentSpanId) assert.ok(runSpans.some((r) => r.spanId === span.parentSpanId));
  }
  assert.ok(runSpans[1].links[0].spanId === runSpans[0].spanId, "the resumed run links the run that paused");
});
