// Starts what the console tests need: an Agent Server (`tollgate serve` with the scripted
// agents of tollgate-e2e.json by default, or the JS reference server with the scripted
// console graph when TOLLGATE_E2E_SERVER=reference), a static server for web/dist when the API
// is on another origin, and Debian's Chromium (headless).
import { spawn, execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { cpSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, statSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join, dirname, extname, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, "..", "..");
const dist = join(root, "web", "dist");

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

async function waitOk(url, child, what, log, timeoutMs = 120000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) {
      const tail = existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : "";
      throw new Error(`${what} exited with ${child.exitCode}:\n${tail}`);
    }
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not answer ${url}`);
}

// The reference server: a cached copy of shared/peers/agent-server with the console graph.
function referenceServerDir() {
  const peer = process.env.TOLLGATE_AGENT_SERVER_DIR ?? join(root, "..", "shared", "peers", "agent-server");
  if (!existsSync(join(peer, "package-lock.json"))) throw new Error(`reference Agent Server not found at ${peer}`);
  const lock = readFileSync(join(peer, "package-lock.json"));
  const key = createHash("sha256").update(lock).digest("hex").slice(0, 16);
  const dir = join(tmpdir(), `tollgate-e2e-agent-server-${key}`);
  if (!existsSync(join(dir, "node_modules", ".bin", "langgraphjs"))) {
    rmSync(dir, { recursive: true, force: true });
    cpSync(peer, dir, { recursive: true, filter: (s) => !s.includes("node_modules") && !s.includes(".langgraph_api") });
    execFileSync("npm", ["ci", "--legacy-peer-deps", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  }
  cpSync(join(here, "reference-graph", "console_graph.ts"), join(dir, "src", "console_graph.ts"));
  const config = JSON.parse(readFileSync(join(peer, "langgraph.json"), "utf8"));
  config.graphs.console = "./src/console_graph.ts:consoleGraph";
  writeFileSync(join(dir, "langgraph.json"), JSON.stringify(config, null, 2));
  return dir;
}

async function startReference(logDir) {
  const dir = referenceServerDir();
  const port = await freePort();
  rmSync(join(dir, ".langgraph_api"), { recursive: true, force: true });
  const env = {
    ...process.env,
    LANGGRAPH_CLI_NO_ANALYTICS: "1",
    LANGSMITH_TRACING: "false",
    LANGCHAIN_TRACING_V2: "false",
    BROWSER: "none",
  };
  delete env.LANGSMITH_API_KEY;
  delete env.LANGCHAIN_API_KEY;
  const log = join(logDir, "agent-server.log");
  const out = openSync(log, "w");
  const child = spawn(join(dir, "node_modules", ".bin", "langgraphjs"),
    ["dev", "--port", String(port), "--host", "127.0.0.1", "--no-browser", "--no-reload", "--config", "./langgraph.json"],
    { cwd: dir, env, stdio: ["ignore", out, out], detached: true });
  const api = `http://127.0.0.1:${port}`;
  await waitOk(`${api}/ok`, child, "reference Agent Server", log);
  return { kind: "reference", api, child, assistant: "console", log, sameOrigin: false };
}

/** sha256 hex of a key, as `auth.users[].api_key_sha256` keeps it. */
export const sha256 = (text) => createHash("sha256").update(text).digest("hex");

// The agents of `base` with an `auth` section whose users hold the given test keys
// ({id, name, roles, key}: the file keeps only each key's digest) and the top-level sections
// of `extra` (e.g. webhooks), written into `logDir`.
function writeAuthConfig(base, users, logDir, extra = {}) {
  const config = { ...JSON.parse(readFileSync(base, "utf8")), ...extra };
  config.auth = { users: users.map(({ key, ...user }) => ({ ...user, api_key_sha256: sha256(key) })) };
  const path = join(logDir, "tollgate-e2e-auth.json");
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

// `tollgate serve` on a free port, serving web/dist itself (same origin), with its database
// and the demo tools' sandbox in the run's temporary folder; with `users`, API keys are on;
// `env` is added to the server's environment (e.g. the TOLLGATE_FAULT test seam).
async function startTollgate(logDir, users, env = {}, extra = undefined) {
  const bin = process.env.TOLLGATE_BIN ?? join(root, "build", "src", "main", "tollgate");
  if (!existsSync(bin)) throw new Error(`tollgate binary not found at ${bin} (build it or set TOLLGATE_BIN)`);
  const port = await freePort();
  const baseConfig = process.env.TOLLGATE_E2E_CONFIG ?? join(here, "tollgate-e2e.json");
  const config = users ? writeAuthConfig(baseConfig, users, logDir, extra) : baseConfig;
  if (extra && !users) throw new Error("extra config sections: only with auth users");
  const args = ["serve", "--port", String(port), "--db", join(logDir, "tollgate.db"), "--console", dist,
    "--workdir", join(logDir, "sandbox"), "--config", config];
  const log = join(logDir, "tollgate.log");
  const api = `http://127.0.0.1:${port}`;
  const backend = { kind: "tollgate", api, child: null, assistant: process.env.TOLLGATE_E2E_ASSISTANT ?? "console", log, sameOrigin: true };
  // (Re)starts the server on the same port and database, with `extra` in its environment;
  // the log is appended to.
  backend.start = async (extra = env) => {
    const out = openSync(log, "a");
    backend.child = spawn(bin, args, { cwd: logDir, env: { ...process.env, ...extra }, stdio: ["ignore", out, out], detached: true });
    await waitOk(`${api}/ok`, backend.child, "tollgate serve", log, 30000);
  };
  // The next start reads these users and keys (the config file is rewritten in place).
  if (users) backend.writeUsers = (next) => writeAuthConfig(baseConfig, next, logDir, extra);
  await backend.start();
  return backend;
}

/** Ends a server at once (SIGKILL, as a crash would) and waits until it is gone. */
async function kill(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.killedOnPurpose = true;
  const gone = new Promise((r) => child.once("exit", r));
  process.kill(-child.pid, "SIGKILL");
  await gone;
}

const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png" };

async function startStatic() {
  if (!existsSync(join(dist, "index.html"))) throw new Error("web/dist is missing: run scripts/build-web.sh");
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)).replace(/^(\.\.[/\\])+/, "");
    let file = join(dist, path);
    if (!file.startsWith(dist) || !existsSync(file) || statSync(file).isDirectory()) file = join(dist, "index.html");
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    res.end(readFileSync(file));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, server };
}

