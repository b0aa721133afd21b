import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { INDEX } from "../../support/cli.ts";
import { baseEnv, modelWorld } from "../../support/cli-world.ts";
import { runCli, runCliPty, screenLines } from "../../support/cli.ts";
import { errorReply, textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { savedScriptedRun } from "../../support/scripted-run.ts";
import { tempDir, writeTree } from "../../support/temp.ts";
import { withTranspilerCache } from "../../support/transpiler-cache.ts";

// What a script sees: --json leaves exactly one JSON document on stdout, and a reader
// that goes away (`| head`) ends the command quietly.

const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });

const withModel = () => modelWorld();

describe("--json", () => {
  test("ask --json: stdout is one JSON document, the progress went to stderr", async () => {
    const { workspace, groq, env } = await withModel();
    groq.enqueue(toolCallReply([call("read_file", { path: "a.txt" })]), textReply("It says alpha."));
    const result = await runCli(["ask", "what is in a.txt?", "--json", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ question: "what is in a.txt?", answer: "It says alpha." });
    expect(result.stderr).toContain("read_file");
  });

  test("plan --json: stdout is the plan alone", async () => {
    const { workspace, groq, env } = await withModel();
    const plan = {
      summary: "Do it.",
      steps: [{ id: "s1", title: "One", detail: "Edit a.txt.", files: ["a.txt"] }],
      risks: [],
      openQuestions: [],
    };
    groq.enqueue(toolCallReply([call("read_file", { path: "a.txt" })]), toolCallReply([call("submit_plan", plan)]));
    const result = await runCli(["plan", "uppercase", "--json", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).summary).toBe("Do it.");
  });
});

