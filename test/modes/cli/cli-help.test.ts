import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../../package.json" with { type: "json" };
import { COMMAND_OPTIONS } from "../../../modes/cli/args.ts";
import { HELP_COMMANDS } from "../../../modes/cli/command-help.ts";
import { main } from "../../../modes/cli/main.ts";
import { baseEnv } from "../../support/cli-world.ts";
import { scriptedTerminal } from "../../support/fake-terminal.ts";
import { runCli } from "../../support/cli.ts";
import { tempDir } from "../../support/temp.ts";

// Help that is right: each command lists exactly the options it takes, a flag it does
// not take is a usage error that names the ones it does, and --version works anywhere.

async function pencil(argv: string[]): Promise<{ code: number; screen: string }> {
  const { io, screen } = scriptedTerminal([], { tty: false });
  io.interactive = false;
  const env = baseEnv();
  const code = await main(argv, env, io, tempDir("pencil-start-"));
  return { code, screen: screen() };
}

const EVERY_OPTION = [
  "workspace",
  "allow",
  "deny",
  "model",
  "json",
  "patch",
  "verbose",
  "image",
  "no-project-doc",
  "commit",
  "open",
  "continue",
  "resume",
];

describe("each command's help lists exactly the options it takes", () => {
  test("every command has help of its own", () => {
    expect(HELP_COMMANDS.sort()).toEqual(Object.keys(COMMAND_OPTIONS).sort());
  });

  for (const command of Object.keys(COMMAND_OPTIONS)) {
    test(`${command} --help`, async () => {
      const { code, screen } = await pencil([command, "--help"]);
      expect(code).toBe(0);
      const takes = COMMAND_OPTIONS[command]!;
      for (const option of EVERY_OPTION) {
        const listed = new RegExp(`^\\s+(-\\w, )?--${option}\\b`, "m").test(screen);
        expect({ option, listed }).toEqual({ option, listed: takes.includes(option as never) });
      }
      expect(screen).toContain("--help");
    });
  }

  test("log and undo do not offer --allow, --deny or --model", async () => {
    for (const command of ["log", "steps", "rewind", "discard", "fork"]) {
      const { screen } = await pencil([command, "--help"]);
      expect(screen).not.toMatch(/--allow|--deny|--model/);
    }
  });

  test("log --help says it lists sessions too", async () => {
    expect((await pencil(["log", "--help"])).screen).toMatch(/sessions/);
  });

  test("the brain's help describes the brain, in every spelling", async () => {
    for (const argv of [
      ["brain", "--help"],
      ["help", "brain"],
      ["brain", "dump", "--help"],
    ]) {
      const { code, screen } = await pencil(argv[0] === "help" ? [...argv.slice(1), "--help"] : argv);
      expect(code).toBe(0);
      expect(screen).not.toContain("not in this version");
      for (const sub of ["dump", "ask", "list", "show", "forget", "reindex"]) expect(screen).toContain(sub);
    }
  });
});

describe("a flag a command does not take is a usage error", () => {
  test.each([
    [["plan", "fix it", "--commit"], "--commit", "--continue"],
    [["log", "--commit", "--open", "--patch"], "--commit", "--json"],
    [["undo", "--model", "x"], "--model", "--workspace"],
    [["demo", "-w", "."], "-w", "It takes --keep."],
    [["completion", "bash", "--json"], "--json", "no options"],
    [["brain", "list", "--commit"], "--commit", "--image"],
  ])("%p", async (argv, refused, offered) => {
    const { code, screen } = await pencil(argv);
    expect(code).toBe(2);
    expect(screen).toContain(`does not take ${refused}`);
    expect(screen).toContain(offered);
  });

  test("review -w with a file is refused with exit 2", async () => {
    const dir = tempDir("pencil-file-ws-");
    const file = join(dir, "notes.txt");
    writeFileSync(file, "x\n");
    const { code, screen } = await pencil(["review", "-w", file]);
    expect(code).toBe(2);
    expect(screen).toMatch(/not a directory/);
  });
});

describe("--version", () => {
  test.each([[["-V"]], [["--version"]], [["agent", "--version"]], [["log", "--json", "-V"]]])(
    "%p names the version",
    async (argv) => {
      const result = await runCli(argv, { cwd: tempDir("pencil-cwd-"), env: baseEnv() });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(pkg.version);
    },
  );
});

describe("--json when the command fails", () => {
  test("agent --json with no model: one JSON document with the error on stdout, exit 2", async () => {
    const { io, screen } = scriptedTerminal([], { tty: false });
    const out: string[] = [];
    io.out = (text) => void out.push(text);
    io.interactive = false;
    const code = await main(["agent", "do it", "--json", "-w", tempDir("pencil-ws-")], baseEnv(), io, tempDir("p-"));
    expect(code).toBe(2);
    const doc = JSON.parse(out.join(""));
    expect(doc.error.exitCode).toBe(2);
    expect(doc.error.message).toContain("No model is configured");
    expect(screen()).toContain("No model is configured");
  });
});
