// The open thread's timeline: each run with its steps as a vertical list (ArrowUp/ArrowDown,
// Home/End move between steps; Enter or Space opens one), the run that resumed a pause linked
// to the run that paused, each decision with its reviewer and time. From any step's checkpoint:
// "Open state" shows the state there, "Fork from here" writes edited values as a new checkpoint
// whose parent is that one — a branch, shown in the checkpoint list below the runs.
import { useCallback, useEffect, useId, useRef, useState, type KeyboardEvent, type MouseEvent } from "react";
import { describeError } from "../api";
import {
  checkpointLanes,
  decisionText,
  downloadJson,
  fetchCheckpointState,
  fetchTimeline,
  forkFrom,
  shortId,
  stepTitle,
  timeText,
  type Run,
  type Step,
  type Timeline as TimelineData,
} from "../timeline";
import "../timeline.css";

interface Props {
  apiUrl: string;
  apiKey: string | null;
  threadId: string;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** Moves the focus between the timeline's step buttons with the arrow keys, Home and End. */
function moveFocus(e: KeyboardEvent<HTMLElement>) {
  const keys = ["ArrowDown", "ArrowUp", "Home", "End"];
  if (!keys.includes(e.key)) return;
  const target = e.target as HTMLElement;
  if (!target.matches("[data-step-toggle]")) return;
  const all = Array.from(e.currentTarget.querySelectorAll<HTMLElement>("[data-step-toggle]"));
  const at = all.indexOf(target);
  const next = e.key === "Home" ? 0 : e.key === "End" ? all.length - 1 : at + (e.key === "ArrowDown" ? 1 : -1);
  if (next < 0 || next >= all.length) return;
  e.preventDefault();
  all[next].focus();
}

function StepDetails({ step }: { step: Step }) {
  const parts: [string, unknown][] = [];
  if (step.kind === "model_call") {
    parts.push(["Input", step.input ? `${step.input.message_count} messages: ${step.input.message_ids.join(", ")}` : null]);
    parts.push(["Output", step.output]);
    parts.push(["Token usage", step.usage ?? "not reported"]);
  } else if (step.kind === "tool_call") {
    parts.push(["Arguments", step.args]);
    parts.push([step.status === "error" ? "Error" : "Result", step.status === "error" ? step.error : step.result]);
  } else if (step.kind === "interrupt") {
    parts.push(["Interrupt", step.interrupts?.map((i) => i.value)]);
    if (step.not_gated?.length) parts.push(["Not reviewed in this turn", step.not_gated.join(", ")]);
  } else if (step.kind === "middleware") {
    if (step.review === "not_asked") parts.push(["Calls not reviewed", `${step.calls_not_reviewed?.join(", ")} (why is not recorded)`]);
    parts.push(["Writes", step.writes]);
  } else {
    parts.push(["Writes", step.values ?? step.writes]);
  }
  if (step.error !== undefined && step.kind !== "tool_call") parts.push(["Error", step.error]);
  return (
    <dl className="tl-details">
      {parts.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>
            <pre className="args small">{typeof value === "string" ? value : json(value)}</pre>
          </dd>
        </div>
      ))}
      <div>
        <dt>Checkpoint</dt>
        <dd className="mono">{step.checkpoint_id}</dd>
      </div>
    </dl>
  );
}

function Decisions({ step }: { step: Step }) {
  if (!step.decisions?.length) return <p className="muted small">No decision yet.</p>;
  return (
    <ul className="tl-decisions">
      {step.decisions.map((d) => (
        <li key={d.audit_id} data-testid="timeline-decision" data-outcome={d.outcome}>
          <span className="tl-decision-what">{d.kind === "state_write" ? "state written" : decisionText(d.decided)}</span>{" "}
          by <strong data-testid="timeline-reviewer">{d.decided_by ?? "the local user"}</strong> at <time dateTime={d.received_at ?? undefined}>{timeText(d.received_at)}</time>{" "}
          <span className={`badge badge-${d.outcome === "applied" ? "approve" : d.outcome === "pending" || d.outcome === "recorded" ? "edit" : "reject"}`}>{d.outcome}</span>
          {d.message && <span className="muted small"> {d.message}</span>}
        </li>
      ))}
    </ul>
  );
}

interface TravelProps extends Props {
  checkpointId: string;
  onForked: (checkpointId: string) => void;
}

