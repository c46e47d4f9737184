// A call the server may or may not have run (review_configs[i].reason "effect_uncertain",
// docs/effects.md): it started before the server stopped and its result was not recorded.
// Three answers, no edit: run it again (approve, with the same idempotency key), mark it not
// done (reject, the agent is told why) or give its result (respond).
import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { ActionView, Decision } from "../hitl";
import type { Verdict } from "../reviewRules";
import { MessageForm } from "./MessageForm";

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
        <MessageForm
          mode={mode}
          label={{
            reject: "What happened (optional, the agent is told the call did not happen)",
            respond: "The call's result (the agent sees it as the tool's answer)",
          }}
          submit={{ reject: "Confirm not done", respond: "Send the result" }}
          text={text}
          onText={setText}
          fieldId={fieldId}
          fieldRef={field}
          disabled={disabled}
          onDecide={done}
          onCancel={() => setMode("idle")}
        />
      )}
    </article>
  );
}
