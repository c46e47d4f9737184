// The text a reviewer gives with a decision: an optional reason with a reject (the agent sees
// it), or the tool's result with a respond. Shared by the action card and the effect-uncertain
// card, which word the labels and buttons for their own question.
import type { RefObject } from "react";
import type { Decision } from "../hitl";

export type MessageMode = "reject" | "respond";

interface Props {
  mode: MessageMode;
  /** The field's label and the submit button's text, per mode. */
  label: Record<MessageMode, string>;
  submit: Record<MessageMode, string>;
  text: string;
  onText: (text: string) => void;
  fieldId: string;
  fieldRef: RefObject<HTMLTextAreaElement>;
  disabled: boolean;
  onDecide: (d: Decision) => void;
  onCancel: () => void;
}

export function MessageForm({ mode, label, submit, text, onText, fieldId, fieldRef, disabled, onDecide, onCancel }: Props) {
  return (
    <form
      className="editor"
      onSubmit={(e) => {
        e.preventDefault();
        if (mode === "reject") onDecide(text.trim() ? { type: "reject", message: text.trim() } : { type: "reject" });
        else if (text.trim()) onDecide({ type: "respond", message: text });
      }}
    >
      <label htmlFor={fieldId}>{label[mode]}</label>
      <textarea id={fieldId} ref={fieldRef} value={text} rows={3} onChange={(e) => onText(e.target.value)} />
      <div className="actions">
        <button type="submit" className={`btn ${mode === "reject" ? "danger" : "primary"}`} disabled={disabled || (mode === "respond" && !text.trim())}>
          {submit[mode]}
        </button>
        <button type="button" className="btn" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
