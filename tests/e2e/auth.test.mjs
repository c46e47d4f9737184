// The console's sign-in against `tollgate serve` with API keys on (auth.users in the config the
// harness writes: the agents of tollgate-e2e.json and the digests of the test keys below).
// Tollgate only: the reference server has no API-key users.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startAll, root } from "./harness.mjs";
import { say, checkAccessibility } from "./steps.mjs";

const shots = process.env.TOLLGATE_E2E_SCREENSHOTS ?? join(root, "docs", "images");
const T = 20000;
const KIND = process.env.TOLLGATE_E2E_SERVER ?? "tollgate";
const skip = KIND === "tollgate" ? false : "API-key users exist only on the tollgate server";

const ALICE = { id: "alice", name: "Alice Archer", roles: ["user"], key: "e2e-alice-5f0c1a9e7b3d42c8a61e0f9d2b7c4a13" };
const BOB = { id: "bob", roles: ["user"], key: "e2e-bob-9a2e7c4b1d0f48e6b3a5c7d9e1f20468" };
const RITA = { id: "rita", name: "Rita Reviewer", roles: ["reviewer"], key: "e2e-rita-3c8f1e6a0b9d47f2a5e4c1b7d0938a62" };
const RAY = { id: "ray", roles: ["reviewer"], key: "e2e-ray-7d1b0c5e9f2a48b6c3e0d8a1f4b72c95" };
const USERS = [ALICE, BOB, RITA, RAY];
let env;

before(async () => {
  if (skip) return;
  env = await startAll({ users: USERS });
  mkdirSync(shots, { recursive: true });
});
after(async () => {
  await env?.stop();
});

async function open(hash = "", viewport = { width: 1280, height: 860 }, assistant = undefined) {
  const context = await env.browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(T);
  await page.goto(`${assistant ? env.baseFor(assistant) : env.base}#${hash}`);
  return page;
}

const keyField = (page) => page.getByLabel("API key", { exact: true });
const button = (scope, name) => scope.getByRole("button", { name, exact: true });

/** Types the key on the sign-in screen and presses Enter. */
async function enterKey(page, key) {
  await keyField(page).fill(key);
  await keyField(page).press("Enter");
}

/** A new browser signed in as `user`, its header showing who. */
async function signedIn(user, hash = "", viewport = undefined, assistant = undefined) {
  const page = await open(hash, viewport, assistant);
  await enterKey(page, user.key);
  await page.getByTestId("identity").waitFor();
  return page;
}


