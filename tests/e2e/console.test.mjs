// The review console in headless Chromium against a real Agent Server (see harness.mjs).
// Every test starts its own thread through the UI, as a person would.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startAll, root } from "./harness.mjs";

const shots = process.env.TOLLGATE_E2E_SCREENSHOTS ?? join(root, "docs", "images");
const T = 20000;
let env;

before(async () => {
  env = await startAll();
  mkdirSync(shots, { recursive: true });
});
after(async () => {
  await env?.stop();
});

async function open(hash = "", viewport = { width: 1280, height: 860 }) {
  const context = await env.browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(T);
  await page.goto(`${env.base}#${hash}`);
  return page;
}

async function say(page, text) {
  const box = page.locator("#composer-input");
  await box.fill(text);
  await box.press("Enter");
  await page.getByText(text, { exact: true }).first().waitFor();
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

const card = (page, i = 0) => page.getByTestId("action-card").nth(i);
const finalAnswer = (page) => page.getByText(/^All done\./).waitFor();

test("approve runs the tool and the agent finishes", async () => {
  const page = await open();
  await pauseWith(page, "please email alice the report");
  const c = card(page);
  assert.match(await c.locator(".tool-name").innerText(), /send_email/);
  assert.match(await c.locator("pre.args").innerText(), /"to": "alice@example.com"/);
  for (const name of ["Approve", "Edit", "Reject", "Respond"]) assert.equal(await c.getByRole("button", { name, exact: true }).count(), 1, name);
  await c.getByRole("button", { name: "Approve", exact: true }).scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(shots, "chat-pending.png") });
  await c.getByRole("button", { name: "Approve", exact: true }).click();
  await finalAnswer(page);
  assert.match(await page.getByTestId("tool-result").last().innerText(), /Email sent to alice@example.com/);
  assert.equal(await page.getByTestId("action-card").count(), 0);
  await page.context().close();
});

test("edit shows invalid JSON and schema errors in place, then sends edited_action and the edited call runs", async () => {
  const page = await open();
  await pauseWith(page, "email alice please");
  const sent = resumes(page);
  const c = card(page);
  await c.getByRole("button", { name: "Edit", exact: true }).click();
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
  await editor.fill('{"to": "bob@example.com", "subject": "Edited subject"}');
  await c.getByTestId("edit-errors").getByText(/./).waitFor({ state: "detached" });
  await run.click();
  await finalAnswer(page);
  assert.match(await page.getByTestId("tool-result").last().innerText(), /Email sent to bob@example.com with subject "Edited subject"/);
  assert.deepEqual(sent, [{ decisions: [{ type: "edit", edited_action: { name: "send_email", args: { to: "bob@example.com", subject: "Edited subject" } } }] }]);
  await page.context().close();
});

test("reject sends the reason and the tool does not run", async () => {
  const page = await open();
  await pauseWith(page, "email alice now");
  const c = card(page);
  await c.getByRole("button", { name: "Reject", exact: true }).click();
  await c.getByLabel(/Reason/).fill("Not before the review meeting");
  await c.getByRole("button", { name: "Confirm reject" }).click();
  await finalAnswer(page);
  const step = page.getByTestId("tool-step").last();
  assert.match(await step.getAttribute("class"), /step-error/);
  assert.match(await step.innerText(), /with reason: Not before the review meeting/);
  await page.context().close();
});

test("respond makes the answer the tool's result", async () => {
  const page = await open();
  await pauseWith(page, "email alice when you can");
  const c = card(page);
  await c.getByRole("button", { name: "Respond", exact: true }).click();
  const send = c.getByRole("button", { name: "Send answer" });
  assert.equal(await send.isDisabled(), true);
  await c.getByLabel(/Your answer/).fill("Alice is on leave; I told her in person.");
  await send.click();
  await finalAnswer(page);
  assert.equal(await page.getByTestId("tool-result").last().innerText(), "Alice is on leave; I told her in person.");
  await page.context().close();
});

test("two actions in one turn are decided separately and submitted together in order", async () => {
  const page = await open();
  await pauseWith(page, "do both tasks", 2);
  const email = card(page, 0);
  const del = card(page, 1);
  assert.match(await del.innerText(), /delete_file/);
  assert.equal(await del.getByRole("button", { name: "Edit", exact: true }).count(), 0);
  assert.equal(await del.getByRole("button", { name: "Respond", exact: true }).count(), 0);
  const submit = page.getByRole("button", { name: "Submit 2 decisions" });
  await email.getByRole("button", { name: "Approve", exact: true }).click();
  assert.equal(await submit.isDisabled(), true);
  await del.getByRole("button", { name: "Reject", exact: true }).click();
  await del.getByRole("button", { name: "Confirm reject" }).click();
  const sent = resumes(page);
  await submit.click();
  await finalAnswer(page);
  assert.deepEqual(sent, [{ decisions: [{ type: "approve" }, { type: "reject" }] }]);
  const steps = page.getByTestId("tool-step");
  assert.match(await steps.nth(0).innerText(), /Email sent to alice@example.com/);
  assert.match(await steps.nth(1).innerText(), /User rejected the tool call for `delete_file`/);
  await page.context().close();
});

