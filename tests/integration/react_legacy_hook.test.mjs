// The legacy React hook (`useStream` from @langchain/langgraph-sdk/react, REST + SSE), unmodified,
// rendered in jsdom against a real server: a full HITL cycle, and a thread paused across a
// kill -9 and restart that the hook loads and resumes.
import { eventually, mountStream, remountAfterKill } from "./react_harness.mjs";
import { test } from "node:test";
import assert from "node:assert/strict";
import { act, cleanup } from "@testing-library/react";
import { useStream } from "@langchain/langgraph-sdk/react";
import { ServerProcess, serveForFile } from "./harness.mjs";

const server = new ServerProcess();
serveForFile(server);

// The hook as an app mounts it: the thread id kept in React state.
function mount(assistantId, threadId = null) {
  const options = { apiUrl: server.url, apiKey: null, assistantId, callerOptions: { maxRetries: 0 } };
  return mountStream(useStream, options, threadId);
}

const describe = (result) => () =>
  JSON.stringify({
    threadId: result.current.threadId,
    isLoading: result.current.stream.isLoading,
    interrupt: result.current.stream.interrupt,
    messages: result.current.stream.messages.map((m) => [m.type, m.content]),
    error: String(result.current.stream.error ?? ""),
  });

const lastText = (stream) => {
  const last = stream.messages.at(-1);
  return last ? last.content : undefined;
};

async function submitToInterrupt(result) {
  await act(async () => {
    result.current.stream.submit({ messages: [{ type: "human", content: "please delete /tmp/x" }] });
  });
  await eventually(
    () => !result.current.stream.isLoading && result.current.stream.interrupt?.value?.question === "Approve tool call delete_file?",
    describe(result),
  );
}

test("legacy useStream: submit shows the interrupt, a resume finishes with the final messages", async () => {
  const { result, unmount } = mount("hitl");
  await submitToInterrupt(result);
  assert.ok(result.current.threadId, "the hook learned the new thread's id");
  assert.equal(result.current.stream.messages[0].content, "please delete /tmp/x");

  await act(async () => {
    result.current.stream.submit(null, { command: { resume: "approve" } });
  });
  await eventually(
    () => !result.current.stream.isLoading && lastText(result.current.stream) === "Done. Human said: approve",
    describe(result),
  );
  assert.equal(result.current.stream.interrupt, undefined);
  assert.equal(result.current.stream.error, undefined);
  const contents = result.current.stream.messages.map((m) => m.content);
  assert.deepEqual(contents, ["please delete /tmp/x", "Approve?", "", "decision=approve", "Done. Human said: approve"]);
  unmount();
  cleanup();
});

test("legacy useStream: a thread paused before kill -9 loads after restart and resumes", async () => {
  const first = mount("hitl");
  await submitToInterrupt(first.result);
  const { result, unmount, interruptId } = await remountAfterKill(server, first, (threadId) => mount("hitl", threadId));
  await eventually(() => result.current.stream.interrupt?.id === interruptId, describe(result));
  assert.equal(result.current.stream.interrupt.value.question, "Approve tool call delete_file?");
  assert.equal(result.current.stream.messages[0].content, "please delete /tmp/x");
  await act(async () => {
    result.current.stream.submit(null, { command: { resume: "after restart" } });
  });
  await eventually(
    () => !result.current.stream.isLoading && lastText(result.current.stream) === "Done. Human said: after restart",
    describe(result),
  );
  assert.equal(result.current.stream.interrupt, undefined);
  unmount();
  cleanup();
});

test("legacy useStream: a decision the server refuses shows its message as the error; the interrupt stays answerable", async () => {
  const { result, unmount } = mount("agent");
  await act(async () => {
    result.current.stream.submit({ messages: [{ type: "human", content: "please delete notes.txt" }] });
  });
  await eventually(
    () => !result.current.stream.isLoading && result.current.stream.interrupt?.value?.action_requests?.[0]?.name === "delete_file",
    describe(result),
  );
  const interruptId = result.current.stream.interrupt.id;
  await act(async () => {
    result.current.stream.submit(null, { command: { resume: { decisions: [{ type: "respond", message: "no" }] } } });
  });
  await eventually(() => !result.current.stream.isLoading && result.current.stream.error !== undefined, describe(result));
  assert.match(String(result.current.stream.error), /422.*Decision type 'respond' is not allowed for tool 'delete_file'/);
  await eventually(() => result.current.stream.interrupt?.id === interruptId, describe(result));

  await act(async () => {
    result.current.stream.submit(null, { command: { resume: { decisions: [{ type: "approve" }] } } });
  });
  await eventually(
    () => !result.current.stream.isLoading && result.current.stream.interrupt === undefined && result.current.stream.messages.at(-1)?.type === "ai",
    describe(result),
  );
  assert.equal(result.current.stream.error, undefined);
  assert.equal(result.current.stream.messages.find((m) => m.type === "tool").name, "delete_file");
  unmount();
  cleanup();
});