describe("--json for agent, and where it does not apply", () => {
  test("agent --json: one document with the staged changeset, nothing applied, exit 3; review --json is a usage error", async () => {
    const { workspace, groq, env } = await withModel();
    groq.enqueue(
      toolCallReply([call("read_file", { path: "a.txt" })]),
      toolCallReply([call("edit_file", { path: "a.txt", old_string: "alpha", new_string: "ALPHA" })]),
      textReply("Done."),
    );
    const result = await runCli(["agent", "shout", "--json", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(3);
    const doc = JSON.parse(result.stdout);
    expect(doc.changeset.status).toBe("pending");
    expect(doc.changeset.files.map((f: { path: string }) => f.path)).toEqual(["a.txt"]);
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("alpha\n");
    const review = await runCli(["review", "--json", "-w", workspace], { cwd: workspace, env });
    expect(review.code).toBe(2);
    expect(review.stdout).toBe("");
    expect(review.stderr).toContain("does not take --json");
  });
});

describe("a closed pipe", () => {
  // The reader closes its end at once, long before Pencil has started, so every write meets EPIPE.
  async function intoClosedPipe(args: string[]) {
    const env = baseEnv();
    const proc = Bun.spawn(
      [
        "bash",
        "-c",
        '"$0" "$@" 2>"$HOME/err" | (exec 0<&-; sleep 0.3); echo "${PIPESTATUS[0]}"; cat "$HOME/err"',
        process.execPath,
        INDEX,
        ...args,
      ],
      {
        cwd: env.HOME!,
        env: withTranspilerCache(env),
        stdout: "pipe",
      },
    );
    const text = await new Response(proc.stdout).text();
    await proc.exited;
    const [code, ...stderr] = text.split("\n");
    return { code: Number(code), stderr: stderr.join("\n") };
  }

  for (const args of [["log"], ["doctor"], ["--help"], ["log", "--json"]]) {
    test(`pencil ${args.join(" ")} | head: exit 0, no stack trace`, async () => {
      const { code, stderr } = await intoClosedPipe(args);
      expect(stderr).not.toContain("EPIPE");
      expect(stderr).not.toMatch(/\bat \S+ \(/);
      expect(code).toBe(0);
    });
  }
});

describe("what the person reads", () => {
  test("a model failure is reported once, with no empty totals line", async () => {
    const { workspace, groq, env } = await withModel();
    groq.enqueue(errorReply(400, "bad request from the fake", "invalid_request_error"));
    const result = await runCli(["agent", "do it", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(1);
    const all = result.stdout + result.stderr;
    expect(all.match(/bad request from the fake/g)?.length).toBe(1);
    expect(all).not.toMatch(/^error:/m);
    expect(all).not.toContain("turns 1 · calls 0 · tokens 0");
  });

  test("a refused read shows the reason for the person, not the instructions for the model", async () => {
    const { workspace, groq, env } = await withModel();
    writeTree(workspace, { ".env": "X=1\n" });
    groq.enqueue(toolCallReply([call("read_file", { path: ".env" })]), textReply("Cannot read it."));
    const result = await runCli(["agent", "read the env", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("read .env denied: Reading .env files is never allowed");
    expect(result.stdout).not.toContain("Ask the user");
    expect(result.stdout.match(/\.env/g)?.length).toBe(2);
    // The model still got its instructions.
    expect(groq.requests[1]!.raw).toContain("Ask the user to paste");
  });
});

describe("after a conflict", () => {
  test("the conflicted file stays pending, log says conflict, and a new review shows it against today's disk", async () => {
    const { workspace, env } = await withModel();
    const saved = await savedScriptedRun(env, workspace, "shout", [
      { toolCalls: [{ name: "read_file", input: { path: "a.txt" } }] },
      { toolCalls: [{ name: "edit_file", input: { path: "a.txt", old_string: "alpha", new_string: "ALPHA" } }] },
      { text: "Done." },
    ]);
    expect(saved.changeset?.status).toBe("pending");
    writeTree(workspace, { "a.txt": "alpha\nmine, written meanwhile\n" });
    const first = await runCliPty(["review", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [{ expect: "[s]teps ", send: "y" }],
    });
    expect(first.code).toBe(4);
    expect(first.output).toContain("They stay pending");
    const log = JSON.parse((await runCli(["log", "--json", "-w", workspace], { cwd: workspace, env })).stdout);
    expect(log[0].status).toBe("pending");
    expect(log[0].files[0].decision).toBe("conflict");
    const text = await runCli(["log", "-w", workspace], { cwd: workspace, env });
    expect(text.stdout).toMatch(/a\.txt \+\d+ -\d+ conflict/);
    // Reviewed again: the diff is against the file as it is now, so approving visibly drops the owner's line.
    const again = await runCliPty(["review", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [{ expect: "[s]teps ", send: "n" }],
    });
    expect(again.output).toContain("-mine, written meanwhile");
    expect(again.code).toBe(0);
    expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("alpha\nmine, written meanwhile\n");
  });
});

describe("commands the agent runs", () => {
  const script = `for i in $(seq 1 20); do echo "line $i"; done\nexit 3\n`;
  test.skipIf(!sandboxAvailable())(
    "a failed command shows its exit status, its own time, and the first and last lines; --verbose and the log have all",
    async () => {
      const { workspace, groq, env } = await withModel();
      writeTree(workspace, { "fail.sh": script });
      const turn = () => [toolCallReply([call("run_command", { command: "sh fail.sh" })]), textReply("It failed.")];
      groq.enqueue(...turn());
      const result = await runCli(["agent", "run it", "--allow", "Run(sh fail.sh)", "-w", workspace], {
        cwd: workspace,
        env,
      });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/✗ \$ sh fail\.sh {2}exit 3 · \d+\.\d\ds/);
      expect(result.stdout).toContain("│ line 1\n");
      expect(result.stdout).toContain("│ line 20\n");
      expect(result.stdout).not.toContain("line 10\n");
      expect(result.stdout).toContain("… 14 more lines (--verbose, or the run's log)");
      const log = /run's log \(every output in full\):\n(\S+)/.exec(result.stdout)?.[1];
      expect(log).toBeDefined();
      expect(readFileSync(log!, "utf8")).toContain("line 10\n");
      groq.enqueue(...turn());
      const verbose = await runCli(["agent", "run it", "--verbose", "--allow", "Run(sh fail.sh)", "-w", workspace], {
        cwd: workspace,
        env,
      });
      expect(verbose.stdout).toContain("│ line 10\n");
    },
  );
});

describe("progress in a terminal", () => {
  test("a header and a spinner naming the model, with elapsed seconds and Ctrl-C to stop from the start; text as Markdown; the context line only when it moves", async () => {
    const { workspace, groq, env } = await withModel();
    groq.enqueue(
      toolCallReply([call("read_file", { path: "a.txt" })]),
      toolCallReply([call("read_file", { path: "a.txt" })]),
      textReply("It holds `alpha` and **nothing else**.\n\nThat is all."),
    );
    const { code, output } = await runCliPty(["ask", "what is in a.txt?", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [{ expect: "[Enter] done", send: "\r" }],
    });
    expect(code).toBe(0);
    const header = output.indexOf("pencil ask · groq:openai/gpt-oss-120b");
    expect(header).toBeGreaterThanOrEqual(0);
    // The spinner names the model it waits on, its own seconds and how to stop.
    expect(output).toMatch(/waiting for groq:openai\/gpt-oss-120b · \d+s · Ctrl-C to stop/);
    expect(output).toContain("It holds alpha and nothing else.");
    expect(output).not.toContain("`alpha`");
    // Enter at the footer is the default: nothing saved, nothing to review.
    expect(output).not.toContain("[s]teps");
    // Three steps at the same fill of the context window: one context line, not three.
    expect(output.match(/· ctx /g)?.length).toBe(1);
  });
});

describe("a 60-column terminal", () => {
  test("summary, streamed text, diffs and the review prompt fit; diff continuation lines keep their gutter", async () => {
    const { workspace, groq, env } = await withModel();
    const longLine =
      "export const message = 'a line of code that is much longer than sixty columns, so it must wrap under its gutter';";
    const prose =
      "This paragraph explains the change at length, in words long enough that a sixty-column terminal must wrap it between words and never inside one.";
    groq.enqueue(
      toolCallReply([
        call("create_file", {
          path: "src/some/deeply/nested/directory/with-a-long-file-name.ts",
          content: `${longLine}\n`,
        }),
      ]),
      textReply(`${prose}\n\nDone.`),
    );
    const { code, output, raw } = await runCliPty(
      ["agent", "add a message constant to a nested module with a long path", "-w", workspace],
      {
        cwd: workspace,
        env,
        cols: 60,
        steps: [{ expect: "[s]teps ", send: "n" }],
      },
    );
    expect(code).toBe(0);
    const lines = screenLines(raw);
    // A bare path on a line of its own (the run's log) is left whole for copying; the terminal wraps it.
    const wide = lines.filter((l) => [...l].length > 60 && /\s/.test(l.trim()));
    if (wide.length) console.error(JSON.stringify(wide, null, 1));
    expect(wide).toEqual([]);
    // Words are whole: the prose wrapped between words.
    for (const word of prose.split(" ")) expect(output).toContain(word.replace(/[,.]$/, ""));
    // The diff line wrapped; its continuation starts under the gutter with the same sign.
    const first = lines.findIndex((l) => l.includes("+export const message"));
    expect(first).toBeGreaterThan(-1);
    expect(lines[first + 1]).toMatch(/^ {2}\+\S/);
    expect(output.replace(/\n {2}\+/g, "")).toContain(longLine);
  });
});

describe("configuration where the user is", () => {
  test("$PENCIL_HOME/.env is read and named by doctor; a workspace's .env is not read; it cannot move PENCIL_HOME", async () => {
    const { workspace, groq, env } = await withModel();
    const { GROQ_API_KEY, GROQ_BASE_URL, ...bare } = env;
    const userEnv = join(env.PENCIL_HOME!, ".env");
    writeTree(env.PENCIL_HOME!, {
      ".env": `GROQ_API_KEY=${GROQ_API_KEY}\nGROQ_BASE_URL=${GROQ_BASE_URL}\nPENCIL_HOME=/elsewhere\n`,
    });
    writeTree(workspace, { ".env": "OPENROUTER_API_KEY=from-the-workspace\n" });
    // Started elsewhere (as the launcher starts Bun in Pencil's directory), run on the workspace.
    const doctor = await runCli(["doctor", "--json", "-w", workspace], { cwd: bare.HOME!, env: bare });
    const checks = JSON.parse(doctor.stdout) as { name: string; status: string; detail: string }[];
    expect(checks.find((c) => c.name === "configuration")!.detail).toContain(`read ${userEnv}`);
    expect(checks.find((c) => c.name === "configuration")!.detail).not.toContain(join(workspace, ".env"));
    expect(checks.find((c) => c.name.startsWith("primary model"))!.status).toBe("ok");
    expect(checks.some((c) => c.name.startsWith("fallback model"))).toBe(false);
    expect(checks.find((c) => c.name === "state")!.detail).toBe(env.PENCIL_HOME!);
    groq.enqueue(textReply("Hello."));
    const result = await runCli(["agent", "say hello", "-w", workspace], { cwd: bare.HOME!, env: bare });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Hello.");
  });

  test("doctor's fix agrees with its detail when only LOCAL_LLM_MODEL is missing", async () => {
    const env: Record<string, string> = { ...baseEnv(), LOCAL_LLM_BASE_URL: "http://127.0.0.1:9/v1" };
    const doctor = await runCli(["doctor", "--json"], { cwd: env.HOME!, env });
    const model = (JSON.parse(doctor.stdout) as { name: string; detail: string; fix: string }[]).find(
      (c) => c.name === "model",
    )!;
    expect(model.detail).toContain("LOCAL_LLM_MODEL is not");
    expect(model.fix).toMatch(/^set LOCAL_LLM_MODEL /);
    expect(model.fix).not.toContain("GROQ_API_KEY");
  });
});

describe("small things", () => {
  test("a mistyped command gets a guess; an unknown flag a clean message; a command's --help is its own", async () => {
    const env = baseEnv();
    const typo = await runCli(["agnet", "x"], { cwd: env.HOME!, env });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Unknown command "agnet". Did you mean agent?');
    const flag = await runCli(["agent", "x", "--verbos"], { cwd: env.HOME!, env });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("Unknown option --verbos. Did you mean --verbose?");
    expect(flag.stderr).not.toContain("'");
    expect(flag.stderr).toContain("agent --help");
    const help = await runCli(["agent", "--help"], { cwd: env.HOME!, env });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: .*index\.ts agent "<goal>"/);
    expect(help.stdout).not.toContain("Commands:");
  });

  test("undo with nothing to undo says so and exits 0", async () => {
    const env = baseEnv();
    const workspace = tempDir("pencil-ws-");
    const result = await runCli(["undo", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Nothing to undo");
    expect(result.stderr).toBe("");
  });
});

test("model text with escape sequences, a carriage return or a bidi control reaches the screen escaped", async () => {
  const { workspace, groq, env } = await withModel();
  groq.enqueue(textReply("All good\x1b[2J\rfake line \u202eevil\u202c \u009b31m done."));
  const result = await runCli(["agent", "talk", "-w", workspace], { cwd: workspace, env });
  expect(result.code).toBe(0);
  expect(result.stdout).not.toMatch(/[\x1b\r\u202e\u009b]/);
  expect(result.stdout).toContain("\\x1b[2J\\rfake line");
});
