// A scripted agent for the JS reference Agent Server, used to develop and test the review
// console before (and beside) `tollgate serve`. No LLM: the "model" picks its reply from the
// last human message and streams it token by token. HITL follows the newest LangChain Python
// semantics (approve / edit / reject / respond, order preserved), raised as one batched
// interrupt per model turn; `ask_user` raises a custom form interrupt from inside the tool.
//
// Keywords in the human message:
//   "email"  -> send_email (approve, edit, reject, respond; args_schema given)
//   "delete" -> delete_file (approve, reject)
//   "both"   -> send_email and delete_file in one turn
//   "book"   -> book_flight, which asks a form inside the tool
//   "colour" -> pick_colour, which asks a plain question (no form) inside the tool
//   "camel"  -> the interrupt uses camelCase keys (actionRequests, reviewConfigs, ...)
//   anything else -> a plain streamed answer
import { StateGraph, MessagesAnnotation, START, END, interrupt } from "@langchain/langgraph";
import { AIMessage, AIMessageChunk, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";

type Call = { id: string; name: string; args: Record<string, unknown> };

function textOf(m: BaseMessage): string {
  return typeof m.content === "string" ? m.content : JSON.stringify(m.content);
}

function lastHuman(messages: BaseMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].getType() === "human") return textOf(messages[i]).toLowerCase();
  }
  return "";
}

function plan(messages: BaseMessage[]): { text: string; calls: Call[] } {
  const last = messages[messages.length - 1];
  if (last && last.getType() === "tool") {
    const results = [];
    for (let i = messages.length - 1; i >= 0 && messages[i].getType() === "tool"; i--) results.unshift(textOf(messages[i]));
    return { text: `All done. ${results.join(" ")}`, calls: [] };
  }
  const said = lastHuman(messages);
  const n = messages.length;
  const email: Call = { id: `call_email_${n}`, name: "send_email", args: { to: "alice@example.com", subject: "Quarterly report", body: "Hi Alice, the report is attached." } };
  const del: Call = { id: `call_delete_${n}`, name: "delete_file", args: { path: "/tmp/old-report.pdf" } };
  const book: Call = { id: `call_book_${n}`, name: "book_flight", args: { destination: "Lisbon" } };
  if (said.includes("both")) return { text: "I will email Alice and clean up the old file.", calls: [email, del] };
  if (said.includes("email")) return { text: "I will send the email to Alice.", calls: [email] };
  if (said.includes("delete")) return { text: "I will delete the old report.", calls: [del] };
  if (said.includes("colour")) return { text: "Let me ask.", calls: [{ id: `call_colour_${n}`, name: "pick_colour", args: {} }] };
  if (said.includes("book")) return { text: "Let me book that flight.", calls: [book] };
  return { text: `You said: ${said}. How can I help further?`, calls: [] };
}

class ScriptedChatModel extends BaseChatModel {
  _llmType() { return "scripted-console"; }
  async *_streamResponseChunks(messages: BaseMessage[], _o: this["ParsedCallOptions"], run?: CallbackManagerForLLMRun) {
    const { text, calls } = plan(messages);
    const words = text.split(/(?<= )/);
    for (let i = 0; i < words.length; i++) {
      const last = i === words.length - 1;
      const chunk = new AIMessageChunk({
        content: words[i],
        tool_call_chunks: last ? calls.map((c, index) => ({ name: c.name, args: JSON.stringify(c.args), id: c.id, index, type: "tool_call_chunk" as const })) : [],
      });
      const cg = new ChatGenerationChunk({ message: chunk, text: words[i] });
      await new Promise((r) => setTimeout(r, 15));
      yield cg;
      await run?.handleLLMNewToken(words[i], undefined, undefined, undefined, undefined, { chunk: cg });
    }
  }
  async _generate(m: BaseMessage[], o: this["ParsedCallOptions"], run?: CallbackManagerForLLMRun): Promise<ChatResult> {
    let acc: ChatGenerationChunk | undefined;
    for await (const c of this._streamResponseChunks(m, o, run)) acc = acc ? acc.concat(c) : c;
    return { generations: acc ? [{ text: acc.text, message: acc.message }] : [] };
  }
}

const model = new ScriptedChatModel({});

const emailSchema = {
  type: "object",
  properties: {
    to: { type: "string", format: "email" },
    subject: { type: "string", minLength: 1 },
    body: { type: "string" },
  },
  required: ["to", "subject"],
  additionalProperties: false,
};

const policies: Record<string, { allowed: string[]; schema?: object }> = {
  send_email: { allowed: ["approve", "edit", "reject", "respond"], schema: emailSchema },
  delete_file: { allowed: ["approve", "reject"] },
};

async function agent(state: typeof MessagesAnnotation.State) {
  const msg = await model.invoke(state.messages);
  return { messages: [msg] };
}

function pendingCalls(messages: BaseMessage[]): { ai: AIMessage; calls: Call[] } | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.getType() !== "ai") continue;
    const ai = m as AIMessage;
    const answered = new Set(messages.slice(i + 1).filter((x) => x.getType() === "tool").map((x) => (x as ToolMessage).tool_call_id));
    const calls = (ai.tool_calls ?? []).filter((c) => !answered.has(c.id ?? "")).map((c) => ({ id: c.id ?? "", name: c.name, args: c.args }));
    return calls.length ? { ai, calls } : undefined;
  }
  return undefined;
}

