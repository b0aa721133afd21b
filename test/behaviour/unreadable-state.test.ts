import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nobodyApprover } from "../../core/policy/approver.ts";
import { ScriptedModel, type ScriptedTurn } from "../../ai/scripted-model.ts";
import { AgentRun } from "../../app/agent-run.ts";
import { applyReviewed } from "../../app/apply-reviewed.ts";
import { sessionFor } from "../../app/checkpoints.ts";
import { readProposals } from "../../tools/mcp/config.ts";
import { createRuntime } from "../../app/runtime.ts";
import { SessionStore } from "../../app/session-store.ts";
import { ApplyError } from "../../core/errors/apply-error.ts";
import { ChangesetStore } from "../../core/staging/changeset-store.ts";
import { INDEX } from "../support/cli.ts";
import { tempDir, writeTree } from "../support/temp.ts";

function setup() {
  const workspace = tempDir();
  writeTree(workspace, { "a.txt": "alpha\n" });
  const home = tempDir();
  const runtime = createRuntime({ env: { HOME: home, PENCIL_HOME: join(home, ".pencil") }, workspace });
  return { runtime, workspace };
}

function models(turns: ScriptedTurn[]) {
  const model = new ScriptedModel(turns, { name: "t" });
  return { model, labels: [model.label], current: () => model.label, contextWindow: 100_000 };
}

const recordOf = (runtime: ReturnType<typeof setup>["runtime"], id: string) =>
  join(runtime.pencilHome, "changesets", `${id}.json`);

describe("a follow-up whose changeset record cannot be read", () => {
  for (const damage of ["damaged", "missing"] as const) {
    test(`${damage}: the person is told, the staged work stays staged and goes into a new changeset, the old record is not written over`, async () => {
      const { runtime } = setup();
      const events: { type: string; message?: string }[] = [];
      const hooks = { approver: nobodyApprover, emit: (e: { type: string; message?: string }) => events.push(e) };
      const run = await AgentRun.start(runtime, "agent", "shout", hooks, {
        models: models([
          { toolCalls: [{ name: "create_file", input: { path: "b.txt", content: "beta\n" } }] },
          { text: "made b" },
          { toolCalls: [{ name: "create_file", input: { path: "c.txt", content: "gamma\n" } }] },
          { text: "made c" },
        ]),
      });
      const first = run.changeset!;
      const file = recordOf(runtime, first.id);
      if (damage === "damaged") writeFileSync(file, "{ not json");
      else rmSync(file);
      await run.followUp("make c too", hooks);
      const said = events.filter((e) => e.type === "error").map((e) => e.message ?? "");
      expect(said.some((m) => m.includes(`changeset ${first.id} could not be read`) && m.includes("stay staged"))).toBe(
        true,
      );
      // Nothing was decided: b.txt is still staged, with c.txt, in a changeset of a new id.
      const next = run.changeset!;
      expect(next.id).not.toBe(first.id);
      expect(next.files.map((f) => f.path).sort()).toEqual(["b.txt", "c.txt"]);
      if (damage === "damaged") expect(readFileSync(file, "utf8")).toBe("{ not json");
      else expect(existsSync(file)).toBe(false);
      // What the model was told: still staged, nothing known applied (never "nothing was applied").
      const told = JSON.stringify(run.messages);
      expect(told).toContain("are still staged: the record of their review could not be read");
    });
  }
});

describe("applying a review when the stored record cannot be read", () => {
  test("nothing is applied and the record (which may hold another front end's decisions) is not written over", async () => {
    const { runtime, workspace } = setup();
    const run = await AgentRun.start(
      runtime,
      "agent",
      "make b",
      { approver: nobodyApprover, emit: () => {} },
      {
        models: models([
          { toolCalls: [{ name: "create_file", input: { path: "b.txt", content: "beta\n" } }] },
          { text: "done" },
        ]),
      },
    );
    const cs = run.changeset!;
    const file = recordOf(runtime, cs.id);
    writeFileSync(file, '{"id": "truncated');
    expect(() => applyReviewed(runtime, cs, ["b.txt"], [])).toThrow(ApplyError);
    expect(() => applyReviewed(runtime, cs, ["b.txt"], [])).toThrow(/cannot be read .* write over the decisions/);
    expect(existsSync(join(workspace, "b.txt"))).toBe(false);
    expect(readFileSync(file, "utf8")).toBe('{"id": "truncated');
  });

  test("a record that was never saved has no decisions to keep: the apply goes on", async () => {
    const { runtime, workspace } = setup();
    const run = await AgentRun.start(
      runtime,
      "agent",
      "make b",
      { approver: nobodyApprover, emit: () => {} },
      {
        models: models([
          { toolCalls: [{ name: "create_file", input: { path: "b.txt", content: "beta\n" } }] },
          { text: "done" },
        ]),
      },
    );
    const cs = run.changeset!;
    rmSync(recordOf(runtime, cs.id));
    expect(applyReviewed(runtime, cs, ["b.txt"], []).applied).toEqual(["b.txt"]);
    expect(readFileSync(join(workspace, "b.txt"), "utf8")).toBe("beta\n");
  });
});

