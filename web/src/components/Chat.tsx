// One thread: the conversation streamed through the SDK's useStream hook, the composer, and
// whatever the paused run is waiting for (read from the thread itself, so a reload or another
// browser shows the same pending cards).
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Client, Thread } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/langgraph-sdk/react";
import { describeError, httpStatusOf, since } from "../api";
import { keyStyleOf, parseHitl } from "../hitl";
import { InterruptView, type PendingInterrupt } from "./Interrupts";
import { MessageList } from "./Messages";
import type { Viewer } from "../reviewRules";
import { editedCalls, type AuditDecision, type EditedCall } from "../editedCalls";
import { apiFetch } from "../session";

interface Props {
  apiUrl: string;
  /** The tab's API key, for the plain fetch of the thread's audit entries. */
  apiKey: string | null;
  client: Client;
  threadId: string | null;
  assistantId: string;
  /** The signed-in identity (null without auth): another owner's turns are named, rules applied. */
  viewer: Viewer | null;
  onThreadId: (id: string) => void;
  onChanged: () => void;
  now: number;
  /** Bumped by each review event of the stream (claims, decisions): the thread is read again. */
  feedSeq?: number;
}

interface StreamLike {
  messages: Record<string, unknown>[];
  interrupts: { id?: string; value?: unknown; when?: string }[];
  isLoading: boolean;
  isThreadLoading: boolean;
  error: unknown;
  submit: (input: unknown, options?: unknown) => Promise<void> | void;
  stop: () => void;
}

type RawInterrupt = { id?: string; value?: unknown };

