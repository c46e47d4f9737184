// Every paused thread the signed-in identity may see, oldest wait first: per pending action
// the tool, the agent, how long it has waited, the approvals a several-person rule still needs,
// why this person may not decide it when the rules say so, and who is looking at it (claims).
// For an admin, the webhook deliveries that failed or are being retried.
import type { Thread } from "@langchain/langgraph-sdk";
import { since, threadTitle } from "../api";
import { parseForm, parseHitl, keyStyleOf } from "../hitl";
import { parseCardForm } from "../forms/cardForm";
import { DeadlineView } from "./Deadline";
import { approvalsText, verdictFor, type Viewer } from "../reviewRules";
import { claimOf, claimText, type Claim } from "../claims";
import { ClaimBar } from "./ClaimBar";
import { WebhookFailures } from "./WebhookFailures";

interface Pending {
  what: string;
  /** When it started waiting (ms since the epoch). */
  since: number;
  approvals: string;
  notYours: string;
  /** The review's deadline (ms since the epoch), when it has one. */
  expiresAt?: number;
  /** Who is looking at it (a live claim), when someone is. */
  claim: Claim | null;
}

type Meta = Record<string, unknown> | null;

/** What a thread waits for: each action of a review (or the form / question), with its wait. */
export function pendingOf(t: Thread, viewer: Viewer | null, now: number = Date.now()): Pending[] {
  const raw = (t as unknown as { interrupts?: Record<string, { value?: unknown }[]> }).interrupts ?? {};
  const owner = (t.metadata as Meta)?.owner;
  // The review's own creation time when the server gives it; else when the thread last
  // changed, which for a paused thread is when it paused.
  const fallback = Date.parse(t.updated_at) || Date.parse(t.created_at) || Date.now();
  const out: Pending[] = [];
  for (const i of Object.values(raw).flat()) {
    const hitl = parseHitl(i.value, keyStyleOf(i.value) ?? undefined);
    if (hitl) {
      for (const a of hitl.actions) {
        const verdict = verdictFor(a, viewer, typeof owner === "string" ? owner : null);
        out.push({
          what: a.name,
          since: (a.createdAt && Date.parse(a.createdAt)) || fallback,
          approvals: approvalsText(a),
          notYours: verdict.may.length === 0 ? verdict.why : "",
          expiresAt: a.expiresAt && !Number.isNaN(Date.parse(a.expiresAt)) ? Date.parse(a.expiresAt) : undefined,
          claim: claimOf([a], now),
        });
      }
    } else {
      const card = parseCardForm(i.value);
      const form = card ? null : parseForm(i.value);
      out.push({ what: card ? (card.title ?? card.formType) : form ? (form.title ?? "form") : "question", since: fallback, approvals: "", notYours: "", claim: null });
    }
  }
  return out.length ? out : [{ what: "breakpoint", since: fallback, approvals: "", notYours: "", claim: null }];
}

interface Props {
  threads: Thread[];
  now: number;
  onOpen: (id: string) => void;
  loading: boolean;
  viewer: Viewer | null;
  /** The display name of an agent (graph or assistant id). */
  agentName: (id: string) => string;
  /** For the claims and the webhook failures; without them neither is shown. */
  apiUrl?: string;
  apiKey?: string | null;
  /** Something changed on the server (a claim taken here): read the inbox again. */
  onChanged?: () => void;
  /** Bumped by each review event of the stream: the webhook failures are read again. */
  feedSeq?: number;
}

export function Inbox({ threads, now, onOpen, loading, viewer, agentName, apiUrl, apiKey = null, onChanged, feedSeq }: Props) {
  const rows = threads.map((t) => {
    const pending = pendingOf(t, viewer, now);
    return { t, pending, oldest: Math.min(...pending.map((p) => p.since)) };
  });
  rows.sort((a, b) => a.oldest - b.oldest);
  return (
    <section className="inbox" aria-labelledby="inbox-title">
      <h2 id="inbox-title">Inbox</h2>
      <p className="muted">Paused runs waiting for a person, oldest first.</p>
      {rows.length === 0 ? (
        <p className="empty muted">{loading ? "Loading…" : "Nothing is waiting. All clear."}</p>
      ) : (
        <ul className="inbox-list">
          {rows.map(({ t, pending }) => {
            const meta = t.metadata as Meta;
            const agent = String(meta?.assistant_id ?? meta?.graph_id ?? "agent");
            return (
              <li key={t.thread_id}>
                <button className="inbox-item" onClick={() => onOpen(t.thread_id)} data-testid="inbox-item" data-thread={t.thread_id}>
                  <span className="inbox-main">
                    <span className="inbox-title">{threadTitle(t)}</span>
                    <span className="muted" data-testid="inbox-agent">
                      agent {agentName(agent)}
                      {typeof meta?.owner === "string" && viewer && meta.owner !== viewer.id ? ` · started by ${meta.owner}` : ""}
                    </span>
                    {pending.map((p, k) => (
                      <span className="inbox-action" key={k} data-testid="inbox-action">
                        <span className="tool-name">{p.what}</span>
                        <span className="wait"> · waiting {since(new Date(p.since).toISOString(), now)}</span>
                        {p.approvals && <span className="approvals"> · {p.approvals}</span>}
                        {p.expiresAt !== undefined && <DeadlineView expiresAt={p.expiresAt} now={now} />}
                        {p.notYours && <span className="notice small"> {p.notYours}</span>}
                        {p.claim && (
                          <span className="claim-text small" data-testid="inbox-claim">
                            {" "}
                            · {claimText(p.claim, viewer?.id ?? null)}
                          </span>
                        )}
                      </span>
                    ))}
                  </span>
                </button>
                {apiUrl && viewer && pending.some((p) => p.what !== "breakpoint") && (
                  <ClaimBar
                    apiUrl={apiUrl}
                    apiKey={apiKey}
                    threadId={t.thread_id}
                    claim={pending.find((p) => p.claim)?.claim ?? null}
                    viewer={viewer}
                    mayClaim={pending.some((p) => !p.notYours)}
                    what={`${threadTitle(t)}`}
                    onChanged={() => onChanged?.()}
                  />
                )}
              </li>
            );
          })}
        </ul>
      )}
      {apiUrl && viewer?.roles.includes("admin") && <WebhookFailures apiUrl={apiUrl} apiKey={apiKey} refreshKey={feedSeq ?? 0} />}
    </section>
  );
}
