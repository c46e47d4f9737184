// The thread's Timeline view against `tollgate serve` with API-key users: a run that paused on a
// review and the run that resumed it, the decision with its reviewer, keyboard navigation, a
// checkpoint's state, and a fork from the timeline shown as a branch.
// Tollgate only: the reference server has neither the timeline endpoint nor API-key users.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startAll, root } from "./harness.mjs";
import { say, checkAccessibility } from "./steps.mjs";

const shots = process.env.TOLLGATE_E2E_SCREENSHOTS ?? join(root, "docs", "images");
const T = 20000;
const KIND = process.env.TOLLGATE_E2E_SERVER ?? "tollgate";
const skip = KIND === "tollgate" ? false : "the timeline is a tollgate endpoint";

const ALICE = { id: "alice", name: "Alice Archer", roles: ["user"], key: "e2e-alice-5f0c1a9e7b3d42c8a61e0f9d2b7c4a13" };
const RITA = { id: "rita", name: "Rita Reviewer", roles: ["reviewer"], key: "e2e-rita-3c8f1e6a0b9d47f2a5e4c1b7d0938a62" };
let env;

before(async () => {
  if (skip) return;
  env = await startAll({ users: [ALICE, RITA] });
  mkdirSync(shots, { recursive: true });
});
after(async () => {
  await env?.stop();
});

const button = (scope, name) => scope.getByRole("button", { name, exact: true });

const signedIn = (user, hash = "") =>
  env.signedIn(user, { hash, viewport: { width: 1280, height: 900 }, timeout: T });

/** Waits (up to T) until the thread's runs have ended: its status is no longer "busy". */
async function untilIdle(threadId, user) {
  const until = Date.now() + T;
  for (;;) {
    const r = await fetch(`${env.api}/threads/${threadId}`, { headers: { "x-api-key": user.key } });
    const { status } = await r.json();
    if (status !== "busy" || Date.now() > until) return status;
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** Alice's thread, paused on one card and approved by Rita; Alice's page shows its timeline. */
async function resumedThreadTimeline() {
  const alice = await signedIn(ALICE);
  await say(alice, "email alice the summary");
  await alice.getByTestId("action-card").first().waitFor();
  await alice.waitForURL(/#\/t\//);
  const threadId = decodeURIComponent(alice.url().split("#/t/")[1]);
  const rita = await signedIn(RITA, `/t/${encodeURIComponent(threadId)}`);
  await button(rita.getByTestId("action-card").first(), "Approve").click();
  await rita.getByTestId("msg-ai").getByText(/^All done\./).waitFor();
  // The answer streams in before the run ends; a page closed before that would cancel the run
  // it streams (on_disconnect), and the decision would read "cancelled".
  assert.equal(await untilIdle(threadId, ALICE), "idle");
  await rita.context().close();
  await alice.reload();
  await alice.getByTestId("timeline-link").click();
  await alice.waitForURL(/\/timeline$/);
  await alice.getByTestId("timeline-run").nth(1).waitFor();
  return { alice, threadId };
}

test("the timeline shows the paused run, the run that resumed it, and the decision with its reviewer", { skip }, async () => {
  const { alice, threadId } = await resumedThreadTimeline();
  const runs = alice.getByTestId("timeline-run");
  assert.equal(await runs.count(), 2);
  assert.equal(await runs.nth(0).getAttribute("data-paused"), "true");
  assert.match(await runs.nth(0).getByTestId("timeline-paused").innerText(), /^Paused for review at checkpoint …/);
  assert.equal(await runs.nth(1).getAttribute("data-paused"), "false");
  // The resumed run links the run that paused, and back.
  const resumes = runs.nth(1).getByTestId("timeline-resumes");
  assert.match(await resumes.innerText(), /^Resumes run …/);
  assert.equal(await resumes.getByRole("link").getAttribute("href"), `#${await runs.nth(0).getAttribute("id")}`);
  assert.match(await runs.nth(0).getByTestId("timeline-resumed-by").innerText(), /^Resumed by run …/);
  // The pause: the gated call, the decision, who sent it and when.
  const pause = runs.nth(0).locator('[data-testid="timeline-step"][data-kind="interrupt"]');
  assert.match(await pause.innerText(), /Review asked: send_email/);
  const decision = pause.getByTestId("timeline-decision");
  assert.equal(await decision.getAttribute("data-outcome"), "applied");
  assert.equal(await decision.getByTestId("timeline-reviewer").innerText(), "rita");
  assert.match(await decision.innerText(), /^approve by rita at .+ applied$/);
  assert.ok(await decision.locator("time").getAttribute("datetime"));
  // The approved call ran in the resumed run.
  const tool = runs.nth(1).locator('[data-testid="timeline-step"][data-kind="tool_call"]');
  assert.match(await tool.innerText(), /Tool send_email/);
  // Keyboard: the arrows move between steps, Enter opens one with its arguments and result.
  await alice.locator("[data-step-toggle]").first().focus();
  await alice.keyboard.press("End");
  await alice.keyboard.press("ArrowUp");
  await alice.keyboard.press("Home");
  assert.equal(await alice.evaluate(() => document.activeElement === document.querySelector("[data-step-toggle]")), true);
  await tool.locator("[data-step-toggle]").focus();
  await alice.keyboard.press("Enter");
  assert.equal(await tool.locator("[data-step-toggle]").getAttribute("aria-expanded"), "true");
  assert.match(await tool.innerText(), /Arguments[\s\S]*alice@example\.com[\s\S]*Result/);
  await alice.screenshot({ path: join(shots, "timeline.png"), fullPage: true });
  await checkAccessibility(alice, "the timeline");
  // Export JSON downloads the endpoint's JSON.
  const [download] = await Promise.all([alice.waitForEvent("download"), button(alice, "Export JSON").click()]);
  assert.equal(download.suggestedFilename(), `timeline-${threadId}.json`);
  await alice.context().close();
});

test("a fork from a step's checkpoint is shown as a branch of the timeline", { skip }, async () => {
  const { alice } = await resumedThreadTimeline();
  const pause = alice.getByTestId("timeline-run").nth(0).locator('[data-testid="timeline-step"][data-kind="interrupt"]');
  await pause.locator("[data-step-toggle]").click();
  await button(pause, "Open state").click();
  assert.match(await pause.getByTestId("checkpoint-state").innerText(), /email alice the summary/);
  // What if the reviewer had said no: the fork adds the rejection the agent would have seen.
  await button(pause, "Fork from here").click();
  const editor = pause.getByTestId("fork-editor");
  await editor.getByLabel(/^Values of the fork/).fill(JSON.stringify({ messages: [{ type: "human", content: "What if the reviewer had said no?" }] }));
  await button(editor, "Create fork").click();
  await alice.getByTestId("fork-created").waitFor();
  const branch = alice.locator('[data-testid="timeline-checkpoint"][data-branch="true"]');
  await branch.waitFor();
  assert.equal(await branch.count(), 1);
  assert.equal(await branch.getAttribute("data-lane"), "1");
  assert.match(await branch.innerText(), /branch 1 from …/);
  assert.match(await branch.innerText(), /state written by alice/);
  await branch.scrollIntoViewIfNeeded();
  await alice.screenshot({ path: join(shots, "timeline-fork.png"), fullPage: true });
  await checkAccessibility(alice, "the timeline with a fork");
  await alice.context().close();
});
