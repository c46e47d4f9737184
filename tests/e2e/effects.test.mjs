// The effect-uncertain card (docs/effects.md) in the console: `tollgate serve` started with the
// TOLLGATE_FAULT=crash_after_tool:send_email test seam ends itself right after send_email
// returned, before its result was saved; started again without it, the thread waits with an
// effect_uncertain review of the call, shown as "This may already have happened" with its
// arguments and three answers: run it again (approve), mark not done (reject, with a message),
// give the result (respond). Tollgate only: the seam is this server's.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startAll, root } from "./harness.mjs";
import { say, checkAccessibility } from "./steps.mjs";

const shots = process.env.TOLLGATE_E2E_SCREENSHOTS ?? join(root, "docs", "images");
const T = 30000;
const KIND = process.env.TOLLGATE_E2E_SERVER ?? "tollgate";
const skip = KIND === "tollgate" ? false : "the TOLLGATE_FAULT seam exists only on the tollgate server";
const FAULT = { TOLLGATE_FAULT: "crash_after_tool:send_email" };
let env;

before(async () => {
  if (skip) return;
  env = await startAll({ env: FAULT });
  mkdirSync(shots, { recursive: true });
});
after(async () => {
  await env?.stop();
});

const button = (scope, name) => scope.getByRole("button", { name, exact: true });
const uncertain = (page) => page.getByTestId("effect-uncertain-card");

/** Waits until the thread waits on a review whose first config has `reason`. */
async function waitForReason(threadId, reason) {
  const until = Date.now() + T;
  for (;;) {
    const t = await (await fetch(`${env.api}/threads/${threadId}`)).json();
    const interrupts = Object.values(t.interrupts ?? {}).flat();
    if (t.status === "interrupted" && interrupts[0]?.value?.review_configs?.[0]?.reason === reason) return;
    if (Date.now() > until) throw new Error(`thread ${threadId} did not wait with reason ${reason}: ${JSON.stringify(t).slice(0, 400)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * With the server running under the fault seam: a new thread's email approved in the console,
 * the server ending itself after the call, then started again without the seam. Returns the
 * page, reloaded on the thread that now waits with the effect_uncertain review.
 */
async function crashedCall() {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  page.setDefaultTimeout(T);
  await page.goto(`${env.base}#/`);
  await say(page, "please email alice the report");
  await page.getByTestId("action-card").first().waitFor();
  await page.waitForURL(/#\/t\//);
  const threadId = decodeURIComponent(page.url().split("#/t/")[1]);
  await button(page.getByTestId("action-card").first(), "Approve").click();
  assert.equal(await env.serverExited(), 137);
  await env.restartServer({});
  await waitForReason(threadId, "effect_uncertain");
  await page.reload();
  await uncertain(page).waitFor();
  return page;
}

/** For the next case: the server again under the fault seam. */
async function armFault() {
  await env.crashServer();
  await env.restartServer(FAULT);
}

test("a call cut off by a crash shows as 'This may already have happened' with its arguments; run it again", { skip }, async () => {
  const page = await crashedCall();
  const c = uncertain(page);
  await c.getByRole("heading", { name: "This may already have happened" }).waitFor();
  assert.match(await c.locator("pre.args").innerText(), /"to": "alice@example.com"/);
  for (const name of ["Run it again", "Mark not done", "Give the result"]) assert.equal(await button(c, name).count(), 1, name);
  for (const name of ["Edit", "Approve"]) assert.equal(await button(c, name).count(), 0, name);
  await page.screenshot({ path: join(shots, "effect-uncertain.png") });
  await checkAccessibility(page, "the effect-uncertain card");
  await button(c, "Run it again").click();
  await page.getByTestId("msg-ai").getByText(/^All done\./).waitFor();
  assert.match(await page.getByTestId("tool-result").last().innerText(), /placed in the outbox/);
  await uncertain(page).waitFor({ state: "detached" });
  await page.context().close();
});

test("'Mark not done' rejects the uncertain call with the reviewer's message", { skip }, async () => {
  await armFault();
  const page = await crashedCall();
  const c = uncertain(page);
  await button(c, "Mark not done").click();
  await c.getByLabel(/What happened/).fill("The outbox shows no such mail.");
  await checkAccessibility(page, "the effect-uncertain card's reject form");
  await button(c, "Confirm not done").click();
  await page.getByTestId("msg-ai").getByText(/^All done\./).waitFor();
  assert.match(await page.getByTestId("tool-result").last().innerText(), /The outbox shows no such mail\./);
  await page.context().close();
});

test("'Give the result' answers the uncertain call with the reviewer's text as its result", { skip }, async () => {
  await armFault();
  const page = await crashedCall();
  const c = uncertain(page);
  await button(c, "Give the result").click();
  await c.getByLabel(/The call's result/).fill("Sent at 10:02, message id 42.");
  await button(c, "Send the result").click();
  await page.getByTestId("msg-ai").getByText(/^All done\./).waitFor();
  assert.match(await page.getByTestId("tool-result").last().innerText(), /Sent at 10:02, message id 42\./);
  await page.context().close();
});
