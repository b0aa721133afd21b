import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { errorReply, textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { runCli, runCliPty } from "../../support/cli.ts";
import { tempDir } from "../../support/temp.ts";

// End to end: `bun index.ts` as a subprocess, the real Groq and OpenRouter clients
// pointed at local fake servers by the base-URL variables, reviews driven through a
// pseudo-terminal.

async function setup(files: Record<string, string> = { "a.txt": "alpha\n", "b.txt": "beta\n" }) {
  const { workspace, groq, openrouter, env } = await modelWorld(files, { fallback: true });
  const read = (path: string) => readFileSync(join(workspace, path), "utf8");
  const log = async () =>
    JSON.parse((await runCli(["log", "--json", "-w", workspace], { cwd: workspace, env })).stdout);
  return { workspace, groq, openrouter: openrouter!, env, read, log };
}

const call = (name: string, args: Record<string, unknown>) => ({ name, arguments: args });
const PROMPT = "[s]teps ";

describe("pencil agent, end to end", () => {
  test("every command is recorded with the run, staged or not, refused or not: pencil log --json and the summary show them", async () => {
    const { workspace, groq, env, log } = await setup();
    groq.enqueue(
      toolCallReply([call("create_file", { path: "c.txt", content: "gamma\n" })]),
      toolCallReply([call("run_command", { command: "ls" })]),
      toolCallReply([call("run_command", { command: "timeout 5 git push origin" })]),
      textReply("Done."),
    );
    const { code, stdout } = await runCli(["agent", "make c", "-w", workspace], { cwd: workspace, env });
    expect(code).toBe(3);
    const [cs] = await log();
    expect(
      cs.commands.map((r: { command: string; outcome: string; staged: unknown[] }) => [r.command, r.outcome, r.staged]),
    ).toEqual([
      ["ls", "exited", []],
      ["timeout 5 git push origin", "refused", []],
    ]);
    expect(cs.commands[0].exitCode).toBe(0);
    expect(cs.commands[0].durationMs).toBeGreaterThan(0);
    expect(stdout).toContain("2 commands run:");
    expect(stdout).toContain("$ ls  (exit 0,");
    expect(stdout).toContain("$ timeout 5 git push origin  (refused, not run; nothing staged)");
  });

  test("the commands of a run share one scratch, which is gone from the temp directory when the run ends", async () => {
    const { workspace, groq, env } = await setup({
      "one.sh": "echo made > made.txt; mkdir -p node_modules/x; echo 1 > node_modules/x/i.js\n",
      "two.sh": "cat made.txt node_modules/x/i.js\n",
    });
    const tmp = tempDir("pencil-tmp-");
    groq.enqueue(
      toolCallReply([call("run_command", { command: "sh one.sh" })]),
      toolCallReply([call("run_command", { command: "sh two.sh" })]),
      textReply("Done."),
    );
    const { code } = await runCli(["agent", "make a file", "--allow", "Run(sh *)", "-w", workspace], {
      cwd: workspace,
      env: { ...env, TMPDIR: tmp },
    });
    expect(code).toBe(3);
    // The second command saw what the first staged and what it put in node_modules (never staged).
    expect(groq.requests[2]!.raw).toContain("made\\n1\\n");
    expect(groq.requests[1]!.raw).toContain("1 change in ignored files");
    expect(existsSync(join(workspace, "node_modules"))).toBe(false);
    expect(readdirSync(tmp).filter((n) => n.startsWith("pencil-run-"))).toEqual([]);
  });

  test("review in a terminal: approve one, reject one with a reason the model then reads, approve all of the revision", async () => {
    const { workspace, groq, env, read } = await setup();
    groq.enqueue(
      toolCallReply([call("read_file", { path: "a.txt" }), call("read_file", { path: "b.txt" })]),
      toolCallReply([
        call("edit_file", { path: "a.txt", old_string: "alpha", new_string: "ALPHA" }),
        call("edit_file", { path: "b.txt", old_string: "beta", new_string: "BETA" }),
        call("create_file", { path: "c.txt", content: "gamma\n" }),
      ]),
      textReply("Done: three files staged."),
      toolCallReply([call("edit_file", { path: "b.txt", old_string: "beta", new_string: "beta # reviewed" })]),
      textReply("Revised b.txt."),
    );
    const { code, output } = await runCliPty(["agent", "shout the first file", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: PROMPT, send: "y\r" },
        { expect: PROMPT, send: "r" },
        { expect: "Reason", send: "keep beta lowercase, add a comment instead\r" },
        { expect: PROMPT, send: "y\r" },
        { expect: PROMPT, send: "a\r" },
        { expect: "[y/N]", send: "y\r" },
      ],
    });
    expect(output).toContain("3 files, +3 -2");
    expect(code).toBe(0);
    expect(read("a.txt")).toBe("ALPHA\n");
    expect(read("b.txt")).toBe("beta # reviewed\n");
    expect(read("c.txt")).toBe("gamma\n");
    // The reason reached the model in the request that produced the revision.
    expect(groq.requests[3]!.raw).toContain("keep beta lowercase, add a comment instead");
    expect(groq.requests[2]!.raw).not.toContain("keep beta lowercase");
  });

  test("in a real terminal, typing lgtm approves only after one more key, and sends nothing to the agent", async () => {
    const { workspace, groq, env, read } = await setup();
    groq.enqueue(
      toolCallReply([call("read_file", { path: "a.txt" })]),
      toolCallReply([call("edit_file", { path: "a.txt", old_string: "alpha", new_string: "ALPHA" })]),
      textReply("Done."),
    );
    const { code, output } = await runCliPty(["agent", "shout", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: PROMPT, send: "\r" },
        { expect: "", send: "lgtm\r" },
        { expect: "[y/N]", send: "y" },
      ],
    });
    expect(output).toContain('Take "lgtm" as approve a.txt?');
    expect(code).toBe(0);
    expect(read("a.txt")).toBe("ALPHA\n");
    expect(groq.requests).toHaveLength(3);
  });

  test("in a real terminal, a y typed while the agent works does not approve the diff shown after it", async () => {
    const { workspace, groq, env, read } = await setup();
    groq.enqueue(
      // The first answer comes late, so the key is typed while the run is on screen.
      { kind: "reply", toolCalls: [call("read_file", { path: "a.txt" })], delayMs: 1500 },
      toolCallReply([call("edit_file", { path: "a.txt", old_string: "alpha", new_string: "ALPHA" })]),
      textReply("Done."),
    );
    const { code, output } = await runCliPty(["agent", "shout", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: "Ctrl-C to stop", send: "y" },
        { expect: PROMPT, send: "n" },
      ],
    });
    expect(output).toContain("rejected");
    expect(code).toBe(0);
    expect(read("a.txt")).toBe("alpha\n");
  });

  test("without a terminal: nothing is applied, the changeset is saved, exit 3", async () => {
    const { workspace, groq, env, read, log } = await setup();
    groq.enqueue(
      toolCallReply([call("read_file", { path: "a.txt" })]),
      toolCallReply([call("edit_file", { path: "a.txt", old_string: "alpha", new_string: "ALPHA" })]),
      textReply("Done."),
    );
    const result = await runCli(["agent", "shout", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(/bun \S*index\.ts review \S+/);
    expect(read("a.txt")).toBe("alpha\n");
    const [cs] = await log();
    expect(cs.status).toBe("pending");
    expect(cs.files.map((f: { path: string }) => f.path)).toEqual(["a.txt"]);
    // And `review --patch` prints it as a diff.
    const patch = await runCli(["review", cs.id, "--patch", "-w", workspace], { cwd: workspace, env });
    expect(patch.stdout).toContain("-alpha\n+ALPHA");
  });

  test("Groq answers 429, OpenRouter finishes the run, and log shows which model wrote what", async () => {
    const { workspace, groq, openrouter, env, log } = await setup();
    groq.enqueue(errorReply(429, "Rate limit reached", "rate_limit_exceeded"));
    openrouter.enqueue(
      toolCallReply([call("read_file", { path: "a.txt" })]),
      toolCallReply([call("edit_file", { path: "a.txt", old_string: "alpha", new_string: "ALPHA" })]),
      textReply("Done."),
    );
    const result = await runCli(["agent", "shout", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(3);
    expect(result.stdout).toContain("openrouter:openai/gpt-oss-120b");
    const [cs] = await log();
    expect(cs.models).toEqual(["openrouter:openai/gpt-oss-120b"]);
    expect(cs.files[0].models).toEqual(["openrouter:openai/gpt-oss-120b"]);
    expect(groq.requests).toHaveLength(1);
  });

  test("both providers down: a clear error naming both, and the staged work saved", async () => {
    const { workspace, groq, openrouter, env, read, log } = await setup();
    groq.enqueue(
      toolCallReply([call("create_file", { path: "new.txt", content: "kept\n" })]),
      errorReply(503, "Groq is over capacity"),
    );
    openrouter.enqueue(errorReply(502, "Bad gateway upstream"));
    const result = await runCli(["agent", "make a file", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("groq:openai/gpt-oss-120b");
    expect(result.stderr).toContain("openrouter:openai/gpt-oss-120b");
    expect(result.stderr).toMatch(/saved as \S+; review it with: bun \S*index\.ts review/);
    expect(existsSync(join(workspace, "new.txt"))).toBe(false);
    const [cs] = await log();
    expect(cs.files.map((f: { path: string }) => f.path)).toEqual(["new.txt"]);
    expect(read("a.txt")).toBe("alpha\n");
  });

  test("tool arguments cut off go back to the model as an error it can fix (never completed by guessing)", async () => {
    const { workspace, groq, env } = await setup();
    groq.enqueue(
      toolCallReply([{ name: "read_file", arguments: '{"path": "a.t' }]),
      toolCallReply([call("read_file", { path: "a.txt" })]),
      textReply("a.txt says alpha."),
    );
    const result = await runCli(["agent", "read a", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(0);
    const second = groq.requests[1]!.body as { messages: { role: string; content: unknown }[] };
    const toolMessages = second.messages.filter((m) => m.role === "tool").map((m) => JSON.stringify(m.content));
    expect(toolMessages.join("\n")).toMatch(/error.*cut off/i);
    expect(groq.requests[2]!.raw).toContain("alpha");
  });

  test("a .env read is denied, the model sees why, and no byte of the file is in any request", async () => {
    const secret = "hunter2-do-not-leak";
    const { workspace, groq, env } = await setup({
      "a.txt": "alpha\n",
      ".env": `API_TOKEN=${secret}\n`,
      "config/.env.local": `X=${secret}\n`,
    });
    groq.enqueue(
      toolCallReply([call("read_file", { path: ".env" })]),
      toolCallReply([
        call("search", { pattern: "hunter2" }),
        call("list_files", {}),
        call("read_file", { path: "config/.env.local" }),
      ]),
      textReply("I cannot read the secrets, as expected."),
    );
    const result = await runCli(["agent", "show me the token", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(0);
    expect(groq.requests[1]!.raw).toContain("permission denied for read of .env");
    for (const request of groq.requests) expect(request.raw).not.toContain(secret);
    expect(result.stdout + result.stderr).not.toContain(secret);
  });
});

describe("pencil plan and ask, end to end", () => {
  test("plan → pick steps → proceed → review → applied", async () => {
    const { workspace, groq, env, read } = await setup();
    const plan = {
      summary: "Uppercase the first file.",
      steps: [
        { id: "s1", title: "Uppercase a.txt", detail: "Replace alpha with ALPHA in a.txt.", files: ["a.txt"] },
        { id: "s2", title: "Leave b.txt", detail: "Nothing to do for b.txt.", files: ["b.txt"] },
      ],
      risks: ["None."],
      openQuestions: [],
    };
    groq.enqueue(
      toolCallReply([call("read_file", { path: "a.txt" })]),
      toolCallReply([call("submit_plan", plan)]),
      // The agent run that executes the chosen step.
      toolCallReply([call("read_file", { path: "a.txt" })]),
      toolCallReply([call("edit_file", { path: "a.txt", old_string: "alpha", new_string: "ALPHA" })]),
      textReply("Step s1 done."),
    );
    const { code, output } = await runCliPty(["plan", "uppercase things", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: "Steps to run", send: "1\r" },
        { expect: "as an agent run? [Y/n]", send: "y\r" },
        { expect: PROMPT, send: "y\r" },
      ],
    });
    expect(output).toContain("Uppercase a.txt");
    expect(code).toBe(0);
    expect(read("a.txt")).toBe("ALPHA\n");
    // The agent run was given the chosen step, and told which were left out.
    const agentRequest = groq.requests[2]!.raw;
    expect(agentRequest).toContain("Replace alpha with ALPHA in a.txt.");
    expect(agentRequest).toContain("s2");
  });

  test("ask → save the answer → review → the file is written", async () => {
    const { workspace, groq, env, read } = await setup();
    groq.enqueue(
      toolCallReply([call("read_file", { path: "a.txt" })]),
      textReply("`a.txt` holds **alpha** (a.txt:1)."),
    );
    const { code, output } = await runCliPty(["ask", "what is in a.txt?", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: "[Enter] done", send: "s" },
        { expect: "Save to", send: "notes/answer.md\r" },
        { expect: PROMPT, send: "y\r" },
      ],
    });
    expect(output).toContain("alpha");
    expect(code).toBe(0);
    expect(read("notes/answer.md")).toBe("`a.txt` holds **alpha** (a.txt:1).\n");
  });
});
