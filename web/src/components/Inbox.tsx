// Every paused thread on the server, oldest wait first.
import type { Thread } from "@langchain/langgraph-sdk";
import { since, threadTitle } from "../api";
import { parseForm, parseHitl, keyStyleOf } from "../hitl";

function summary(t: Thread): string {
  const raw = (t as unknown as { interrupts?: Record<string, { value?: unknown }[]> }).interrupts ?? {};
  const parts: string[] = [];
  for (const i of Object.values(raw).flat()) {
    const hitl = parseHitl(i.value, keyStyleOf(i.value) ?? undefined);
    if (hitl) parts.push(...hitl.actions.map((a) => a.name));
    else {
      const form = parseForm(i.value);
      parts.push(form ? (form.title ?? "form") : "question");
    }
  }
  return parts.length ? parts.join(", ") : "breakpoint";
}

export function Inbox({ threads, now, onOpen, loading }: { threads: Thread[]; now: number; onOpen: (id: string) => void; loading: boolean }) {
  const sorted = [...threads].sort((a, b) => Date.parse(a.updated_at) - Date.parse(b.updated_at));
  return (
    <section className="inbox" aria-labelledby="inbox-title">
      <h2 id="inbox-title">Inbox</h2>
      <p className="muted">Paused runs waiting for a person, oldest first.</p>
      {sorted.length === 0 ? (
        <p className="empty muted">{loading ? "Loading…" : "Nothing is waiting. All clear."}</p>
      ) : (
        <ul className="inbox-list">
          {sorted.map((t) => (
            <li key={t.thread_id}>
              <button className="inbox-item" onClick={() => onOpen(t.thread_id)} data-testid="inbox-item" data-thread={t.thread_id}>
                <span className="inbox-main">
                  <span className="tool-name">{summary(t)}</span>
                  <span className="muted">
                    {threadTitle(t)} · {String((t.metadata as Record<string, unknown> | null)?.graph_id ?? "agent")}
                  </span>
                </span>
                <span className="wait">waiting {since(t.updated_at, now)}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
