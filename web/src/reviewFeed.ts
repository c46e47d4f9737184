// GET /reviews/stream (SSE of review.requested / decided / expired / claimed / released, as the
// server filters them for the signed-in identity), read with fetch so the tab's key goes in a
// header. Each event bumps a counter the views reload on; the stream reopens after a drop.
import { useEffect, useState } from "react";
import { keyHeaders } from "./session";

export interface ReviewEvent {
  type: string;
  data: Record<string, unknown>;
}

/** Splits SSE text into complete events; returns them and the unfinished rest. */
export function parseSseChunk(text: string): { events: ReviewEvent[]; rest: string } {
  const events: ReviewEvent[] = [];
  const blocks = text.split(/\r?\n\r?\n/);
  const rest = blocks.pop() ?? "";
  for (const block of blocks) {
    let type = "message";
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith("event:")) type = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (data.length === 0) continue;
    try {
      const parsed = JSON.parse(data.join("\n")) as { type?: unknown; data?: unknown };
      const body = parsed && typeof parsed === "object" && parsed.data && typeof parsed.data === "object" ? (parsed.data as Record<string, unknown>) : {};
      events.push({ type: typeof parsed.type === "string" ? parsed.type : type, data: body });
    } catch {
      /* not an event of ours */
    }
  }
  return { events, rest };
}

/**
 * The number of review events seen since the tab opened (0 while none, or when the server has
 * no review stream); `onEvent` hears each.
 */
export function useReviewFeed(apiUrl: string, apiKey: string | null, onEvent?: (e: ReviewEvent) => void): number {
  const [seen, setSeen] = useState(0);
  useEffect(() => {
    const stop = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    const open = async () => {
      try {
        const r = await fetch(`${apiUrl}/reviews/stream`, { headers: { ...keyHeaders(apiKey), accept: "text/event-stream" }, signal: stop.signal });
        if (r.status === 404 || r.status === 401 || r.status === 403) return;  // no stream here for us
        if (!r.ok || !r.body) throw new Error(`HTTP ${r.status}`);
        const reader = r.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const { events, rest } = parseSseChunk(buffer + decoder.decode(value, { stream: true }));
          buffer = rest;
          for (const e of events) onEvent?.(e);
          if (events.length) setSeen((n) => n + events.length);
        }
      } catch {
        if (stop.signal.aborted) return;
      }
      if (!stop.signal.aborted) retry = setTimeout(() => void open(), 3000);
    };
    void open();
    return () => {
      stop.abort();
      if (retry) clearTimeout(retry);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [apiUrl, apiKey]);
  return seen;
}
