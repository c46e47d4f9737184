// The server's review audit log (GET /audit): every decision sent to a paused thread, what was
// pending when it arrived and what became of it, newest first.
import { useEffect, useState } from "react";
import { describeError } from "../api";
import { keyStyleOf, parseHitl } from "../hitl";
import { apiFetch } from "../session";

type Entry = {
  audit_id: number;
  received_at: string;
  thread_id: string;
  graph_id: string;
  shown: Record<string, { value?: unknown }[]>;
  decided: unknown;
  outcome: string;
  message: string | null;
  reviewer?: string | null;
};

function shownText(e: Entry): string {
  const parts: string[] = [];
  for (const i of Object.values(e.shown ?? {}).flat()) {
    const hitl = parseHitl(i.value, keyStyleOf(i.value) ?? undefined);
    if (hitl) parts.push(...hitl.actions.map((a) => `${a.name} ${JSON.stringify(a.args)}`));
    else parts.push(JSON.stringify(i.value));
  }
  return parts.length ? parts.join("; ") : "nothing was pending";
}

function decidedText(decided: unknown): string {
  const d = decided as { decisions?: Record<string, unknown>[] } | null;
  if (!d || typeof d !== "object" || !Array.isArray(d.decisions)) return JSON.stringify(decided);
  return d.decisions
    .map((x) => {
      const edited = (x.edited_action ?? x.editedAction) as { name?: string; args?: unknown } | undefined;
      let text = String(x.type ?? "?");
      if (edited) text += ` ${edited.name ?? "?"} ${JSON.stringify(edited.args ?? {})}`;
      if (x.message !== undefined) text += ` "${String(x.message)}"`;
      return text;
    })
    .join("; ");
}

export function AuditLog({ apiUrl, apiKey, onOpen }: { apiUrl: string; apiKey: string | null; onOpen: (id: string) => void }) {
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [error, setError] = useState("");

  useEffect(() => {
    let live = true;
    apiFetch(apiUrl, apiKey, "/audit?limit=200")
      .then(async (r) => {
        if (r.status === 404) throw new Error("This server keeps no audit log.");
        if (!r.ok) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
        return (await r.json()) as Entry[];
      })
      .then((list) => live && setEntries(list))
      .catch((e) => live && setError(describeError(e, apiUrl)));
    return () => {
      live = false;
    };
  }, [apiUrl, apiKey]);

  return (
    <section className="inbox" aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <p className="muted">Every decision sent to a paused run, newest first.</p>
      {error && (
        <div className="alert" role="alert">
          {error}
        </div>
      )}
      {!error && entries === null && <p className="empty muted">Loading…</p>}
      {entries && entries.length === 0 && <p className="empty muted">No decisions yet.</p>}
      {entries && entries.length > 0 && (
        <ul className="inbox-list">
          {entries.map((e) => (
            <li key={e.audit_id} data-testid="audit-entry" data-outcome={e.outcome}>
              <button className="inbox-item" onClick={() => onOpen(e.thread_id)}>
                <span className="inbox-main">
                  <span className="tool-name">{shownText(e)}</span>
                  <span>
                    decided: {decidedText(e.decided)}
                    {e.reviewer && <span data-testid="audit-reviewer"> · by {e.reviewer}</span>}
                  </span>
                  {e.message && <span className="muted small">{e.message}</span>}
                  <span className="muted small">
                    {new Date(e.received_at).toLocaleString()} · {e.graph_id} · thread …{e.thread_id.slice(-8)}
                  </span>
                </span>
                <span className={`badge badge-${e.outcome === "applied" ? "approve" : e.outcome === "refused" || e.outcome === "failed" || e.outcome === "lost" ? "reject" : "edit"}`}>
                  {e.outcome}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
