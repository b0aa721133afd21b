import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_REVISION_ROUNDS } from "../../app/rejection.ts";
import { applyReviewed } from "../../app/apply-reviewed.ts";
import { createRuntime } from "../../app/runtime.ts";
import { nextAfterReview, settleReview } from "../../app/settle-review.ts";
import { undoInWorkspace } from "../../app/undo-changeset.ts";
import { makeChangeset } from "../fixtures/apply-changeset.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const enc = (s: string) => new TextEncoder().encode(s);

function setup() {
  const workspace = tempDir();
  writeTree(workspace, { "a.txt": "a\n", "b.txt": "b\n" });
  const home = tempDir();
  const runtime = createRuntime({ env: { HOME: home, PENCIL_HOME: join(home, ".pencil") }, workspace });
  const cs = makeChangeset(
    runtime.ws.root,
    [
      { path: "a.txt", after: enc("A\n") },
      { path: "b.txt", after: enc("B\n") },
    ],
    "cs-two-cards",
  );
  cs.workspace = runtime.ws.root;
  runtime.store.save(cs);
  return { runtime, cs, read: (p: string) => readFileSync(join(runtime.ws.root, p), "utf8") };
}

test("a changeset applied in two steps is undone only when both applies are", () => {
  const { runtime, cs, read } = setup();
  applyReviewed(runtime, cs, ["a.txt"], []);
  applyReviewed(runtime, runtime.store.load(cs.id), ["b.txt"], []);
  expect(runtime.store.load(cs.id).status).toBe("applied");
  undoInWorkspace(runtime);
  expect(read("b.txt")).toBe("b\n");
  expect(read("a.txt")).toBe("A\n");
  expect(runtime.store.load(cs.id).status).toBe("partial");
  undoInWorkspace(runtime);
  expect(read("a.txt")).toBe("a\n");
  expect(runtime.store.load(cs.id).status).toBe("undone");
});

test("undo never reaches into another workspace's applies", () => {
  const { runtime, cs } = setup();
  applyReviewed(runtime, cs, ["a.txt", "b.txt"], []);
  const otherHome = runtime.pencilHome;
  const other = tempDir();
  const elsewhere = createRuntime({ env: { HOME: tempDir(), PENCIL_HOME: otherHome }, workspace: other });
  expect(() => undoInWorkspace(elsewhere)).toThrow(/Nothing to undo/);
  expect(() => undoInWorkspace(elsewhere, cs.id)).toThrow(/-w /);
});

test("a stale copy reviewed after the phone applied a file neither re-applies it nor records it rejected", () => {
  const { runtime, cs } = setup();
  const staleCopy = runtime.store.load(cs.id);
  applyReviewed(runtime, cs, ["a.txt"], []); // the phone
  const result = applyReviewed(runtime, staleCopy, ["b.txt"], ["a.txt"]); // a terminal that had loaded it before
  expect(result.applied).toEqual(["b.txt"]);
  expect(result.conflicts).toEqual([]);
  const stored = runtime.store.load(cs.id);
  expect(stored.decisions).toEqual({ "a.txt": "approved", "b.txt": "approved" });
  expect(stored.status).toBe("applied");
});

// settleReview: the one rule both front ends settle a review by.
const why = { path: "b.txt", reason: "use tabs" };

test.each([
  ["no rejections", [], { rounds: 0 }, { kind: "done" }],
  ["rejections without reasons", [{ path: "b.txt", reason: "" }], { rounds: 0 }, { kind: "done" }],
  ["a reason and a live run", [why, { path: "c.txt", reason: "" }], { rounds: 0 }, { kind: "revise", reasons: [why] }],
  ["a reason, no run", [why], null, { kind: "run-gone", reasons: [why] }],
  [
    "a reason one round before the limit",
    [why],
    { rounds: MAX_REVISION_ROUNDS - 1 },
    { kind: "revise", reasons: [why] },
  ],
  [
    "a reason at the round limit",
    [why],
    { rounds: MAX_REVISION_ROUNDS },
    { kind: "round-limit", reasons: [why], limit: MAX_REVISION_ROUNDS },
  ],
] as const)("after %s", (_name, rejected, run, next) => {
  expect(nextAfterReview(rejected, run)).toEqual(next as unknown as ReturnType<typeof nextAfterReview>);
});

test("settling writes exactly the approved files and says what follows", () => {
  const { runtime, cs, read } = setup();
  const settled = settleReview(runtime, cs, { approved: ["a.txt"], rejected: [why] }, { rounds: 0 });
  expect(settled.result.applied).toEqual(["a.txt"]);
  expect(read("a.txt")).toBe("A\n");
  expect(read("b.txt")).toBe("b\n");
  expect(settled.pending).toBe(false);
  expect(settled.next).toEqual({ kind: "revise", reasons: [why] });
  expect(runtime.store.load(cs.id).decisions).toEqual({ "a.txt": "approved", "b.txt": "rejected" });
});

test("a review of some files leaves the changeset pending", () => {
  const { runtime, cs } = setup();
  const settled = settleReview(runtime, cs, { approved: ["a.txt"], rejected: [] }, null);
  expect(settled.pending).toBe(true);
  expect(settled.next).toEqual({ kind: "done" });
});