export function Chat({ apiUrl, apiKey, client, threadId, assistantId, viewer, onThreadId, onChanged, now, feedSeq }: Props) {
  const me = viewer?.id ?? null;
  const [thread, setThread] = useState<Thread | null>(null);
  // A thread keeps the agent it was started with (the server records it in its metadata).
  const threadMeta = thread && thread.thread_id === threadId ? (thread.metadata as Record<string, unknown> | null) : null;
  const effectiveAssistant = typeof threadMeta?.assistant_id === "string" ? threadMeta.assistant_id : assistantId;
  // The console's client: it carries the tab's API key and reports a 401.
  const stream = useStream({
    client,
    assistantId: effectiveAssistant,
    threadId,
    messagesKey: "messages",
    onThreadId,
  } as never) as unknown as StreamLike;

  const [threadError, setThreadError] = useState<string>("");
  const [draft, setDraft] = useState("");
  const [localError, setLocalError] = useState("");
  const endRef = useRef<HTMLDivElement>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const contentRef = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);

  // While the person is at the bottom of the conversation, it stays there as it grows (late
  // tool steps, pending cards, a title line), except while they type in a field in it.
  useEffect(() => {
    const box = scrollRef.current;
    const content = contentRef.current;
    if (!box || !content || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => {
      const active = document.activeElement;
      const editing = !!active && box.contains(active) && /^(TEXTAREA|INPUT|SELECT)$/.test(active.tagName);
      if (atBottom.current && !editing) box.scrollTop = box.scrollHeight;
    });
    observer.observe(content);
    return () => observer.disconnect();
  }, []);

  // A reviewer sees another person's thread only while it waits for a review: once their
  // decision runs, the thread is no longer theirs to see (404). Who owns it, for saying so.
  const decided = useRef(false);
  const owner = useRef<string | null>(null);
  const [handedOff, setHandedOff] = useState<string | null>(null);

  const interruptKey = (stream.interrupts ?? []).map((i) => i.id ?? i.when ?? "?").join(",");
  const loadThread = useCallback(async () => {
    if (!threadId) {
      setThread(null);
      return;
    }
    try {
      const t = await client.threads.get(threadId);
      const o = (t.metadata as Record<string, unknown> | null)?.owner;
      owner.current = typeof o === "string" ? o : null;
      setThread(t);
      setThreadError("");
    } catch (e) {
      if (me && decided.current && httpStatusOf(e) === 404) {
        setHandedOff(owner.current ?? "another person");
        setThread(null);
        return;
      }
      setThreadError(describeError(e, apiUrl));
    }
  }, [client, threadId, apiUrl, me]);

  // The edits reviewers made on this thread (the audit log keeps what ran); a server without
  // an audit log, or a thread no longer visible, simply has none.
  const [edits, setEdits] = useState<Map<string, EditedCall>>(() => new Map());
  const loadEdits = useCallback(async () => {
    if (!threadId) return;
    try {
      const r = await apiFetch(apiUrl, apiKey, `/audit?thread_id=${encodeURIComponent(threadId)}&limit=1000`);
      if (r.ok) setEdits(editedCalls((await r.json()) as AuditDecision[]));
    } catch {
      /* no audit log here: the proposal is all there is to show */
    }
  }, [apiUrl, apiKey, threadId]);

  useEffect(() => {
    if (!stream.isLoading) {
      void loadThread();
      void loadEdits();
      onChanged();
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [loadThread, stream.isLoading, interruptKey]);

  useEffect(() => {
    if (feedSeq && !stream.isLoading) void loadThread();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [feedSeq]);

  // Pending interrupts as stored by the server (raw, so the answer keeps the request's key style).
  const pending: PendingInterrupt[] = useMemo(() => {
    if (stream.isLoading || !threadId || handedOff !== null) return [];
    const fromHook = stream.interrupts ?? [];
    const raw = thread && thread.thread_id === threadId ? (thread as unknown as { interrupts?: Record<string, RawInterrupt[]> }).interrupts : undefined;
    if (raw && typeof raw === "object") {
      if (thread?.status !== "interrupted") return [];
      const list = Object.values(raw).flat();
      if (list.length === 0) return fromHook.some((i) => i.when === "breakpoint") ? [{ value: null, breakpoint: true }] : [];
      return list.map((i) => ({ id: i.id, value: i.value, style: keyStyleOf(i.value) ?? undefined }));
    }
    return fromHook.map((i) => (i.when === "breakpoint" ? { value: null, breakpoint: true } : { id: i.id, value: i.value }));
  }, [stream.isLoading, stream.interrupts, thread, threadId, handedOff]);

  // A new message or new pending cards bring the view to the end.
  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: "end" });
  }, [stream.messages?.length, interruptKey, pending.length]);

  const resume = (index: number, value: unknown, keep?: Record<string, unknown>) => {
    setLocalError("");
    decided.current = true;
    const target = pending[index];
    const resumeValue = pending.length > 1 && target.id ? { [target.id]: value } : value;
    // A resolved form card is committed with the answer, in the same superstep.
    const update = keep ? { update: { messages: [keep] } } : {};
    const command = target.breakpoint ? undefined : { command: { resume: resumeValue, ...update } };
    Promise.resolve(stream.submit(null, command)).catch((e: unknown) => setLocalError(describeError(e, apiUrl)));
  };

  const send = () => {
    const text = draft.trim();
    if (!text || stream.isLoading || handedOff !== null) return;
    setLocalError("");
    setDraft("");
    Promise.resolve(stream.submit({ messages: [{ type: "human", content: text }] })).catch((e: unknown) => setLocalError(describeError(e, apiUrl)));
  };

  const streamError = stream.error && handedOff === null ? describeError(stream.error, apiUrl) : "";
  const error = localError || streamError || (handedOff === null ? threadError : "");
  // A refused decision leaves the run paused: the cards start over (no "Approved" badge on a
  // decision the server did not take).
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (localError || streamError) setAttempt((a) => a + 1);
  }, [localError, streamError]);
  // Counted from the review's opening when the server says (an approval that is not yet enough
  // updates the thread), else from the thread's last change, the pause.
  const opened = pending.map((p) => parseHitl(p.value, p.style)?.actions[0]?.createdAt).find((c) => c);
  const waiting = thread?.status === "interrupted" ? since(opened ?? thread.updated_at, now) : "";
  const threadOwner = handedOff ?? (typeof threadMeta?.owner === "string" ? threadMeta.owner : null);
  // Whose turns these are is known once the thread is read (its pending cards may show first):
  // until then no name rather than "You" on another person's words.
  const ownerKnown = !me || !threadId || handedOff !== null || (thread !== null && thread.thread_id === threadId);
  const author = !ownerKnown ? "" : me && threadOwner && threadOwner !== me ? threadOwner : "You";
  const paused = pending.length > 0;
  // An approval that was counted (not yet enough) leaves the run paused with one more approval
  // on the card: the card starts over showing it.
  const approvalsKey = pending.map((p) => parseHitl(p.value, p.style)?.actions.map((a) => a.approvals.length).join(".") ?? "").join("/");

  return (
    <div className="chat">
      <div
        className="scroll"
        ref={scrollRef}
        // Focusable, so the conversation scrolls with the keyboard even when nothing in it is.
        tabIndex={0}
        role="region"
        aria-label="Conversation"
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
        }}
      >
        <div className="scroll-content" ref={contentRef}>
          {stream.messages?.length ? (
            <MessageList messages={stream.messages} streaming={stream.isLoading} author={author} edits={edits} />
          ) : (
            <p className="empty muted">
              {stream.isThreadLoading ? "Loading the conversation…" : threadId ? "No messages yet." : "Start a conversation with the agent below."}
            </p>
          )}
          {stream.isLoading && (
            <p className="status muted" role="status">
              The agent is working…
            </p>
          )}
          {pending.map((p, i) => (
            <InterruptView
              key={`${p.id ?? i}/${attempt}/${approvalsKey}`}
              interrupt={p}
              waiting={waiting}
              busy={stream.isLoading}
              viewer={viewer}
              owner={typeof threadMeta?.owner === "string" ? threadMeta.owner : null}
              onResume={(v, keep) => resume(i, v, keep)}
              claims={threadId ? { apiUrl, apiKey, threadId, onChanged: () => void loadThread() } : undefined}
              now={now}
            />
          ))}
          {handedOff !== null && (
            <p className="notice" role="status" data-testid="handed-off">
              Your decision was taken. This thread belongs to {handedOff}; as a reviewer you see it only while it waits for a review.
            </p>
          )}
          {error && (
            <div className="alert" role="alert" data-testid="error">
              {error}
            </div>
          )}
          <div ref={endRef} />
        </div>
      </div>
      <form
        className="composer"
        onSubmit={(e) => {
          e.preventDefault();
          send();
        }}
      >
        <label htmlFor="composer-input" className="sr-only">
          Message
        </label>
        <textarea
          id="composer-input"
          rows={2}
          value={draft}
          placeholder={
            handedOff !== null ? "This thread is not yours to continue." : paused ? "Decide on the pending action first…" : "Message the agent (Enter to send, Shift+Enter for a new line)"
          }
          disabled={paused || handedOff !== null}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey) {
              e.preventDefault();
              send();
            }
          }}
        />
        {stream.isLoading ? (
          <button type="button" className="btn" onClick={() => stream.stop()}>
            Stop
          </button>
        ) : (
          <button type="submit" className="btn primary" disabled={!draft.trim() || paused || handedOff !== null}>
            Send
          </button>
        )}
      </form>
    </div>
  );
}
