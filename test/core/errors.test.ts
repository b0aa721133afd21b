import { expect, test } from "bun:test";
import { MissingModelKeyError, ModelCallError } from "../../ai/errors.ts";
import { WorkspaceMismatchError } from "../../app/errors.ts";
import { ApplyError } from "../../core/apply/apply.ts";
import { PencilError, UnknownChangesetError } from "../../core/errors.ts";
import { ConfigError } from "../../core/policy/policy.ts";
import { ToolError } from "../../core/errors.ts";
import { UsageError } from "../../modes/cli/args.ts";

test.each([
  ["UsageError", new UsageError("x"), 2],
  ["MissingModelKeyError", new MissingModelKeyError("x", ["GROQ_API_KEY"]), 2],
  ["WorkspaceMismatchError", new WorkspaceMismatchError("x"), 2],
  ["UnknownChangesetError", new UnknownChangesetError("x"), 2],
  ["ConfigError", new ConfigError("x", "settings.json"), 2],
  ["ApplyError", new ApplyError("x"), 1],
  ["ToolError", new ToolError("x"), 1],
  ["ModelCallError", new ModelCallError([], false), 1],
] as const)("%s is a PencilError with its exit code", (_name, error, code) => {
  expect(PencilError.isInstance(error)).toBe(true);
  expect(error).toBeInstanceOf(Error);
  expect(error.exitCode).toBe(code);
});

test("isInstance knows the marker, not the prototype chain; plain errors and non-errors are not PencilErrors", () => {
  expect(PencilError.isInstance(new Error("x"))).toBe(false);
  expect(PencilError.isInstance("Error: x")).toBe(false);
  expect(PencilError.isInstance(null)).toBe(false);
  // An error from another copy of the module carries the same registered symbol.
  expect(PencilError.isInstance({ [Symbol.for("pencil.error")]: true })).toBe(true);
});

test("a configuration error names its file and rule in the person's message", () => {
  const error = new ConfigError("unknown key", "/w/.pencil/settings.json", "Read(**)");
  expect(`${error.label} ${error.userMessage}`).toBe(
    "configuration error in /w/.pencil/settings.json (rule Read(**)): unknown key",
  );
  expect(`${new UsageError("no such flag").label} ${new UsageError("no such flag").userMessage}`).toBe(
    "error: no such flag",
  );
});
