import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { FIXTURE, MODES, replay, type ModeResult } from "../../bench/recovery-modes.ts";

// Every failure mode of bench/recovery-modes.ts, through the real loop: scripted
// weak model → session (repair hook) → policy seam → tools → overlay.
const results = new Map<string, ModeResult>();
const ready = replay(join(join(import.meta.dir, ".."), "..")).then((all) => all.forEach((r) => results.set(r.id, r)));

describe("a weak model recovers: each failure mode ends with the right file or an answer carrying what it needs", () => {
  for (const mode of MODES) {
    test(`${mode.item}: ${mode.what}`, async () => {
      await ready;
      const r = results.get(mode.id)!;
      // Nothing staged that the mode does not expect, and expected files exactly as expected.
      expect(r.verdict).not.toBe("wrong");
      for (const [path, content] of Object.entries(mode.expect ?? {})) expect(r.files[path]).toBe(content);
      if (mode.goal === "file") expect(r.verdict).toBe("correct");
      // The answer carries the actual nearby text, line numbers or paths (an applied edit's answer is "Staged edit").
      else for (const needle of mode.needles) expect(r.answer).toContain(needle);
      if (mode.goal === "file" && mode.turns.some((t) => "name" in t && t.name === "edit_file"))
        expect(r.answer).toContain("Staged edit:");
    });
  }

  test("an edit of a missing file with a near miss names it and never suggests create_file", async () => {
    await ready;
    const answer = results.get("path-edit-typo")!.answer;
    expect(answer).toContain("src/tax.ts");
    expect(answer).not.toContain("create_file");
  });

  test("a tolerant or prefix-stripped edit says so in its answer", async () => {
    await ready;
    for (const mode of MODES.filter((m) => m.item === 3 || m.item === 4)) {
      if (mode.id === "tolerant-crlf") continue; // line endings are normalised before matching: an exact match
      expect(`${mode.id}: ${results.get(mode.id)!.answer}`).toMatch(
        /Note: .*(tolerant match|prefixes removed|escaped)/,
      );
    }
  });

  test("ambiguity and refusals stage nothing", async () => {
    await ready;
    for (const id of [
      "edit-several-matches",
      "elision-rest-unchanged",
      "elision-existing-code",
      "repair-truncated",
      "path-write-typo",
      "edit-already-applied",
    ]) {
      const r = results.get(id)!;
      for (const [path, content] of Object.entries(r.files))
        expect(content).toBe(path in FIXTURE ? FIXTURE[path]! : null);
    }
  });

  test("the repeated-failure nudge comes on the third identical failure, not before", async () => {
    await ready;
    const answers = results.get("nudge-repeated-failure")!.answers;
    expect(answers.length).toBe(4);
    expect(answers[2]).not.toContain("3 times");
    expect(answers[3]).toContain("3 times");
  });
});
