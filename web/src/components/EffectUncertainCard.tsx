// A call the server may or may not have run (review_configs[i].reason "effect_uncertain",
// docs/effects.md): it started before the server stopped and its result was not recorded.
// Three answers, no edit: run it again (approve, with the same idempotency key), mark it not
// done (reject, the agent is told why) or give its result (respond).
import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { ActionView, Decision } from "../hitl";
import type { Verdict } from "../reviewRules";

type Mode = "idle" | "reject" | "respond";

interface Props {
  action: ActionView;
  decision: Decision | null;
  verdict: Verdict;
  disabled: boolean;
  onDecide: (d: Decision) => void;
}

export function EffectUncertainCard({ action, decision, verdict, disabled, onDecide }: Props) {
  const [mode, setMode] = useState<Mode>("idle");
  const [text, setText] = useState("");
  const pretty = useMemo(() => JSON.stringify(action.args, null, 2), [action.args]);
  const titleId = useId();
  const fieldId = useId();
  const field = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (mode !== "idle") field.current?.focus();
  }, [mode]);
  const may = (d: Decision["type"]) => verdict.may.includes(d);
  const open = (m: Mode) => {
    setText("");
    setMode(m);
  };
  const done = (d: Decision) => {
    setMode("idle");
    onDecide(d);
  };

  return (
    <article className={`card action uncertain${decision ? " decided" : ""}`} aria-labelledby={titleId} data-testid="effect-uncertain-card">
      <header className="card-head">
        <h3 id={titleId}>This may already have happened</h3>
      </header>
      <p className="description">
        <span className="tool-name">{action.name}</span> started before the server stopped, and its result was not recorded: it may have
        run, partly or fully. Check the target system, then answer.
      </p>
      <pre className="args" aria-label={`Arguments of ${action.name}`}>{pretty}</pre>
      {verdict.why && (
        <p className="notice" data-testid="not-yours">
          {verdict.why}
        </p>
      )}
      {mode === "idle" && verdict.may.length > 0 && (
        <div className="actions" role="group" aria-label={`Answer for ${action.name}`}>
          {may("approve") && (
            <button className="btn primary" disabled={disabled} onClick={() => done({ type: "approve" })}>
              Run it again
            </button>
          )}
          {may("reject") && (
            <button className="btn danger" disabled={disabled} onClick={() => open("reject")}>
              Mark not done
            </button>
          )}
          {may("respond") && (
            <button className="btn" disabled={disabled} onClick={() => open("respond")}>
              Give the result
            </button>
          )}
        </div>
      )}
      {mode !== "idle" && (
        <form
          className="editor"
          onSubmit={(e) => {
            e.preventDefault();
            if (mode === "reject") done(text.trim() ? { type: "reject", message: text.trim() } : { type: "reject" });
            else if (text.trim()) done({ type: "respond", message: text });
          }}
        >
          <label htmlFor={fieldId}>{mode === "reject" ? "What happened (optional, the agent is told the call did not happen)" : "The call's result (the agent sees it as the tool's answer)"}</label>
          <textarea id={fieldId} ref={field} rows={3} value={text} onChange={(e) => setText(e.target.value)} />
          <div className="actions">
            <button type="submit" className={`btn ${mode === "reject" ? "danger" : "primary"}`} disabled={disabled || (mode === "respond" && !text.trim())}>
              {mode === "reject" ? "Confirm not done" : "Send the result"}
            </button>
            <button type="button" className="btn" onClick={() => setMode("idle")}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </article>
  );
}
