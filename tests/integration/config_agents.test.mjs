// `tollgate serve --config`: agents declared in a file are served like any graph — listed as
// assistants, run by the SDK, paused by their declared review policy and resumed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { humanInput, serveForFile, ServerProcess } from "./harness.mjs";

const script = {
  conversations: [
    {
      match: "email",
      replies: [
        { tool_calls: [{ name: "send_email", args: { to: "eve@evil.com", subject: "Hi", body: "Hello." } }] },
        "Done: {tool_results}",
      ],
    },
    { match: "weather", replies: [{ tool_calls: [{ name: "weather_search", args: { city: "Oslo" } }] }, "{tool_results}"] },
  ],
};
const config = {
  db: "state.db",
  agents: {
    mailer: {
      model: "scripted",
      script,
      tools: ["send_email", "weather_search"],
      interrupt_on: {
        send_email: {
          allowed_decisions: ["approve", "edit", "reject"],
          description: "Mail {to}?",
          when: { arg: "to", not_matches: ".*@example\\.com" },
        },
      },
      key_style: "js",
      description: "Scripted mailer",
    },
    helper: { model: "demo", tools: ["weather_search"], description: "Demo helper" },
  },
};

let client;
// The harness passes --db itself; the file's "db" is then not used.
serveForFile(new ServerProcess({ config }), (c) => (client = c));

test("both declared agents are assistants, with their descriptions, and the demo agent is not", async () => {
  const assistants = await client.assistants.search({ limit: 100 });
  const byGraph = Object.fromEntries(assistants.map((a) => [a.graph_id, a]));
  assert.ok(byGraph.mailer && byGraph.helper, JSON.stringify(assistants.map((a) => a.graph_id)));
  assert.equal(byGraph.mailer.description, "Scripted mailer");
  assert.equal(byGraph.agent, undefined);
});

test("a gated call pauses with the declared description and key style, and an edit runs", async () => {
  const thread = await client.threads.create();
  const paused = await client.runs.wait(thread.thread_id, "mailer", { input: humanInput("email eve") });
  const request = paused.__interrupt__[0].value;
  assert.equal(request.actionRequests[0].description, "Mail eve@evil.com?");
  assert.deepEqual(request.reviewConfigs[0].allowedDecisions, ["approve", "edit", "reject"]);
  const done = await client.runs.wait(thread.thread_id, "mailer", {
    command: {
      resume: {
        decisions: [{ type: "edit", editedAction: { name: "send_email", args: { to: "bob@example.com", subject: "Hi", body: "Hello." } } }],
      },
    },
  });
  const last = done.messages.at(-1);
  assert.ok(last.content.startsWith("Done: "), last.content);
  assert.match(last.content, /Email to bob@example\.com placed in the outbox/);
});

test("an ungated tool runs without a pause and many threads share the scripted model", async () => {
  const threads = await Promise.all([1, 2, 3].map(() => client.threads.create()));
  const results = await Promise.all(
    threads.map((t) => client.runs.wait(t.thread_id, "mailer", { input: humanInput("weather please") })),
  );
  for (const result of results) {
    assert.equal(result.__interrupt__, undefined);
    assert.match(result.messages.at(-1).content, /Oslo/);
  }
});
