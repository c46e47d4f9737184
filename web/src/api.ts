// Where the Agent Server is and how to talk to it. The console is served by the server
// itself, so the API is on the same origin by default; `?api=` or VITE_API_URL override it.
import { Client, type Thread } from "@langchain/langgraph-sdk";
import { watchedFetch } from "./session";

export function resolveApiUrl(): string {
  const fromQuery = new URLSearchParams(window.location.search).get("api");
  if (fromQuery) return fromQuery.replace(/\/$/, "");
  const fromEnv = import.meta.env.VITE_API_URL as string | undefined;
  if (fromEnv) return fromEnv.replace(/\/$/, "");
  return window.location.origin;
}

/** The SDK client; with a key it sends `x-api-key` on every request (useStream uses it too). */
export function makeClient(apiUrl: string, apiKey: string | null): Client {
  // null, not undefined: the SDK would otherwise look for a key in the environment.
  return new Client({ apiUrl, apiKey: apiKey ?? null, defaultHeaders: {}, callerOptions: { fetch: watchedFetch } });
}

/** The HTTP status of an SDK or fetch error ("HTTP 404: ..."), if it has one. */
export function httpStatusOf(err: unknown): number | null {
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === "number") return status;
  const m = (err instanceof Error ? err.message : String(err ?? "")).match(/HTTP (\d{3}):/);
  return m ? Number(m[1]) : null;
}

/** Turns anything thrown by the SDK or fetch into a sentence for a person. */
export function describeError(err: unknown, apiUrl: string): string {
  if (err == null) return "";
  const raw = err instanceof Error ? err.message : typeof err === "string" ? err : JSON.stringify(err);
  const name = err instanceof Error ? err.name : "";
  if (/Failed to fetch|NetworkError|ECONNREFUSED|Load failed|fetch failed/i.test(raw)) {
    return `Cannot reach the server at ${apiUrl}. Check that it is running, then try again.`;
  }
  // SDK HTTP errors look like "HTTP 409: {\"detail\":\"...\"}".
  const http = raw.match(/HTTP (\d{3}):\s*([\s\S]*)$/);
  if (http) {
    const detail = extractDetail(http[2]);
    if (http[1] === "401") return `Not signed in (401): ${detail}`;
    if (http[1] === "403") return `not allowed: ${detail}`;
    return `The server refused the request (${http[1]}): ${detail}`;
  }
  const detail = extractDetail(raw);
  if (name && name !== "Error" && name !== "StreamError") return `${name}: ${detail}`;
  return detail;
}

function extractDetail(body: string): string {
  try {
    const parsed = JSON.parse(body);
    if (parsed && typeof parsed === "object") {
      if (typeof parsed.detail === "string") return parsed.detail;
      if (parsed.detail) return JSON.stringify(parsed.detail);
      if (typeof parsed.message === "string") return parsed.message;
      if (typeof parsed.error === "string") return parsed.error;
    }
  } catch {
    /* not JSON: show as is */
  }
  return body.trim() || "unknown error";
}

export function since(iso: string | undefined | null, now: number): string {
  if (!iso) return "";
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} days`;
}

/** The first thing the person said, else the distinctive tail of the id (ids are time-ordered). */
export function threadTitle(t: Thread): string {
  const messages = (t.values as { messages?: { type?: string; content?: unknown }[] } | null)?.messages;
  const first = Array.isArray(messages) ? messages.find((m) => m?.type === "human") : undefined;
  const text = typeof first?.content === "string" ? first.content.trim() : "";
  if (text) return text.length > 48 ? `${text.slice(0, 47)}…` : text;
  return `Thread …${t.thread_id.slice(-8)}`;
}
