// Review claims: "alice is looking at this", so two reviewers do not work on one card. The
// server keeps them (POST / DELETE /threads/{id}/claim) and shows the live one in each review
// config; a claim is advisory (a decision by another reviewer still applies) and lapses after
// the server's claim_ttl. Pure functions and plain requests, no React.
import type { ActionView } from "./hitl";
import { apiFetch } from "./session";

export interface Claim {
  by: string;
  /** ms since the epoch */
  until: number;
}

/** The live claim the actions show (the server writes the same claim into each), if any. */
export function claimOf(actions: ActionView[], now: number): Claim | null {
  for (const a of actions) {
    if (!a.claimedBy) continue;
    const until = a.claimExpiresAt ? Date.parse(a.claimExpiresAt) : NaN;
    if (!Number.isNaN(until) && until <= now) continue;
    return { by: a.claimedBy, until: Number.isNaN(until) ? Infinity : until };
  }
  return null;
}

/** "alice is looking at this" for others; "You are looking at this" for the holder. */
export function claimText(claim: Claim, viewerId: string | null): string {
  return viewerId !== null && claim.by === viewerId ? "You are looking at this" : `${claim.by} is looking at this`;
}

async function refusal(r: Response): Promise<Error> {
  const text = await r.text();
  let detail = text;
  try {
    const parsed = JSON.parse(text) as { detail?: unknown };
    if (typeof parsed.detail === "string") detail = parsed.detail;
  } catch {
    /* not JSON */
  }
  return new Error(`HTTP ${r.status}: ${JSON.stringify({ detail })}`);
}

function send(method: "POST" | "DELETE", apiUrl: string, apiKey: string | null, threadId: string, interruptId?: string) {
  return apiFetch(apiUrl, apiKey, `/threads/${encodeURIComponent(threadId)}/claim`, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(interruptId ? { interrupt_id: interruptId } : {}),
  });
}

/** Claims the thread's pending review (one interrupt, or all). Throws the server's refusal. */
export async function claimReview(apiUrl: string, apiKey: string | null, threadId: string, interruptId?: string): Promise<void> {
  const r = await send("POST", apiUrl, apiKey, threadId, interruptId);
  if (!r.ok) throw await refusal(r);
}

/** Releases this identity's claim (anyone's for an admin). Throws the server's refusal. */
export async function releaseReview(apiUrl: string, apiKey: string | null, threadId: string, interruptId?: string): Promise<void> {
  const r = await send("DELETE", apiUrl, apiKey, threadId, interruptId);
  if (!r.ok) throw await refusal(r);
}