/**
 * Starts the server, the static server when needed, and Chromium. `users` (tollgate only):
 * [{id, name, roles, key}] turns API-key authentication on with these users and keys; `config`
 * (with `users`) adds top-level sections to the config file; `env` to the server's environment.
 */
export async function startAll({ users, env, config } = {}) {
  const logDir = mkdtempSync(join(tmpdir(), "tollgate-e2e-"));
  const which = process.env.TOLLGATE_E2E_SERVER ?? "tollgate";
  if (which !== "tollgate" && which !== "reference") throw new Error(`TOLLGATE_E2E_SERVER: expected tollgate or reference, got ${which}`);
  if (users && which !== "tollgate") throw new Error("auth users: only with the tollgate server");
  if (env && which !== "tollgate") throw new Error("server environment: only with the tollgate server");
  const backend = which === "tollgate" ? await startTollgate(logDir, users, env, config) : await startReference(logDir);
  const web = backend.sameOrigin ? null : await startStatic();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    // Playwright gives every launch a fresh temporary user-data-dir of its own.
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
  const base = backend.sameOrigin
    ? `${backend.api}/?assistant=${encodeURIComponent(backend.assistant)}`
    : `${web.url}/?api=${encodeURIComponent(backend.api)}&assistant=${encodeURIComponent(backend.assistant)}`;
  return {
    kind: backend.kind,
    api: backend.api,
    base,
    /** The console's address with another agent preselected. */
    baseFor(assistant) {
      const u = new URL(base);
      u.searchParams.set("assistant", assistant);
      return u.toString();
    },
    /** tollgate with `users`: a new browser on `hash`, signed in as `user` (its key typed on the sign-in screen). */
    async signedIn(user, { hash = "", viewport = { width: 1280, height: 860 }, timeout = 20000 } = {}) {
      const context = await browser.newContext({ viewport });
      const page = await context.newPage();
      page.setDefaultTimeout(timeout);
      await page.goto(`${base}#${hash}`);
      const key = page.getByLabel("API key", { exact: true });
      await key.fill(user.key);
      await key.press("Enter");
      await page.getByTestId("identity").waitFor();
      return page;
    },
    logDir,
    browser,
    /** tollgate only: kill -9 the server, then start it again on the same port and database. */
    async crashServer() {
      if (!backend.start) throw new Error("only the tollgate server can be restarted by the tests");
      await kill(backend.child);
    },
    /** tollgate only: starts the server again; `env` replaces the environment given at start. */
    async restartServer(env = undefined) {
      await backend.start(env);
    },
    /** tollgate only: waits until the server ends by itself (a fault seam); its exit code. */
    async serverExited() {
      const child = backend.child;
      child.killedOnPurpose = true;
      if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once("exit", r));
      return child.exitCode;
    },
    /** tollgate with `users` only: the users and keys of the next restart. */
    writeUsers(users) {
      if (!backend.writeUsers) throw new Error("the server was started without auth users");
      backend.writeUsers(users);
    },
    /**
     * Stops everything; for tollgate, throws (failing the test) when the server ended by itself,
     * exited with a non-zero code when stopped, or printed a sanitizer report into its log — and
     * then keeps the run's folder (logDir); otherwise removes it.
     */
    async stop() {
      await browser.close().catch(() => {});
      web?.server.close();
      const child = backend.child;
      const endedBefore = child.exitCode !== null || child.signalCode !== null;
      const gone = endedBefore ? null : new Promise((r) => child.once("exit", r));
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        /* already gone */
      }
      if (backend.kind !== "tollgate") {
        rmSync(logDir, { recursive: true, force: true });
        return;
      }
      await gone;
      const log = existsSync(backend.log) ? readFileSync(backend.log, "utf8") : "";
      const report = log.match(/ERROR: AddressSanitizer|runtime error:|LeakSanitizer/);
      if (report) throw new Error(`tollgate serve printed a sanitizer report:\n${log.slice(Math.max(0, report.index - 200), report.index + 3000)}`);
      if (endedBefore && !child.killedOnPurpose) throw new Error(`tollgate serve ended by itself (code ${child.exitCode}, signal ${child.signalCode}):\n${log.slice(-3000)}`);
      if (!endedBefore && child.exitCode !== 0) throw new Error(`tollgate serve exited with ${child.exitCode ?? child.signalCode} when stopped:\n${log.slice(-3000)}`);
      // Kept when a check above failed (its log and database tell what happened).
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}
