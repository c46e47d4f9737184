// A review's deadline (`review_configs[i].expires_at`): the time left, counting down each
// second, marked when it is close; once passed, the review is expired.
import { useEffect, useState } from "react";

/** Under this much time left the deadline is shown as close (red). */
export const CLOSE_MS = 5 * 60 * 1000;

export function useSecondNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [active]);
  return now;
}

/** "4 min 05 s", "1 h 02 min", "12 s". */
export function remainingText(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, "0")} s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${String(m % 60).padStart(2, "0")} min`;
  return `${Math.floor(h / 24)} days`;
}

/** The deadline line of a card; `expired` is read by the card to stop offering decisions. */
export function DeadlineView({ expiresAt, now }: { expiresAt: number; now: number }) {
  const left = expiresAt - now;
  const at = new Date(expiresAt).toLocaleTimeString();
  if (left <= 0) {
    return (
      <span className="deadline expired" data-testid="deadline" data-state="expired">
        Expired at {at}: the server no longer takes a decision on this review.
      </span>
    );
  }
  const close = left < CLOSE_MS;
  return (
    <span className={`deadline${close ? " close" : ""}`} data-testid="deadline" data-state={close ? "close" : "open"}>
      Decide within <strong>{remainingText(left)}</strong> <span className="muted">(by {at})</span>
    </span>
  );
}
