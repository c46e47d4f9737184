// Starts `tollgate serve` on a free port with a fresh database and hands out SDK clients.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, after } from "node:test";
import { Client } from "@langchain/langgraph-sdk";

const BINARY = process.env.TOLLGATE_BIN;
if (!BINARY) throw new Error("set TOLLGATE_BIN to the tollgate executable");

// TOLLGATE_TEST_DB_URL (postgres://user@host:port/db): each ServerProcess serves a fresh
// PostgreSQL database of its own on that server (created with psql, dropped at stop) instead of
// a SQLite file.
const PG_URL = process.env.TOLLGATE_TEST_DB_URL || "";
let databasesMade = 0;

function psql(sql) {
  execFileSync("psql", [PG_URL, "-v", "ON_ERROR_STOP=1", "-qc", sql], { stdio: ["ignore", "ignore", "pipe"] });
}

// A new database on the PG_URL server; returns its URL.
function freshDatabase() {
  const name = `tollgate_it_${process.pid}_${++databasesMade}`;
  psql(`CREATE DATABASE ${name}`);
  return { name, url: PG_URL.slice(0, PG_URL.lastIndexOf("/") + 1) + name };
}

// What a sanitizer build prints when it finds a defect (ASan, UBSan, LSan).
const SANITIZER_REPORT = /ERROR: AddressSanitizer|runtime error:|LeakSanitizer/;

// Why a server's end fails the test ("" when it ended well): it exited by itself (a crash or a
// fatal error), exited with a non-zero code when stopped, or printed a sanitizer report.
export function badEnd({ code, signal, stopped, output }) {
  const report = output.match(SANITIZER_REPORT);
  if (report) {
    const at = Math.max(0, report.index - 200);
    return `the server printed a sanitizer report:\n${output.slice(at, report.index + 3000)}`;
  }
  if (!stopped) return `the server ended by itself (code ${code}, signal ${signal}):\n${output.slice(-3000)}`;
  if (code !== 0) return `the server exited with ${code ?? signal} when stopped:\n${output.slice(-3000)}`;
  return "";
}

export class ServerProcess {
  // `args`: more `tollgate serve` arguments (e.g. a --config file); `config`: a config file's
  // contents (agents, ...) written into the server's folder and served instead of the demo
  // agent; the demo tools' sandbox is then `${dir}/tollgate-demo/sandbox`.
  constructor({ args = [], config = null } = {}) {
    this.dir = mkdtempSync(join(tmpdir(), "tollgate-it-"));
    this.db = join(this.dir, "tollgate.db");
    this.port = 0;
    this.args = [...args];
    if (PG_URL) {
      this.database = freshDatabase();
      this.db = this.database.url;
      // The demo tools' folder is next to a SQLite file; with PostgreSQL, where a file would be.
      this.args.push("--workdir", join(this.dir, "tollgate-demo"));
    }
    this.output = ""; // the stderr of every process started, kept across restarts
    this.ends = []; // why a process ended badly (checked at stop)
    if (config) {
      const file = join(this.dir, "tollgate.json");
      writeFileSync(file, JSON.stringify(config));
      this.args.push("--config", file);
    }
  }

