// Layout and navigation: thread list and inbox on the side, the selected thread in the middle.
// Routes live in the hash (#/inbox, #/t/<thread id>, #/ for a new chat) so links and reloads work.
import { useCallback, useEffect, useMemo, useState } from "react";
import type { Assistant, Thread } from "@langchain/langgraph-sdk";
import { describeError, makeClient, since, threadTitle } from "./api";
import { displayName, type Identity } from "./session";
import { Chat } from "./components/Chat";
import { Inbox } from "./components/Inbox";
import { AuditLog } from "./components/AuditLog";
import { useReviewFeed } from "./reviewFeed";
import { Timeline } from "./components/Timeline";

type Route = { view: "inbox" } | { view: "audit" } | { view: "thread"; threadId: string | null; timeline?: boolean };

function parseHash(): Route {
  const h = window.location.hash.replace(/^#\/?/, "");
  if (h === "inbox") return { view: "inbox" };
  if (h === "audit") return { view: "audit" };
  const m = h.match(/^t\/([^/]+)(\/timeline)?$/);
  return { view: "thread", threadId: m ? decodeURIComponent(m[1]) : null, timeline: Boolean(m?.[2]) };
}

function useNow(intervalMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  return now;
}

interface Props {
  apiUrl: string;
  /** The tab's API key, sent with every request (null: the server needs none). */
  apiKey: string | null;
  /** Who is signed in, shown in the header (null without auth). */
  identity: Identity | null;
  onSignOut?: () => void;
}

export function App({ apiUrl, apiKey, identity, onSignOut }: Props) {
  const client = useMemo(() => makeClient(apiUrl, apiKey), [apiUrl, apiKey]);
  const [route, setRoute] = useState<Route>(parseHash);
  const [assistants, setAssistants] = useState<Assistant[]>([]);
  const [picked, setPicked] = useState<string>(() => new URLSearchParams(window.location.search).get("assistant") ?? "");
  const [threads, setThreads] = useState<Thread[]>([]);
  const [inbox, setInbox] = useState<Thread[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [offline, setOffline] = useState("");
  const [chatSession, setChatSession] = useState(0);
  const [navOpen, setNavOpen] = useState(false);
  const now = useNow(5000);

  useEffect(() => {
    const onHash = () => setRoute(parseHash());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);

  const refresh = useCallback(async () => {
    try {
      const [a, t, i] = await Promise.all([
        client.assistants.search({ limit: 100 }),
        client.threads.search({ limit: 50, sortBy: "updated_at", sortOrder: "desc" }),
        client.threads.search({ status: "interrupted", limit: 100, sortBy: "updated_at", sortOrder: "asc" }),
      ]);
      setAssistants(a);
      setThreads(t);
      setInbox(i);
      setOffline("");
    } catch (e) {
      setOffline(describeError(e, apiUrl));
    } finally {
      setLoaded(true);
    }
  }, [client, apiUrl]);

  // Review events (a claim, a decision, a new pause) show at once, not at the next poll.
  const feedSeq = useReviewFeed(apiUrl, apiKey, () => void refresh());

  useEffect(() => {
    void refresh();
    const t = setInterval(() => void refresh(), 10000);
    return () => clearInterval(t);
  }, [refresh]);

  // Opening the inbox (or another thread) shows fresh server state, not the last poll.
  useEffect(() => {
    void refresh();
  }, [route, refresh]);

  // Escape closes the phone-width menu.
  useEffect(() => {
    if (!navOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setNavOpen(false);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [navOpen]);

  const go = (hash: string) => {
    window.location.hash = hash;
    setNavOpen(false);
  };
  const openThread = (id: string) => {
    setChatSession((s) => s + 1);
    go(`/t/${encodeURIComponent(id)}`);
  };
  const newChat = () => {
    setChatSession((s) => s + 1);
    go("/");
  };

  const currentThreadId = route.view === "thread" ? route.threadId : null;
  const showTimeline = route.view === "thread" && Boolean(route.timeline) && currentThreadId !== null;
  const current = threads.find((t) => t.thread_id === currentThreadId);
  const threadAssistant = current ? String((current.metadata as Record<string, unknown> | null)?.assistant_id ?? (current.metadata as Record<string, unknown> | null)?.graph_id ?? "") : "";
  const assistantId = threadAssistant || picked || assistants[0]?.graph_id || assistants[0]?.assistant_id || "agent";
  const assistantName = (id: string) => {
    const a = assistants.find((x) => x.assistant_id === id || x.graph_id === id);
    return a ? a.name || a.graph_id : id;
  };

  return (
    <div className={`app${navOpen ? " nav-open" : ""}`}>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className={`topbar${identity ? " signed-in" : ""}`}>
        <button className="btn icon nav-toggle" aria-expanded={navOpen} aria-controls="sidebar" onClick={() => setNavOpen(!navOpen)}>
          ☰<span className="sr-only"> Threads</span>
        </button>
        <h1>
          Tollgate <span className="muted">review console</span>
        </h1>
        <span className="server muted" title="Agent Server">
          {apiUrl.replace(/^https?:\/\//, "")}
        </span>
        {identity && (
          <span className="identity" data-testid="identity">
            <span className="sr-only">Signed in as </span>
            <strong data-testid="identity-name">{displayName(identity)}</strong>{" "}
            <span className="muted small" data-testid="identity-roles">
              {identity.roles.join(", ")}
            </span>
          </span>
        )}
        {onSignOut && (
          <button className="btn small" onClick={onSignOut}>
            Sign out
          </button>
        )}
      </header>

      <nav id="sidebar" className="sidebar" aria-label="Threads">
        <button className="btn primary wide" onClick={newChat}>
          New chat
        </button>
        <a href="#/inbox" className={`nav-link${route.view === "inbox" ? " active" : ""}`} onClick={() => setNavOpen(false)} data-testid="inbox-link">
          Inbox
          <span className={`count${inbox.length ? " hot" : ""}`} data-testid="inbox-count">
            {inbox.length}
          </span>
        </a>
        <a href="#/audit" className={`nav-link${route.view === "audit" ? " active" : ""}`} onClick={() => setNavOpen(false)} data-testid="audit-link">
          Audit log
        </a>
        <h2 className="side-title">Recent threads</h2>
        <ul className="thread-list">
          {threads.map((t) => (
            <li key={t.thread_id}>
              <button
                className={`thread-item${t.thread_id === currentThreadId ? " active" : ""}`}
                aria-current={t.thread_id === currentThreadId ? "page" : undefined}
                onClick={() => openThread(t.thread_id)}
              >
                <span className={`dot dot-${t.status}`} aria-hidden="true" />
                <span className="thread-label">
                  {threadTitle(t)}
                </span>
                <span className="muted small">{t.status === "interrupted" ? `waiting ${since(t.updated_at, now)}` : t.status}</span>
              </button>
            </li>
          ))}
          {loaded && threads.length === 0 && !offline && <li className="muted small">No threads yet.</li>}
        </ul>
      </nav>

      <main id="main" className="main" tabIndex={-1}>
        {offline && (
          <div className="alert" role="alert" data-testid="offline">
            {offline}{" "}
            <button className="btn small" onClick={() => void refresh()}>
              Retry
            </button>
          </div>
        )}
        {route.view === "inbox" ? (
          <Inbox threads={inbox} now={now} onOpen={openThread} loading={!loaded} viewer={identity ? { id: identity.id, roles: identity.roles } : null} agentName={assistantName}
            apiUrl={apiUrl} apiKey={apiKey} onChanged={() => void refresh()} feedSeq={feedSeq} />
        ) : route.view === "audit" ? (
          <AuditLog key={chatSession} apiUrl={apiUrl} apiKey={apiKey} onOpen={openThread} />
        ) : (
          <>
            <div className="chat-head">
              <h2>{current ? threadTitle(current) : currentThreadId ? `Thread …${currentThreadId.slice(-8)}` : "New conversation"}</h2>
              {!currentThreadId && assistants.length > 1 ? (
                <label className="picker">
                  Agent{" "}
                  <select value={assistantId} onChange={(e) => setPicked(e.target.value)} data-testid="assistant-picker">
                    {assistants.map((a) => (
                      <option key={a.assistant_id} value={a.graph_id === a.name ? a.graph_id : a.assistant_id}>
                        {a.name || a.graph_id}
                      </option>
                    ))}
                  </select>
                </label>
              ) : (
                <span className="muted">{assistantName(assistantId)}</span>
              )}
            </div>
            {currentThreadId && (
              <nav className="thread-tabs" aria-label="Thread views">
                <a href={`#/t/${encodeURIComponent(currentThreadId)}`} aria-current={showTimeline ? undefined : "page"}>
                  Conversation
                </a>
                <a href={`#/t/${encodeURIComponent(currentThreadId)}/timeline`} aria-current={showTimeline ? "page" : undefined} data-testid="timeline-link">
                  Timeline
                </a>
              </nav>
            )}
            {showTimeline && currentThreadId ? (
              <Timeline key={`${currentThreadId}-${chatSession}`} apiUrl={apiUrl} apiKey={apiKey} threadId={currentThreadId} />
            ) : (
            <Chat
              key={chatSession}
              apiUrl={apiUrl}
              apiKey={apiKey}
              client={client}
              threadId={currentThreadId}
              assistantId={assistantId}
              viewer={identity ? { id: identity.id, roles: identity.roles } : null}
              onThreadId={(id) => {
                if (id !== currentThreadId) window.location.hash = `/t/${encodeURIComponent(id)}`;
              }}
              onChanged={() => void refresh()}
              now={now}
              feedSeq={feedSeq}
            />
            )}
          </>
        )}
      </main>
    </div>
  );
}
