// Who is signed in: the API key of this tab (sessionStorage only: it goes when the tab closes,
// never into localStorage or a URL), what GET /info says about it, and the fetch every request
// of the console goes through (it carries the key and reports a 401, so the console can ask
// for a key again).

const KEY_ITEM = "tollgate.apiKey";

/** The identity the server's `/info` names for a key (`auth.identity`). */
export interface Identity {
  id: string;
  name?: string;
  roles: string[];
}

/** What `/info` says about authentication; servers without `auth` in `/info` need no key. */
export interface AuthInfo {
  enabled: boolean;
  identity: Identity | null;
}

export function storedKey(): string | null {
  try {
    return window.sessionStorage.getItem(KEY_ITEM);
  } catch {
    return null;
  }
}

export function storeKey(key: string): void {
  window.sessionStorage.setItem(KEY_ITEM, key);
}

export function forgetKey(): void {
  try {
    window.sessionStorage.removeItem(KEY_ITEM);
  } catch {
    /* storage unavailable: nothing kept */
  }
}

/** The headers that carry the key (none without one). */
export function keyHeaders(apiKey: string | null): Record<string, string> {
  return apiKey ? { "x-api-key": apiKey } : {};
}

let onUnauthorized: (() => void) | null = null;

/** Registers what happens when any request is answered 401 (the key is no longer valid). */
export function setUnauthorizedHandler(handler: (() => void) | null): void {
  onUnauthorized = handler;
}

/** fetch that reports a 401 answer (used by the SDK Client, useStream and the plain calls). */
export const watchedFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  if (response.status === 401) onUnauthorized?.();
  return response;
};

/** A plain request to the Agent Server with the tab's key. */
export function apiFetch(apiUrl: string, apiKey: string | null, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  for (const [k, v] of Object.entries(keyHeaders(apiKey))) headers.set(k, v);
  return watchedFetch(`${apiUrl}${path}`, { ...init, headers });
}

/** GET /info sent with the key (or without one): whether a key is needed and whom it names. */
export async function readAuthInfo(apiUrl: string, apiKey: string | null): Promise<AuthInfo> {
  const r = await fetch(`${apiUrl}/info`, { headers: keyHeaders(apiKey) });
  if (!r.ok) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  const info = (await r.json()) as { auth?: { enabled?: unknown; identity?: unknown } };
  const auth = info?.auth;
  if (!auth || auth.enabled !== true) return { enabled: false, identity: null };
  const id = auth.identity as Partial<Identity> | null | undefined;
  if (!id || typeof id.id !== "string") return { enabled: true, identity: null };
  return {
    enabled: true,
    identity: { id: id.id, name: typeof id.name === "string" ? id.name : undefined, roles: Array.isArray(id.roles) ? id.roles.map(String) : [] },
  };
}

export function displayName(who: Identity): string {
  return who.name?.trim() || who.id;
}
