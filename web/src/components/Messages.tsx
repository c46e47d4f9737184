// The conversation: human and AI turns, each tool call shown as a step with its result, and
// the form cards people resolved (kept in the thread as AI messages).
import { resolvedCardOf, type ResolvedCard } from "../forms/cardForm";
import { FactList } from "./FactList";
import { argsDiff, callKey, type EditedCall } from "../editedCalls";

type Msg = Record<string, unknown>;

export function messageType(m: Msg): string {
  if (typeof m.type === "string") return m.type.replace(/MessageChunk$|Message$/, "").toLowerCase();
  const getType = (m as { getType?: () => string }).getType;
  return typeof getType === "function" ? getType.call(m) : "unknown";
}

export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (typeof b === "string" ? b : b && typeof b === "object" && typeof (b as Msg).text === "string" ? (b as Msg).text : ""))
      .join("");
  }
  return content == null ? "" : JSON.stringify(content);
}

interface ToolCall {
  id?: string;
  name: string;
  args: unknown;
}

function toolCallsOf(m: Msg): ToolCall[] {
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
  return calls.filter((c): c is ToolCall => !!c && typeof c === "object" && typeof (c as Msg).name === "string");
}

/** `author`: who wrote the human turns ("You" unless the thread is another person's). */
interface ListProps {
  messages: Msg[];
  streaming: boolean;
  author?: string;
  /** Calls a reviewer edited, by the proposed call (editedCalls.ts). */
  edits?: Map<string, EditedCall>;
}

export function MessageList({ messages, streaming, author = "You", edits }: ListProps) {
  const results = new Map<string, Msg>();
  for (const m of messages) if (messageType(m) === "tool" && typeof m.tool_call_id === "string") results.set(m.tool_call_id, m);
  const shownResults = new Set<string>();
  const last = messages[messages.length - 1];
  return (
    <ol className="messages" aria-live="polite" aria-busy={streaming}>
      {messages.map((m, i) => {
        const type = messageType(m);
        const key = typeof m.id === "string" ? m.id : `m${i}`;
        if (type === "human") {
          return (
            <li key={key} className="msg human" data-testid="msg-human">
              <span className="who">{author}</span>
              <div className="bubble">{contentText(m.content)}</div>
            </li>
          );
        }
        const resolved = type === "ai" ? resolvedCardOf(m) : null;
        if (resolved) {
          return (
            <li key={key} className="msg ai" data-testid="msg-card">
              <span className="who">{resolved.by ? `Form · ${resolved.by}` : "Form"}</span>
              <ResolvedCardView card={resolved} />
            </li>
          );
        }
        if (type === "ai") {
          const text = contentText(m.content);
          const calls = toolCallsOf(m);
          return (
            <li key={key} className="msg ai" data-testid="msg-ai">
              <span className="who">Agent</span>
              {text && (
                <div className="bubble">
                  {text}
                  {streaming && m === last && <span className="cursor" aria-hidden="true" />}
                </div>
              )}
              {calls.map((c, j) => {
                const r = c.id ? results.get(c.id) : undefined;
                if (r && c.id) shownResults.add(c.id);
                return <ToolStep key={c.id ?? j} call={c} result={r} edit={r ? edits?.get(callKey(c.name, c.args)) : undefined} />;
              })}
            </li>
          );
        }
        if (type === "tool") {
          if (typeof m.tool_call_id === "string" && shownResults.has(m.tool_call_id)) return null;
          return (
            <li key={key} className="msg tool">
              <ToolStep call={{ name: String(m.name ?? "tool"), args: undefined }} result={m} />
            </li>
          );
        }
        return (
          <li key={key} className="msg other">
            <span className="who">{type}</span>
            <div className="bubble">{contentText(m.content)}</div>
          </li>
        );
      })}
    </ol>
  );
}

function ToolStep({ call, result, edit }: { call: ToolCall; result?: Msg; edit?: EditedCall }) {
  const failed = result?.status === "error";
  const state = result ? (failed ? "error" : "done") : "pending";
  return (
    <div className={`step step-${state}`} data-testid="tool-step" data-tool={call.name}>
      <div className="step-head">
        <span className="step-icon" aria-hidden="true">{state === "done" ? "✓" : state === "error" ? "✕" : "…"}</span>
        <span className="tool-name">{call.name}</span>
        <span className="muted">{state === "pending" ? "not run yet" : failed ? "failed or rejected" : "ran"}</span>
      </div>
      {edit ? (
        <div className="edited" data-testid="edited-call">
          <div>
            <h4 className="small">Ran with (edited by the reviewer)</h4>
            <pre className="args small" data-testid="ran-args">{JSON.stringify(edit.ran, null, 2)}</pre>
          </div>
          <div>
            <h4 className="small">Proposed by the agent, against what ran</h4>
            <pre className="args small diff" data-testid="proposed-diff">
              {argsDiff(call.args as Record<string, unknown>, edit.ran).map((l, i) => (
                <span key={i} className={`diff-${l.kind}`}>
                  {l.kind === "removed" ? "- " : l.kind === "added" ? "+ " : "  "}
                  {l.text}
                  {"\n"}
                </span>
              ))}
            </pre>
          </div>
        </div>
      ) : call.args !== undefined && (
        <details className="step-args">
          <summary>Arguments</summary>
          <pre className="args small">{JSON.stringify(call.args, null, 2)}</pre>
        </details>
      )}
      {result && (
        <div className="step-result" data-testid="tool-result">
          {contentText(result.content)}
        </div>
      )}
    </div>
  );
}

function ResolvedCardView({ card }: { card: ResolvedCard }) {
  const entries = Object.entries(card.values);
  return (
    <div className={`resolved-card ${card.approved ? "approved" : "declined"}`} data-testid="resolved-card" data-approved={String(card.approved)}>
      <div className="step-head">
        <span className="tool-name">{card.title ?? card.formType}</span>
        <span className={`badge badge-${card.approved ? "approve" : "reject"}`}>{card.approved ? "Approved" : "Declined"}</span>
      </div>
      {card.approved && entries.length > 0 && <FactList facts={card.values} />}
    </div>
  );
}
