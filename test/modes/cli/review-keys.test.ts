import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildChangeset, newChangesetId, type Changeset } from "../../../core/staging/changeset.ts";
import { DiskFileOps } from "../../../core/file-ops.ts";
import { Overlay } from "../../../core/staging/overlay.ts";
import { openWorkspace } from "../../../core/workspace.ts";
import { REVIEW_PROMPT, reviewChangeset } from "../../../modes/cli/review-flow.ts";
import { scriptedTerminal } from "../../support/fake-terminal.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

// The review's keys, read through the real KeyInput from a scripted terminal: single
// keypresses (tty) or keys piped one per line.

const enc = (s: string) => new TextEncoder().encode(s);

function twoFiles(): Changeset {
  const root = tempDir();
  writeTree(root, { "a.txt": "alpha\n", "b.txt": "beta\n" });
  const overlay = new Overlay(new DiskFileOps());
  const origin = { tool: "edit_file", callId: "c", model: "m", readsBefore: [] };
  overlay.writeBytes(join(root, "a.txt"), enc("ALPHA\n"), { origin });
  overlay.writeBytes(join(root, "b.txt"), enc("BETA\n"), { origin });
  return buildChangeset({
    id: newChangesetId(),
    goal: "shout",
    workspace: openWorkspace(root),
    staged: overlay.list(),
    readDisk: (real) => readFileSync(real),
  });
}

describe("review keys", () => {
  test("the prompt fits in 60 columns and names every key of the contract", () => {
    expect(REVIEW_PROMPT.length).toBeLessThanOrEqual(60);
    for (const key of ["[y]", "[n]", "[a]", "[q]", "[r]", "[e]", "[s]"]) expect(REVIEW_PROMPT).toContain(key);
  });

  test("single keypresses decide without Enter; Enter alone decides nothing", async () => {
    const { io } = scriptedTerminal(["\r", "\r", "y", "n"]);
    const decision = await reviewChangeset(io, twoFiles());
    expect(decision).toEqual({ approved: ["a.txt"], rejected: [{ path: "b.txt", reason: "" }], quit: false });
  });

  test("keys piped one per line work the same", async () => {
    const { io } = scriptedTerminal(["\n", "n\n", "y\n"], { tty: false });
    const decision = await reviewChangeset(io, twoFiles());
    expect(decision).toEqual({ approved: ["b.txt"], rejected: [{ path: "a.txt", reason: "" }], quit: false });
  });

  test("lgtm is not a rejection: it is asked about, and counts as yes only after y", async () => {
    const { io, screen } = scriptedTerminal(["lgtm\n", "n\n", "ok\n", "y\n", "sure\n", "y\n"], { tty: false });
    const decision = await reviewChangeset(io, twoFiles());
    expect(decision).toEqual({ approved: ["a.txt", "b.txt"], rejected: [], quit: false });
    expect(screen()).toContain('Take "lgtm" as approve a.txt? [y/N]');
    expect(screen()).toContain('Take "sure" as approve b.txt? [y/N]');
  });

  test("an unknown word decides nothing and is not sent to the agent; r then a line is a reason", async () => {
    const { io, screen } = scriptedTerminal(["whatever\n", "r\n", "keep it lowercase\n", "y\n"], { tty: false });
    const decision = await reviewChangeset(io, twoFiles());
    expect(decision).toEqual({
      approved: ["b.txt"],
      rejected: [{ path: "a.txt", reason: "keep it lowercase" }],
      quit: false,
    });
    expect(screen()).toContain('"whatever" is not a key: nothing decided');
  });

  test("r typed as a keypress, then the reason typed and edited with Backspace", async () => {
    const { io } = scriptedTerminal(["r", "k", "e", "e", "p", "x", "\x7f", "\r", "q"]);
    const decision = await reviewChangeset(io, twoFiles());
    expect(decision.rejected).toEqual([
      { path: "a.txt", reason: "keep" },
      { path: "b.txt", reason: "" },
    ]);
  });

  test("s without a steps renderer says so; with one it shows the steps; e says editing is not built", async () => {
    const plain = scriptedTerminal(["s", "e", "y", "y"]);
    await reviewChangeset(plain.io, twoFiles());
    expect(plain.screen()).toContain("No steps are recorded for this changeset yet.");
    expect(plain.screen()).toContain("Editing a staged file is not available here");
    const withSteps = scriptedTerminal(["s", "y", "y"]);
    await reviewChangeset(withSteps.io, twoFiles(), { steps: (_cs, path) => `step 1 staged ${path}\n` });
    expect(withSteps.screen()).toContain("step 1 staged a.txt");
  });

  test("Ctrl-C or the end of input mid-review decides nothing", async () => {
    const { io } = scriptedTerminal(["y", "\x03"]);
    expect(await reviewChangeset(io, twoFiles())).toEqual({ approved: [], rejected: [], quit: true });
    const piped = scriptedTerminal(["y\n"], { tty: false });
    expect((await reviewChangeset(piped.io, twoFiles())).quit).toBe(true);
  });
});
