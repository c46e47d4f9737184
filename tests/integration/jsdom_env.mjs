// A jsdom window and document as globals, for React to render into in node. Imported before
// React itself, which checks for a DOM when it loads.
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>", { url: "http://localhost/" });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
for (const key of ["HTMLElement", "Node", "Event", "CustomEvent", "sessionStorage", "localStorage"]) {
  if (!(key in globalThis)) globalThis[key] = dom.window[key];
}
if (!("navigator" in globalThis)) globalThis.navigator = dom.window.navigator;
// Updates arrive from the network, outside act(): tell React not to expect act().
globalThis.IS_REACT_ACT_ENVIRONMENT = false;
