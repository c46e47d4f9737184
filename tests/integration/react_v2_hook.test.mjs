// The new React hook (`useStream` from @langchain/react, the v2 thread protocol: /commands and
// /stream/events), unmodified, rendered in jsdom against a real server: a full HITL cycle
// through respond(), and a thread paused across a kill -9 and restart that the hook hydrates
// and resumes.
import { eventually, mountStream, remountAfterKill } from "./react_harness.mjs";
import { test } from "node:test";
import assert from "node:assert/strict";
import { act, cleanup } from "@testing-library/react";
import { useStream } from "@langchain/react";
import { ServerProcess, serveForFile } from "./harness.mjs";

const server = new ServerProcess();
serveForFile(server);

function mount(assistantId, threadId = null) {
  const options = { apiUrl: server.url, apiKey: null, assistantId, callerOptions: { maxRetries: 0 } };
  return mountStream(useStream, options, threadId);
}

const text = (message) =>
  typeof message.content === "string"
    ? message.content
    : message.content
        .filter((b) => b.type === "text")
        .map((b) => b.text)
        .join("");

const describe = (result) => () =>
  JSON.stringify({
    threadId: result.current.threadId,
    isLoading: result.current.stream.isLoading,
    interrupts: result.current.stream.interrupts,
    messages: result.current.stream.messages.map((m) => [m.type, text(m)]),
    error: String(result.current.stream.error ?? ""),
  });

const finished = (stream, expected) => !stream.isLoading && stream.messages.length > 0 && text(stream.messages.at(-1)) === expected;

async function submitToInterrupt(result) {
  await act(async () => {
    await result.current.stream.submit({ messages: [{ type: "human", content: "please delete /tmp/x" }] });
  });
  await eventually(() => result.current.stream.interrupt?.value?.question === "Approve tool call delete_file?", describe(result));
}

test("@langchain/react useStream: submit shows the interrupt, respond() finishes with the final messages", async () => {
  const { result, unmount } = mount("hitl");
  await submitToInterrupt(result);
  assert.ok(result.current.threadId, "the hook minted the thread id and reported it");
  assert.equal(text(result.current.stream.messages[0]), "please delete /tmp/x");

  await act(async () => {
    await result.current.stream.respond("approve");
  });
  await eventually(() => finished(result.current.stream, "Done. Human said: approve"), describe(result));
  assert.deepEqual(result.current.stream.interrupts, []);
  assert.equal(result.current.stream.error, undefined);
  assert.deepEqual(
    result.current.stream.messages.map(text),
    ["please delete /tmp/x", "Approve?", "", "decision=approve", "Done. Human said: approve"],
  );
  unmount();
  cleanup();
});

test("@langchain/react useStream: a thread paused before kill -9 hydrates after restart and resumes", async () => {
  const first = mount("hitl");
  await submitToInterrupt(first.result);
  const { result, unmount, interruptId } = await remountAfterKill(server, first, (threadId) => mount("hitl", threadId));
  await eventually(
    () => result.current.stream.interrupt?.id === interruptId && result.current.stream.messages.length > 0,
    describe(result),
  );
  assert.equal(text(result.current.stream.messages[0]), "please delete /tmp/x");
  // Targeted by id, as a review card does: the hydrated interrupt comes from GET /state.
  await act(async () => {
    await result.current.stream.respond("after restart", { interruptId });
  });
  await eventually(() => finished(result.current.stream, "Done. Human said: after restart"), describe(result));
  assert.deepEqual(result.current.stream.interrupts, []);
  unmount();
  cleanup();
});

test("@langchain/react useStream: a decision the server refuses rejects respond() with its message; the interrupt stays answerable", async () => {
  const { result, unmount } = mount("agent");
  await act(async () => {
    await result.current.stream.submit({ messages: [{ type: "human", content: "please delete notes.txt" }] });
  });
  await eventually(() => result.current.stream.interrupt?.value?.action_requests?.[0]?.name === "delete_file", describe(result));
  const interruptId = result.current.stream.interrupt.id;
  let refusal;
  await act(async () => {
    refusal = await result.current.stream.respond({ decisions: [{ type: "respond", message: "no" }] }).catch((e) => e);
  });
  assert.ok(refusal instanceof Error, "respond() rejects");
  assert.match(refusal.message, /Decision type 'respond' is not allowed for tool 'delete_file'/);
  await eventually(() => !result.current.stream.isLoading && result.current.stream.interrupt?.id === interruptId, describe(result));

  await act(async () => {
    await result.current.stream.respond({ decisions: [{ type: "approve" }] }, { interruptId });
  });
  await eventually(
    () => !result.current.stream.isLoading && result.current.stream.interrupts.length === 0 && result.current.stream.messages.at(-1)?.type === "ai",
    describe(result),
  );
  const tool = result.current.stream.messages.find((m) => m.type === "tool");
  assert.equal(tool.name, "delete_file");
  unmount();
  cleanup();
});
