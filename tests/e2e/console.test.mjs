// The review console in headless Chromium against a real Agent Server (see harness.mjs):
// `tollgate serve` with the scripted agents of tollgate-e2e.json by default, the JS reference
// server with reference-graph/console_graph.ts when TOLLGATE_E2E_SERVER=reference.
// Every test starts its own thread through the UI, as a person would.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startAll, root } from "./harness.mjs";
import { say, checkAccessibility } from "./steps.mjs";

const shots = process.env.TOLLGATE_E2E_SCREENSHOTS ?? join(root, "docs", "images");
const T = 20000;
let env;

// What differs between the two servers: tool results, the agent that answers in camelCase, the
// agent that raises a plain (non-HITL) interrupt value, and whether a resume of a thread that
// is no longer paused is refused (tollgate: 409; the JS server runs it as a no-op).
const FIXTURES = {
  tollgate: {
    emailed: (to) => new RegExp(`Email to ${to.replace(/\./g, "\\.")} placed in the outbox`),
    camel: { assistant: "console_js", prompt: "email alice, camel style" },
    plain: { assistant: "hitl", prompt: "clean up /tmp/x", question: /"question": "Approve tool call delete_file\?"/, result: /^decision=blue$/, done: /^Done\. Human said: blue/ },
    staleRefused: true,
  },
  reference: {
    emailed: (to) => new RegExp(`Email sent to ${to.replace(/\./g, "\\.")}`),
    camel: { assistant: "console", prompt: "email alice, camel style" },
    plain: { assistant: "console", prompt: "choose a colour", question: /"question": "Which colour should the report cover be\?"/, result: /Colour chosen: blue\./, done: /^All done\./ },
    staleRefused: false,
  },
};
const KIND = process.env.TOLLGATE_E2E_SERVER ?? "tollgate";
const fx = FIXTURES[KIND];
/** The `skip` option of a test that needs one server's agents. */
const onlyOn = (kind) => (KIND === kind ? false : `needs the ${kind} server's agents`);

before(async () => {
  env = await startAll();
  assert.equal(env.kind, KIND);
  mkdirSync(shots, { recursive: true });
});
after(async () => {
  await env?.stop();
});

/**
 * A console tab. `liveReviews: false` keeps it off GET /reviews/stream, as a tab whose live
 * updates were lost: it keeps showing what it loaded (a stale or expired card) until it acts.
 */
async function open(hash = "", { viewport = { width: 1280, height: 860 }, assistant, liveReviews = true } = {}) {
  const context = await env.browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(T);
  if (!liveReviews) await page.route("**/reviews/stream", (route) => route.abort());
  await page.goto(`${assistant ? env.baseFor(assistant) : env.base}#${hash}`);
  return page;
}


/** Sends a message and waits for the run to pause with `n` action cards. */
async function pauseWith(page, text, n = 1) {
  await say(page, text);
  await page.getByTestId("action-card").nth(n - 1).waitFor();
  assert.equal(await page.getByTestId("action-card").count(), n);
  await page.waitForURL(/#\/t\//);
}

/** Records the `command.resume` values the page sends. */
function resumes(page) {
  const sent = [];
  page.on("request", (r) => {
    if (r.method() !== "POST" || !/\/runs\/stream$/.test(new URL(r.url()).pathname)) return;
    const body = JSON.parse(r.postData() ?? "{}");
    if (body.command && "resume" in body.command) sent.push(body.command.resume);
  });
  return sent;
}

const threadOf = (page) => decodeURIComponent(page.url().split("#/t/")[1]);
const card = (page, i = 0) => page.getByTestId("action-card").nth(i);
const button = (scope, name) => scope.getByRole("button", { name, exact: true });
const finalAnswer = (page, re = /^All done\./) => page.getByTestId("msg-ai").getByText(re).waitFor();
/** No action card is left (the last one goes once the run's final state has arrived). */
const noCards = (page) => page.getByTestId("action-card").first().waitFor({ state: "detached" });
/** No form card is pending any more. */
const noForms = (page) => page.getByTestId("form-card").first().waitFor({ state: "detached" });

/** The thread's status once no run is busy on it (a run may still be closing after its last event). */
async function threadStatus(threadId) {
  const until = Date.now() + T;
  for (;;) {
    const r = await fetch(`${env.api}/threads/${threadId}`);
    const { status } = await r.json();
    if (status !== "busy" || Date.now() > until) return status;
    await new Promise((done) => setTimeout(done, 100));
  }
}

test("approve runs the tool and the agent finishes", async () => {
  const page = await open();
  await pauseWith(page, "please email alice the report");
  const c = card(page);
  assert.match(await c.locator(".tool-name").innerText(), /send_email/);
  assert.match(await c.locator("pre.args").innerText(), /"to": "alice@example.com"/);
  for (const name of ["Approve", "Edit", "Reject", "Respond"]) assert.equal(await button(c, name).count(), 1, name);
  await button(c, "Approve").scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(shots, "chat-pending.png") });
  await checkAccessibility(page, "a pending card");
  await button(c, "Approve").click();
  await finalAnswer(page);
  await noCards(page);
  await checkAccessibility(page, "the chat after the run");
  assert.match(await page.getByTestId("tool-result").last().innerText(), fx.emailed("alice@example.com"));
  await noCards(page);
  assert.equal(await threadStatus(threadOf(page)), "idle");
  await page.context().close();
});

