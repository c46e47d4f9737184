// Records reference traces of deepagents (JS, deepagents@1.14.1 on @langchain/langgraph@1.7.3)
// for the subagent and permission cases, as ../data/J*.json. The model is a deterministic
// BaseChatModel that answers from the conversation it is shown (parallel subagents call it in
// any order). Run: npm ci && node record.mjs   (no network, no API key)
import { writeFileSync, mkdirSync } from "node:fs";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool, createAgent } from "langchain";
import { MemorySaver, Command, interrupt } from "@langchain/langgraph";
import { createDeepAgent } from "deepagents";
import { z } from "zod";

const text = (m) => (typeof m.content === "string" ? m.content : m.content.map((b) => b.text ?? "").join(""));

// route(messages) -> {content, tool_calls}; ids are derived from the conversation, not call order.
class RoutedModel extends BaseChatModel {
  constructor(route) {
    super({});
    this.route = route;
    this.calls = 0;
  }
  static lc_name() { return "RoutedModel"; }
  _llmType() { return "routed"; }
  bindTools() { return this; }
  async _generate(messages) {
    this.calls += 1;
    const reply = this.route(messages.filter((m) => m._getType() !== "system"));
    const msg = new AIMessage({
      id: reply.id,
      content: reply.content ?? "",
      tool_calls: (reply.tool_calls ?? []).map((c) => ({ ...c, type: "tool_call" })),
    });
    return { generations: [{ text: text(msg), message: msg }] };
  }
}

const firstHuman = (messages) => text(messages.find((m) => m._getType() === "human"));
const answered = (messages) => ToolMessage.isInstance(messages[messages.length - 1]);

function outbox() {
  const sent = [];
  const sendEmail = tool(async ({ to }) => { sent.push(to); return `sent to ${to}`; }, {
    name: "send_email", description: "Sends an email.", schema: z.object({ to: z.string() }),
  });
  return { sent, sendEmail };
}

const shape = (m) => ({
  type: m._getType(),
  content: text(m),
  ...(m.tool_calls?.length ? { tool_calls: m.tool_calls.map(({ name, args, id }) => ({ name, args, id })) } : {}),
  ...(m._getType() === "tool" ? { name: m.name, tool_call_id: m.tool_call_id, status: m.status ?? null } : {}),
});
const interruptsOf = (r) => (r.__interrupt__ ?? []).map((i) => i.value);

// The main agent delegates "email <name>" to `subagent` for each name in one turn.
const delegating = (people, subagent) => (messages) => {
  const task = firstHuman(messages);
  if (task.startsWith("email ")) {
    const who = task.slice(6);
    if (!answered(messages)) return { id: `ai-sub-${who}-1`, tool_calls: [{ name: "send_email", args: { to: who }, id: `call_${who}` }] };
    return { id: `ai-sub-${who}-2`, content: `reported on ${who}` };
  }
  if (answered(messages)) return { id: "ai-main-2", content: "all done" };
  return { id: "ai-main-1", tool_calls: people.map((p) => ({ name: "task", args: { description: `email ${p}`, subagent_type: subagent }, id: `call_task_${p}` })) };
};

const mailerAgent = (model, sendEmail, checkpointer) => createDeepAgent({
  model, checkpointer,
  subagents: [{ name: "mailer", description: "Sends emails.", systemPrompt: "You send emails.", tools: [sendEmail], interruptOn: { send_email: true } }],
});

const cases = {};

cases.J1_parallel_subagent_reviews_by_id = async () => {
  const { sent, sendEmail } = outbox();
  const model = new RoutedModel(delegating(["alice", "bob"], "mailer"));
  const agent = mailerAgent(model, sendEmail, new MemorySaver());
  const config = { configurable: { thread_id: "J1" } };
  const steps = [];
  const first = await agent.invoke({ messages: [new HumanMessage({ id: "human-1", content: "go" })] }, config);
  const ids = first.__interrupt__.map((i) => i.id);
  steps.push({ call: "invoke(input)", interrupts: interruptsOf(first), sent: [...sent] });
  const second = await agent.invoke(new Command({ resume: { [ids[1]]: { decisions: [{ type: "approve" }] } } }), config);
  steps.push({ call: "resume {interrupt 2: approve}", interrupts: interruptsOf(second), remainingIsFirst: (second.__interrupt__ ?? []).map((i) => i.id === ids[0]), sent: [...sent] });
  const third = await agent.invoke(new Command({ resume: { [ids[0]]: { decisions: [{ type: "reject", message: "no" }] } } }), config);
  steps.push({ call: "resume {interrupt 1: reject}", interrupts: interruptsOf(third), messages: third.messages.map(shape), sent: [...sent] });
  return { steps, modelCallCount: model.calls };
};