test("a paused thread shows its pending card after a reload and in another browser", async () => {
  const page = await open();
  await pauseWith(page, "email alice later");
  const url = page.url();
  await page.reload();
  await card(page).waitFor();
  assert.match(await page.getByTestId("waiting").innerText(), /^waiting \d+/);
  assert.equal(await page.getByTestId("msg-human").innerText().then((t) => t.includes("email alice later")), true);
  const other = await open(url.slice(url.indexOf("#") + 1));
  await card(other).waitFor();
  await card(other).getByRole("button", { name: "Approve", exact: true }).click();
  await finalAnswer(other);
  await page.reload();
  await finalAnswer(page);
  assert.equal(await page.getByTestId("action-card").count(), 0);
  await other.context().close();
  await page.context().close();
});

test("the inbox lists paused threads oldest first and opens them", async () => {
  const first = await open();
  await pauseWith(first, "delete the old file");
  const firstUrl = first.url();
  const second = await open();
  await pauseWith(second, "email alice from the inbox");
  const inbox = await open("/inbox");
  await inbox.getByTestId("inbox-item").nth(1).waitFor();
  const ids = await inbox.getByTestId("inbox-item").evaluateAll((els) => els.map((e) => e.getAttribute("data-thread")));
  const firstId = decodeURIComponent(firstUrl.split("#/t/")[1]);
  const secondId = decodeURIComponent(second.url().split("#/t/")[1]);
  assert.ok(ids.indexOf(firstId) >= 0 && ids.indexOf(firstId) < ids.indexOf(secondId), `order ${ids}`);
  await inbox.screenshot({ path: join(shots, "inbox.png") });
  await inbox.locator(`[data-thread="${firstId}"]`).click();
  await card(inbox).waitFor();
  assert.match(await card(inbox).innerText(), /delete_file/);
  await card(inbox).getByRole("button", { name: "Approve", exact: true }).click();
  await finalAnswer(inbox);
  await inbox.getByTestId("inbox-link").click();
  await inbox.locator(`[data-thread="${secondId}"]`).waitFor();
  await inbox.locator(`[data-thread="${firstId}"]`).waitFor({ state: "detached" });
  for (const p of [first, second, inbox]) await p.context().close();
});

test("a form raised inside a tool renders as a form and its answer reaches the tool", async () => {
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

test("camelCase payloads are read and answered in camelCase", async () => {
  const page = await open();
  await pauseWith(page, "email alice, camel style");
  const sent = resumes(page);
  const c = card(page);
  await c.getByRole("button", { name: "Edit", exact: true }).click();
  await c.locator("textarea").fill('{"to": "carol@example.com", "subject": "Hello"}');
  await c.getByRole("button", { name: "Run with these arguments" }).click();
  await finalAnswer(page);
  assert.match(await page.getByTestId("tool-result").last().innerText(), /Email sent to carol@example.com/);
  assert.deepEqual(sent, [{ decisions: [{ type: "edit", editedAction: { name: "send_email", args: { to: "carol@example.com", subject: "Hello" } } }] }]);
  await page.context().close();
});

test("phone width: the pending card is readable and its buttons reachable by keyboard", async () => {
  const page = await open("", { width: 390, height: 844 });
  await pauseWith(page, "email alice from my phone");
  const approve = card(page).getByRole("button", { name: "Approve", exact: true });
  const box = await approve.boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 390, "Approve fits the screen");
  await page.screenshot({ path: join(shots, "phone.png") });
  await approve.focus();
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

test("a decision the server refuses is reported with the server's reason", async () => {
  const page = await open();
  await pauseWith(page, "email alice, then the thread goes away");
  const threadId = decodeURIComponent(page.url().split("#/t/")[1]);
  const gone = await fetch(`${env.api}/threads/${threadId}`, { method: "DELETE" });
  assert.ok(gone.ok, `DELETE thread: ${gone.status}`);
  await card(page).getByRole("button", { name: "Approve", exact: true }).click();
  const alert = page.getByTestId("error");
  await alert.waitFor();
  assert.match(await alert.innerText(), /The server refused the request \(4\d\d\): \S+/);
  await page.context().close();
});

test("any other interrupt value is shown as JSON and answered as text or JSON", async () => {
  const page = await open();
  await say(page, "choose a colour");
  const box = page.getByTestId("free-interrupt");
  await box.waitFor();
  assert.match(await box.locator("pre.args").innerText(), /"question": "Which colour should the report cover be\?"/);
  const sent = resumes(page);
  await box.getByLabel(/Your answer/).fill('{"colour": "green"}');
  await box.getByText("Will be sent as JSON.").waitFor();
  await box.getByLabel(/Your answer/).fill("blue");
  await box.getByText("Will be sent as text.").waitFor();
  await box.getByRole("button", { name: "Send answer" }).click();
  await finalAnswer(page);
  assert.match(await page.getByTestId("tool-result").last().innerText(), /Colour chosen: blue\./);
  assert.deepEqual(sent, ["blue"]);
  await page.context().close();
});