test("edit shows invalid JSON and schema errors in place, then sends edited_action and the edited call runs", async () => {
  const page = await open();
  await pauseWith(page, "email alice please");
  const sent = resumes(page);
  const c = card(page);
  await button(c, "Edit").click();
  const editor = c.locator("textarea");
  const run = c.getByRole("button", { name: "Run with these arguments" });
  await editor.fill('{"to": "bob@example.com", ');
  await c.getByText(/Not valid JSON/).waitFor();
  assert.equal(await run.isDisabled(), true);
  await editor.fill('{"to": "not-an-address", "subject": ""}');
  await c.getByText(/to must match format "email"/).waitFor();
  assert.match(await c.getByTestId("edit-errors").innerText(), /subject must NOT have fewer than 1 characters/);
  assert.equal(await run.isDisabled(), true);
  await c.getByRole("button", { name: "Cancel" }).scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(shots, "edit-inline-error.png") });
  await checkAccessibility(page, "the argument editor with errors");
  await editor.fill('{"to": "bob@example.com", "subject": "Edited subject", "body": "See you at the review."}');
  await c.getByTestId("edit-errors").getByText(/./).waitFor({ state: "detached" });
  await run.click();
  await finalAnswer(page);
  assert.match(await page.getByTestId("tool-result").last().innerText(), fx.emailed("bob@example.com"));
  assert.deepEqual(sent, [{ decisions: [{ type: "edit", edited_action: { name: "send_email", args: { to: "bob@example.com", subject: "Edited subject", body: "See you at the review." } } }] }]);
  await page.context().close();
});

test("an edited call shows the arguments that ran, with the proposal diff-style beside", { skip: onlyOn("tollgate") }, async () => {
  const page = await open();
  await pauseWith(page, "email alice, then let me edit it");
  const c = card(page);
  await button(c, "Edit").click();
  await c.locator("textarea").fill('{"to": "bob@example.com", "subject": "Quarterly report", "body": "Hi Bob, the report is attached."}');
  await c.getByRole("button", { name: "Run with these arguments" }).click();
  await finalAnswer(page);
  const step = page.getByTestId("tool-step").last();
  const edited = step.getByTestId("edited-call");
  await edited.waitFor();
  assert.deepEqual(JSON.parse(await edited.getByTestId("ran-args").innerText()), { to: "bob@example.com", subject: "Quarterly report", body: "Hi Bob, the report is attached." });
  // In the proposal's key order (the server keeps JSON objects with sorted keys).
  assert.deepEqual((await edited.getByTestId("proposed-diff").innerText()).split("\n").filter(Boolean), [
    '- body: "Hi Alice, the report is attached."',
    '+ body: "Hi Bob, the report is attached."',
    '  subject: "Quarterly report"',
    '- to: "alice@example.com"',
    '+ to: "bob@example.com"',
  ]);
  assert.match(await step.getByTestId("tool-result").innerText(), fx.emailed("bob@example.com"));
  await page.reload();
  await page.getByTestId("tool-step").last().getByTestId("edited-call").waitFor();
  await page.getByTestId("tool-step").last().scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(shots, "edited-call.png") });
  await checkAccessibility(page, "an edited call");
  await page.context().close();
});

