// Renders the official React hooks in node: a jsdom document (set up on import, before React
// renders), the hook mounted the way an app does, and a wait for asynchronous state. Node's own
// fetch stays in place: the hooks talk to the real server through it.
import "./jsdom_env.mjs"; // first: react-dom looks for a DOM when it loads
import { useState } from "react";
import { renderHook, cleanup } from "@testing-library/react";


// Waits until `predicate()` holds (React state settles asynchronously), else fails with
// `describe()` of what was seen last.
export async function eventually(predicate, describe, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let ok = false;
    try {
      ok = predicate();
    } catch {
      ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting; last seen: ${describe()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// Mounts `useStream(options)` with the thread id kept in React state, as an app does
// (onThreadId stores the id of a thread the hook creates). result.current = {stream, threadId}.
export function mountStream(useStream, options, initialThreadId = null) {
  return renderHook(() => {
    const [threadId, setThreadId] = useState(initialThreadId);
    const stream = useStream({ ...options, threadId, onThreadId: setThreadId });
    return { stream, threadId };
  });
}

// The crash-and-reload path: unmounts `mounted` (a hook paused at an interrupt), kills the
// server with SIGKILL, starts it again, and mounts a fresh hook on the same thread with
// `mount(threadId)`. Returns the new mount and the id of the interrupt that was pending.
export async function remountAfterKill(server, mounted, mount) {
  const { threadId, stream } = mounted.result.current;
  const interruptId = stream.interrupt.id;
  mounted.unmount();
  cleanup();
  await server.kill("SIGKILL");
  await server.start();
  return { ...mount(threadId), interruptId };
}
