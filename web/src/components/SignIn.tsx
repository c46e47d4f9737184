// The sign-in screen shown when the server needs an API key: the key is checked with GET /info
// (a valid key names an identity) before the console uses it.
import { useState } from "react";
import { describeError } from "../api";
import { readAuthInfo, type Identity } from "../session";

interface Props {
  apiUrl: string;
  /** Why the person is asked again (their key stopped working), if so. */
  notice: string;
  onSignedIn: (apiKey: string, who: Identity) => void;
}

export function SignIn({ apiUrl, notice, onSignedIn }: Props) {
  const [key, setKey] = useState("");
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    const candidate = key.trim();
    if (!candidate) {
      setError("Enter your API key.");
      return;
    }
    setBusy(true);
    setError("");
    try {
      const info = await readAuthInfo(apiUrl, candidate);
      if (info.identity) onSignedIn(candidate, info.identity);
      else if (!info.enabled) setError("This server does not use keys; reload the page.");
      else setError("That key is not valid");
    } catch (e) {
      setError(describeError(e, apiUrl));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="signin" id="main">
      {/* No name on the field and no action: the key can never end up in a URL. */}
      <form
        className="signin-card"
        aria-labelledby="signin-title"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <h1>
          Tollgate <span className="muted">review console</span>
        </h1>
        <h2 id="signin-title">Sign in</h2>
        <p className="muted">
          This server asks for an API key. It is kept for this tab only and forgotten when you sign out or close the tab.
        </p>
        {notice && (
          <div className="alert" role="status" data-testid="signin-notice">
            {notice}
          </div>
        )}
        <div className="field">
          <label htmlFor="api-key">API key</label>
          <input
            id="api-key"
            type="password"
            autoComplete="current-password"
            autoFocus
            value={key}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? "signin-error" : undefined}
            onChange={(e) => setKey(e.target.value)}
          />
        </div>
        <p className="error" id="signin-error" role="alert" data-testid="signin-error">
          {error}
        </p>
        <button type="submit" className="btn primary wide" disabled={busy}>
          Sign in
        </button>
        <p className="muted small server-line">{apiUrl.replace(/^https?:\/\//, "")}</p>
      </form>
    </main>
  );
}