test("reject sends the reason, the tool does not run and the agent sees the reason", async () => {
  const page = await open();
  await pauseWith(page, "email alice now");
  const sent = resumes(page);
  const c = card(page);
  await button(c, "Reject").click();
  await c.getByLabel(/Reason/).fill("Not before the review meeting");
  await checkAccessibility(page, "the reject form");
  await c.getByRole("button", { name: "Confirm reject" }).click();
  // The scripted model's last reply quotes the tool results it was given.
  await finalAnswer(page, /^All done\. .*Not before the review meeting/);
  const step = page.getByTestId("tool-step").last();
  assert.match(await step.getAttribute("class"), /step-error/);
  assert.match(await step.innerText(), /Not before the review meeting/);
  assert.doesNotMatch(await step.innerText(), fx.emailed("alice@example.com"));
  assert.deepEqual(sent, [{ decisions: [{ type: "reject", message: "Not before the review meeting" }] }]);
  await page.context().close();
});

test("respond to a respond-only question makes the answer the tool's result", { skip: onlyOn("tollgate") }, async () => {
  const page = await open();
  await pauseWith(page, "ask me where the offsite is");
  const c = card(page);
  assert.match(await c.innerText(), /Which city is the offsite in\?/);
  for (const name of ["Approve", "Edit", "Reject"]) assert.equal(await button(c, name).count(), 0, name);
  await button(c, "Respond").click();
  const send = c.getByRole("button", { name: "Send answer" });
  assert.equal(await send.isDisabled(), true);
  await c.getByLabel(/Your answer/).fill("Porto, in the old customs house.");
  await send.click();
  await finalAnswer(page);
  assert.equal(await page.getByTestId("tool-result").last().innerText(), "Porto, in the old customs house.");
  await page.context().close();
});

test("two actions in one turn are decided separately and submitted together in order", async () => {
  const page = await open();
  await pauseWith(page, "do both tasks", 2);
  const email = card(page, 0);
  const del = card(page, 1);
  assert.match(await del.innerText(), /delete_file/);
  assert.equal(await button(del, "Edit").count(), 0);
  assert.equal(await button(del, "Respond").count(), 0);
  const submit = page.getByRole("button", { name: "Submit 2 decisions" });
  await button(email, "Approve").click();
  assert.equal(await submit.isDisabled(), true);
  await button(del, "Reject").click();
  await del.getByRole("button", { name: "Confirm reject" }).click();
  const sent = resumes(page);
  await submit.click();
  await finalAnswer(page);
  assert.deepEqual(sent, [{ decisions: [{ type: "approve" }, { type: "reject" }] }]);
  const steps = page.getByTestId("tool-step");
  assert.match(await steps.nth(0).innerText(), fx.emailed("alice@example.com"));
  assert.match(await steps.nth(1).innerText(), /User rejected the tool call for `delete_file`/);
  await page.context().close();
});

test("a paused thread shows its pending card and how long it waits after a reload and in another browser", async () => {
  const page = await open();
  await pauseWith(page, "email alice later");
  const url = page.url();
  // The wait is counted from the pause, not from when the page was loaded.
  await new Promise((r) => setTimeout(r, 2500));
  await page.reload();
  await card(page).waitFor();
  const [, seconds] = (await page.getByTestId("waiting").innerText()).match(/^waiting (\d+)s$/) ?? [];
  assert.ok(Number(seconds) >= 2, `waiting ${seconds}s after 2.5 s`);
  assert.match(await page.getByTestId("msg-human").first().innerText(), /email alice later/);
  const other = await open(url.slice(url.indexOf("#") + 1));
  await card(other).waitFor();
  assert.match(await other.getByTestId("waiting").innerText(), /^waiting \d+/);
  await button(card(other), "Approve").click();
  await finalAnswer(other);
  await page.reload();
  await finalAnswer(page);
  await noCards(page);
  await other.context().close();
  await page.context().close();
});

