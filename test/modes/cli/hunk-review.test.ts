import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { runCliPty } from "../../support/cli.ts";

// `h` in a real terminal: a file's hunks kept or dropped one by one; the bytes written are the base plus the kept hunks.

const lines = (n: number, eol = "\n") => Array.from({ length: n }, (_, i) => `line ${i + 1}${eol}`).join("");
const BASE = lines(20);
/** What the agent writes: line 2 and line 18 changed, far enough apart to be two hunks. */
const STAGED = BASE.replace("line 2\n", "LINE TWO\n").replace("line 18\n", "LINE EIGHTEEN\n");

const FILE_PROMPT = "[s]teps [h]unks ";
const HUNK = "Keep this hunk? [y]es [n]o [r]eason [q]uit the rest ";
const RESULT = "Approve this result? [y]es [n]o";

async function world(base = BASE, staged = STAGED, extra: ReturnType<typeof textReply>[] = []) {
  const { workspace, groq, env } = await modelWorld({ "f.txt": base });
  groq.enqueue(
    toolCallReply([{ name: "read_file", arguments: { path: "f.txt" } }]),
    toolCallReply([{ name: "write_file", arguments: { path: "f.txt", content: staged } }]),
    textReply("Two changes staged."),
    ...extra,
  );
  return { workspace, groq, env, read: () => readFileSync(join(workspace, "f.txt"), "utf8") };
}

describe("hunk review in the terminal", () => {
  test("keep the first hunk, drop the second: exactly the base with the first hunk is written", async () => {
    const { workspace, env, read } = await world();
    const { code, output } = await runCliPty(["agent", "two changes", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: FILE_PROMPT, send: "h" },
        { expect: HUNK, send: "y" },
        { expect: HUNK, send: "n" },
        { expect: RESULT, send: "y" },
      ],
    });
    expect(output).toContain("hunk 1 of 2");
    expect(output).toContain("kept 1 of 2 hunks; the file would become:");
    expect(code).toBe(0);
    expect(read()).toBe(BASE.replace("line 2\n", "LINE TWO\n"));
  });

  test("drop the first with a reason, keep the second: the second is written and the reason, naming the hunk, reaches the agent", async () => {
    const { workspace, env, read, groq } = await world(BASE, STAGED, [textReply("Understood, line 2 stays.")]);
    const { code } = await runCliPty(["agent", "two changes", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: FILE_PROMPT, send: "h" },
        { expect: HUNK, send: "r" },
        { expect: "Reason", send: "line two must stay lowercase\r" },
        { expect: HUNK, send: "y" },
        { expect: RESULT, send: "y" },
      ],
    });
    expect(code).toBe(0);
    expect(read()).toBe(BASE.replace("line 18\n", "LINE EIGHTEEN\n"));
    const revision = groq.requests[3]!.raw;
    expect(revision).toContain("line two must stay lowercase");
    expect(revision).toContain("hunk 1 of 2 (@@ -1,5 +1,5 @@) was dropped");
  });

  test("q drops the rest: nothing kept, and y on the unchanged result writes nothing", async () => {
    const { workspace, env, read } = await world();
    const { code, output } = await runCliPty(["agent", "two changes", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: FILE_PROMPT, send: "h" },
        { expect: HUNK, send: "q" },
        { expect: RESULT, send: "y" },
      ],
    });
    expect(output).toContain("unchanged: nothing of the staged change would be written");
    expect(code).toBe(0);
    expect(read()).toBe(BASE);
  });

  test("both kept writes the staged file; n on the result rejects the file", async () => {
    const kept = await world();
    const both = await runCliPty(["agent", "two changes", "-w", kept.workspace], {
      cwd: kept.workspace,
      env: kept.env,
      steps: [
        { expect: FILE_PROMPT, send: "h" },
        { expect: HUNK, send: "y" },
        { expect: HUNK, send: "y" },
        { expect: RESULT, send: "y" },
      ],
    });
    expect(both.code).toBe(0);
    expect(kept.read()).toBe(STAGED);
    const rejected = await world();
    const no = await runCliPty(["agent", "two changes", "-w", rejected.workspace], {
      cwd: rejected.workspace,
      env: rejected.env,
      steps: [
        { expect: FILE_PROMPT, send: "h" },
        { expect: HUNK, send: "y" },
        { expect: HUNK, send: "n" },
        { expect: RESULT, send: "n" },
      ],
    });
    expect(no.code).toBe(0);
    expect(rejected.read()).toBe(BASE);
  });

  test("CRLF without a final newline: the kept hunk's bytes and the base's own endings, exactly", async () => {
    const base = `${lines(20, "\r\n")}tail`;
    const staged = base.replace("line 2\r\n", "LINE TWO\r\n").replace("tail", "tail changed");
    const { workspace, env, read } = await world(base, staged);
    const { code } = await runCliPty(["agent", "two changes", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: FILE_PROMPT, send: "h" },
        { expect: HUNK, send: "n" },
        { expect: HUNK, send: "y" },
        { expect: RESULT, send: "y" },
      ],
    });
    expect(code).toBe(0);
    expect(read()).toBe(base.replace("tail", "tail changed"));
  });

  test("the file changed on disk since staging: the kept hunks are not written, exit 4", async () => {
    const { workspace, env, read } = await world();
    const { code, output } = await runCliPty(["agent", "two changes", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: FILE_PROMPT, send: "h" },
        { expect: HUNK, send: "y" },
        { expect: HUNK, send: "n" },
        // Someone else writes the file while the owner reads the result.
        {
          expect: RESULT,
          send: "y",
          beforeSend: () => writeFileSync(join(workspace, "f.txt"), `${BASE}someone else's line\n`),
        },
      ],
    });
    expect(output).toContain("conflict");
    expect(code).toBe(4);
    expect(read()).toBe(`${BASE}someone else's line\n`);
  });

  test("`?` lists h; h on a single-hunk file says it is decided whole", async () => {
    const { workspace, env, read } = await world(BASE, BASE.replace("line 2\n", "LINE TWO\n"));
    const { code, output } = await runCliPty(["agent", "one change", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: "[s]teps ", send: "?" },
        { expect: "h  go through its hunks", send: "" },
        { expect: "[s]teps ", send: "h" },
        { expect: "decide it whole", send: "" },
        { expect: "[s]teps ", send: "y" },
      ],
    });
    expect(code).toBe(0);
    expect(output).not.toContain("[h]unks");
    expect(read()).toBe(BASE.replace("line 2\n", "LINE TWO\n"));
  });
});
