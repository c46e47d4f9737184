// The harness's judgement of a server's end: what fails a test file at stop.
import { test } from "node:test";
import assert from "node:assert/strict";
import { badEnd } from "./harness.mjs";

test("a server stopped with exit code 0 and a clean log ended well", () => {
  assert.equal(badEnd({ code: 0, signal: null, stopped: true, output: "tollgate serve: listening\n" }), "");
});

test("a non-zero exit code at stop fails the test", () => {
  assert.match(badEnd({ code: 23, signal: null, stopped: true, output: "" }), /exited with 23/);
});

test("a server that ended by itself fails the test", () => {
  assert.match(badEnd({ code: null, signal: "SIGSEGV", stopped: false, output: "" }), /ended by itself/);
});

for (const line of ["==1==ERROR: AddressSanitizer: heap-use-after-free", "a.cpp:3:5: runtime error: signed integer overflow", "==1==ERROR: LeakSanitizer: detected memory leaks"]) {
  test(`a sanitizer report fails the test even after exit code 0: ${line.slice(0, 40)}`, () => {
    assert.match(badEnd({ code: 0, signal: null, stopped: true, output: `log\n${line}\n` }), /sanitizer report/);
  });
}