function review(state: typeof MessagesAnnotation.State) {
  const pending = pendingCalls(state.messages);
  if (!pending) return {};
  const gated = pending.calls.filter((c) => policies[c.name]);
  if (!gated.length) return {};
  const camel = lastHuman(state.messages).includes("camel");
  const describe = (c: Call) => `Tool execution requires approval\n\nTool: ${c.name}\nArgs: ${JSON.stringify(c.args, null, 2)}`;
  const payload = camel
    ? {
        actionRequests: gated.map((c) => ({ name: c.name, args: c.args, description: describe(c) })),
        reviewConfigs: gated.map((c) => ({ actionName: c.name, allowedDecisions: policies[c.name].allowed, ...(policies[c.name].schema ? { argsSchema: policies[c.name].schema } : {}) })),
      }
    : {
        action_requests: gated.map((c) => ({ name: c.name, args: c.args, description: describe(c) })),
        review_configs: gated.map((c) => ({ action_name: c.name, allowed_decisions: policies[c.name].allowed, ...(policies[c.name].schema ? { args_schema: policies[c.name].schema } : {}) })),
      };
  const answer = interrupt(payload) as { decisions?: Array<Record<string, any>> };
  const decisions = answer?.decisions;
  if (!Array.isArray(decisions)) throw new Error("Invalid HITLResponse: decisions must be a non-empty array");
  if (decisions.length !== gated.length) {
    throw new Error(`Number of human decisions (${decisions.length}) does not match number of hanging tool calls (${gated.length}).`);
  }
  const revised = new Map<string, Call>();
  const toolMessages: ToolMessage[] = [];
  gated.forEach((call, i) => {
    const d = decisions[i];
    const allowed = policies[call.name].allowed;
    if (!d || !allowed.includes(d.type)) {
      throw new Error(`Unexpected human decision: ${JSON.stringify(d)}. Decision type '${d?.type}' is not allowed for tool '${call.name}'. Expected one of ${JSON.stringify(allowed)} based on the tool's configuration.`);
    }
    if (d.type === "edit") {
      const edited = d.edited_action ?? d.editedAction;
      if (!edited || typeof edited.args !== "object") throw new Error(`Invalid edited action for tool "${call.name}": args must be an object`);
      revised.set(call.id, { id: call.id, name: edited.name ?? call.name, args: edited.args });
    } else if (d.type === "reject") {
      const text = d.message ? `User rejected the tool call for \`${call.name}\` with reason: ${d.message}` : `User rejected the tool call for \`${call.name}\` with id ${call.id}. The tool was not executed.`;
      toolMessages.push(new ToolMessage({ content: text, name: call.name, tool_call_id: call.id, status: "error" }));
    } else if (d.type === "respond") {
      toolMessages.push(new ToolMessage({ content: String(d.message ?? ""), name: call.name, tool_call_id: call.id, status: "success" }));
    }
  });
  const ai = new AIMessage({
    id: pending.ai.id,
    content: pending.ai.content,
    tool_calls: (pending.ai.tool_calls ?? []).map((c) => {
      const r = revised.get(c.id ?? "");
      return r ? { ...c, name: r.name, args: r.args } : c;
    }),
  });
  return { messages: [ai, ...toolMessages] };
}

function runTool(call: Call): string {
  const a = call.args as Record<string, any>;
  if (call.name === "send_email") return `Email sent to ${a.to} with subject "${a.subject}".`;
  if (call.name === "delete_file") return `Deleted ${a.path}.`;
  if (call.name === "book_flight") {
    const form = interrupt({
      type: "form",
      title: "Confirm booking",
      fields: [
        { name: "seat", type: "string", label: "Seat" },
        { name: "confirm", type: "boolean", label: "Confirm the booking" },
      ],
      destination: a.destination,
    }) as { seat?: string; confirm?: boolean };
    return form?.confirm ? `Booked ${a.destination}, seat ${form.seat}.` : `Booking to ${a.destination} cancelled by user.`;
  }
  if (call.name === "pick_colour") {
    const answer = interrupt({ question: "Which colour should the report cover be?", choices: ["blue", "green"] });
    return `Colour chosen: ${typeof answer === "string" ? answer : JSON.stringify(answer)}.`;
  }
  return `Error: ${call.name} is not a valid tool.`;
}

function tools(state: typeof MessagesAnnotation.State) {
  const pending = pendingCalls(state.messages);
  if (!pending) return {};
  return { messages: pending.calls.map((c) => new ToolMessage({ content: runTool(c), name: c.name, tool_call_id: c.id, status: "success" })) };
}

function afterAgent(state: typeof MessagesAnnotation.State) {
  return pendingCalls(state.messages) ? "review" : END;
}

function afterReview(state: typeof MessagesAnnotation.State) {
  return pendingCalls(state.messages) ? "tools" : "agent";
}

export const consoleGraph = new StateGraph(MessagesAnnotation)
  .addNode("agent", agent)
  .addNode("review", review)
  .addNode("tools", tools)
  .addEdge(START, "agent")
  .addConditionalEdges("agent", afterAgent, ["review", END])
  .addConditionalEdges("review", afterReview, ["tools", "agent"])
  .addEdge("tools", "agent")
  .compile();
