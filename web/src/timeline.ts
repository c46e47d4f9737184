// The run timeline of a thread (GET /threads/{id}/timeline) and time travel from it: a
// checkpoint's state (GET /threads/{id}/state/{checkpoint_id}) and a fork from a checkpoint
// (POST /threads/{id}/state with `checkpoint` and edited `values`). docs/timeline.md has the shape.
import { apiFetch } from "./session";

export type Decision = {
  audit_id: number;
  kind: "decision" | "refusal" | "state_write";
  decided_by: string | null;
  received_at: string | null;
  decided: unknown;
  outcome: string;
  message: string | null;
  run_id: string | null;
};

export type Step = {
  kind: "input" | "model_call" | "tool_call" | "middleware" | "interrupt" | "node";
  node: string;
  task_id: string;
  step: number;
  checkpoint_id: string;
  ran_from_checkpoint_id?: string;
  started_at?: string | null;
  ended_at?: string | null;
  duration_ms?: number | null;
  at?: string | null;
  error?: unknown;
  // model_call
  input?: { message_count: number; message_ids: (string | null)[] };
  output?: { content?: unknown; tool_calls?: { name?: string; args?: unknown }[] };
  usage?: Record<string, unknown> | null;
  model?: string | null;
  // tool_call
  name?: string | null;
  args?: unknown;
  result?: unknown;
  status?: string;
  answered_by?: "tool" | "review";
  // middleware
  review?: "answered" | "not_asked" | "nothing_to_review";
  calls_not_reviewed?: string[];
  // interrupt
  interrupts?: { id: string; value: unknown }[];
  gated?: { name: string; args: unknown }[];
  not_gated?: string[];
  decisions?: Decision[];
  writes?: unknown;
  values?: unknown;
};

export type Run = {
  run_id: string;
  assistant_id: string;
  status: string;
  kind: "input" | "resume" | "continue";
  created_at: string | null;
  updated_at: string | null;
  started_by: string | null;
  decided_by: string | null;
  paused_at_checkpoint_id: string | null;
  resumed_run_id: string | null;
  resumed_by_run_ids: string[];
  started_from_checkpoint_id: string | null;
  error: unknown;
  steps: Step[];
};

export type CheckpointRow = {
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  created_at: string | null;
  source: string;
  step: number;
  run_id: string | null;
  next: string[];
  interrupted: boolean;
  branch: boolean;
};

export type StateUpdate = {
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  created_at: string | null;
  fork: boolean;
  by: string | null;
  request: unknown;
};

export type Timeline = {
  thread_id: string;
  status: string;
  runs: Run[];
  steps_outside_runs: Step[];
  checkpoints: CheckpointRow[];
  state_updates: StateUpdate[];
  unknown: string[];
};

async function readJson<T>(r: Response): Promise<T> {
  if (!r.ok) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  return (await r.json()) as T;
}

const threadPath = (threadId: string) => `/threads/${encodeURIComponent(threadId)}`;

export async function fetchTimeline(apiUrl: string, apiKey: string | null, threadId: string, format: "json" | "otel" = "json"): Promise<Timeline> {
  const query = format === "otel" ? "?format=otel" : "";
  return readJson(await apiFetch(apiUrl, apiKey, `${threadPath(threadId)}/timeline${query}`));
}

/** The values at a checkpoint. */
export async function fetchCheckpointState(apiUrl: string, apiKey: string | null, threadId: string, checkpointId: string): Promise<{ values: unknown; next: string[] }> {
  return readJson(await apiFetch(apiUrl, apiKey, `${threadPath(threadId)}/state/${encodeURIComponent(checkpointId)}`));
}

/** A new checkpoint whose parent is `checkpointId`, as if `asNode` (or the inferred node) wrote `values`. */
export async function forkFrom(apiUrl: string, apiKey: string | null, threadId: string, checkpointId: string, values: unknown, asNode: string): Promise<string> {
  const body: Record<string, unknown> = { values, checkpoint: { checkpoint_id: checkpointId } };
  if (asNode) body.as_node = asNode;
  const r = await apiFetch(apiUrl, apiKey, `${threadPath(threadId)}/state`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return (await readJson<{ checkpoint: { checkpoint_id: string } }>(r)).checkpoint.checkpoint_id;
}

/** Saves `data` as a JSON file through the browser's download. */
export function downloadJson(data: unknown, fileName: string): void {
  const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/**
 * The lane of each checkpoint: 0 for the line the thread started on; a checkpoint whose parent is
 * not the one written just before it (a fork) opens the next lane, and its children stay in it.
 */
export function checkpointLanes(rows: CheckpointRow[]): Map<string, number> {
  const lanes = new Map<string, number>();
  let next = 1;
  for (const row of rows) {
    const parentLane = row.parent_checkpoint_id ? lanes.get(row.parent_checkpoint_id) : undefined;
    lanes.set(row.checkpoint_id, row.branch ? next++ : (parentLane ?? 0));
  }
  return lanes;
}

export const shortId = (id: string | null | undefined) => (id ? `…${id.slice(-8)}` : "");

export function timeText(iso: string | null | undefined): string {
  if (!iso) return "";
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : new Date(t).toLocaleString();
}

/** What a decision said, in a few words ("approve", "reject: too risky", "edit send_email"). */
export function decisionText(decided: unknown): string {
  const d = decided as { decisions?: Record<string, unknown>[] } | null;
  if (!d || typeof d !== "object" || !Array.isArray(d.decisions)) return JSON.stringify(decided);
  return d.decisions
    .map((x) => {
      const edited = (x.edited_action ?? x.editedAction) as { name?: string } | undefined;
      let text = String(x.type ?? "?");
      if (edited) text += ` ${edited.name ?? ""}`;
      if (typeof x.message === "string") text += `: ${x.message}`;
      return text;
    })
    .join("; ");
}

export function stepTitle(step: Step): string {
  switch (step.kind) {
    case "model_call":
      return `Model call${step.model ? ` (${step.model})` : ""}`;
    case "tool_call":
      return `Tool ${step.name ?? "?"}${step.answered_by === "review" ? " answered by the review" : ""}`;
    case "interrupt":
      return step.gated?.length ? `Review asked: ${step.gated.map((g) => g.name).join(", ")}` : "Interrupt";
    case "middleware":
      return `Middleware ${step.node}`;
    case "input":
      return "Input";
    default:
      return `Node ${step.node}`;
  }
}