describe("continuing a session whose changeset record cannot be read", () => {
  test("stops and names it (no new id orphans the record); a missing one is none and the session goes on", async () => {
    const { runtime } = setup();
    const run = await AgentRun.start(
      runtime,
      "agent",
      "make b",
      { approver: nobodyApprover, emit: () => {} },
      {
        models: models([
          { toolCalls: [{ name: "create_file", input: { path: "b.txt", content: "beta\n" } }] },
          { text: "done" },
        ]),
      },
    );
    const id = run.session!.id;
    const file = recordOf(runtime, run.changeset!.id);
    writeFileSync(file, "{");
    expect(() => AgentRun.continueSession(runtime, id)).toThrow(/changeset .* cannot be read .*nothing was changed/);
    expect(readFileSync(file, "utf8")).toBe("{");
    rmSync(file);
    const again = AgentRun.continueSession(runtime, id);
    expect(again.changeset).toBeNull();
    expect(again.overlay.list().map((e) => e.real.split("/").pop())).toEqual(["b.txt"]);
  });
});

describe("stores: only a missing directory is none", () => {
  test("no changesets or sessions directory yet is an empty list", () => {
    const home = tempDir();
    expect(new ChangesetStore(join(home, "none")).ids()).toEqual([]);
    expect(new SessionStore(join(home, "none")).ids()).toEqual([]);
  });

  test("a changesets path that is not a directory is said, not taken as empty", () => {
    const home = tempDir();
    writeFileSync(join(home, "changesets"), "a file");
    writeFileSync(join(home, "sessions"), "a file");
    expect(() => new ChangesetStore(home).ids()).toThrow(/Cannot read the changesets directory .* \(ENOTDIR\)/);
    expect(() => new SessionStore(home).ids()).toThrow(/Cannot read the sessions directory .* \(ENOTDIR\)/);
  });
});

// As root every directory reads whatever its mode: only an unprivileged user shows what a chmod 000 does.
const asRoot = process.getuid?.() === 0;
const nobody = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"];
const nobodyRuns =
  asRoot &&
  spawnSync(nobody[0]!, [...nobody.slice(1), process.execPath, "--version"], { cwd: "/" }).status === 0 &&
  spawnSync(nobody[0]!, [...nobody.slice(1), "test", "-r", INDEX]).status === 0;
const unprivileged = !asRoot;

describe("an unreadable state directory (chmod 000) is an error said to the person", () => {
  test.skipIf(!nobodyRuns && !unprivileged)(
    "review says it cannot read the changesets directory instead of 'No pending changeset'; steps says the same of sessions",
    () => {
      const base = mkdtempSync(join(tmpdir(), "pencil-unreadable-"));
      chmodSync(base, 0o777);
      const home = join(base, "home");
      const ws = join(base, "ws");
      for (const d of [
        home,
        ws,
        join(home, ".pencil"),
        join(home, ".pencil/changesets"),
        join(home, ".pencil/sessions"),
      ]) {
        mkdirSync(d, { recursive: true });
        chmodSync(d, 0o777);
      }
      writeFileSync(join(ws, "a.txt"), "a\n");
      const env = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        PENCIL_HOME: join(home, ".pencil"),
        NO_COLOR: "1",
      };
      if (asRoot) spawnSync("chown", ["-R", "65534:65534", base]);
      chmodSync(join(home, ".pencil/changesets"), 0o000);
      try {
        const cli = (...args: string[]) =>
          spawnSync(
            asRoot ? nobody[0]! : process.execPath,
            [...(asRoot ? [...nobody.slice(1), process.execPath] : []), INDEX, ...args],
            { cwd: ws, env, encoding: "utf8", timeout: 20_000 },
          );
        const review = cli("review", "-w", ws);
        expect(review.stdout).not.toContain("No pending changeset");
        expect(review.stderr).toContain("Cannot read the changesets directory");
        expect(review.stderr).toContain("EACCES");
        expect(review.status).toBe(1);
        chmodSync(join(home, ".pencil/changesets"), 0o777);
        chmodSync(join(home, ".pencil/sessions"), 0o000);
        const log = cli("steps", "-w", ws);
        expect(log.stderr).toContain("Cannot read the sessions directory");
        expect(log.status).not.toBe(0);
      } finally {
        chmodSync(join(home, ".pencil/changesets"), 0o700);
        chmodSync(join(home, ".pencil/sessions"), 0o700);
        rmSync(base, { recursive: true, force: true });
      }
    },
    30_000,
  );
});

describe("what else reads state says what it could not read", () => {
  test("a workspace's .pencil/mcp.json that cannot be read is a warning naming it, not 'no proposals'", () => {
    const ws = tempDir();
    mkdirSync(join(ws, ".pencil/mcp.json"), { recursive: true });
    const read = readProposals(ws);
    expect(read.servers).toEqual([]);
    expect(read.warning).toContain("cannot be read (EISDIR)");
    expect(readProposals(tempDir())).toEqual({ servers: [] });
  });

  test("steps with the id of a changeset whose record is damaged names the record instead of 'no session'", async () => {
    const { runtime } = setup();
    const run = await AgentRun.start(
      runtime,
      "agent",
      "make b",
      { approver: nobodyApprover, emit: () => {} },
      {
        models: models([
          { toolCalls: [{ name: "create_file", input: { path: "b.txt", content: "beta\n" } }] },
          { text: "done" },
        ]),
      },
    );
    const id = run.changeset!.id;
    writeFileSync(recordOf(runtime, id), "{");
    expect(() => sessionFor(runtime, id)).toThrow(/not valid JSON/);
  });
});
