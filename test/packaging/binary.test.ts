// The single executable as a user gets it: built once by scripts/build-binary.ts, moved alone into a folder, and run
// from an empty directory with no node_modules anywhere, no Bun on PATH and a home of its own. The brain's first start
// (Postgres's initdb in WebAssembly) is the slowest step, so it starts in beforeAll, in a home of its own, and runs
// while the other tests do.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { sandboxAvailable } from "../../core/sandbox/namespace.ts";
import { startFakeOpenAIServer, textReply, toolCallReply } from "../support/fake-openai-server.ts";
import { tempDir, writeTree } from "../support/temp.ts";

const ROOT = join(import.meta.dir, "../..");
const base = tempDir("pencil-binary-");
const binary = join(base, "bin/pencil");
const empty = join(base, "empty");
const home = join(base, "home");
/** The brain test's home, so that its runs share no state with the others' while they go on together. */
const brainHome = join(base, "brain-home");
const env = { PATH: "/usr/bin:/bin", HOME: home, NO_COLOR: "1" };

function pencil(args: string[], extra: Record<string, string> = {}, cwd = empty) {
  const r = spawnSync(binary, args, { cwd, env: { ...env, ...extra }, encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The same, without blocking: the fake model server answers from this process. */
async function pencilAsync(args: string[], extra: Record<string, string>, cwd = empty) {
  const child = Bun.spawn([binary, ...args], { cwd, env: { ...env, ...extra }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}

beforeAll(() => {
  const out = join(base, "build/pencil");
  const build = spawnSync(process.execPath, [join(ROOT, "scripts/build-binary.ts"), `--outfile=${out}`], {
    cwd: ROOT,
    encoding: "utf8",
  });
  if (build.status !== 0) throw new Error(`build:binary failed: ${build.stderr}${build.stdout}`);
  console.log(`packaging: ${build.stdout.trim()}`);
  mkdirSync(join(base, "bin"));
  renameSync(out, binary);
  chmodSync(binary, 0o755);
  mkdirSync(empty);
  mkdirSync(home);
  mkdirSync(brainHome);
  const brain = { HOME: brainHome };
  brainRuns = pencilAsync(["brain", "dump", "Kittens purr when they are content"], brain).then(async (dump) => ({
    dump,
    ...(dump.code === 0 ? { list: await pencilAsync(["brain", "list", "--json"], brain) } : {}),
  }));
}, 180_000);

/** `brain dump` then `brain list --json` in brainHome, under way from beforeAll. */
let brainRuns: Promise<{
  dump: Awaited<ReturnType<typeof pencilAsync>>;
  list?: Awaited<ReturnType<typeof pencilAsync>>;
}>;

// The brain's runs are the tests' own processes: none is left running when the file ends, whatever failed.
afterAll(async () => {
  await brainRuns;
});

describe("the single executable", () => {
  test("runs alone from an empty directory: --version names it, the demo stages its changeset", () => {
    expect(existsSync(join(base, "bin/node_modules"))).toBe(false);
    const version = pencil(["--version"]);
    expect(version).toEqual({ code: 0, stdout: `pencil ${pkg.version} (binary, ${binary})\n`, stderr: "" });
    console.log(
      `packaging: binary --version → ${version.stdout.trim()} (${(statSync(binary).size / 1024 / 1024).toFixed(0)} MiB)`,
    );

    const demo = pencil(["demo"]);
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toContain("slugify");
    expect(demo.stdout).toContain("Nothing was applied");
    // What it suggests running is the executable itself (not on PATH here: by its path).
    expect(demo.stdout).toContain(`${binary} demo`);
    console.log("packaging: binary demo → the scripted run staged its changeset from the embedded workspace");
  });

  test.skipIf(!sandboxAvailable())(
    "a sandboxed run_command: the executable is its own namespace setup, and the shell parser's grammar is embedded",
    async () => {
      const model = await startFakeOpenAIServer();
      try {
        const workspace = join(base, "ws");
        writeTree(workspace, { "a.txt": "alpha\n" });
        model.enqueue(
          toolCallReply([
            {
              name: "run_command",
              arguments: { command: "cat a.txt && echo made > made.txt && grep NoNewPrivs /proc/self/status" },
            },
          ]),
          textReply("Done."),
        );
        const run = await pencilAsync(["agent", "make made.txt", "-w", workspace], {
          GROQ_API_KEY: "gsk_test_key",
          GROQ_BASE_URL: `${model.url}/openai/v1`,
        });
        // No terminal to review on: the changeset is left pending (exit 3) and nothing reaches the disk.
        expect(run.code, run.stderr).toBe(3);
        expect(existsSync(join(workspace, "made.txt"))).toBe(false);
        const answer = JSON.stringify(model.requests[1]?.body?.messages ?? []);
        expect(answer).toContain("alpha");
        // The command ran with no_new_privs set: setpriv, started by the setup inside the namespace.
        expect(answer).toMatch(/NoNewPrivs:\\t1/);
        expect(run.stdout).toContain("made.txt");
        console.log(
          "packaging: binary agent → run_command ran in the namespace sandbox, made.txt staged, disk untouched",
        );
      } finally {
        await model.stop();
      }
    },
    90_000,
  );

  test("review --web serves its page, script, styles and syntax colours from inside the executable", async () => {
    const model = await startFakeOpenAIServer();
    const workspace = join(base, "ws-web");
    writeTree(workspace, { "README.md": "web\n" });
    const keys = { GROQ_API_KEY: "gsk_test_key", GROQ_BASE_URL: `${model.url}/openai/v1` };
    let review: Bun.Subprocess<"ignore", "pipe", "pipe"> | undefined;
    try {
      model.enqueue(
        toolCallReply([{ name: "create_file", arguments: { path: "app.ts", content: "export const RATE = 0.2;\n" } }]),
        textReply("Done."),
      );
      const run = await pencilAsync(["agent", "add app.ts", "-w", workspace], keys);
      expect(run.code, run.stderr).toBe(3); // left pending
      review = Bun.spawn([binary, "review", "--web"], {
        cwd: workspace,
        env: { ...env, ...keys, CI: "1" },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const reader = review.stdout.getReader();
      let printed = "";
      let address: string | undefined;
      while (!address) {
        const { done, value } = await reader.read();
        if (done)
          throw new Error(`review --web printed no address: ${printed}${await new Response(review.stderr).text()}`);
        printed += new TextDecoder().decode(value);
        address = printed.match(/http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+/)?.[0];
      }
      const entry = await fetch(address, { redirect: "manual" });
      const cookie = entry.headers.get("set-cookie")!.split(";")[0]!;
      const get = async (path: string) => {
        const r = await fetch(new URL(path, address), { headers: { cookie } });
        return { status: r.status, body: await r.text() };
      };
      expect((await get("/")).body).toContain('<script src="/assets/review.js"');
      const script = await get("/assets/review.js");
      expect(script.status).toBe(200);
      expect(script.body).toContain("/api/state");
      expect((await get("/assets/review.css")).status).toBe(200);
      const syntax = await get("/assets/syntax.css");
      expect(syntax.body).toContain("prefers-color-scheme: dark");
      expect(syntax.body).toContain(".hljs-keyword");
      // The diff is coloured by highlight.js, bundled into the executable.
      const file = JSON.parse((await get("/api/file?i=0")).body) as { hunks: { rows: { h: string }[] }[] };
      expect(file.hunks[0]!.rows[0]!.h).toContain('<span class="hljs-keyword">export</span>');
      console.log("packaging: binary review --web → page, script, styles, both themes and a highlighted diff served");
    } finally {
      review?.kill();
      await model.stop();
    }
  }, 90_000);

  // Last, so that the other tests run while the brain starts.
  test("the brain: dump then list, with PGlite, its data bundle and pgvector from inside the executable", async () => {
    const { dump, list } = await brainRuns;
    expect(dump.code, dump.stderr).toBe(0);
    expect(list?.code, list?.stderr).toBe(0);
    const notes = JSON.parse(list!.stdout) as { body?: string; title?: string }[] | { notes: { body?: string }[] };
    const all = Array.isArray(notes) ? notes : notes.notes;
    expect(JSON.stringify(all)).toContain("Kittens purr");
    console.log(
      `packaging: binary brain dump + brain list → ${all.length} note, in ${join(brainHome, ".pencil/brain")}`,
    );
  }, 90_000);
});