test("a card decided in another browser is refused with the server's message and stops asking", async () => {
  // Without the live review stream (which would take the decided card away at once).
  const page = await open("", { liveReviews: false });
  await pauseWith(page, "email alice twice");
  const url = page.url();
  const other = await open(url.slice(url.indexOf("#") + 1));
  await card(other).waitFor();
  await button(card(other), "Approve").click();
  await finalAnswer(other);
  // The first browser still shows the card it loaded; deciding on it now must not run anything.
  await button(card(page), "Approve").click();
  if (fx.staleRefused) {
    const alert = page.getByTestId("error");
    await alert.waitFor();
    assert.match(await alert.innerText(), /The server refused the request \(409\): .*no pending interrupt/);
  }
  await page.getByTestId("action-card").waitFor({ state: "detached" });
  assert.equal(await threadStatus(threadOf(page)), "idle");
  await page.reload();
  await finalAnswer(page);
  assert.equal(await page.getByTestId("tool-result").count(), 1, "the email was sent once");
  await other.context().close();
  await page.context().close();
});

test("the inbox lists paused threads oldest first and opens them", async () => {
  const first = await open();
  await pauseWith(first, "delete the old file");
  const firstId = threadOf(first);
  const second = await open();
  await pauseWith(second, "email alice from the inbox");
  const secondId = threadOf(second);
  const inbox = await open("/inbox");
  await inbox.locator(`[data-thread="${secondId}"]`).waitFor();
  const ids = await inbox.getByTestId("inbox-item").evaluateAll((els) => els.map((e) => e.getAttribute("data-thread")));
  assert.ok(ids.indexOf(firstId) >= 0 && ids.indexOf(firstId) < ids.indexOf(secondId), `order ${ids}`);
  const item = inbox.locator(`[data-thread="${firstId}"]`);
  assert.match(await item.innerText(), /delete_file/);
  assert.match(await item.innerText(), /waiting \d+/);
  await inbox.screenshot({ path: join(shots, "inbox.png") });
  await checkAccessibility(inbox, "the inbox");
  await item.click();
  await card(inbox).waitFor();
  assert.match(await card(inbox).innerText(), /delete_file/);
  await button(card(inbox), "Approve").click();
  await finalAnswer(inbox);
  await inbox.getByTestId("inbox-link").click();
  await inbox.locator(`[data-thread="${secondId}"]`).waitFor();
  await inbox.locator(`[data-thread="${firstId}"]`).waitFor({ state: "detached" });
  for (const p of [first, second, inbox]) await p.context().close();
});

test("a tool that fails is shown as a failed step and the agent goes on", { skip: onlyOn("tollgate") }, async () => {
  const page = await open();
  await say(page, "read the missing file");
  await finalAnswer(page);
  const step = page.getByTestId("tool-step").last();
  assert.equal(await step.getAttribute("data-tool"), "read_file");
  assert.match(await step.getAttribute("class"), /step-error/);
  assert.match(await step.innerText(), /no-such-file\.txt/);
  await noCards(page);
  await page.context().close();
});

test("a form raised inside a tool renders as a form and its answer reaches the tool", { skip: onlyOn("reference") }, async () => {
  const page = await open();
  await say(page, "book a flight to Lisbon");
  const form = page.getByTestId("form-interrupt");
  await form.waitFor();
  await form.getByLabel("Seat").fill("12A");
  await form.getByLabel("Confirm the booking").check();
  await form.getByRole("button", { name: "Send" }).click();
  await finalAnswer(page);
  assert.match(await page.getByTestId("tool-result").last().innerText(), /Booked Lisbon, seat 12A/);
  await page.context().close();
});

const formCard = (page) => page.getByTestId("form-card");

