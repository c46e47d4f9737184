// The database lost under a running server (PostgreSQL only; docs/deploy.md, "One replica on
// PostgreSQL"): requests that need it answer 503 naming it, GET /ok says this replica cannot
// reach it, and once it is back the server serves again by itself — the paused thread still
// answerable, its decision applied once. The outage is made by refusing connections to the
// server's database and ending its sessions, as a failover does.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { FAST_REPLICAS, ServerProcess, serveForFile, humanInput } from "./harness.mjs";

const skip = process.env.TOLLGATE_TEST_DB_URL ? false : "PostgreSQL only (set TOLLGATE_TEST_DB_URL)";
const kPatience = 30000;

const config = {
  replicas: FAST_REPLICAS,
  agents: {
    mailer: {
      model: "scripted",
      script: {
        conversations: [
          {
            match: "email",
            replies: [{ tool_calls: [{ name: "send_email", args: { to: "bob@example.com", subject: "Hi", body: "Hello." } }] }, "Done: {tool_results}"],
          },
        ],
      },
      tools: ["send_email"],
      interrupt_on: { send_email: { allowed_decisions: ["approve", "reject"] } },
    },
  },
};

const server = skip ? null : new ServerProcess({ config });
if (server) serveForFile(server);

function admin(sql) {
  execFileSync("psql", [process.env.TOLLGATE_TEST_DB_URL, "-v", "ON_ERROR_STOP=1", "-qc", sql], { stdio: ["ignore", "ignore", "pipe"] });
}

function cutDatabase(allow) {
  const name = server.database.name;
  admin(`ALTER DATABASE ${name} ALLOW_CONNECTIONS ${allow}`);
  if (!allow) admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
}

async function eventually(check, what) {
  const deadline = Date.now() + kPatience;
  for (;;) {
    const last = await check();
    if (last === true) return;
    if (Date.now() > deadline) assert.fail(`${what} never happened (last: ${last})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("a database lost while serving: 503 and /ok down, then back by itself with the pause answerable", { skip }, async () => {
  const client = server.client();
  const thread = await client.threads.create();
  const paused = await client.runs.wait(thread.thread_id, "mailer", { input: humanInput("email bob") });
  assert.equal(paused.__interrupt__[0].value.action_requests[0].name, "send_email");

  cutDatabase(false);
  try {
    await eventually(async () => {
      const response = await fetch(`${server.url}/threads/${thread.thread_id}`);
      const body = await response.text();
      return response.status === 503 && /postgres/.test(body) ? true : `${response.status} ${body}`;
    }, "a 503 naming the database");
    await eventually(async () => {
      const response = await fetch(`${server.url}/ok`);
      return response.status === 503 ? true : String(response.status);
    }, "/ok answering 503");
  } finally {
    cutDatabase(true);
  }

  await eventually(async () => (await fetch(`${server.url}/ok`)).status === 200 || "down", "/ok answering 200 again");
  await eventually(async () => {
    const response = await fetch(`${server.url}/threads/${thread.thread_id}`);
    return response.status === 200 ? true : String(response.status);
  }, "the thread read again");
  assert.equal((await client.threads.get(thread.thread_id)).status, "interrupted");
  const done = await client.runs.wait(thread.thread_id, "mailer", { command: { resume: { decisions: [{ type: "approve" }] } } });
  assert.match(done.messages.at(-1).content, /placed in the outbox/);
  const outbox = join(server.workdir, "outbox.db");
  assert.equal(execFileSync("sqlite3", [outbox, "SELECT COUNT(*) FROM outbox"], { encoding: "utf8" }).trim(), "1");
});
