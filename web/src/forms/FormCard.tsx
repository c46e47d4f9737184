// The generic form card: a tool's form (any formType without a renderer of its own) as real
// controls with its defaults, checked in place (required fields, the response schema), and
// answered with Approve or Decline.
import { useId, useMemo, useState, type ReactNode } from "react";
import { FactList } from "../components/FactList";
import { checkValues } from "../validate";
import { initialValues, missingRequired, typedValues, type CardField } from "./cardForm";
import { formRendererFor, type FormRendererProps } from "./registry";

/** The card of `spec`: its formType's renderer, or the generic one. */
export function FormCardView(props: FormRendererProps) {
  const Renderer = formRendererFor(props.spec.formType, GenericFormCard);
  return <Renderer {...props} />;
}

/** The generic card; `summary` is shown above the fields (renderers that wrap it use it). */
export function GenericFormCard({ spec, busy, onAnswer, summary }: FormRendererProps & { summary?: ReactNode }) {
  const [raw, setRaw] = useState<Record<string, unknown>>(() => initialValues(spec));
  const prefix = useId();
  const values = useMemo(() => typedValues(spec, raw), [spec, raw]);
  // Required fields by their label first; the schema's own "is required" for them is the same.
  const errors = useMemo(() => {
    const missing = missingRequired(spec, values);
    const schema = checkValues(values, spec.responseSchema).filter(
      (m) => !spec.fields.some((f) => m === `${f.name} is required` && missing.includes(`${f.label} is required`)),
    );
    return [...missing, ...schema];
  }, [spec, values]);
  const set = (name: string, v: unknown) => setRaw({ ...raw, [name]: v });
  const errorsId = `${prefix}-errors`;
  const invalid = (f: CardField) => errors.some((e) => e.startsWith(`${f.name} `) || e.startsWith(`${f.label} `) || e.includes(` ${f.name} `));
  return (
    <form
      className="card form"
      data-testid="form-card"
      data-form-type={spec.formType}
      aria-labelledby={spec.title ? `${prefix}-title` : undefined}
      onSubmit={(e) => {
        e.preventDefault();
        if (errors.length === 0) onAnswer(true, values);
      }}
    >
      {spec.title && <h3 id={`${prefix}-title`}>{spec.title}</h3>}
      {summary}
      {typeof spec.context === "string" ? (
        <p className="description">{spec.context}</p>
      ) : spec.context ? (
        <FactList facts={spec.context} />
      ) : null}
      {spec.fields.map((f) => (
        <Field key={f.name} field={f} id={`${prefix}-${f.name}`} value={raw[f.name]} invalid={invalid(f)} errorsId={errorsId} onChange={(v) => set(f.name, v)} />
      ))}
      <div id={errorsId} className="field-errors" role="status" aria-live="polite" data-testid="form-errors">
        {errors.map((m) => (
          <p key={m} className="error">
            {m}
          </p>
        ))}
      </div>
      <div className="actions">
        <button type="submit" className="btn primary" disabled={busy || errors.length > 0}>
          Approve
        </button>
        <button type="button" className="btn danger" disabled={busy} onClick={() => onAnswer(false, values)}>
          Decline
        </button>
      </div>
    </form>
  );
}

interface FieldProps {
  field: CardField;
  id: string;
  value: unknown;
  invalid: boolean;
  errorsId: string;
  onChange: (v: unknown) => void;
}

function Field({ field: f, id, value, invalid, errorsId, onChange }: FieldProps) {
  const hintId = f.description ? `${id}-hint` : undefined;
  const describedBy = [hintId, invalid ? errorsId : undefined].filter(Boolean).join(" ") || undefined;
  const common = { id, "aria-invalid": invalid, "aria-describedby": describedBy, required: f.required, "data-field": f.name };
  if (f.type === "checkbox") {
    return (
      <div className="check">
        <input {...common} required={false} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />
        <label htmlFor={id}>{f.label}</label>
        {f.description && <p className="hint" id={hintId}>{f.description}</p>}
      </div>
    );
  }
  const text = String(value ?? "");
  let control: ReactNode;
  if (f.type === "select") {
    control = (
      <select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
        {(f.defaultValue === undefined || !f.required) && <option value="">Choose…</option>}
        {f.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    );
  } else if (f.type === "textarea") {
    control = <textarea {...common} rows={3} value={text} onChange={(e) => onChange(e.target.value)} />;
  } else if (f.type === "currency") {
    const code = f.currency ?? "USD";
    control = (
      <span className="money">
        <input {...common} type="number" inputMode="decimal" step="0.01" min={f.min} max={f.max} value={text} onChange={(e) => onChange(e.target.value)} />
        <span className="muted" aria-label={`in ${code}`}>{code}</span>
      </span>
    );
  } else {
    const type = f.type === "number" ? "number" : f.type === "date" ? "date" : "text";
    control = <input {...common} type={type} min={f.min} max={f.max} value={text} onChange={(e) => onChange(e.target.value)} />;
  }
  return (
    <div className="field">
      <span className="label-row">
        <label htmlFor={id}>{f.label}</label>
        {f.required && <span aria-hidden="true"> *</span>}
      </span>
      {control}
      {f.description && <p className="hint" id={hintId}>{f.description}</p>}
    </div>
  );
}
