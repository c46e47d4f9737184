// Reading interrupt payloads and writing answers to them. Pure functions, no React.
//
// A HumanInTheLoopMiddleware interrupt comes in one of two key styles (Python snake_case or
// JS camelCase); the answer goes back in the style the request used. Tools may also raise a
// form description (`{type: "form", fields: [...]}`); anything else is shown as raw JSON.

export type DecisionType = "approve" | "edit" | "reject" | "respond";
export type KeyStyle = "snake" | "camel";

export interface ActionView {
  name: string;
  args: Record<string, unknown>;
  description?: string;
  allowed: DecisionType[];
  argsSchema?: Record<string, unknown>;
  /** Who may decide (`reviewers`); absent: the server's default (owner, reviewers, admins). */
  reviewers?: string[];
  /** `self_approval` (default true): false means the thread's owner may not approve or edit. */
  selfApproval: boolean;
  /** `approvals_required` (default 1). */
  approvalsRequired: number;
  /** The approvals collected so far (`approvals`, added by the server). */
  approvals: { by: string; at?: string }[];
  /** When the review was opened (`created_at`), ISO 8601, when the server says. */
  createdAt?: string;
  /** When the review expires (`expires_at`), ISO 8601, when it has a deadline. */
  expiresAt?: string;
  /** Why the review was opened (`reason`): "effect_uncertain" after a crash during the call. */
  reason?: string;
  /** Who has claimed the review and until when (`claimed_by`, `claim_expires_at`, by the server). */
  claimedBy?: string;
  claimExpiresAt?: string;
}

export interface HitlRequest {
  style: KeyStyle;
  actions: ActionView[];
}

export type Decision =
  | { type: "approve" }
  | { type: "edit"; args: Record<string, unknown> }
  | { type: "reject"; message?: string }
  | { type: "respond"; message: string };

const KNOWN: DecisionType[] = ["approve", "edit", "reject", "respond"];
// A review config without a usable allowed list: the JS middleware's default for `true`.
const DEFAULT_ALLOWED: DecisionType[] = ["approve", "edit", "reject"];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

/** Which key style a raw payload uses; snake_case wins when both are present (SDK-aliased copies). */
export function keyStyleOf(value: unknown): KeyStyle | null {
  if (!isObj(value)) return null;
  if ("action_requests" in value || "review_configs" in value) {
    if (("actionRequests" in value || "reviewConfigs" in value) && !("action_requests" in value)) return "camel";
    return "snake";
  }
  if ("actionRequests" in value || "reviewConfigs" in value) return "camel";
  return null;
}

/** Parses a HITL request; null when the value is not one. */
export function parseHitl(value: unknown, styleHint?: KeyStyle): HitlRequest | null {
  const style = styleHint ?? keyStyleOf(value);
  if (!style || !isObj(value)) return null;
  const requests = value.action_requests ?? value.actionRequests;
  if (!Array.isArray(requests)) return null;
  const configsRaw = value.review_configs ?? value.reviewConfigs;
  const configs: Obj[] = Array.isArray(configsRaw) ? configsRaw.filter(isObj) : [];
  const actions: ActionView[] = requests.filter(isObj).map((req, index) => {
    const name = String(req.name ?? req.action_name ?? "");
    const byIndex = configs[index];
    const nameOf = (c: Obj) => c.action_name ?? c.actionName;
    const config = byIndex && nameOf(byIndex) === name ? byIndex : (configs.find((c) => nameOf(c) === name) ?? byIndex);
    const allowedRaw = config ? (config.allowed_decisions ?? config.allowedDecisions) : undefined;
    const allowed = Array.isArray(allowedRaw)
      ? KNOWN.filter((d) => allowedRaw.includes(d))
      : DEFAULT_ALLOWED;
    const schema = config ? (config.args_schema ?? config.argsSchema) : undefined;
    const args = req.args ?? req.arguments;
    const pick = (snake: string, camel: string) => (config ? (config[snake] ?? config[camel]) : undefined);
    const reviewers = pick("reviewers", "reviewers");
    const required = pick("approvals_required", "approvalsRequired");
    const approvals = pick("approvals", "approvals");
    const created = pick("created_at", "createdAt");
    const expires = pick("expires_at", "expiresAt");
    const reason = pick("reason", "reason");
    const claimedBy = pick("claimed_by", "claimedBy");
    const claimExpires = pick("claim_expires_at", "claimExpiresAt");
    return {
      name,
      args: isObj(args) ? args : {},
      description: typeof req.description === "string" ? req.description : undefined,
      allowed,
      argsSchema: isObj(schema) ? schema : undefined,
      reviewers: Array.isArray(reviewers) ? reviewers.filter((r): r is string => typeof r === "string") : undefined,
      selfApproval: pick("self_approval", "selfApproval") !== false,
      approvalsRequired: typeof required === "number" && required >= 1 ? Math.floor(required) : 1,
      approvals: Array.isArray(approvals)
        ? approvals.filter(isObj).map((a) => ({ by: String(a.by ?? "?"), at: typeof a.at === "string" ? a.at : undefined }))
        : [],
      createdAt: typeof created === "string" ? created : undefined,
      expiresAt: typeof expires === "string" ? expires : undefined,
      reason: typeof reason === "string" ? reason : undefined,
      claimedBy: typeof claimedBy === "string" && claimedBy ? claimedBy : undefined,
      claimExpiresAt: typeof claimExpires === "string" ? claimExpires : undefined,
    };
  });
  return { style, actions };
}

