// Claims in the console against `tollgate serve` with API keys on: a reviewer claims a review,
// another reviewer's browser shows "rita is looking at this" without a reload (the review
// stream), and the claim goes with the decision. An admin sees the webhook deliveries that
// failed. Tollgate only: the reference server has no API-key users, claims or webhooks.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startAll, root } from "./harness.mjs";
import { say, checkAccessibility } from "./steps.mjs";

const shots = process.env.TOLLGATE_E2E_SCREENSHOTS ?? join(root, "docs", "images");
const T = 20000;
const KIND = process.env.TOLLGATE_E2E_SERVER ?? "tollgate";
const skip = KIND === "tollgate" ? false : "claims exist only on the tollgate server";

const ALICE = { id: "alice", name: "Alice Archer", roles: ["user"], key: "e2e-alice-0b6f2d9c4e8a41f7b3c5d1e9a7f20c64" };
const RITA = { id: "rita", name: "Rita Reviewer", roles: ["reviewer"], key: "e2e-rita-6e1c9a4f2b7d40e8a5c3f1d9b0e7a256" };
const RAY = { id: "ray", roles: ["reviewer"], key: "e2e-ray-2f7a0d5c9e1b46a8d3c7e0f4b9a15c83" };
const ADA = { id: "ada", name: "Ada Admin", roles: ["admin"], key: "e2e-ada-8c3e5a1f7d0b42c9e6a4f2d8b1c07e59" };
const SECRET_ENV = "TOLLGATE_E2E_WEBHOOK_SECRET";
// A receiver nobody listens on: its one try fails, so the delivery log has a failure to show.
const WEBHOOKS = [{ url: "http://127.0.0.1:9/unreachable-hook", secret_env: SECRET_ENV, events: ["review.requested"], max_attempts: 1 }];
let env;

before(async () => {
  if (skip) return;
  env = await startAll({ users: [ALICE, RITA, RAY, ADA], config: { webhooks: WEBHOOKS }, env: { [SECRET_ENV]: "whsec_e2e_0123456789abcdef" } });
  mkdirSync(shots, { recursive: true });
});
after(async () => {
  await env?.stop();
});

const button = (scope, name) => scope.getByRole("button", { name, exact: true });

/** A new browser signed in as `user`, on `hash`. */
const signedIn = (user, hash = "") => env.signedIn(user, { hash, timeout: T });

/** Alice's new thread paused on its email card; its id. */
async function alicesPausedThread() {
  const alice = await signedIn(ALICE);
  await say(alice, "please email alice the report");
  await alice.getByTestId("action-card").first().waitFor();
  await alice.waitForURL(/#\/t\//);
  const id = decodeURIComponent(alice.url().split("#/t/")[1]);
  await alice.context().close();
  return id;
}

test("a claim is seen live from a second reviewer's browser and goes with the decision", { skip }, async () => {
  const threadId = await alicesPausedThread();
  const ray = await signedIn(RAY, `/t/${encodeURIComponent(threadId)}`);
  const rayCard = ray.getByTestId("action-card").first();
  await rayCard.waitFor();
  await button(ray, "Claim send_email").waitFor();
  assert.equal(await ray.getByTestId("claim-text").count(), 0);

  const rita = await signedIn(RITA, `/t/${encodeURIComponent(threadId)}`);
  await rita.getByTestId("action-card").first().waitFor();
  await button(rita, "Claim send_email").click();
  await rita.getByTestId("claim-text").getByText("You are looking at this", { exact: true }).waitFor();
  await button(rita, "Release send_email").waitFor();

  // Ray's page shows it without a reload, and offers no Claim while Rita holds it.
  await ray.getByTestId("claim-text").getByText("rita is looking at this", { exact: true }).waitFor();
  assert.equal(await button(ray, "Claim send_email").count(), 0);
  assert.equal(await button(ray, "Release send_email").count(), 0);
  // The claim is advisory: Ray may still decide.
  assert.equal(await button(rayCard, "Approve").count(), 1);
  await ray.screenshot({ path: join(shots, "claim.png") });
  await checkAccessibility(ray, "a review claimed by another reviewer");

  // In Ray's inbox too.
  await ray.getByTestId("inbox-link").click();
  const row = ray.locator(`li:has([data-thread="${threadId}"])`);
  await row.getByTestId("inbox-claim").getByText("rita is looking at this").waitFor();
  await checkAccessibility(ray, "the inbox with a claimed review");

  // Rita decides: the claim goes with the review, and Ray's inbox no longer lists it.
  await button(rita.getByTestId("action-card").first(), "Approve").click();
  await rita.getByTestId("handed-off").waitFor();
  await row.waitFor({ state: "detached" });
  await ray.context().close();
  await rita.context().close();
});

test("the holder releases the claim and the other reviewer may claim it", { skip }, async () => {
  const threadId = await alicesPausedThread();
  const ray = await signedIn(RAY, "/inbox");
  const row = ray.locator(`li:has([data-thread="${threadId}"])`);
  await row.waitFor();
  const rita = await signedIn(RITA, `/t/${encodeURIComponent(threadId)}`);
  await button(rita, "Claim send_email").click();
  await row.getByTestId("inbox-claim").getByText("rita is looking at this").waitFor();
  await button(rita, "Release send_email").click();
  await rita.getByTestId("claim-text").waitFor({ state: "detached" });
  await row.getByTestId("inbox-claim").waitFor({ state: "detached" });
  await row.getByRole("button", { name: /^Claim / }).click();
  await row.getByTestId("inbox-claim").getByText("You are looking at this").waitFor();
  await rita.getByTestId("claim-text").getByText("ray is looking at this", { exact: true }).waitFor();
  await ray.context().close();
  await rita.context().close();
});

test("an admin sees the webhook deliveries that failed; a reviewer does not", { skip }, async () => {
  await alicesPausedThread();
  const ada = await signedIn(ADA, "/inbox");
  const panel = ada.getByTestId("webhook-failures");
  await panel.getByRole("heading", { name: "Webhook deliveries" }).waitFor();
  const failure = panel.getByTestId("webhook-failure").first();
  await failure.waitFor();
  assert.match(await failure.innerText(), /review\.requested/);
  assert.match(await failure.innerText(), /127\.0\.0\.1:9\/unreachable-hook/);
  assert.match(await failure.innerText(), /failed/);
  await checkAccessibility(ada, "the inbox with webhook failures");
  const rita = await signedIn(RITA, "/inbox");
  await rita.getByRole("heading", { name: "Inbox", exact: true }).waitFor();
  assert.equal(await rita.getByTestId("webhook-failures").count(), 0);
  await ada.context().close();
  await rita.context().close();
});
