// One pending tool call: what it is, its arguments, and the decisions its policy allows.
import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { ActionView, Decision, DecisionType } from "../hitl";
import { checkArgs } from "../validate";
import { approvalsText, type Verdict } from "../reviewRules";
import { DeadlineView, useSecondNow } from "./Deadline";
import { MessageForm } from "./MessageForm";

type Mode = "idle" | "edit" | "reject" | "respond";

interface Props {
  action: ActionView;
  index: number;
  total: number;
  decision: Decision | null;
  /** What the signed-in person may decide here, and why not the rest. */
  verdict: Verdict;
  disabled: boolean;
  onDecide: (d: Decision | null) => void;
}

const LABEL: Record<DecisionType, string> = { approve: "Approve", edit: "Edit", reject: "Reject", respond: "Respond" };

export function ActionCard({ action, index, total, decision, verdict, disabled, onDecide }: Props) {
  const [mode, setMode] = useState<Mode>("idle");
  const pretty = useMemo(() => JSON.stringify(action.args, null, 2), [action.args]);
  const [draft, setDraft] = useState(pretty);
  const [text, setText] = useState("");
  const check = useMemo(() => (mode === "edit" ? checkArgs(draft, action.argsSchema) : null), [mode, draft, action.argsSchema]);
  const firstField = useRef<HTMLTextAreaElement>(null);
  const errorId = useId();
  const titleId = useId();

  useEffect(() => {
    if (mode !== "idle") firstField.current?.focus();
  }, [mode]);

  const expiresAt = action.expiresAt ? Date.parse(action.expiresAt) : NaN;
  const now = useSecondNow(!Number.isNaN(expiresAt));
  const expired = !Number.isNaN(expiresAt) && expiresAt <= now;
  const may = expired ? [] : verdict.may;
  const allows = (d: DecisionType) => may.includes(d);
  const approvals = approvalsText(action);
  const open = (m: Mode) => {
    setMode(m);
    if (m === "edit") setDraft(decision?.type === "edit" ? JSON.stringify(decision.args, null, 2) : pretty);
    if (m === "reject" || m === "respond") setText("");
  };
  const done = (d: Decision) => {
    setMode("idle");
    onDecide(d);
  };

  return (
    <article className={`card action${decision ? " decided" : ""}${expired ? " expired" : ""}`} aria-labelledby={titleId} data-testid="action-card">
      <header className="card-head">
        <h3 id={titleId}>
          <span className="tool-name">{action.name}</span>
          {total > 1 && <span className="muted"> · action {index + 1} of {total}</span>}
        </h3>
        {decision && <span className={`badge badge-${decision.type}`}>{LABEL[decision.type]}d</span>}
      </header>
      {action.description && <p className="description">{shortDescription(action.description, action.name)}</p>}
      <pre className="args" aria-label={`Arguments of ${action.name}`}>{pretty}</pre>
      {approvals && (
        <p className="approvals" data-testid="approvals">
          {approvals}
          {action.approvals.length > 0 && <span className="muted"> (by {action.approvals.map((a) => a.by).join(", ")})</span>}
        </p>
      )}
      {!Number.isNaN(expiresAt) && <DeadlineView expiresAt={expiresAt} now={now} />}
      {verdict.why && !expired && (
        <p className="notice" data-testid="not-yours">
          {verdict.why}
        </p>
      )}

      {mode === "idle" && may.length > 0 && (
        <div className="actions" role="group" aria-label={`Decide on ${action.name}`}>
          {allows("approve") && (
            <button className="btn primary" disabled={disabled} onClick={() => done({ type: "approve" })}>
              Approve
            </button>
          )}
          {allows("edit") && (
            <button className="btn" disabled={disabled} onClick={() => open("edit")}>
              Edit
            </button>
          )}
          {allows("reject") && (
            <button className="btn danger" disabled={disabled} onClick={() => open("reject")}>
              Reject
            </button>
          )}
          {allows("respond") && (
            <button className="btn" disabled={disabled} onClick={() => open("respond")}>
              Respond
            </button>
          )}
          {decision && total > 1 && (
            <button className="btn link" disabled={disabled} onClick={() => onDecide(null)}>
              Undo
            </button>
          )}
          {action.allowed.length === 0 && <p className="error">No decision is allowed for this tool by its policy.</p>}
        </div>
      )}

      {mode === "edit" && !expired && (
        <form
          className="editor"
          onSubmit={(e) => {
            e.preventDefault();
            if (check?.args && check.errors.length === 0) done({ type: "edit", args: check.args });
          }}
        >
          <label htmlFor={`${errorId}-args`}>
            Arguments (JSON){action.argsSchema ? ", checked against the tool's schema" : ""}
          </label>
          <textarea
            id={`${errorId}-args`}
            ref={firstField}
            className={`code${check && check.errors.length ? " invalid" : ""}`}
            value={draft}
            spellCheck={false}
            rows={Math.min(16, Math.max(4, draft.split("\n").length + 1))}
            aria-invalid={check ? check.errors.length > 0 : false}
            aria-describedby={errorId}
            onChange={(e) => setDraft(e.target.value)}
          />
          <div id={errorId} className="field-errors" role="status" aria-live="polite" data-testid="edit-errors">
            {check?.errors.map((m) => (
              <p key={m} className="error">
                {m}
              </p>
            ))}
          </div>
          <div className="actions">
            <button type="submit" className="btn primary" disabled={disabled || !check || check.errors.length > 0}>
              {total > 1 ? "Use these arguments" : "Run with these arguments"}
            </button>
            <button type="button" className="btn" onClick={() => setMode("idle")}>
              Cancel
            </button>
          </div>
        </form>
      )}

      {(mode === "reject" || mode === "respond") && !expired && (
        <MessageForm
          mode={mode}
          label={{ reject: "Reason (optional, the agent sees it)", respond: "Your answer (becomes the tool's result)" }}
          submit={{ reject: "Confirm reject", respond: "Send answer" }}
          text={text}
          onText={setText}
          fieldId={`${errorId}-text`}
          fieldRef={firstField}
          disabled={disabled}
          onDecide={done}
          onCancel={() => setMode("idle")}
        />
      )}
    </article>
  );
}

// The middleware's default description repeats the tool name and arguments shown right below.
function shortDescription(text: string, name: string): string {
  const cut = text.indexOf(`\n\nTool: ${name}\n`);
  return cut > 0 ? text.slice(0, cut) : text;
}
