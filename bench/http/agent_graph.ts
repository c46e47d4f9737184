// The HTTP benchmark's agent for the JS reference server: createAgent + HumanInTheLoop
// middleware with a deterministic fake model, the same shape as Tollgate's benchmark agent.
// setup_agent_server.sh copies it into the server's src/ folder and registers it as "agent".
//
// One turn: human message -> model proposes one `lookup` tool call -> the middleware pauses
// (interrupt with action_requests) -> resume {"decisions":[{"type":"approve"}]} -> the tool
// runs -> model answers "final answer: ..." from the tool's result.
import { createAgent, humanInTheLoopMiddleware, tool } from "langchain";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { z } from "zod";

class BenchToolModel extends BaseChatModel {
  _llmType() {
    return "bench-tool-model";
  }
  bindTools() {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const last = messages[messages.length - 1];
    const turn = messages.length;
    const message = ToolMessage.isInstance(last)
      ? new AIMessage({ content: `final answer: ${String(last.content)}` })
      : new AIMessage({
          content: "",
          tool_calls: [{ id: `call_${turn}`, name: "lookup", args: { query: `q${turn}` }, type: "tool_call" }],
        });
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

const lookup = tool(async ({ query }: { query: string }) => `result for ${query}`, {
  name: "lookup",
  description: "Look something up (deterministic, offline).",
  schema: z.object({ query: z.string() }),
});

export const agent = createAgent({
  model: new BenchToolModel({}),
  tools: [lookup],
  middleware: [humanInTheLoopMiddleware({ interruptOn: { lookup: true } })],
});
