// JSON Web Tokens through the official SDK Client: an RSA key made by Node's crypto, its public
// half in a JWKS file beside the config, tokens sent as Authorization: Bearer or as apiKey.
import { test } from "node:test";
import assert from "node:assert/strict";
import { generateKeyPairSync, sign } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { ServerProcess, serveForFile } from "./harness.mjs";

const ISSUER = "https://id.example.com";
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const { privateKey: strangerKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });

const server = new ServerProcess({
  config: {
    auth: {
      jwt: { issuer: ISSUER, audience: "tollgate", jwks_file: "jwks.json", subject_claim: "sub", roles_claim: "roles" },
    },
  },
});
// jwks_file resolves against the config file's folder: the server's.
writeFileSync(join(server.dir, "jwks.json"), JSON.stringify({ keys: [{ ...publicKey.export({ format: "jwk" }), kid: "k1" }] }));
serveForFile(server);

const b64url = (value) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");
const now = () => Math.floor(Date.now() / 1000);

function token(claims = {}, key = privateKey) {
  const body = { iss: ISSUER, aud: "tollgate", sub: "alice", name: "Alice", roles: ["user"], iat: now(), exp: now() + 600, ...claims };
  const input = `${b64url({ alg: "RS256", typ: "JWT", kid: "k1" })}.${b64url(body)}`;
  return `${input}.${sign("sha256", Buffer.from(input), key).toString("base64url")}`;
}

const bearer = (t) => new Client({ apiUrl: server.url, defaultHeaders: { Authorization: `Bearer ${t}` }, callerOptions: { maxRetries: 0 } });
const asApiKey = (t) => new Client({ apiUrl: server.url, apiKey: t, callerOptions: { maxRetries: 0 } });
const info = async (t) => (await fetch(`${server.url}/info`, { headers: { Authorization: `Bearer ${t}` } })).json();
const admin = () => bearer(token({ sub: "ada", roles: ["admin"] }));

test("a valid token as Bearer is the identity /info names, and creates as it", async () => {
  const t = token({ roles: ["reviewer", "wizard"] });
  assert.deepEqual((await info(t)).auth.identity, { id: "alice", name: "Alice", roles: ["reviewer"] });
  const thread = await bearer(t).threads.create();
  assert.equal((await bearer(t).threads.get(thread.thread_id)).metadata.owner, "alice");
});

test("a valid token as the SDK's apiKey is accepted too", async () => {
  const thread = await asApiKey(token({ sub: "bob" })).threads.create();
  assert.equal(thread.metadata.owner, "bob");
});

for (const [what, bad, reason] of [
  ["a wrong signature", () => token({}, strangerKey), "token signature does not verify"],
  ["an expired token", () => token({ iat: now() - 7200, exp: now() - 3600 }), "token expired"],
  ["a wrong audience", () => token({ aud: "billing" }), "token audience does not include 'tollgate'"],
]) {
  test(`${what} is 401 naming what failed, and nothing is created`, async () => {
    const before = (await admin().threads.search({ limit: 1000 })).length;
    const t = bad();
    for (const client of [bearer(t), asApiKey(t)]) {
      await assert.rejects(client.threads.create(), (e) => e.status === 401);
    }
    const response = await fetch(`${server.url}/threads`, {
      method: "POST",
      headers: { Authorization: `Bearer ${t}`, "content-type": "application/json" },
      body: "{}",
    });
    assert.equal(response.status, 401);
    const { detail } = await response.json();
    assert.equal(detail, reason);
    assert.ok(!detail.includes(t.split(".")[2]));
    assert.equal((await info(t)).auth.identity, null);
    assert.equal((await admin().threads.search({ limit: 1000 })).length, before);
  });
}
