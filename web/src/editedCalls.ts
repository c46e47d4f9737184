// What an edited tool call ran with. The conversation keeps the model's proposal (the AI
// message's tool call); the arguments that ran are the reviewer's edit, which the server's
// audit log keeps with what was shown (GET /audit?thread_id=: `shown` action requests and the
// `decided` edits of the decisions that were applied).
import { keyStyleOf, parseHitl } from "./hitl";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);

export interface AuditDecision {
  shown?: Record<string, { value?: unknown }[]>;
  decided?: unknown;
  outcome?: string;
  kind?: string;
}

export interface EditedCall {
  name: string;
  proposed: Obj;
  ran: Obj;
}

/** JSON with object keys sorted, so equal values compare equal whatever their key order. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (isObj(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
  return JSON.stringify(value ?? null);
}

/** The key of a proposed call: its tool name and arguments. */
export const callKey = (name: string, args: unknown): string => `${name}\u0000${canonical(args)}`;

/** Every applied edit of a thread's audit entries, by the proposed call it replaced. */
export function editedCalls(entries: AuditDecision[]): Map<string, EditedCall> {
  const out = new Map<string, EditedCall>();
  for (const e of entries) {
    if (e.outcome !== "applied" || (e.kind && e.kind !== "decision")) continue;
    const decisions = isObj(e.decided) && Array.isArray(e.decided.decisions) ? e.decided.decisions : null;
    if (!decisions) continue;
    for (const i of Object.values(e.shown ?? {}).flat()) {
      const hitl = parseHitl(i.value, keyStyleOf(i.value) ?? undefined);
      if (!hitl || hitl.actions.length !== decisions.length) continue;
      hitl.actions.forEach((a, k) => {
        const d = decisions[k];
        const edited = isObj(d) && d.type === "edit" ? (d.edited_action ?? d.editedAction) : undefined;
        if (!isObj(edited) || !isObj(edited.args)) return;
        out.set(callKey(a.name, a.args), { name: String(edited.name ?? a.name), proposed: a.args, ran: edited.args });
      });
    }
  }
  return out;
}

export interface DiffLine {
  kind: "same" | "removed" | "added";
  text: string;
}

/** The proposal against what ran, one line per top-level argument, removed before added. */
export function argsDiff(proposed: Obj, ran: Obj): DiffLine[] {
  const lines: DiffLine[] = [];
  const keys = [...Object.keys(proposed), ...Object.keys(ran).filter((k) => !(k in proposed))];
  for (const k of keys) {
    const before = k in proposed ? `${k}: ${JSON.stringify(proposed[k])}` : null;
    const after = k in ran ? `${k}: ${JSON.stringify(ran[k])}` : null;
    if (before !== null && after !== null && canonical(proposed[k]) === canonical(ran[k])) lines.push({ kind: "same", text: before });
    else {
      if (before !== null) lines.push({ kind: "removed", text: before });
      if (after !== null) lines.push({ kind: "added", text: after });
    }
  }
  return lines;
}
