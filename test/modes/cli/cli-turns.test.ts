import { describe, expect, test } from "bun:test";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { runCli, runCliPty } from "../../support/cli.ts";
import { savedScriptedRun, scriptedCreate } from "../../support/scripted-run.ts";

// Each turn of a session told apart: a follow-up's changeset carries its own words and
// counts only its own commands; a changeset applied elsewhere is reported as applied.

const create = (path: string, content: string) =>
  toolCallReply([{ name: "create_file", arguments: { path, content } }]);
const command = (line: string) => toolCallReply([{ name: "run_command", arguments: { command: line } }]);

interface Row {
  id: string;
  goal: string;
  sessionGoal: string | null;
  status: string;
  session: string | null;
  commands: { command: string }[];
}

async function setup() {
  const { workspace, groq, env } = await modelWorld();
  const cli = (args: string[]) => runCli([...args, "-w", workspace], { cwd: workspace, env });
  const log = async () => JSON.parse((await cli(["log", "--json"])).stdout) as Row[];
  return { workspace, groq, env, cli, log };
}

describe("each turn told apart", () => {
  test("a follow-up after a decided changeset gets a changeset titled with its own words and its own commands", async () => {
    const { workspace, groq, env, log } = await setup();
    groq.enqueue(
      command("echo first-check"),
      create("c.txt", "gamma\n"),
      textReply("Made c."),
      command("echo second-check"),
      create("d.txt", "delta\n"),
      textReply("Made d."),
    );
    const { code } = await runCliPty(["agent", "make c", "-w", workspace], {
      cwd: workspace,
      env,
      endFollowUps: false,
      steps: [
        { expect: "[s]teps ", send: "y\r" },
        { expect: "› ", send: "now make d as well\r" },
        { expect: "[s]teps ", send: "y\r" },
        { expect: "› ", send: "\r" },
      ],
    });
    expect(code).toBe(0);
    const rows = await log();
    expect(rows.length).toBe(2);
    // Both may carry the same second: told apart by what they say, not by their order.
    const first = rows.find((r) => r.sessionGoal === null);
    const second = rows.find((r) => r.sessionGoal !== null);
    expect(first!.goal).toBe("make c");
    expect(second!.goal).toBe("now make d as well");
    expect(second!.sessionGoal).toBe("make c");
    expect(second!.session).toBe(first!.session);
    expect(first!.commands.map((c) => c.command)).toEqual(["echo first-check"]);
    expect(second!.commands.map((c) => c.command)).toEqual(["echo second-check"]);
  }, 60_000);

  test("-c after the changeset was applied with pencil review: reported as applied, not as changed on disk", async () => {
    const { workspace, groq, env, cli, log } = await setup();
    const made = await savedScriptedRun(env, workspace, "make c", [
      scriptedCreate("c.txt", "gamma\n"),
      { text: "Made c." },
    ]);
    expect(made.changeset?.status).toBe("pending");
    const reviewed = await runCliPty(["review", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [{ expect: "[s]teps ", send: "y\r" }],
    });
    expect(reviewed.code).toBe(0);
    groq.enqueue(create("d.txt", "delta\n"), textReply("Made d."));
    const next = await cli(["agent", "-c", "and d"]);
    expect(next.code).toBe(3);
    expect(next.stderr).not.toContain("Changed on disk");
    expect(next.stderr).toMatch(/reviewed since: applied c\.txt/);
    const rows = await log();
    // Told apart by their titles: both may carry the same second, so their order says nothing.
    expect(rows.map((r) => [r.goal, r.status]).sort()).toEqual([
      ["and d", "pending"],
      ["make c", "applied"],
    ]);
    // The model is told what happened to its earlier work, once.
    const request = groq.requests.at(-2)!.raw;
    expect(request).toContain("Applied to disk: c.txt");
  }, 60_000);

  test("a follow-up on a still-pending changeset adds its words to that changeset's title", async () => {
    const { workspace, groq, env, cli, log } = await setup();
    const made = await savedScriptedRun(env, workspace, "make c", [
      scriptedCreate("c.txt", "gamma\n"),
      { text: "Made c." },
    ]);
    expect(made.changeset?.status).toBe("pending");
    groq.enqueue(create("d.txt", "delta\n"), textReply("Made d."));
    expect((await cli(["agent", "-c", "and d"])).code).toBe(3);
    const rows = await log();
    expect(rows.length).toBe(1);
    expect(rows[0]!.goal).toContain("make c");
    expect(rows[0]!.goal).toContain("and d");
  }, 60_000);
});
