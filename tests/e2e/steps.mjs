// What a person does in the console, shared by the browser tests.
import assert from "node:assert/strict";
import { createRequire } from "node:module";

/** Types a chat message, sends it with Enter and waits until it shows in the conversation. */
export async function say(page, text) {
  const box = page.locator("#composer-input");
  await box.fill(text);
  await box.press("Enter");
  // In the conversation (the side bar, hidden at phone width, may list the thread first).
  await page.getByTestId("msg-human").getByText(text, { exact: true }).last().waitFor();
}

const axeScript = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/**
 * Runs axe-core on the page as it is now and fails on any violation of WCAG 2.x level A or AA
 * (contrast included), naming the rule and the elements.
 */
export async function checkAccessibility(page, screen) {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ path: axeScript });
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"] },
    });
    return result.violations.map((v) => `${v.id} (${v.impact}): ${v.help}: ${v.nodes.slice(0, 4).map((n) => n.target.join(" ")).join(" | ")}`);
  });
  assert.deepEqual(violations, [], `${screen}: accessibility violations`);
}
