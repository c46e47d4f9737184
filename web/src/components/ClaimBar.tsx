// Who is looking at a pending review, and the Claim / Release buttons (claims.ts). Shown on
// each review card and inbox row; the server releases a claim on decision by itself.
import { useState } from "react";
import { describeError } from "../api";
import { claimReview, claimText, releaseReview, type Claim } from "../claims";
import type { Viewer } from "../reviewRules";

interface Props {
  apiUrl: string;
  apiKey: string | null;
  threadId: string;
  /** The interrupt claimed; undefined: every interrupt the thread waits on. */
  interruptId?: string;
  claim: Claim | null;
  viewer: Viewer | null;
  /** Whether the viewer may decide this review (only they may claim it). */
  mayClaim: boolean;
  /** What the buttons are about, for their accessible names ("send_email"). */
  what: string;
  onChanged: () => void;
}

export function ClaimBar({ apiUrl, apiKey, threadId, interruptId, claim, viewer, mayClaim, what, onChanged }: Props) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const me = viewer?.id ?? null;
  const mine = claim !== null && me !== null && claim.by === me;
  const admin = viewer?.roles.includes("admin") ?? false;
  const act = (release: boolean) => {
    setBusy(true);
    setError("");
    (release ? releaseReview : claimReview)(apiUrl, apiKey, threadId, interruptId)
      .then(onChanged)
      .catch((e: unknown) => setError(describeError(e, apiUrl)))
      .finally(() => setBusy(false));
  };
  // Without sign-in there is one person: nothing to tell anyone.
  if (!viewer) return null;
  return (
    <div className="claim" data-testid="claim">
      {claim && (
        <span className={`claim-text${mine ? " mine" : ""}`} role="status" data-testid="claim-text">
          {claimText(claim, me)}
        </span>
      )}
      {mayClaim && !claim && (
        <button className="btn small" disabled={busy} onClick={() => act(false)} aria-label={`Claim ${what}`}>
          Claim
        </button>
      )}
      {claim && (mine || admin) && (
        <button className="btn small" disabled={busy} onClick={() => act(true)} aria-label={`Release ${what}`}>
          Release
        </button>
      )}
      {error && (
        <span className="error small" role="alert" data-testid="claim-error">
          {error}
        </span>
      )}
    </div>
  );
}
