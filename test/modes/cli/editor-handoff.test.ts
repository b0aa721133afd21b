import { describe, expect, test } from "bun:test";
import { chmodSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ChangesetStore } from "../../../core/staging/changeset-store.ts";
import { formatSummary } from "../../../render/summary.ts";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { plain, runCli, runCliPty } from "../../support/cli.ts";
import { tempDir } from "../../support/temp.ts";

/** A scripted $EDITOR: a shell script that changes the file it is given, and notes where that file was. */
function scriptedEditor(dir: string, body: string): string {
  const path = join(dir, "fake-editor.sh");
  writeFileSync(path, `#!/bin/sh\necho "$1" >> "${join(dir, "edited-paths.txt")}"\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

async function setup(editorBody: string) {
  const { workspace, home, groq, env } = await modelWorld();
  const tools = tempDir("pencil-editor-");
  env.EDITOR = scriptedEditor(tools, editorBody);
  groq.enqueue(
    toolCallReply([{ name: "read_file", arguments: { path: "a.txt" } }]),
    toolCallReply([{ name: "edit_file", arguments: { path: "a.txt", old_string: "alpha", new_string: "ALPHA" } }]),
    textReply("Shouted."),
  );
  const changesets = () =>
    readdirSync(join(home, ".pencil/changesets"))
      .filter((n) => n.endsWith(".json") && !n.endsWith(".conversation.json"))
      .map((n) => JSON.parse(readFileSync(join(home, ".pencil/changesets", n), "utf8")));
  return { workspace, env, tools, changesets, read: () => readFileSync(join(workspace, "a.txt"), "utf8") };
}

const PROMPT = "[e]dit [s]teps ";

describe("editor hand-off", () => {
  test("`e` opens the staged version in $EDITOR in a temporary copy; what is saved is re-diffed, marked, and applied", async () => {
    const { workspace, env, tools, changesets, read } = await setup(`sed -i 's/ALPHA/ALPHA, said the owner/' "$1"`);
    const { code, output } = await runCliPty(["agent", "shout", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: PROMPT, send: "e\r" },
        { expect: PROMPT, send: "y\r" },
      ],
    });
    expect(code).toBe(0);
    expect(output).toContain("edited by you: a.txt");
    expect(output).toContain("+ALPHA, said the owner");
    expect(read()).toBe("ALPHA, said the owner\n");
    // The editor worked on a copy outside the workspace, never on the workspace file.
    const editedPath = readFileSync(join(tools, "edited-paths.txt"), "utf8").trim();
    expect(editedPath.startsWith(workspace)).toBe(false);
    expect(editedPath.endsWith("/a.txt")).toBe(true);
    const record = changesets()[0];
    expect(record.editedByOwner).toEqual(["a.txt"]);
    expect(record.files[0].origins.map((o: any) => o.tool)).toContain("edited by you");
    // The record's summary says so too.
    expect(formatSummary(new ChangesetStore(env.PENCIL_HOME!).load(record.id), { color: false })).toContain(
      "edited by you",
    );
    const shown = await runCli(["review", record.id, "--patch", "-w", workspace], { cwd: workspace, env });
    expect(shown.stdout).toContain("+ALPHA, said the owner");
  });

  test("review --open sends each file to the editor before its question; a failing editor leaves the staged content", async () => {
    const { workspace, env, read } = await setup(`printf 'from the editor\\n' > "$1"`);
    const first = await runCli(["agent", "shout", "-w", workspace], { cwd: workspace, env });
    expect(first.code).toBe(3);
    const { code, output } = await runCliPty(["review", "--open", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [{ expect: PROMPT, send: "y\r" }],
    });
    expect(code).toBe(0);
    expect(output).toContain("edited by you: a.txt");
    expect(read()).toBe("from the editor\n");
  });

  test("an editor that exits non-zero changes nothing, and says so", async () => {
    const { workspace, env, read } = await setup(`echo broken > "$1"; exit 3`);
    const { code, output } = await runCliPty(["agent", "shout", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: PROMPT, send: "e\r" },
        { expect: PROMPT, send: "y\r" },
      ],
    });
    expect(code).toBe(0);
    expect(output).toContain("exited with 3; the staged content is unchanged");
    expect(read()).toBe("ALPHA\n");
  });

  test('after an edit, a dependency warning\'s "decide again" shows the edited content, and what is applied is what was shown last', async () => {
    const { workspace, groq, env } = await modelWorld({
      "main.ts": 'import { util } from "./util.ts";\nexport const main = util;\n',
      "util.ts": "export const util = 1;\n",
    });
    const tools = tempDir("pencil-editor-");
    env.EDITOR = scriptedEditor(tools, `sed -i 's/main = util + 1/main = util + 100/' "$1"`);
    groq.enqueue(
      toolCallReply([
        { name: "read_file", arguments: { path: "main.ts" } },
        { name: "read_file", arguments: { path: "util.ts" } },
      ]),
      toolCallReply([
        { name: "edit_file", arguments: { path: "main.ts", old_string: "main = util", new_string: "main = util + 1" } },
        { name: "edit_file", arguments: { path: "util.ts", old_string: "util = 1", new_string: "util = 2" } },
      ]),
      textReply("Bumped."),
    );
    const { code, output } = await runCliPty(["agent", "bump", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [
        { expect: PROMPT, send: "e\r" },
        { expect: PROMPT, send: "y\r" },
        { expect: PROMPT, send: "n\r" },
        { expect: "[n] decide again", send: "n\r" },
        { expect: PROMPT, send: "y\r" },
        { expect: PROMPT, send: "n\r" },
        { expect: "[n] decide again", send: "y\r" },
      ],
    });
    expect(code).toBe(0);
    const again = plain(output).slice(plain(output).indexOf("Deciding again, file by file."));
    // What the second round shows of main.ts is the owner's edit, not the agent's original.
    const mainDiff = again.slice(again.indexOf("[1/2] main.ts"), again.indexOf("[2/2] util.ts"));
    // (Without colours the changed words are marked {+ +}.)
    expect(mainDiff).toContain("+export const main = util{+ + 100+};");
    expect(mainDiff).not.toContain("{+ + 1+}");
    expect(readFileSync(join(workspace, "main.ts"), "utf8")).toBe(
      'import { util } from "./util.ts";\nexport const main = util + 100;\n',
    );
    expect(readFileSync(join(workspace, "util.ts"), "utf8")).toBe("export const util = 1;\n");
  });
});