/** "Open state" and "Fork from here" for one checkpoint. */
function TimeTravel({ apiUrl, apiKey, threadId, checkpointId, onForked }: TravelProps) {
  const [state, setState] = useState<unknown>(undefined);
  const [forking, setForking] = useState(false);
  const [values, setValues] = useState("");
  const [asNode, setAsNode] = useState("");
  const [error, setError] = useState("");
  const id = useId();

  const open = async () => {
    setError("");
    try {
      const s = await fetchCheckpointState(apiUrl, apiKey, threadId, checkpointId);
      setState(s.values);
      return s.values;
    } catch (e) {
      setError(describeError(e, apiUrl));
      return undefined;
    }
  };
  const startFork = async () => {
    const v = state === undefined ? await open() : state;
    setValues(json(v ?? {}));
    setForking(true);
  };
  const submit = async () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(values);
    } catch {
      setError("The values are not valid JSON.");
      return;
    }
    try {
      const created = await forkFrom(apiUrl, apiKey, threadId, checkpointId, parsed, asNode.trim());
      setForking(false);
      onForked(created);
    } catch (e) {
      setError(describeError(e, apiUrl));
    }
  };

  return (
    <div className="tl-travel">
      <div className="actions">
        <button className="btn small" onClick={() => void open()} aria-expanded={state !== undefined}>
          Open state
        </button>
        <button className="btn small" onClick={() => void startFork()}>
          Fork from here
        </button>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {state !== undefined && !forking && (
        <div data-testid="checkpoint-state">
          <p className="muted small">State at checkpoint {shortId(checkpointId)}</p>
          <pre className="args small">{json(state)}</pre>
        </div>
      )}
      {forking && (
        <div className="editor" data-testid="fork-editor">
          <label htmlFor={`fork-values-${id}`}>Values of the fork (merged into the state at {shortId(checkpointId)} by the channels' reducers)</label>
          <textarea id={`fork-values-${id}`} className="code" rows={10} value={values} onChange={(e) => setValues(e.target.value)} />
          <label htmlFor={`fork-node-${id}`}>As node (optional: the node the values are written as; its edges decide what runs next)</label>
          <input id={`fork-node-${id}`} type="text" value={asNode} onChange={(e) => setAsNode(e.target.value)} />
          <div className="actions">
            <button className="btn primary small" onClick={() => void submit()}>
              Create fork
            </button>
            <button className="btn small" onClick={() => setForking(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
    </div>
  );
}

function StepItem({ step, travel }: { step: Step; travel: Omit<TravelProps, "checkpointId"> }) {
  const [open, setOpen] = useState(false);
  const detailsId = useId();
  const when = step.kind === "interrupt" ? step.at : step.ended_at;
  const failed = step.error !== undefined || step.status === "error";
  return (
    <li className={`tl-step tl-${step.kind}${failed ? " tl-failed" : ""}`} data-testid="timeline-step" data-kind={step.kind}>
      <button className="tl-toggle" data-step-toggle aria-expanded={open} aria-controls={detailsId} onClick={() => setOpen(!open)}>
        <span className="tl-title">{stepTitle(step)}</span>
        <span className="muted small">
          step {step.step}
          {step.duration_ms != null ? ` · ${step.duration_ms} ms` : ""}
          {when ? ` · ${timeText(when)}` : ""}
        </span>
      </button>
      {step.kind === "interrupt" && <Decisions step={step} />}
      {step.kind === "middleware" && step.review === "not_asked" && <p className="muted small">Not reviewed: {step.calls_not_reviewed?.join(", ")}</p>}
      <div id={detailsId} hidden={!open}>
        {open && (
          <>
            <StepDetails step={step} />
            <TimeTravel {...travel} checkpointId={step.checkpoint_id} />
          </>
        )}
      </div>
    </li>
  );
}

function RunItem({ run, travel }: { run: Run; travel: Omit<TravelProps, "checkpointId"> }) {
  return (
    <li className="tl-run" id={`run-${run.run_id}`} data-testid="timeline-run" data-status={run.status} data-paused={run.paused_at_checkpoint_id ? "true" : "false"}>
      <h3>
        Run {shortId(run.run_id)} <span className={`badge tl-status-${run.status}`}>{run.status}</span>
      </h3>
      <p className="muted small">
        {run.kind === "resume" ? "a decision" : run.kind === "input" ? "new input" : "continued"}
        {run.started_by ? ` · started by ${run.started_by}` : ""}
        {run.decided_by ? ` · decided by ${run.decided_by}` : ""} · {timeText(run.created_at)}
      </p>
      {run.resumed_run_id && (
        <p className="tl-link" data-testid="timeline-resumes">
          Resumes <a href={`#run-${run.resumed_run_id}`} onClick={(e) => jump(e, run.resumed_run_id!)}>run {shortId(run.resumed_run_id)}</a>, which paused at checkpoint {shortId(run.started_from_checkpoint_id)}
        </p>
      )}
      {run.paused_at_checkpoint_id && (
        <p className="tl-link" data-testid="timeline-paused">
          Paused for review at checkpoint {shortId(run.paused_at_checkpoint_id)}
        </p>
      )}
      {run.resumed_by_run_ids.map((id) => (
        <p className="tl-link" key={id} data-testid="timeline-resumed-by">
          Resumed by <a href={`#run-${id}`} onClick={(e) => jump(e, id)}>run {shortId(id)}</a>
        </p>
      ))}
      {run.error != null && <p className="error">{json(run.error)}</p>}
      <ol className="tl-steps">
        {run.steps.map((s, i) => (
          <StepItem key={`${s.checkpoint_id}-${s.kind}-${i}`} step={s} travel={travel} />
        ))}
        {run.steps.length === 0 && <li className="muted small">No step stored for this run.</li>}
      </ol>
    </li>
  );
}

/** Scrolls to a run and focuses its first step, without changing the console's route. */
function jump(e: MouseEvent, runId: string) {
  e.preventDefault();
  const target = document.getElementById(`run-${runId}`);
  target?.scrollIntoView({ block: "start" });
  target?.querySelector<HTMLElement>("[data-step-toggle]")?.focus();
}

export function Timeline({ apiUrl, apiKey, threadId }: Props) {
  const [data, setData] = useState<TimelineData | null>(null);
  const [error, setError] = useState("");
  const [forked, setForked] = useState("");
  const live = useRef(true);

  const load = useCallback(async () => {
    try {
      const t = await fetchTimeline(apiUrl, apiKey, threadId);
      if (live.current) {
        setData(t);
        setError("");
      }
    } catch (e) {
      if (live.current) setError(describeError(e, apiUrl));
    }
  }, [apiUrl, apiKey, threadId]);

  useEffect(() => {
    live.current = true;
    void load();
    return () => {
      live.current = false;
    };
  }, [load]);

  const exportJson = async () => {
    try {
      downloadJson(await fetchTimeline(apiUrl, apiKey, threadId), `timeline-${threadId}.json`);
    } catch (e) {
      setError(describeError(e, apiUrl));
    }
  };
  const exportOtel = async () => {
    try {
      downloadJson(await fetchTimeline(apiUrl, apiKey, threadId, "otel"), `timeline-${threadId}.otel.json`);
    } catch (e) {
      setError(describeError(e, apiUrl));
    }
  };
  const travel = {
    apiUrl,
    apiKey,
    threadId,
    onForked: (id: string) => {
      setForked(id);
      void load();
    },
  };
  const lanes = data ? checkpointLanes(data.checkpoints) : new Map<string, number>();
  const updates = new Map((data?.state_updates ?? []).map((u) => [u.checkpoint_id, u]));

  return (
    <section className="timeline" aria-labelledby="timeline-title" data-testid="timeline">
      <div className="tl-head">
        <h2 id="timeline-title">Timeline</h2>
        <div className="actions">
          <button className="btn small" onClick={() => void load()}>
            Refresh
          </button>
          <button className="btn small" onClick={() => void exportJson()}>
            Export JSON
          </button>
          <button className="btn small" onClick={() => void exportOtel()}>
            Export OpenTelemetry
          </button>
        </div>
      </div>
      {error && (
        <div className="alert" role="alert">
          {error}
        </div>
      )}
      {forked && (
        <p className="notice" role="status" data-testid="fork-created">
          Fork created: checkpoint {shortId(forked)}. It is a branch in the checkpoints below; the thread continues from it.
        </p>
      )}
      {!error && !data && <p className="empty muted">Loading…</p>}
      {data && (
        <>
          <ol className="tl-runs" onKeyDown={moveFocus} aria-label="Runs and their steps">
            {data.runs.map((r) => (
              <RunItem key={r.run_id} run={r} travel={travel} />
            ))}
            {data.runs.length === 0 && <li className="muted">No runs on this thread yet.</li>}
          </ol>
          <h3 className="tl-section">Checkpoints and branches</h3>
          <ol className="tl-checkpoints" data-testid="timeline-checkpoints">
            {data.checkpoints.map((c) => {
              const lane = lanes.get(c.checkpoint_id) ?? 0;
              const update = updates.get(c.checkpoint_id);
              return (
                <li key={c.checkpoint_id} className={`tl-checkpoint lane-${Math.min(lane, 4)}`} data-testid="timeline-checkpoint" data-branch={c.branch ? "true" : "false"} data-lane={lane}>
                  <span className="mono">{shortId(c.checkpoint_id)}</span> step {c.step} · {c.source}
                  {c.run_id ? ` · run ${shortId(c.run_id)}` : ""}
                  {c.interrupted ? " · paused here" : ""}
                  {c.branch && (
                    <strong className="tl-branch" data-testid="timeline-branch">
                      {" "}
                      · branch {lane} from {shortId(c.parent_checkpoint_id)}
                    </strong>
                  )}
                  {update && ` · state written${update.by ? ` by ${update.by}` : ""}`}
                  <span className="muted small"> · {timeText(c.created_at)}</span>
                </li>
              );
            })}
          </ol>
          <details className="tl-unknown">
            <summary>What the timeline cannot know</summary>
            <ul>
              {data.unknown.map((u) => (
                <li key={u}>{u}</li>
              ))}
            </ul>
          </details>
        </>
      )}
    </section>
  );
}