cases.J2_subagent_edit_resume = async () => {
  const { sent, sendEmail } = outbox();
  const model = new RoutedModel(delegating(["alice"], "mailer"));
  const agent = mailerAgent(model, sendEmail, new MemorySaver());
  const config = { configurable: { thread_id: "J2" } };
  const first = await agent.invoke({ messages: [new HumanMessage({ id: "human-1", content: "go" })] }, config);
  const callsAtPause = model.calls;
  const done = await agent.invoke(new Command({ resume: { decisions: [{ type: "edit", editedAction: { name: "send_email", args: { to: "carol" } } }] } }), config);
  return { steps: [{ call: "invoke(input)", interrupts: interruptsOf(first), modelCalls: callsAtPause },
                   { call: "resume edit to carol", interrupts: interruptsOf(done), messages: done.messages.map(shape), sent: [...sent] }],
           modelCallCount: model.calls };
};

cases.J3_compiled_subagent_interrupt_in_tool = async () => {
  const requestApproval = tool(async ({ action_description }) => {
    const approval = interrupt({ type: "approval_request", action: action_description, message: `Please approve or reject: ${action_description}` });
    return approval?.approved ? `Action '${action_description}' was APPROVED. Proceeding...` : `Action '${action_description}' was REJECTED. Reason: ${approval?.reason ?? "No reason provided"}`;
  }, { name: "request_approval", description: "Request human approval before proceeding with an action.", schema: z.object({ action_description: z.string() }) });
  const model = new RoutedModel((messages) => {
    const task = firstHuman(messages);
    if (task.startsWith("Use request_approval")) {
      if (!answered(messages)) return { id: "ai-sub-1", tool_calls: [{ name: "request_approval", args: { action_description: "deploying to production" }, id: "call_approval" }] };
      return { id: "ai-sub-2", content: `The subagent saw: ${text(messages[messages.length - 1])}` };
    }
    if (answered(messages)) return { id: "ai-main-2", content: "Deployment approved." };
    return { id: "ai-main-1", tool_calls: [{ name: "task", args: { description: "Use request_approval for 'deploying to production'", subagent_type: "approval-agent" }, id: "call_task" }] };
  });
  const compiled = createAgent({ model, tools: [requestApproval], name: "approval-agent" });
  const agent = createDeepAgent({ model, checkpointer: new MemorySaver(),
    subagents: [{ name: "approval-agent", description: "An agent that can request approvals", runnable: compiled }] });
  const config = { configurable: { thread_id: "J3" } };
  const first = await agent.invoke({ messages: [new HumanMessage({ id: "human-1", content: "deploy" })] }, config);
  const done = await agent.invoke(new Command({ resume: { approved: true } }), config);
  return { steps: [{ call: "invoke(input)", interrupts: interruptsOf(first) },
                   { call: "resume {approved: true}", interrupts: interruptsOf(done), messages: done.messages.map(shape) }],
           modelCallCount: model.calls };
};

cases.J4_permission_deny = async () => {
  const calls = [
    { name: "write_file", args: { file_path: "/notes.txt", content: "hello" }, id: "w1" },
    { name: "write_file", args: { file_path: "/secrets/k", content: "sk" }, id: "w2" },
  ];
  const reads = [
    { name: "read_file", args: { file_path: "/secrets/k" }, id: "r1" },
    { name: "read_file", args: { file_path: "//secrets/k" }, id: "r2" },
    { name: "read_file", args: { file_path: "/./secrets/k" }, id: "r3" },
    { name: "read_file", args: { file_path: "/secrets/../secrets/k" }, id: "r4" },
    { name: "ls", args: { path: "/" }, id: "l1" },
    { name: "delete", args: { file_path: "/" }, id: "d1" },
  ];
  const model = new RoutedModel((messages) => {
    const tools = messages.filter((m) => ToolMessage.isInstance(m)).length;
    if (tools === 0) return { id: "ai-1", tool_calls: calls };
    if (tools === calls.length) return { id: "ai-2", tool_calls: reads };
    return { id: "ai-3", content: "done" };
  });
  const agent = createDeepAgent({ model, checkpointer: new MemorySaver(),
    permissions: [{ operations: ["read", "write"], paths: ["/secrets/**"], mode: "deny" }] });
  const done = await agent.invoke({ messages: [new HumanMessage({ id: "human-1", content: "files" })] }, { configurable: { thread_id: "J4" } });
  return { steps: [{ call: "invoke(input)", messages: done.messages.map(shape), files: Object.keys(done.files ?? {}) }],
           modelCallCount: model.calls };
};

mkdirSync(new URL("../data/", import.meta.url), { recursive: true });
for (const [name, run] of Object.entries(cases)) {
  let trace;
  try {
    trace = { name, versions: { deepagents: "1.14.1", "@langchain/langgraph": "1.7.3" }, ...(await run()) };
  } catch (e) {
    trace = { name, error: String(e?.stack ?? e) };
  }
  writeFileSync(new URL(`../data/${name}.json`, import.meta.url), JSON.stringify(trace, null, 2) + "\n");
  console.log(name, trace.error ? "ERROR " + trace.error.split("\n")[0] : "ok");
}
