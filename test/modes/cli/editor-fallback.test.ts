import { expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { runCliPty } from "../../support/cli.ts";
import { tempDir } from "../../support/temp.ts";

// With neither $VISUAL nor $EDITOR set, `e` opens vi, as git does, instead of refusing.
test("`e` with no $VISUAL or $EDITOR opens vi from PATH", async () => {
  const { workspace, groq, env } = await modelWorld();
  delete env.EDITOR;
  delete env.VISUAL;
  const bin = tempDir("pencil-vi-");
  writeFileSync(join(bin, "vi"), `#!/bin/sh\nprintf 'written in vi\\n' > "$1"\n`);
  chmodSync(join(bin, "vi"), 0o755);
  env.PATH = `${bin}:${env.PATH}`;
  groq.enqueue(
    toolCallReply([{ name: "read_file", arguments: { path: "a.txt" } }]),
    toolCallReply([{ name: "edit_file", arguments: { path: "a.txt", old_string: "alpha", new_string: "ALPHA" } }]),
    textReply("Shouted."),
  );
  const { code, output } = await runCliPty(["agent", "shout", "-w", workspace], {
    cwd: workspace,
    env,
    steps: [
      { expect: "[e]dit [s]teps ", send: "e\r" },
      { expect: "[e]dit [s]teps ", send: "y\r" },
    ],
  });
  expect(code).toBe(0);
  expect(output).toContain("edited by you: a.txt");
  expect(readFileSync(join(workspace, "a.txt"), "utf8")).toBe("written in vi\n");
});