test("a tool's form card renders each field kind with its defaults and checks the response schema in place", { skip: onlyOn("tollgate") }, async () => {
  const page = await open();
  await say(page, "book a flight to Lisbon for me");
  const form = formCard(page);
  await form.waitFor();
  assert.equal(await form.getAttribute("data-form-type"), "flight_booking");
  assert.equal(await form.getByTestId("flight-route").innerText(), "✈ Berlin → Lisbon", "the formType's own renderer");
  assert.equal(await form.getByRole("heading", { name: "Book a flight to Lisbon" }).count(), 1);
  const control = (label) => form.getByLabel(label, { exact: true });
  assert.deepEqual(
    await Promise.all(["Traveller", "Departure date", "Cabin", "Passengers", "Budget", "Notes for the agent"].map((l) => control(l).evaluate((el) => [el.tagName.toLowerCase(), el.getAttribute("type"), el.value]))),
    [["input", "text", ""], ["input", "date", "2027-01-15"], ["select", null, "economy"], ["input", "number", "1"], ["input", "number", "400"], ["textarea", null, ""]],
  );
  assert.equal(await control("Window seat").isChecked(), true);
  assert.equal(await form.getByText("EUR", { exact: true }).count(), 1);
  const approve = button(form, "Approve");
  assert.equal(await approve.isDisabled(), true);
  await form.getByTestId("form-errors").getByText("Traveller is required").waitFor();
  await control("Traveller").fill("Ana Reis");
  await control("Passengers").fill("12");
  await form.getByTestId("form-errors").getByText("passengers must be <= 9").waitFor();
  assert.equal(await approve.isDisabled(), true);
  assert.equal(await control("Passengers").getAttribute("aria-invalid"), "true");
  await page.screenshot({ path: join(shots, "form-card.png") });
  await checkAccessibility(page, "a form card with an error");
  await control("Passengers").fill("2");
  await form.getByTestId("form-errors").getByText(/./).waitFor({ state: "detached" });
  assert.equal(await approve.isDisabled(), false);
  await page.context().close();
});

test("an approved form card sends {approved, values}, the tool books it, and the resolved card stays after a reload", { skip: onlyOn("tollgate") }, async () => {
  const page = await open();
  await say(page, "book a flight to Lisbon in january");
  const form = formCard(page);
  await form.waitFor();
  const sent = resumes(page);
  const control = (label) => form.getByLabel(label, { exact: true });
  await control("Traveller").fill("Ana Reis");
  await control("Cabin").selectOption("business");
  await control("Passengers").fill("2");
  await control("Budget").fill("950.5");
  await control("Window seat").uncheck();
  await control("Notes for the agent").fill("Aisle if possible");
  await button(form, "Approve").click();
  await finalAnswer(page);
  assert.match(await page.getByTestId("tool-result").last().innerText(),
    /^Booked Berlin to Lisbon on 2027-01-15 for Ana Reis, business, 2 passengers, budget 950\.5 EUR\. Notes: Aisle if possible$/);
  assert.deepEqual(sent, [{ approved: true, values: { traveller: "Ana Reis", date: "2027-01-15", cabin: "business", passengers: 2, budget: 950.5, window_seat: false, notes: "Aisle if possible" } }]);
  await noForms(page);
  const kept = page.getByTestId("resolved-card");
  assert.equal(await kept.getAttribute("data-approved"), "true");
  await page.reload();
  await finalAnswer(page);
  assert.equal(await kept.count(), 1, "the resolved card is part of the thread");
  assert.match(await kept.innerText(), /Book a flight to Lisbon[\s\S]*Approved[\s\S]*traveller\s*Ana Reis/);
  await kept.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(shots, "form-resolved.png") });
  await checkAccessibility(page, "a resolved form card");
  await page.context().close();
});

test("a declined form card books nothing and stays in the thread as declined", { skip: onlyOn("tollgate") }, async () => {
  const page = await open();
  await say(page, "book a flight to Lisbon, or not");
  const form = formCard(page);
  await form.waitFor();
  const sent = resumes(page);
  await button(form, "Decline").click();
  await finalAnswer(page);
  assert.equal(await page.getByTestId("tool-result").last().innerText(), "The person declined the booking of a flight from Berlin to Lisbon.");
  assert.equal(sent[0].approved, false);
  await page.reload();
  await finalAnswer(page);
  assert.equal(await page.getByTestId("resolved-card").getAttribute("data-approved"), "false");
  await page.context().close();
});

