// A tool's form card: an interrupt value with a `formType` (e.g. `{formType: "flight_booking",
// title, context, fields: [...], responseSchema?}`), answered with Approve or Decline as
// `{approved, values}`. Pure functions, no React.
import { fieldBasics } from "../hitl";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

export type CardFieldType = "select" | "checkbox" | "textarea" | "currency" | "number" | "date" | "text";

export interface CardField {
  name: string;
  label: string;
  type: CardFieldType;
  /** select: the choices, each with the value sent and the text shown. */
  options: { value: string; label: string }[];
  required: boolean;
  description?: string;
  defaultValue?: unknown;
  /** currency: the ISO 4217 code shown beside the amount (default USD). */
  currency?: string;
  min?: number;
  max?: number;
}

export interface CardSpec {
  formType: string;
  title?: string;
  /** What the person decides about: a sentence, or facts shown as a list. */
  context?: string | Obj;
  fields: CardField[];
  /** A JSON Schema the values must satisfy before Approve sends them. */
  responseSchema?: Obj;
}

const TYPES: CardFieldType[] = ["select", "checkbox", "textarea", "currency", "number", "date", "text"];
// Other spellings tools use for the same controls.
const ALIASES: Record<string, CardFieldType> = { boolean: "checkbox", string: "text", integer: "number", enum: "select" };

/** Parses a form card; null when the value has no `formType` or a field is malformed. */
export function parseCardForm(value: unknown): CardSpec | null {
  if (!isObj(value) || typeof value.formType !== "string" || !value.formType) return null;
  const rawFields = Array.isArray(value.fields) ? value.fields : [];
  const fields: CardField[] = [];
  for (const f of rawFields) {
    if (!isObj(f) || typeof f.name !== "string" || !f.name) return null;
    const t = String(f.type ?? "text");
    const type = (TYPES as string[]).includes(t) ? (t as CardFieldType) : (ALIASES[t] ?? "text");
    const rawOptions = Array.isArray(f.options) ? f.options : Array.isArray(f.enum) ? f.enum : [];
    const options = rawOptions.map((o) =>
      isObj(o) ? { value: String(o.value ?? o.label ?? ""), label: String(o.label ?? o.value ?? "") } : { value: String(o), label: String(o) },
    );
    fields.push({
      name: f.name,
      ...fieldBasics(f, f.name),
      type,
      options,
      defaultValue: f.default ?? f.defaultValue,
      currency: typeof f.currency === "string" ? f.currency : undefined,
      min: typeof f.min === "number" ? f.min : typeof f.minimum === "number" ? f.minimum : undefined,
      max: typeof f.max === "number" ? f.max : typeof f.maximum === "number" ? f.maximum : undefined,
    });
  }
  const schema = value.responseSchema ?? value.response_schema;
  const context = value.context;
  return {
    formType: value.formType,
    title: typeof value.title === "string" ? value.title : undefined,
    context: typeof context === "string" || isObj(context) ? context : undefined,
    fields,
    responseSchema: isObj(schema) ? schema : undefined,
  };
}

/** The controls' starting values: each field's default, else empty (unchecked, first choice unset). */
export function initialValues(spec: CardSpec): Record<string, unknown> {
  const v: Record<string, unknown> = {};
  for (const f of spec.fields) {
    if (f.type === "checkbox") v[f.name] = f.defaultValue === true;
    else v[f.name] = f.defaultValue === undefined || f.defaultValue === null ? "" : String(f.defaultValue);
  }
  return v;
}

/** The values as sent: numbers and amounts as numbers (empty ones left out), the rest as entered. */
export function typedValues(spec: CardSpec, raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of spec.fields) {
    const v = raw[f.name];
    if (f.type === "checkbox") out[f.name] = v === true;
    else if (f.type === "number" || f.type === "currency") {
      if (v !== "" && v !== undefined) out[f.name] = Number(v);
    } else if (v !== "" && v !== undefined) out[f.name] = v;
  }
  return out;
}

/** Fields marked required that have no value yet ("Traveller is required"). */
export function missingRequired(spec: CardSpec, values: Record<string, unknown>): string[] {
  return spec.fields.filter((f) => f.required && f.type !== "checkbox" && !(f.name in values)).map((f) => `${f.label} is required`);
}

/** The answer a card sends. */
export function cardAnswer(approved: boolean, values: Record<string, unknown>): { approved: boolean; values: Record<string, unknown> } {
  return { approved, values };
}

/** What a resolved card keeps in the history (`additional_kwargs.tollgate_form` of an AI message). */
export interface ResolvedCard {
  formType: string;
  title?: string;
  approved: boolean;
  values: Record<string, unknown>;
  /** Who answered (the signed-in identity), when known. */
  by?: string;
}

/**
 * The AI message that keeps a resolved card in the thread: sent as the resume's `update` (same
 * superstep as the answer), so a reload, another browser or another person sees it.
 */
export function resolvedCardMessage(spec: CardSpec, interruptId: string | undefined, card: Omit<ResolvedCard, "formType" | "title">): Obj {
  const shown = Object.entries(card.values)
    .map(([k, v]) => `${spec.fields.find((f) => f.name === k)?.label ?? k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join("; ");
  const title = spec.title ?? spec.formType;
  const resolved: ResolvedCard = { formType: spec.formType, title: spec.title, ...card };
  return {
    type: "ai",
    ...(interruptId ? { id: `form-card-${interruptId}` } : {}),
    content: `${title}: ${card.approved ? "approved" : "declined"}${card.by ? ` by ${card.by}` : ""}.${card.approved && shown ? ` ${shown}.` : ""}`,
    additional_kwargs: { tollgate_form: resolved },
  };
}

/** The resolved card an AI message keeps, or null. */
export function resolvedCardOf(message: Obj): ResolvedCard | null {
  const kwargs = message.additional_kwargs;
  const card = isObj(kwargs) ? kwargs.tollgate_form : undefined;
  if (!isObj(card) || typeof card.formType !== "string" || typeof card.approved !== "boolean") return null;
  return {
    formType: card.formType,
    title: typeof card.title === "string" ? card.title : undefined,
    approved: card.approved,
    values: isObj(card.values) ? card.values : {},
    by: typeof card.by === "string" ? card.by : undefined,
  };
}
