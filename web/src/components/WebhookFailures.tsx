// For an admin: the webhook deliveries that failed for good or are being retried, from the
// server's delivery log (GET /webhooks/deliveries, newest first). Shown only where webhooks are
// configured, which the log itself tells: a server without receivers has never queued one.
import { useEffect, useState } from "react";
import { apiFetch } from "../session";

interface Delivery {
  delivery_id: number;
  event_id: string;
  type: string;
  url: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  last_status: number | null;
  created_at: string;
}

interface Props {
  apiUrl: string;
  apiKey: string | null;
  /** Changes when the log may have changed (a review event): read it again. */
  refreshKey: number;
}

async function read(apiUrl: string, apiKey: string | null, query: string): Promise<Delivery[]> {
  const r = await apiFetch(apiUrl, apiKey, `/webhooks/deliveries?${query}`);
  if (!r.ok) throw new Error(`HTTP ${r.status}`);
  return (await r.json()) as Delivery[];
}

export function WebhookFailures({ apiUrl, apiKey, refreshKey }: Props) {
  const [state, setState] = useState<{ configured: boolean; rows: Delivery[]; error: string }>({ configured: false, rows: [], error: "" });
  useEffect(() => {
    let live = true;
    const load = async () => {
      try {
        const [any, failed, pending] = await Promise.all([
          read(apiUrl, apiKey, "limit=1"),
          read(apiUrl, apiKey, "status=failed&limit=50"),
          read(apiUrl, apiKey, "status=pending&limit=50"),
        ]);
        const retrying = pending.filter((d) => d.attempts > 0);
        const rows = [...failed, ...retrying].sort((a, b) => b.delivery_id - a.delivery_id);
        if (live) setState({ configured: any.length > 0, rows, error: "" });
      } catch (e) {
        if (live) setState((s) => ({ ...s, error: e instanceof Error ? e.message : String(e) }));
      }
    };
    void load();
    const t = setInterval(() => void load(), 15000);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [apiUrl, apiKey, refreshKey]);

  if (!state.configured && !state.error) return null;
  return (
    <section className="webhook-failures" aria-labelledby="webhook-failures-title" data-testid="webhook-failures">
      <h2 id="webhook-failures-title">Webhook deliveries</h2>
      {state.error && <p className="error">The delivery log could not be read: {state.error}</p>}
      {state.rows.length === 0 ? (
        !state.error && <p className="muted">No failed or retried deliveries.</p>
      ) : (
        <table className="deliveries">
          <caption className="sr-only">Failed and retried webhook deliveries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Receiver</th>
              <th scope="col">Status</th>
              <th scope="col">Tries</th>
              <th scope="col">Last error</th>
              <th scope="col">Next try</th>
            </tr>
          </thead>
          <tbody>
            {state.rows.map((d) => (
              <tr key={d.delivery_id} data-testid="webhook-failure">
                <td>{d.type}</td>
                <td className="url">{d.url}</td>
                <td>{d.status === "failed" ? "failed" : "retrying"}</td>
                <td>{d.attempts}</td>
                <td>{[d.last_status ? `HTTP ${d.last_status}` : "", d.last_error ?? ""].filter(Boolean).join(": ") || "—"}</td>
                <td>{d.status === "pending" && d.next_attempt_at ? new Date(d.next_attempt_at).toLocaleTimeString() : "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