test("a review's deadline counts down, is red when close, and the expired card offers no decision", { skip: onlyOn("tollgate") }, async () => {
  // The `timed` agent's email review has an 8 s deadline (tests/e2e/tollgate-e2e.json): the
  // server sets review_configs[0].expires_at and answers the review itself when it passes.
  // Without the live review stream, which replaces the card by the server's rejection as soon
  // as the deadline passes; the card's own countdown is what this checks.
  const page = await open("", { assistant: "timed", liveReviews: false });
  await pauseWith(page, "email alice before the deadline");
  const deadline = card(page).getByTestId("deadline");
  assert.equal(await deadline.getAttribute("data-state"), "close");
  assert.match(await deadline.innerText(), /^Decide within \d s \(by /);
  assert.equal(await deadline.evaluate((el) => getComputedStyle(el).color), "rgb(185, 28, 28)");
  await page.screenshot({ path: join(shots, "deadline-close.png") });
  await checkAccessibility(page, "a card with a close deadline");
  await card(page).locator('[data-testid="deadline"][data-state="expired"]').waitFor({ timeout: 15000 });
  assert.match(await deadline.innerText(), /^Expired at .*: the server no longer takes a decision on this review\.$/);
  assert.equal(await card(page).getByRole("button").count(), 0, "no decision is offered");
  await page.screenshot({ path: join(shots, "deadline-expired.png") });
  await checkAccessibility(page, "an expired card");
  // The server rejected it on its deadline: after a reload the thread shows the rejection.
  await page.reload();
  await finalAnswer(page);
  assert.match(await page.getByTestId("tool-result").last().innerText(), /No reviewer decided within the time allowed, so the action was not executed\./);
  await page.context().close();
});

test("camelCase payloads are read and answered in camelCase", async () => {
  const page = await open("", { assistant: fx.camel.assistant });
  await pauseWith(page, fx.camel.prompt);
  const sent = resumes(page);
  const c = card(page);
  await button(c, "Edit").click();
  await c.locator("textarea").fill('{"to": "carol@example.com", "subject": "Hello", "body": "Hi Carol."}');
  await c.getByRole("button", { name: "Run with these arguments" }).click();
  await finalAnswer(page);
  assert.match(await page.getByTestId("tool-result").last().innerText(), fx.emailed("carol@example.com"));
  assert.deepEqual(sent, [{ decisions: [{ type: "edit", editedAction: { name: "send_email", args: { to: "carol@example.com", subject: "Hello", body: "Hi Carol." } } }] }]);
  await page.context().close();
});

test("any other interrupt value is shown as JSON and answered as text or JSON", async () => {
  const page = await open("", { assistant: fx.plain.assistant });
  await say(page, fx.plain.prompt);
  const box = page.getByTestId("free-interrupt");
  await box.waitFor();
  assert.match(await box.locator("pre.args").innerText(), fx.plain.question);
  const sent = resumes(page);
  await box.getByLabel(/Your answer/).fill('{"colour": "green"}');
  await box.getByText("Will be sent as JSON.").waitFor();
  await box.getByLabel(/Your answer/).fill("blue");
  await box.getByText("Will be sent as text.").waitFor();
  await checkAccessibility(page, "a free answer");
  await box.getByRole("button", { name: "Send answer" }).click();
  await finalAnswer(page, fx.plain.done);
  assert.match(await page.getByTestId("tool-result").last().innerText(), fx.plain.result);
  assert.deepEqual(sent, ["blue"]);
  await page.context().close();
});

test("phone width: the pending card fits and is decided with the keyboard alone", async () => {
  const page = await open("", { viewport: { width: 390, height: 844 } });
  await pauseWith(page, "email alice from my phone");
  const approve = button(card(page), "Approve");
  const box = await approve.boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 390, "Approve fits the screen");
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.equal(overflow, 0, "no sideways scrolling");
  await page.screenshot({ path: join(shots, "phone.png") });
  await checkAccessibility(page, "a pending card at phone width");
  // Tab from the top of the page until the Approve button has the focus.
  await page.locator("body").focus();
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await approve.evaluate((el) => el === document.activeElement);
  }
  assert.ok(reached, "Approve is reachable with Tab");
  await page.keyboard.press("Enter");
  await finalAnswer(page);
  await page.context().close();
});

