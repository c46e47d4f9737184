// Everything a paused run is waiting for: HITL action cards, a tool's form, or a raw value.
import { useState } from "react";
import { freeFormAnswer, hitlResponse, parseForm, parseHitl, type Decision, type FormSpec, type KeyStyle } from "../hitl";
import { ActionCard } from "./ActionCard";
import { FactList } from "./FactList";
import { parseCardForm, resolvedCardMessage } from "../forms/cardForm";
import { FormCardView } from "../forms/FormCard";
import "../forms/flightBooking";
import { verdictFor, type Viewer } from "../reviewRules";
import { EffectUncertainCard } from "./EffectUncertainCard";
import { ClaimBar } from "./ClaimBar";
import { claimOf } from "../claims";

/** Where the review's claim is taken and released (claims.ts). */
export interface ClaimTarget {
  apiUrl: string;
  apiKey: string | null;
  threadId: string;
  onChanged: () => void;
}

export interface PendingInterrupt {
  id?: string;
  value: unknown;
  style?: KeyStyle;
  breakpoint?: boolean;
}

interface Props {
  interrupt: PendingInterrupt;
  waiting: string;
  busy: boolean;
  /** The signed-in person (null without sign-in) and the thread's owner (null: not known). */
  viewer: Viewer | null;
  owner: string | null;
  /** The answer, and for a form card the message that keeps it in the history (the update). */
  onResume: (value: unknown, keep?: Record<string, unknown>) => void;
  /** With a thread: the Claim / Release bar of a review. */
  claims?: ClaimTarget;
  now?: number;
}

export function InterruptView({ interrupt, waiting, busy, viewer, owner, onResume, claims, now }: Props) {
  const hitl = parseHitl(interrupt.value, interrupt.style);
  const mayClaim = hitl ? hitl.actions.some((a) => verdictFor(a, viewer, owner).may.length > 0) : false;
  const card = hitl ? null : parseCardForm(interrupt.value);
  const form = hitl || card ? null : parseForm(interrupt.value);
  return (
    <section className="pending" aria-label="Waiting for you" data-testid="pending">
      <div className="pending-head">
        <h2>{interrupt.breakpoint ? "Paused at a breakpoint" : "The agent is waiting for your decision"}</h2>
        {waiting && <span className="muted" data-testid="waiting">waiting {waiting}</span>}
      </div>
      {interrupt.breakpoint ? (
        <button className="btn primary" disabled={busy} onClick={() => onResume(undefined)}>
          Continue
        </button>
      ) : hitl ? (
        <>
          {claims && (
            <ClaimBar
              apiUrl={claims.apiUrl}
              apiKey={claims.apiKey}
              threadId={claims.threadId}
              interruptId={interrupt.id}
              claim={claimOf(hitl.actions, now ?? Date.now())}
              viewer={viewer}
              mayClaim={mayClaim}
              what={hitl.actions.map((a) => a.name).join(", ")}
              onChanged={claims.onChanged}
            />
          )}
          <ReviewBatch key={interrupt.id} request={hitl} busy={busy} viewer={viewer} owner={owner} onResume={onResume} />
        </>
      ) : card ? (
        <FormCardView key={interrupt.id} spec={card} busy={busy} onAnswer={(approved, values) =>
            onResume({ approved, values }, resolvedCardMessage(card, interrupt.id, { approved, values, by: viewer?.id }))
          }
        />
      ) : form ? (
        <FormView key={interrupt.id} spec={form} busy={busy} onResume={onResume} />
      ) : (
        <FreeForm key={interrupt.id} value={interrupt.value} busy={busy} onResume={onResume} />
      )}
    </section>
  );
}

interface BatchProps {
  request: NonNullable<ReturnType<typeof parseHitl>>;
  busy: boolean;
  viewer: Viewer | null;
  owner: string | null;
  onResume: (v: unknown) => void;
}

