import { describe, expect, test } from "bun:test";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { runCli } from "../../support/cli.ts";

// Every run findable: one that only ran the tests and staged nothing is in `log`, with
// its commands and their exit status, and in --json.

const command = (line: string) => toolCallReply([{ name: "run_command", arguments: { command: line } }]);

describe("runs that staged nothing", () => {
  test("agent --json lists the run's commands; log shows the run; log --runs --json gives its commands", async () => {
    const { workspace, groq, env } = await modelWorld();
    const cli = (args: string[]) => runCli([...args, "-w", workspace], { cwd: workspace, env });
    groq.enqueue(command("echo checking && exit 3"), textReply("The check fails with exit 3."));
    const result = await cli(["agent", "run the check", "--json"]);
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(doc.changeset).toBeNull();
    expect(doc.session).toBeString();
    expect(doc.commands).toEqual([
      { command: "echo checking && exit 3", outcome: "exited", exitCode: 3, durationMs: expect.any(Number) },
    ]);

    const text = await cli(["log"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("Runs that staged nothing");
    expect(text.stdout).toContain("run the check");
    expect(text.stdout).toContain("echo checking && exit 3");
    expect(text.stdout).toMatch(/exit 3/);
    expect(text.stdout).not.toContain("No changesets yet");

    const runs = JSON.parse((await cli(["log", "--runs", "--json"])).stdout);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ goal: "run the check", mode: "agent", changeset: null, session: doc.session });
    expect(runs[0].commands[0]).toMatchObject({ command: "echo checking && exit 3", exitCode: 3 });
  }, 30_000);

  test("log --runs lists a run that staged something with its changeset, and each follow-up as its own run", async () => {
    const { workspace, groq, env } = await modelWorld();
    const cli = (args: string[]) => runCli([...args, "-w", workspace], { cwd: workspace, env });
    groq.enqueue(
      toolCallReply([{ name: "create_file", arguments: { path: "c.txt", content: "gamma\n" } }]),
      textReply("Made c."),
    );
    expect((await cli(["agent", "make c"])).code).toBe(3);
    groq.enqueue(command("echo tested"), textReply("Tested."));
    expect((await cli(["agent", "-c", "now test it"])).code).toBe(3);
    const runs = JSON.parse((await cli(["log", "--runs", "--json"])).stdout);
    expect(runs.map((r: { goal: string }) => r.goal)).toEqual(["now test it", "make c"]);
    expect(runs[0].commands.map((c: { command: string }) => c.command)).toEqual(["echo tested"]);
    expect(runs[1].commands).toEqual([]);
    expect(runs[1].changeset).toBeString();
    const text = await cli(["log", "--runs"]);
    expect(text.stdout).toContain("now test it");
    expect(text.stdout).toContain("echo tested");
  }, 30_000);
});
