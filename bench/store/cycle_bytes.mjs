// Database bytes kept per HITL cycle, with and without a retention policy (bench/README.md).
//   node bench/store/cycle_bytes.mjs [path/to/tollgate] [cycles=300]
// Each cycle: a new thread, the demo agent asked to delete a file (paused for review, streamed
// with values, updates and messages-tuple as the console does), then approved. The server runs
// once without retention and once with {events: "1s", checkpoints: "latest", interval: "1s"};
// after the cycles it waits for two passes, stops, and the file's used pages are counted
// (page_count - freelist_count), with the largest tables (dbstat); file_bytes_per_cycle counts the
// free pages too (the file's size: SQLite reuses free pages before it grows the file).
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { Client } = await import(
  pathToFileURL(join(root, "tests/integration/node_modules/@langchain/langgraph-sdk/dist/index.js")).href
);
const binary = process.argv[2] ?? join(root, "build/src/main/tollgate");
const cycles = Number(process.argv[3] ?? 300);

async function serve(dir, retention) {
  const args = ["serve", "--host", "127.0.0.1", "--port", "0", "--db", join(dir, "t.db")];
  if (retention) {
    writeFileSync(join(dir, "c.json"), JSON.stringify({ retention }));
    args.push("--config", join(dir, "c.json"));
  }
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  const port = await new Promise((resolve) => {
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/listening on http:\/\/[^:]+:(\d+)/);
      if (m) resolve(Number(m[1]));
    });
  });
  return { child, client: new Client({ apiUrl: `http://127.0.0.1:${port}`, callerOptions: { maxRetries: 0 } }) };
}

async function cycle(client) {
  const thread = await client.threads.create();
  const streamMode = ["values", "updates", "messages-tuple"];
  const input = { messages: [{ role: "user", content: "please delete notes.txt" }] };
  for await (const _ of client.runs.stream(thread.thread_id, "agent", { input, streamMode }));
  const command = { resume: { decisions: [{ type: "approve" }] } };
  for await (const _ of client.runs.stream(thread.thread_id, "agent", { command, streamMode }));
}

function sql(db, text) {
  return execFileSync("sqlite3", [db, text], { encoding: "utf8" }).trim();
}

async function measure(retention) {
  const dir = mkdtempSync(join(tmpdir(), "tollgate-cycle-bytes-"));
  const { child, client } = await serve(dir, retention);
  for (let i = 0; i < cycles; i++) await cycle(client);
  if (retention) await new Promise((r) => setTimeout(r, 3500));
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
  const db = join(dir, "t.db");
  const used = Number(sql(db, "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count, pragma_freelist_count, pragma_page_size"));
  const file = Number(sql(db, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size"));
  let tables = "";
  try {
    tables = sql(db, "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 6");
  } catch {
    tables = "(no dbstat)";
  }
  rmSync(dir, { recursive: true, force: true });
  return { retention: retention ?? "none", cycles, bytes_per_cycle: Math.round(used / cycles), file_bytes_per_cycle: Math.round(file / cycles), tables: tables.split("\n") };
}

console.log(JSON.stringify(await measure(null)));
console.log(JSON.stringify(await measure({ events: "1s", checkpoints: "latest", interval: "1s" })));
