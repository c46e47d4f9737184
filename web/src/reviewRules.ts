// Who may decide a pending action, derived in the browser from the rules its review config
// carries (`reviewers`, `self_approval`, `approvals_required`, `approvals`) and the signed-in
// identity, so a card can say why instead of offering buttons the server would refuse (403).
// The server stays the judge: what cannot be told here is said, and the buttons stay.
import type { ActionView, DecisionType } from "./hitl";

export interface Viewer {
  id: string;
  roles: string[];
}

export interface Verdict {
  /** The decisions this person may take (a subset of the action's allowed ones). */
  may: DecisionType[];
  /** Why some or all decisions are not theirs, in a sentence; empty when all are. */
  why: string;
}

// The server's default when a review config names no reviewers.
const DEFAULT_REVIEWERS = ["owner", "role:reviewer", "role:admin"];

function ruleText(rule: string): string {
  if (rule === "owner") return "the thread's owner";
  if (rule.startsWith("role:")) return `the ${rule.slice(5)} role`;
  if (rule.startsWith("user:")) return rule.slice(5);
  return rule;
}

/** "a, b or c". */
function either(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

/**
 * What `viewer` may decide on `action` of a thread owned by `owner` (null: not known). Without
 * a viewer (a server without sign-in) everything the policy allows.
 */
export function verdictFor(action: ActionView, viewer: Viewer | null, owner: string | null): Verdict {
  const allowed = action.allowed;
  if (!viewer) return { may: allowed, why: "" };
  const rules = action.reviewers ?? DEFAULT_REVIEWERS;
  const isOwner = owner === null ? null : owner === viewer.id;
  const matches = (rule: string): boolean | null => {
    if (rule === "owner") return isOwner;
    if (rule.startsWith("role:")) return viewer.roles.includes(rule.slice(5));
    if (rule.startsWith("user:")) return viewer.id === rule.slice(5);
    return false;
  };
  const results = rules.map(matches);
  if (!results.includes(true)) {
    if (results.includes(null)) {
      // Only the owner rule could let them in, and who owns the thread is not known here.
      return { may: allowed, why: "The console cannot tell whether you own this thread; the server decides whether your decision counts." };
    }
    return { may: [], why: `You may not decide this: it is for ${either(rules.map(ruleText))} (rule reviewers).` };
  }
  let may = allowed;
  const notes: string[] = [];
  if (!action.selfApproval && isOwner === true && (may.includes("approve") || may.includes("edit"))) {
    may = may.filter((d) => d !== "approve" && d !== "edit");
    notes.push("You started this thread, so you may not approve or edit its action (rule self_approval is off)" + (may.length ? "; you may reject it." : "."));
  }
  if (action.approvalsRequired > 1 && action.approvals.some((a) => a.by === viewer.id) && may.includes("approve")) {
    may = may.filter((d) => d !== "approve");
    const left = action.approvalsRequired - action.approvals.length;
    notes.push(`You approved this already; it needs ${left} more approval${left === 1 ? "" : "s"} from another reviewer.`);
  }
  return { may, why: notes.join(" ") };
}

/** "1 of 2 approvals" where a several-person rule applies; "" otherwise. */
export function approvalsText(action: ActionView): string {
  if (action.approvalsRequired <= 1) return "";
  return `${action.approvals.length} of ${action.approvalsRequired} approvals`;
}