function ReviewBatch({ request, busy, viewer, owner, onResume }: BatchProps) {
  const n = request.actions.length;
  const [decisions, setDecisions] = useState<(Decision | null)[]>(() => request.actions.map(() => null));
  const decide = (i: number, d: Decision | null) => {
    const next = decisions.slice();
    next[i] = d;
    setDecisions(next);
    if (n === 1 && d) onResume(hitlResponse(request, [d]));
  };
  const complete = decisions.every((d) => d !== null);
  const left = decisions.filter((d) => d === null).length;
  return (
    <div className="batch">
      {request.actions.map((a, i) =>
        a.reason === "effect_uncertain" ? (
          <EffectUncertainCard
            key={i}
            action={a}
            decision={decisions[i]}
            verdict={verdictFor(a, viewer, owner)}
            disabled={busy}
            onDecide={(d) => decide(i, d)}
          />
        ) : (
        <ActionCard
          key={i}
          action={a}
          index={i}
          total={n}
          decision={decisions[i]}
          verdict={verdictFor(a, viewer, owner)}
          disabled={busy}
          onDecide={(d) => decide(i, d)}
        />
        ),
      )}
      {n > 1 && (
        <div className="submit-row">
          <button
            className="btn primary"
            disabled={busy || !complete}
            onClick={() => onResume(hitlResponse(request, decisions as Decision[]))}
          >
            Submit {n} decisions
          </button>
          <span className="muted" aria-live="polite">
            {complete ? "All actions decided." : `${left} of ${n} still to decide.`}
          </span>
        </div>
      )}
    </div>
  );
}

function initialFormValue(spec: FormSpec): Record<string, unknown> {
  const v: Record<string, unknown> = {};
  for (const f of spec.fields) v[f.name] = f.defaultValue ?? (f.type === "boolean" ? false : "");
  return v;
}

function FormView({ spec, busy, onResume }: { spec: FormSpec; busy: boolean; onResume: (v: unknown) => void }) {
  const [values, setValues] = useState<Record<string, unknown>>(() => initialFormValue(spec));
  const set = (k: string, v: unknown) => setValues({ ...values, [k]: v });
  const missing = spec.fields.filter((f) => f.required && (values[f.name] === "" || values[f.name] === undefined));
  const context = Object.entries(spec.extra);
  return (
    <form
      className="card form"
      data-testid="form-interrupt"
      onSubmit={(e) => {
        e.preventDefault();
        if (missing.length) return;
        const out: Record<string, unknown> = {};
        for (const f of spec.fields) {
          const v = values[f.name];
          out[f.name] = (f.type === "number" || f.type === "integer") && v !== "" ? Number(v) : v;
        }
        onResume(out);
      }}
    >
      {spec.title && <h3>{spec.title}</h3>}
      {spec.description && <p className="description">{spec.description}</p>}
      {context.length > 0 && <FactList facts={spec.extra} />}
      {spec.fields.map((f) => {
        const id = `form-${f.name}`;
        if (f.type === "boolean") {
          return (
            <label key={f.name} className="check" htmlFor={id}>
              <input id={id} type="checkbox" checked={values[f.name] === true} onChange={(e) => set(f.name, e.target.checked)} />
              {f.label}
            </label>
          );
        }
        return (
          <div key={f.name} className="field">
            <label htmlFor={id}>
              {f.label}
              {f.required && <span aria-hidden="true"> *</span>}
            </label>
            {f.type === "select" ? (
              <select id={id} value={String(values[f.name] ?? "")} onChange={(e) => set(f.name, e.target.value)}>
                <option value="">Choose…</option>
                {f.options?.map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            ) : f.type === "text" ? (
              <textarea id={id} rows={3} value={String(values[f.name] ?? "")} onChange={(e) => set(f.name, e.target.value)} />
            ) : (
              <input
                id={id}
                type={f.type === "number" || f.type === "integer" ? "number" : "text"}
                step={f.type === "integer" ? 1 : undefined}
                required={f.required}
                value={String(values[f.name] ?? "")}
                onChange={(e) => set(f.name, e.target.value)}
              />
            )}
            {f.description && <p className="hint">{f.description}</p>}
          </div>
        );
      })}
      <div className="actions">
        <button type="submit" className="btn primary" disabled={busy || missing.length > 0}>
          Send
        </button>
      </div>
    </form>
  );
}

function FreeForm({ value, busy, onResume }: { value: unknown; busy: boolean; onResume: (v: unknown) => void }) {
  const [text, setText] = useState("");
  const parsed = freeFormAnswer(text);
  return (
    <form
      className="card"
      data-testid="free-interrupt"
      onSubmit={(e) => {
        e.preventDefault();
        onResume(parsed.value);
      }}
    >
      <pre className="args">{JSON.stringify(value, null, 2)}</pre>
      <label htmlFor="free-answer">Your answer (JSON or text)</label>
      <textarea id="free-answer" rows={3} value={text} onChange={(e) => setText(e.target.value)} />
      <p className="hint" aria-live="polite">
        {text.trim() ? (parsed.asJson ? "Will be sent as JSON." : "Will be sent as text.") : ""}
      </p>
      <div className="actions">
        <button type="submit" className="btn primary" disabled={busy}>
          Send answer
        </button>
      </div>
    </form>
  );
}