/** Starts a thread that pauses on one action card; returns its id. */
async function pausedThread(page, text) {
  await say(page, text);
  await page.getByTestId("action-card").first().waitFor();
  await page.waitForURL(/#\/t\//);
  return decodeURIComponent(page.url().split("#/t/")[1]);
}

/** Everything the tab keeps in Web Storage, both kinds. */
const storage = (page) =>
  page.evaluate(() => ({
    session: Object.fromEntries(Object.entries(window.sessionStorage)),
    local: Object.fromEntries(Object.entries(window.localStorage)),
  }));

test("with auth on, the console opens on a sign-in screen", { skip }, async () => {
  const page = await open();
  await keyField(page).waitFor();
  assert.equal(await keyField(page).getAttribute("type"), "password");
  assert.equal(await button(page, "Sign in").count(), 1);
  assert.equal(await page.getByTestId("inbox-link").count(), 0);
  await page.screenshot({ path: join(shots, "sign-in.png") });
  await checkAccessibility(page, "the sign-in screen");
  await page.context().close();
});

test("a wrong key is refused in place and the form stays", { skip }, async () => {
  const page = await open();
  await enterKey(page, "not-a-key-of-this-server");
  await page.getByTestId("signin-error").getByText("That key is not valid", { exact: true }).waitFor();
  assert.equal(await keyField(page).isVisible(), true);
  assert.equal(await page.getByTestId("identity").count(), 0);
  assert.deepEqual(await storage(page), { session: {}, local: {} });
  await page.context().close();
});

test("the right key shows who is signed in with their roles, and the inbox", { skip }, async () => {
  const urls = [];
  const page = await open("/inbox");
  page.on("request", (r) => urls.push(r.url()));
  await enterKey(page, ALICE.key);
  assert.equal(await page.getByTestId("identity-name").innerText(), "Alice Archer");
  assert.equal(await page.getByTestId("identity-roles").innerText(), "user");
  await page.getByRole("heading", { name: "Inbox", exact: true }).waitFor();
  await page.getByText("Nothing is waiting. All clear.").waitFor();
  // Kept for this tab only, and never part of an address.
  assert.deepEqual(Object.values((await storage(page)).session), [ALICE.key]);
  assert.deepEqual((await storage(page)).local, {});
  assert.ok(urls.length > 0);
  for (const u of [...urls, page.url()]) assert.ok(!u.includes(ALICE.key), u);
  await page.context().close();
});

test("a user sees only their own threads; a reviewer sees another user's paused thread in the inbox and approves it", { skip }, async () => {
  const alice = await signedIn(ALICE);
  const threadId = await pausedThread(alice, "please email alice the report");

  // Bob, a user, sees his own thread but neither Alice's thread nor her pending review.
  const bob = await signedIn(BOB);
  assert.equal(await bob.getByTestId("identity-name").innerText(), "bob");
  const bobThread = await pausedThread(bob, "email alice from bob's thread");
  await bob.getByTestId("inbox-link").click();
  await bob.locator(`[data-thread="${bobThread}"]`).waitFor();
  assert.deepEqual(await bob.getByTestId("inbox-item").evaluateAll((els) => els.map((e) => e.getAttribute("data-thread"))), [bobThread]);
  assert.equal(await bob.locator(".thread-list").getByText("please email alice the report").count(), 0);

  // Rita, a reviewer, sees both paused threads and decides Alice's.
  const rita = await signedIn(RITA, "/inbox");
  assert.equal(await rita.getByTestId("identity-roles").innerText(), "reviewer");
  await rita.locator(`[data-thread="${bobThread}"]`).waitFor();
  await rita.locator(`[data-thread="${threadId}"]`).click();
  const card = rita.getByTestId("action-card").first();
  await card.waitFor();
  // Alice's turns are hers, not "You" (named once the thread is read; never "You" before).
  assert.notEqual(await rita.getByTestId("msg-human").first().locator(".who").textContent(), "You");
  await rita.getByTestId("msg-human").first().locator(".who", { hasText: /^alice$/ }).waitFor();
  await alice.getByTestId("msg-human").first().locator(".who", { hasText: /^You$/ }).waitFor();
  await button(card, "Approve").click();
  await rita.getByTestId("msg-ai").getByText(/^All done\./).waitFor();
  // Once it runs on, the thread is Alice's alone again: said as such, not as an error.
  await rita.getByTestId("handed-off").getByText(/belongs to alice/).waitFor();
  assert.equal(await rita.getByTestId("error").count(), 0);
  assert.equal(await rita.getByTestId("action-card").count(), 0);

  // Alice's thread ran on; her audit log has the decision, applied.
  await alice.reload();
  await alice.getByTestId("msg-ai").getByText(/^All done\./).waitFor();
  await alice.getByTestId("audit-link").click();
  const entry = alice.locator('[data-testid="audit-entry"][data-outcome="applied"]').filter({ hasText: threadId.slice(-8) });
  await entry.waitFor();
  assert.equal(await entry.getAttribute("data-outcome"), "applied");
  for (const p of [alice, bob, rita]) await p.context().close();
});

test("the inbox shows each review's agent, tool, wait and approvals; approvals are counted one reviewer at a time", { skip }, async () => {
  const alice = await signedIn(ALICE, "", undefined, "guarded");
  const threadId = await pausedThread(alice, "delete the old file");
  // Alice started the thread and the rule is self_approval false: she may reject, not approve.
  const own = alice.getByTestId("action-card").first();
  // Until the thread's owner is loaded the card says it cannot tell; then it says why.
  await own.getByTestId("not-yours").getByText(/may not approve or edit its action \(rule self_approval is off\); you may reject it/).waitFor();
  assert.equal(await button(own, "Approve").count(), 0);
  assert.equal(await button(own, "Reject").count(), 1);
  assert.equal(await own.getByTestId("approvals").innerText(), "0 of 2 approvals");

  const rita = await signedIn(RITA, "/inbox");
  const item = rita.locator(`[data-thread="${threadId}"]`);
  await item.waitFor();
  const text = await item.innerText();
  for (const re of [/delete_file/, /agent guarded/, /started by alice/, /waiting \d+s/, /0 of 2 approvals/]) assert.match(text, re);
  await rita.screenshot({ path: join(shots, "inbox-details.png") });
  await checkAccessibility(rita, "the inbox with approvals");
  await item.click();
  const card = rita.getByTestId("action-card").first();
  await button(card, "Approve").click();
  // One approval of two: recorded, the run stays paused, and Rita may not approve twice.
  await card.getByTestId("approvals").getByText("1 of 2 approvals (by rita)").waitFor();
  assert.match(await card.getByTestId("not-yours").innerText(), /You approved this already; it needs 1 more approval from another reviewer\./);
  assert.equal(await button(card, "Approve").count(), 0);
  await card.scrollIntoViewIfNeeded();
  await rita.screenshot({ path: join(shots, "card-approved-once.png") });
  await checkAccessibility(rita, "a card approved once of two");

  const ray = await signedIn(RAY, "/inbox");
  const rayItem = ray.locator(`[data-thread="${threadId}"]`);
  await rayItem.getByText(/1 of 2 approvals/).waitFor();
  await rayItem.click();
  await button(ray.getByTestId("action-card").first(), "Approve").click();
  await ray.getByTestId("msg-ai").getByText(/^All done\./).waitFor();
  for (const p of [alice, rita, ray]) await p.context().close();
});

test("a card only another role may decide says why instead of offering buttons", { skip }, async () => {
  const alice = await signedIn(ALICE, "", undefined, "guarded");
  const threadId = await pausedThread(alice, "email alice the numbers");
  const card = alice.getByTestId("action-card").first();
  assert.equal(await card.getByTestId("not-yours").innerText(), "You may not decide this: it is for the admin role (rule reviewers).");
  assert.equal(await card.getByRole("button").count(), 0);
  await alice.getByTestId("inbox-link").click();
  const item = alice.locator(`[data-thread="${threadId}"]`);
  await item.getByText(/it is for the admin role/).waitFor();
  await alice.context().close();
});

test("the audit log names the reviewer who decided", { skip }, async () => {
  const alice = await signedIn(ALICE);
  const threadId = await pausedThread(alice, "email alice please");
  const rita = await signedIn(RITA, `/t/${encodeURIComponent(threadId)}`);
  const card = rita.getByTestId("action-card").first();
  await button(card, "Approve").click();
  await rita.getByTestId("msg-ai").getByText(/^All done\./).waitFor();
  await alice.getByTestId("audit-link").click();
  const entry = alice.locator('[data-testid="audit-entry"][data-outcome="applied"]').filter({ hasText: threadId.slice(-8) });
  await entry.waitFor();
  assert.equal(await entry.getByTestId("audit-reviewer").count(), 1, "no reviewer in the entry");
  assert.match(await entry.getByTestId("audit-reviewer").innerText(), /by rita$/);
  for (const p of [alice, rita]) await p.context().close();
});

test("sign-out forgets the key and returns to the sign-in screen", { skip }, async () => {
  const page = await signedIn(BOB);
  await button(page, "Sign out").click();
  await keyField(page).waitFor();
  assert.equal(await page.getByTestId("identity").count(), 0);
  assert.deepEqual(await storage(page), { session: {}, local: {} });
  // A reload stays signed out.
  await page.reload();
  await keyField(page).waitFor();
  await page.context().close();
});

test("a reload of the tab keeps the session", { skip }, async () => {
  const page = await signedIn(RITA);
  await page.reload();
  await page.getByTestId("identity").waitFor();
  assert.equal(await page.getByTestId("identity-name").innerText(), "Rita Reviewer");
  assert.equal(await keyField(page).count(), 0);
  await page.context().close();
});

test("at phone width the header with who is signed in fits and Sign out is in reach", { skip }, async () => {
  const page = await signedIn(RITA, "", { width: 390, height: 760 });
  assert.equal(await page.getByTestId("identity-name").isVisible(), true);
  assert.equal(await button(page, "Sign out").isVisible(), true);
  assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 390);
  await page.context().close();
});

test("a key the server stops accepting returns to sign-in with a message", { skip }, async () => {
  const page = await signedIn(BOB);
  // The server comes back with other keys: Bob's is gone.
  await env.crashServer();
  env.writeUsers(USERS.filter((u) => u !== BOB));
  await env.restartServer();
  try {
    await page.getByTestId("audit-link").click();
    await page.getByTestId("signin-notice").getByText(/did not accept your key \(401\)/).waitFor();
    await keyField(page).waitFor();
    assert.deepEqual(await storage(page), { session: {}, local: {} });
    await enterKey(page, BOB.key);
    await page.getByTestId("signin-error").getByText("That key is not valid", { exact: true }).waitFor();
  } finally {
    await env.crashServer();
    env.writeUsers(USERS);
    await env.restartServer();
    await page.context().close();
  }
});
