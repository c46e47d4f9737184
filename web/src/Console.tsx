// The console's session: on load GET /info says whether the server needs a key; if it does and
// this tab holds none (or one the server no longer accepts), the sign-in screen comes first.
// A 401 from any request later (key revoked, server restarted with other keys) signs out.
import { useCallback, useEffect, useMemo, useState } from "react";
import { resolveApiUrl } from "./api";
import { App } from "./App";
import { SignIn } from "./components/SignIn";
import { forgetKey, readAuthInfo, setUnauthorizedHandler, storedKey, storeKey, type Identity } from "./session";

type Phase =
  | { phase: "checking" }
  | { phase: "signin"; notice: string }
  | { phase: "in"; apiKey: string | null; identity: Identity | null };

const REFUSED = "The server did not accept your key (401). Sign in again.";

export function Console() {
  const apiUrl = useMemo(resolveApiUrl, []);
  const [state, setState] = useState<Phase>({ phase: "checking" });

  useEffect(() => {
    let live = true;
    const key = storedKey();
    readAuthInfo(apiUrl, key)
      .then((info) => {
        if (!live) return;
        if (!info.enabled) setState({ phase: "in", apiKey: null, identity: null });
        else if (info.identity) setState({ phase: "in", apiKey: key, identity: info.identity });
        else {
          if (key) forgetKey();
          setState({ phase: "signin", notice: key ? REFUSED : "" });
        }
      })
      // Unreachable: the console opens as it always did and says so; a key held is kept.
      .catch(() => live && setState({ phase: "in", apiKey: key, identity: null }));
    return () => {
      live = false;
    };
  }, [apiUrl]);

  useEffect(() => {
    if (state.phase !== "in") return;
    setUnauthorizedHandler(() => {
      forgetKey();
      setState({ phase: "signin", notice: REFUSED });
    });
    return () => setUnauthorizedHandler(null);
  }, [state.phase]);

  const signOut = useCallback(() => {
    forgetKey();
    setState({ phase: "signin", notice: "" });
  }, []);

  if (state.phase === "checking") return <p className="empty muted">Connecting…</p>;
  if (state.phase === "signin") {
    return (
      <SignIn
        apiUrl={apiUrl}
        notice={state.notice}
        onSignedIn={(apiKey, identity) => {
          storeKey(apiKey);
          setState({ phase: "in", apiKey, identity });
        }}
      />
    );
  }
  return (
    <App
      key={state.identity?.id ?? ""}
      apiUrl={apiUrl}
      apiKey={state.apiKey}
      identity={state.identity}
      onSignOut={state.identity ? signOut : undefined}
    />
  );
}