  // Starts the server (on the same port after a restart) and resolves once it listens. `env`:
  // variables added to this start's environment (e.g. the TOLLGATE_FAULT test seam).
  async start({ env = {} } = {}) {
    this.child = spawn(BINARY, ["serve", "--host", "127.0.0.1", "--port", String(this.port), "--db", this.db, ...this.args], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    this.stderr = "";
    const child = this.child;
    child.stopping = false;
    // The TOLLGATE_FAULT test seam ends the process on purpose with _exit(137).
    child.faultSeam = Boolean(env.TOLLGATE_FAULT);
    child.stderr.on("data", (d) => {
      this.stderr += d;
      this.output += d;
    });
    child.on("exit", (code, signal) => {
      // A process the tests killed (kill -9 to restart it) may end any way; not one left alone.
      if (child.killedBySignal) return;
      if (child.faultSeam && code === 137 && !SANITIZER_REPORT.test(this.stderr)) return;
      const why = badEnd({ code, signal, stopped: child.stopping, output: this.stderr });
      if (why) this.ends.push(why);
    });
    await new Promise((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error("server did not start: " + out + this.stderr)), 20000);
      this.child.stdout.on("data", (d) => {
        out += d;
        const m = out.match(/listening on http:\/\/[^:]+:(\d+)/);
        if (m) {
          clearTimeout(timer);
          this.port = Number(m[1]);
          resolve();
        }
      });
      this.child.on("exit", (code) => reject(new Error(`server exited with ${code}: ${out}${this.stderr}`)));
    });
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  // Runs `statement` on the server's database behind its back (sqlite3, or psql on PostgreSQL).
  sql(statement) {
    if (this.database) {
      execFileSync("psql", [this.db, "-v", "ON_ERROR_STOP=1", "-qc", statement], { stdio: ["ignore", "ignore", "pipe"] });
    } else {
      execFileSync("sqlite3", [this.db, statement]);
    }
  }

  client(apiKey = null) {
    return new Client({ apiUrl: this.url, apiKey, callerOptions: { maxRetries: 0 } });
  }

  // Ends the server as a crash would (its exit code is not checked).
  async kill(signal = "SIGKILL") {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.killedBySignal = signal !== "SIGTERM";
    this.child.stopping = true;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill(signal);
    await exited;
  }

  // Resolves once the server process has ended by itself (e.g. through the fault seam).
  async exited() {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return;
    await new Promise((resolve) => this.child.once("exit", resolve));
  }

  // Stops the server (SIGTERM) and throws, failing the test file, when it or an earlier
  // process of this server ended badly or printed a sanitizer report.
  async stop() {
    await this.kill("SIGTERM");
    rmSync(this.dir, { recursive: true, force: true });
    if (this.database) psql(`DROP DATABASE IF EXISTS ${this.database.name} WITH (FORCE)`);
    const report = this.output.match(SANITIZER_REPORT);
    if (this.ends.length === 0 && report) this.ends.push(badEnd({ code: 0, signal: null, stopped: true, output: this.output }));
    if (this.ends.length > 0) throw new Error(this.ends.join("\n\n"));
  }
}

// Starts `server` before the file's tests (handing its SDK client to `onClient`) and stops it
// after them.
export function serveForFile(server, onClient = () => {}) {
  before(async () => {
    await server.start();
    onClient(server.client());
  });
  after(() => server.stop());
}

export async function collect(stream) {
  const events = [];
  for await (const chunk of stream) events.push(chunk);
  return events;
}

export const humanInput = (text) => ({ messages: [{ role: "user", content: text }] });

export async function waitForStatus(client, threadId, status, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const thread = await client.threads.get(threadId);
    if (thread.status === status) return thread;
    if (Date.now() > deadline) throw new Error(`thread ${threadId} is ${thread.status}, never ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// Reads the SSE events of GET /reviews/stream (sent as the holder of `apiKey`) into `into`, as
// parsed `data:` objects, until closed. `opened` resolves once the stream answered 200.
export function openReviewStream(url, apiKey, into) {
  const controller = new AbortController();
  const opened = fetch(`${url}/reviews/stream`, { headers: { "x-api-key": apiKey }, signal: controller.signal }).then((response) => {
    if (response.status !== 200) throw new Error(`GET /reviews/stream answered ${response.status}`);
    if (!/text\/event-stream/.test(response.headers.get("content-type") ?? "")) throw new Error("GET /reviews/stream is not an event stream");
    (async () => {
      let text = "";
      try {
        for await (const chunk of response.body) {
          text += Buffer.from(chunk).toString();
          let end;
          while ((end = text.indexOf("\n\n")) >= 0) {
            const data = text.slice(0, end).split("\n").find((l) => l.startsWith("data: "));
            text = text.slice(end + 2);
            if (data) into.push(JSON.parse(data.slice(6)));
          }
        }
      } catch {
        // closed
      }
    })();
  });
  return { opened, close: () => controller.abort() };
}
