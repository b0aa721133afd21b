import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { COMMAND_OPTIONS } from "../../../modes/cli/args.ts";
import { COMMAND_NAMES } from "../../../modes/cli/command-names.ts";
import { runCli } from "../../support/cli.ts";
import { baseEnv, modelWorld } from "../../support/cli-world.ts";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { tempDir } from "../../support/temp.ts";

// `pencil completion bash|zsh|fish`: scripts derived from the CLI's own definitions,
// driven here by the real shells (bash's compgen; zsh and fish check their syntax).

const BIN = join(import.meta.dir, "..", "..", "..", "bin", "pencil");
const has = (program: string) => Bun.spawnSync(["sh", "-c", `command -v ${program}`]).exitCode === 0;

async function script(shell: string): Promise<string> {
  const env = baseEnv();
  const result = await runCli(["completion", shell], { cwd: env.HOME!, env });
  expect(result.code).toBe(0);
  return result.stdout;
}

/** What bash's completion offers for `words` (the last one being completed), with the script sourced. */
function bashComplete(scriptFile: string, words: string[], env: Record<string, string>, cwd: string): string[] {
  const array = words.map((w) => `'${w}'`).join(" ");
  const run = Bun.spawnSync(
    [
      "bash",
      "-c",
      `source '${scriptFile}'; COMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _pencil; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    { env, cwd },
  );
  expect(run.stderr.toString()).toBe("");
  return run.stdout.toString().split("\n").filter(Boolean);
}

describe("shell completion", () => {
  test("the bash script is valid bash, and completing `pencil rev` gives review", async () => {
    const file = join(tempDir("pencil-compl-"), "pencil.bash");
    writeFileSync(file, await script("bash"));
    expect(Bun.spawnSync(["bash", "-n", file]).exitCode).toBe(0);
    const env = baseEnv();
    expect(bashComplete(file, ["pencil", "rev"], env, env.HOME!)).toEqual(["review"]);
    expect(bashComplete(file, ["pencil", "br"], env, env.HOME!)).toEqual(["brain"]);
    expect(bashComplete(file, ["pencil", "brain", "re"], env, env.HOME!)).toEqual(["reindex"]);
    expect(bashComplete(file, ["pencil", "recover", ""], env, env.HOME!)).toEqual(["finish", "rollback"]);
    expect(bashComplete(file, ["pencil", "completion", "z"], env, env.HOME!)).toEqual(["zsh"]);
    expect(bashComplete(file, ["pencil", "demo", "--"], env, env.HOME!)).toEqual(["--keep", "--help", "--version"]);
    expect(bashComplete(file, ["pencil", "telegram", "--p"], env, env.HOME!)).toEqual(["--pair"]);
    // After an option that takes a path, files are offered.
    writeFileSync(join(env.HOME!, "photo.png"), "x");
    expect(bashComplete(file, ["pencil", "brain", "dump", "--image", "pho"], env, env.HOME!)).toEqual(["photo.png"]);
  });

  test("every command and every option each command takes comes from the CLI's own definitions", async () => {
    const text = await script("bash");
    const file = join(tempDir("pencil-compl-"), "pencil.bash");
    writeFileSync(file, text);
    const env = baseEnv();
    expect(bashComplete(file, ["pencil", ""], env, env.HOME!).filter((w) => !w.startsWith("-"))).toEqual([
      ...COMMAND_NAMES,
    ]);
    expect(COMMAND_NAMES).not.toContain("__complete");
    for (const [command, options] of Object.entries(COMMAND_OPTIONS)) {
      const offered = bashComplete(file, ["pencil", command, "--"], env, env.HOME!);
      expect(offered.filter((f) => !["--help", "--version"].includes(f))).toEqual(options.map((o) => `--${o}`));
    }
  }, 20_000);

  test("changeset ids for review, undo and steps, asked of pencil at completion time", async () => {
    const { workspace, groq, env } = await modelWorld();
    groq.enqueue(
      toolCallReply([{ id: "c1", name: "create_file", arguments: { path: "n.txt", content: "n\n" } }]),
      textReply("Done."),
    );
    const saved = await runCli(["agent", "make n", "-w", workspace], { cwd: workspace, env });
    expect(saved.code).toBe(3);
    const id = JSON.parse((await runCli(["log", "--json", "-w", workspace], { cwd: workspace, env })).stdout)[0].id;
    const file = join(tempDir("pencil-compl-"), "pencil.bash");
    writeFileSync(file, await script("bash"));
    for (const command of ["review", "undo", "steps"]) {
      expect(bashComplete(file, [BIN, command, ""], env, workspace)).toEqual([id]);
    }
    expect(bashComplete(file, [BIN, "review", id.slice(0, 9)], env, workspace)).toEqual([id]);
    // Another directory has none of this workspace's ids; agent takes no id.
    expect(bashComplete(file, [BIN, "review", ""], env, env.HOME!)).toEqual([]);
    expect(bashComplete(file, [BIN, "agent", ""], env, workspace)).toEqual([]);
  }, 30_000);

  test.skipIf(!has("zsh"))("the zsh script is valid zsh (skipped where zsh is not installed)", async () => {
    const file = join(tempDir("pencil-compl-"), "_pencil");
    writeFileSync(file, await script("zsh"));
    const check = Bun.spawnSync(["zsh", "-n", file]);
    expect(check.stderr.toString()).toBe("");
    expect(check.exitCode).toBe(0);
  });

  test.skipIf(!has("fish"))("the fish script is valid fish (skipped where fish is not installed)", async () => {
    const file = join(tempDir("pencil-compl-"), "pencil.fish");
    const text = await script("fish");
    writeFileSync(file, text);
    const check = Bun.spawnSync(["fish", "--no-execute", file]);
    expect(check.stderr.toString()).toBe("");
    expect(check.exitCode).toBe(0);
    expect(text).toContain(
      "complete -c pencil -n '__fish_seen_subcommand_from review' -a '(pencil __complete ids 2>/dev/null)'",
    );
  });

  test("an unknown shell is a usage error naming the three", async () => {
    const env = baseEnv();
    const result = await runCli(["completion", "tcsh"], { cwd: env.HOME!, env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("bash|zsh|fish");
  });
});
