// What a person does in the console, shared by the browser tests.

/** Types a chat message, sends it with Enter and waits until it shows in the conversation. */
export async function say(page, text) {
  const box = page.locator("#composer-input");
  await box.fill(text);
  await box.press("Enter");
  // In the conversation (the side bar, hidden at phone width, may list the thread first).
  await page.getByTestId("msg-human").getByText(text, { exact: true }).last().waitFor();
}
