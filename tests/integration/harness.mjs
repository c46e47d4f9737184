// Starts `tollgate serve` on a free port with a fresh database and hands out SDK clients; on
// PostgreSQL also several replicas of one server on one database, behind a round-robin proxy.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
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

// TOLLGATE_IT_REPLICAS=N (with TOLLGATE_TEST_DB_URL): each ServerProcess is N replicas of the
// server on its database behind a RoundRobinProxy, so the whole suite runs as behind a load
// balancer; the server's url and clients are the proxy's, and start, kill and stop act on
// every replica.
const REPLICAS = PG_URL ? Number(process.env.TOLLGATE_IT_REPLICAS || 1) : 1;

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
  // agent; the demo tools' folder (sandbox, outbox.db) is then `${workdir}`.
  // `joins`: another ServerProcess (PostgreSQL only) whose database and demo tools' folder this
  // one shares, as a further replica of the same server (its database is dropped when `joins`
  // stops, so stop the joiners first); `replicaId`: the `--replica-id`.
  // `replicas`: how many processes serve it behind a RoundRobinProxy (TOLLGATE_IT_REPLICAS).
  constructor({ args = [], config = null, joins = null, replicaId = null, replicas = REPLICAS } = {}) {
    this.dir = mkdtempSync(join(tmpdir(), "tollgate-it-"));
    this.db = join(this.dir, "tollgate.db");
    this.workdir = join(this.dir, "tollgate-demo");
    this.port = 0;
    this.args = [...args];
    if (joins) {
      if (!joins.database) throw new Error("replicas share a PostgreSQL database: set TOLLGATE_TEST_DB_URL");
      this.db = joins.db; // not this.database: the database stays joins's own
      this.workdir = joins.workdir;
      this.args.push("--workdir", this.workdir);
    } else if (PG_URL) {
      this.database = freshDatabase();
      this.db = this.database.url;
      // The demo tools' folder is next to a SQLite file; with PostgreSQL, where a file would be.
      this.args.push("--workdir", this.workdir);
    }
    this.output = ""; // the stderr of every process started, kept across restarts
    this.ends = []; // why a process ended badly (checked at stop)
    this.siblings = []; // the other replicas under TOLLGATE_IT_REPLICAS
    const shared = replicas > 1 && !joins;
    if (shared) {
      replicaId ??= "a"; // the siblings are b, c, ...
      // Fast replica timing, unless the test brings its own config file.
      if (!args.includes("--config")) config = { replicas: FAST_REPLICAS, ...(config ?? {}) };
    }
    this.replicaId = replicaId;
    let configArgs = [];
    if (config) {
      const file = join(this.dir, "tollgate.json");
      writeFileSync(file, JSON.stringify(config));
      configArgs = ["--config", file];
    }
    this.args.push(...configArgs);
    // The siblings read the same config file: paths in it are relative to its folder.
    for (let i = 1; shared && i < replicas; i++) {
      const id = String.fromCharCode(97 + i);
      this.siblings.push(new ServerProcess({ args: [...args, ...configArgs], joins: this, replicaId: id }));
    }
    if (replicaId) this.args.push("--replica-id", replicaId);
  }

  // Starts the server (on the same port after a restart) and resolves once it listens. `env`:
  // variables added to this start's environment (e.g. the TOLLGATE_FAULT test seam).
  async start({ env = {} } = {}) {
    await this.startProcess(env);
    if (this.siblings.length === 0) return this;
    for (const sibling of this.siblings) await sibling.startProcess(env);
    this.proxy ??= await new RoundRobinProxy([this, ...this.siblings]).start();
    this.url = this.proxy.url;
    return this;
  }

  // Starts this process alone (not its siblings).
  async startProcess(env) {
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
  }

  // Runs `statement` on the server's database behind its back (sqlite3, or psql on PostgreSQL).
  sql(statement) {
    if (/^postgres(ql)?:/.test(this.db)) {
      execFileSync("psql", [this.db, "-v", "ON_ERROR_STOP=1", "-qc", statement], { stdio: ["ignore", "ignore", "pipe"] });
    } else {
      execFileSync("sqlite3", [this.db, statement]);
    }
  }

  client(apiKey = null) {
    return new Client({ apiUrl: this.url, apiKey, callerOptions: { maxRetries: 0 } });
  }

  // Whether its process runs now.
  running() {
    return Boolean(this.child) && this.child.exitCode === null && this.child.signalCode === null;
  }

  // Ends the server as a crash would (its exit code is not checked).
  async kill(signal = "SIGKILL") {
    for (const sibling of this.siblings) await sibling.kill(signal);
    if (!this.running()) return;
    this.child.killedBySignal = signal !== "SIGTERM";
    this.child.stopping = true;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill(signal);
    await exited;
  }

  // Resolves once the server process has ended by itself (e.g. through the fault seam); with
  // siblings, once one replica has, and the others are then killed: the server is down.
  async exited() {
    const alive = [this, ...this.siblings].filter((r) => r.running());
    if (alive.length < 1 + this.siblings.length) return;
    await Promise.race(alive.map((r) => new Promise((resolve) => r.child.once("exit", resolve))));
    for (const sibling of this.siblings) await sibling.kill("SIGKILL");
    if (this.running()) await this.kill("SIGKILL");
  }

  // Stops the server (SIGTERM) and throws, failing the test file, when it or an earlier
  // process of this server ended badly or printed a sanitizer report.
  async stop() {
    for (const sibling of this.siblings) {
      try {
        await sibling.stop();
      } catch (e) {
        this.ends.push(`replica ${sibling.replicaId}: ${e.message}`);
      }
    }
    await this.proxy?.stop();
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

// Replica timing for tests: a replica silent for 2 s is dead and its runs are taken over;
// the tables are read again every 100 ms (docs/deploy.md, "Several replicas").
export const FAST_REPLICAS = { heartbeat: "200ms", timeout: "2s", poll: "100ms" };

// `count` replicas of one server on one fresh PostgreSQL database, named a, b, c, ... (their
// --replica-id), serving `config` (agents, ...) with `timing` as its "replicas" section; they
// share the demo tools' folder, so one outbox.db holds every replica's emails. Not started:
// start each (with the env it needs); stop them with stopReplicas.
export function replicasOf(count, { config = {}, timing = FAST_REPLICAS } = {}) {
  const withTiming = { ...config, replicas: timing };
  const first = new ServerProcess({ config: withTiming, replicaId: "a", replicas: 1 });
  const others = Array.from({ length: count - 1 }, (_, i) =>
    new ServerProcess({ config: withTiming, joins: first, replicaId: String.fromCharCode(98 + i) }));
  return [first, ...others];
}

// Stops replicas made by replicasOf, the joiners before the one whose database they share;
// throws every bad end together once all are stopped.
export async function stopReplicas(servers) {
  const problems = [];
  for (const server of [...servers].reverse()) {
    try {
      await server.stop();
    } catch (e) {
      problems.push(`replica ${server.replicaId}: ${e.message}`);
    }
  }
  if (problems.length > 0) throw new Error(problems.join("\n\n"));
}

// Headers that belong to one connection, not to the request or response carried.
const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"];

function endToEnd(headers) {
  const kept = { ...headers };
  for (const name of HOP_BY_HOP) delete kept[name];
  return kept;
}

// A round-robin HTTP proxy in front of replicas, as a load balancer without sticky sessions:
// each request goes to the next replica whose process runs, so consecutive requests of one SDK
// client land on different replicas. Headers are forwarded, responses stream through as they
// come (SSE included), and a client that goes away closes its upstream request (a stream's
// on_disconnect). A replica that refuses the connection (it just died) is skipped, as a
// balancer's passive health check would; a request it took before dying is not sent again.
// The replica that answered is named in the response header x-tollgate-replica; `requests`
// lists {method, path, replica} in the order they were answered.
export class RoundRobinProxy {
  constructor(servers) {
    this.servers = servers;
    this.next = 0;
    this.requests = [];
    this.open = new Set(); // responses still being carried
  }

  async start() {
    this.server = createServer((request, response) => {
      this.forward(request, response).catch(() => response.destroy()); // the client went away
    });
    await new Promise((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${this.server.address().port}`;
    return this;
  }

  client(apiKey = null) {
    return new Client({ apiUrl: this.url, apiKey, callerOptions: { maxRetries: 0 } });
  }

  // The running replicas in turn, starting with the next one.
  rotation() {
    const running = this.servers.filter((s) => s.running());
    const start = this.next++ % Math.max(running.length, 1);
    return [...running.slice(start), ...running.slice(0, start)];
  }

  async forward(request, response) {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const body = Buffer.concat(chunks); // kept whole, to be sent again to another replica
    const candidates = this.rotation();
    const attempt = (i) => {
      const target = candidates[i];
      if (!target) {
        response.writeHead(502, { "content-type": "text/plain" }).end("no replica is running");
        return;
      }
      const upstream = httpRequest({
        host: "127.0.0.1",
        port: target.port,
        method: request.method,
        path: request.url,
        agent: false, // a connection per request: no kept-alive socket of a replica that died
        headers: { ...endToEnd(request.headers), host: `127.0.0.1:${target.port}`, "content-length": String(body.length) },
      });
      upstream.on("response", (answer) => {
        const name = target.replicaId ?? String(target.port);
        this.requests.push({ method: request.method, path: request.url.split("?")[0], replica: name });
        this.open.add(response);
        response.writeHead(answer.statusCode, { ...endToEnd(answer.headers), "x-tollgate-replica": name });
        response.flushHeaders();
        answer.pipe(response);
        answer.on("error", () => response.destroy());
      });
      upstream.on("error", (e) => {
        if (response.headersSent) return response.destroy();
        if (e.code === "ECONNREFUSED") return attempt(i + 1); // never reached it: safe to resend
        response.writeHead(502, { "content-type": "text/plain" }).end(String(e));
      });
      // The client went away (or the response ended): nothing more to carry.
      response.on("close", () => {
        this.open.delete(response);
        upstream.destroy();
      });
      upstream.end(body);
    };
    attempt(0);
  }

  // Breaks every response being carried (an SSE stream mid-run), as a dropped connection
  // would: a client that resumes streams reconnects, through the proxy, to another replica.
  cutStreams() {
    for (const response of this.open) response.destroy();
  }

  async stop() {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
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