/** The resume value for a HITL request: `{decisions: [...]}` in action order and in its key style. */
export function hitlResponse(request: HitlRequest, decisions: Decision[]): { decisions: Obj[] } {
  if (decisions.length !== request.actions.length) {
    throw new Error(`expected ${request.actions.length} decisions, got ${decisions.length}`);
  }
  return {
    decisions: decisions.map((d, i) => {
      switch (d.type) {
        case "approve":
          return { type: "approve" };
        case "edit": {
          const edited = { name: request.actions[i].name, args: d.args };
          return request.style === "camel" ? { type: "edit", editedAction: edited } : { type: "edit", edited_action: edited };
        }
        case "reject":
          return d.message ? { type: "reject", message: d.message } : { type: "reject" };
        case "respond":
          return { type: "respond", message: d.message };
      }
    }),
  };
}

export interface FormField {
  name: string;
  label: string;
  type: "string" | "number" | "integer" | "boolean" | "select" | "text";
  options?: string[];
  required: boolean;
  description?: string;
  defaultValue?: unknown;
}

export interface FormSpec {
  title?: string;
  description?: string;
  fields: FormField[];
  extra: Obj;
}

/** What every kind of form field has: its label (`label`, else `title`, else its name), `required`, `description`. */
export function fieldBasics(f: Obj, name: string): { label: string; required: boolean; description?: string } {
  return {
    label: typeof f.label === "string" ? f.label : typeof f.title === "string" ? f.title : name,
    required: f.required === true,
    description: typeof f.description === "string" ? f.description : undefined,
  };
}

/** Parses a tool's form interrupt (`{fields: [{name, type?, label?, ...}]}`); null when not a form. */
export function parseForm(value: unknown): FormSpec | null {
  if (!isObj(value) || !Array.isArray(value.fields) || value.fields.length === 0) return null;
  const fields: FormField[] = [];
  for (const f of value.fields) {
    if (!isObj(f) || typeof f.name !== "string" || !f.name) return null;
    const options = Array.isArray(f.options) ? f.options.map(String) : Array.isArray(f.enum) ? f.enum.map(String) : undefined;
    const t = String(f.type ?? "string");
    const type: FormField["type"] = options
      ? "select"
      : t === "boolean" || t === "number" || t === "integer" || t === "text"
        ? t
        : "string";
    fields.push({
      name: f.name,
      ...fieldBasics(f, f.name),
      type,
      options,
      defaultValue: f.default,
    });
  }
  const extra: Obj = {};
  for (const [k, v] of Object.entries(value)) {
    if (!["type", "title", "description", "fields"].includes(k)) extra[k] = v;
  }
  return {
    title: typeof value.title === "string" ? value.title : undefined,
    description: typeof value.description === "string" ? value.description : undefined,
    fields,
    extra,
  };
}

/** A free-form answer: JSON when it parses, otherwise the text itself. */
export function freeFormAnswer(text: string): { value: unknown; asJson: boolean } {
  const trimmed = text.trim();
  if (trimmed === "") return { value: "", asJson: false };
  try {
    return { value: JSON.parse(trimmed), asJson: true };
  } catch {
    return { value: text, asJson: false };
  }
}
