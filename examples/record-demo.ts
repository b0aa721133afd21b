// Records the two demo transcripts in examples/: `npx bun examples/record-demo.ts`.
// demo-output.txt: the demo with no terminal. demo-session.txt: the demo driven through a
// pseudo-terminal (100 columns, NO_COLOR) with the keys below, then the demo project's
// own tests run in the workspace it left behind.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const index = join(root, "index.ts");
const home = mkdtempSync(join(tmpdir(), "pencil-record-"));
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  PENCIL_HOME: join(home, ".pencil"),
  NO_COLOR: "1",
  TERM: "xterm",
};

// The session's keys: y (README), n (the implementation), y (its test) → warned that the test
// imports what was rejected → n (decide again) → a (approve all, every diff shown) → y.
const KEYS: { after: string; send: string; note: string }[] = [
  { after: "[s]teps ", send: "y", note: "y" },
  { after: "[s]teps ", send: "n", note: "n" },
  { after: "[s]teps ", send: "y", note: "y" },
  { after: "Apply as decided?", send: "n", note: "n" },
  { after: "[s]teps ", send: "a", note: "a" },
  { after: "[y/N]", send: "y", note: "y" },
];

const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

/** What the screen shows, line by line: a carriage return repaints its line (the spinner). */
function transcript(raw: string): string {
  return raw
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map(
      (line) =>
        line
          .split("\r")
          .map((part) => part.replace(ANSI, ""))
          .filter((part) => part !== "")
          .at(-1) ?? "",
    )
    .join("\n");
}

async function session(): Promise<string> {
  let raw = "";
  const decoder = new TextDecoder();
  const proc = Bun.spawn([process.execPath, index, "demo"], {
    cwd: home,
    env,
    terminal: { cols: 100, rows: 50, data: (_t, data) => void (raw += decoder.decode(data, { stream: true })) },
  });
  let cursor = 0;
  for (const key of KEYS) {
    for (;;) {
      const at = raw.replace(ANSI, "").indexOf(key.after, cursor);
      if (at !== -1) {
        cursor = at + key.after.length;
        break;
      }
      await Bun.sleep(50);
    }
    await Bun.sleep(100);
    proc.terminal!.write(key.send);
  }
  const code = await proc.exited;
  proc.terminal?.close();
  const text = transcript(raw);
  const workspace = /examples\/demo at (\S+)/.exec(text)?.[1];
  let tests = "";
  if (workspace) {
    const run = spawnSync(process.execPath, ["test"], { cwd: workspace, env, encoding: "utf8" });
    tests = `\n$ cd ${workspace} && bun test\n${(run.stdout + run.stderr).replace(/\[\d+(\.\d+)?m?s\]/g, "").trim()}\nEXIT=${run.status}\n`;
  }
  return `$ ./bin/pencil demo   # in a terminal (100 columns, NO_COLOR=1): keys ${KEYS.map((k) => k.note).join(", ")}\n${text.trim()}\nEXIT=${code}\n${tests}`;
}

const piped = spawnSync(process.execPath, [index, "demo"], { cwd: home, env, encoding: "utf8" });
writeFileSync(
  join(root, "examples/demo-output.txt"),
  `$ ./bin/pencil demo > examples/demo-output.txt   # no terminal: nothing is applied\n${piped.stdout}EXIT=${piped.status}\n`,
);
writeFileSync(join(root, "examples/demo-session.txt"), await session());
console.log("wrote examples/demo-output.txt and examples/demo-session.txt");
