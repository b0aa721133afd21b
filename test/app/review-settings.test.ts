import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../core/errors/config-error.ts";
import { DEFAULT_INTENT_SECONDS, loadSettings } from "../../app/settings.ts";
import { tempDir } from "../support/temp.ts";

// review.intentCheck and review.intentSeconds: on and 8 s by default, the owner's file alone changes them,
// and a value of the wrong kind stops with the file, the key and what it takes.

function load(user?: unknown, ws?: unknown) {
  const root = tempDir("pencil-review-settings-");
  const pencilHome = join(root, "home", ".pencil");
  const workspace = join(root, "ws");
  mkdirSync(pencilHome, { recursive: true });
  mkdirSync(join(workspace, ".pencil"), { recursive: true });
  if (user !== undefined) writeFileSync(join(pencilHome, "settings.json"), JSON.stringify(user));
  if (ws !== undefined) writeFileSync(join(workspace, ".pencil", "settings.json"), JSON.stringify(ws));
  return loadSettings({ workspaceRoot: workspace, pencilHome, home: join(root, "home"), cliAllow: [], cliDeny: [] });
}

describe("review settings", () => {
  test("on, and 8 seconds, when nothing is set", () => {
    expect(load().review).toEqual({ intentCheck: true, intentSeconds: DEFAULT_INTENT_SECONDS });
    expect(DEFAULT_INTENT_SECONDS).toBe(8);
  });

  test("the owner's file turns the check off and sets the wait", () => {
    const s = load({ review: { intentCheck: false, intentSeconds: 30 } });
    expect(s.review).toEqual({ intentCheck: false, intentSeconds: 30 });
    expect(s.warnings).toEqual([]);
  });

  test("a workspace file cannot change them: ignored, with a warning that says whose they are", () => {
    const s = load(undefined, { review: { intentCheck: false } });
    expect(s.review.intentCheck).toBe(true);
    expect(s.warnings.join("\n")).toContain("Ignored review in");
    expect(s.warnings.join("\n")).toContain("only your own settings");
  });

  test.each([
    [{ intentCheck: "no" }, "review.intentCheck: true or false (false: no intent check)"],
    [{ intentSeconds: "8" }, "review.intentSeconds: a number of seconds, from 1 to 120"],
    [{ intentSeconds: 0 }, "review.intentSeconds: at least 1 second"],
    [{ intentSeconds: 600 }, "review.intentSeconds: at most 120 seconds"],
  ])("%j stops with what the key takes", (review, message) => {
    let error: unknown;
    try {
      load({ review });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).toContain("settings.json");
  });

  test("a misspelt key under review is named, with a guess", () => {
    const s = load({ review: { intentChek: false } });
    expect(s.warnings[0]).toContain('Ignored unknown setting "review.intentChek"');
    expect(s.warnings[0]).toContain('did you mean "review.intentCheck"?');
    expect(s.review.intentCheck).toBe(true);
  });
});