test("an unreachable server is reported clearly", async () => {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  const web = new URL(env.base);
  web.searchParams.set("api", "http://127.0.0.1:9");
  await page.goto(web.toString());
  const alert = page.getByTestId("offline");
  await alert.waitFor({ timeout: T });
  assert.match(await alert.innerText(), /Cannot reach the server at http:\/\/127.0.0.1:9/);
  await context.close();
});

test("a server killed while a run is paused: the decision says the server is unreachable; after a restart the card is still there and answerable", { skip: onlyOn("tollgate") }, async () => {
  const page = await open();
  await pauseWith(page, "email alice before the restart");
  await env.crashServer();
  try {
    await button(card(page), "Approve").click();
    const alert = page.getByTestId("error");
    await alert.waitFor();
    assert.match(await alert.innerText(), new RegExp(`Cannot reach the server at ${env.api.replace(/\./g, "\\.")}`));
    assert.equal(await card(page).locator(".badge").count(), 0, "the decision is not shown as taken");
  } finally {
    await env.restartServer();
  }
  await page.reload();
  await card(page).waitFor();
  assert.match(await page.getByTestId("waiting").innerText(), /^waiting \d+/);
  await button(card(page), "Approve").click();
  await finalAnswer(page);
  assert.match(await page.getByTestId("tool-result").last().innerText(), fx.emailed("alice@example.com"));
  await page.context().close();
});

test("a decision the server refuses (422) shows the server's message and the card stays answerable", { skip: onlyOn("tollgate") }, async () => {
  const page = await open();
  await pauseWith(page, "delete the old file");
  const threadId = threadOf(page);
  // The console only offers allowed decisions; send one delete_file does not allow, as an
  // outdated or misbehaving client would, and let the real server judge it.
  let statuses = [];
  page.on("response", (r) => {
    if (r.request().method() === "POST" && /\/runs\/stream$/.test(new URL(r.url()).pathname)) statuses.push(r.status());
  });
  await page.route(/\/runs\/stream$/, async (route) => {
    const body = JSON.parse(route.request().postData() ?? "{}");
    if (body.command?.resume) body.command.resume = { decisions: [{ type: "respond", message: "done by hand" }] };
    await route.continue({ postData: JSON.stringify(body) });
  });
  await button(card(page), "Approve").click();
  const alert = page.getByTestId("error");
  await alert.waitFor();
  assert.deepEqual(statuses, [422]);
  assert.match(await alert.innerText(), /The server refused the request \(422\): .*Decision type 'respond' is not allowed for tool 'delete_file'/);
  assert.equal(await threadStatus(threadId), "interrupted");
  assert.equal(await card(page).locator(".badge").count(), 0, "the refused decision is not shown as taken");
  await page.unroute(/\/runs\/stream$/);
  statuses = [];
  await button(card(page), "Approve").click();
  await finalAnswer(page);
  assert.equal(await page.getByTestId("error").count(), 0);
  await page.context().close();
});

test("the audit log lists each decision with what was pending and its outcome, refused ones too", { skip: onlyOn("tollgate") }, async () => {
  const page = await open();
  await pauseWith(page, "delete the old file");
  const threadId = threadOf(page);
  await page.route(/\/runs\/stream$/, async (route) => {
    const body = JSON.parse(route.request().postData() ?? "{}");
    if (body.command?.resume) body.command.resume = { decisions: [{ type: "respond", message: "done by hand" }] };
    await route.continue({ postData: JSON.stringify(body) });
  });
  await button(card(page), "Approve").click();
  await page.getByTestId("error").waitFor();
  await page.unroute(/\/runs\/stream$/);
  await button(card(page), "Approve").click();
  await finalAnswer(page);

  await page.getByTestId("audit-link").click();
  const entries = page.getByTestId("audit-entry").filter({ hasText: threadId.slice(-8) });
  await entries.nth(1).waitFor();
  assert.equal(await entries.nth(0).getAttribute("data-outcome"), "applied");
  assert.match(await entries.nth(0).innerText(), /delete_file[\s\S]*decided: approve/);
  assert.equal(await entries.nth(1).getAttribute("data-outcome"), "refused");
  assert.match(await entries.nth(1).innerText(), /decided: respond "done by hand"[\s\S]*not allowed/);
  await checkAccessibility(page, "the audit log");
  await page.context().close();
});
