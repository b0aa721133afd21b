import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { INDEX } from "../../support/cli.ts";
import { startFakeOpenAIServer, textReply, type FakeOpenAIServer } from "../../support/fake-openai-server.ts";
import { startFakeEmbeddingServer, type FakeEmbeddingServer } from "../../support/fake-embedding-server.ts";
import { givePristineBrain } from "../../support/pristine-brain.ts";
import { tempDir } from "../../support/temp.ts";
import { createColors } from "picocolors";
import { main } from "../../../modes/cli/main.ts";
import { withTranspilerCache } from "../../support/transpiler-cache.ts";

/** Runs `pencil …` in this process (the brain's work is the same; no Bun start per command), capturing what it prints. */
async function inProcess(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, env, {
    out: (t) => void (stdout += t),
    err: (t) => void (stderr += t),
    interactive: false,
    color: false,
    colors: createColors(false),
    prompt: async () => null,
    key: async () => null,
    columns: 100,
  });
  return { code, stdout, stderr };
}

function baseEnv(): Record<string, string> {
  const home = tempDir();
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, PENCIL_HOME: join(home, ".pencil"), NO_COLOR: "1" };
}

/** baseEnv with the brain already created, empty: for tests whose subject is not its creation (the quick start's is). */
async function createdBrainEnv(): Promise<Record<string, string>> {
  const env = baseEnv();
  await givePristineBrain(env.PENCIL_HOME!);
  return env;
}

describe("pencil brain without any key (the quick start)", () => {
  const env = baseEnv();
  const cli = (...args: string[]) => inProcess(["brain", ...args], env);

  test("dump, ask, list, show, forget — scripted enrichment said to be scripted, full-text search", async () => {
    const dumped = await cli(
      "dump",
      "The boiler service code is BX-4471. The engineer comes on the first Tuesday of March.",
    );
    expect(dumped.code).toBe(0);
    expect(dumped.stdout).toMatch(/Stored \[#1 /);
    expect(dumped.stdout).toContain("scripted (fixed rules, no model configured)");
    expect(dumped.stdout).toContain("Full-text search only");
    expect((await cli("dump", "Guest wifi password is tulip-42.")).code).toBe(0);

    const human = await cli("ask", "what was the boiler service code?");
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("No chat model is configured");
    expect(human.stdout).toContain("[#1 The boiler service code is BX-4471.]");
    expect(human.stdout).not.toContain("tulip");

    const listed = JSON.parse((await cli("list", "--json")).stdout);
    expect(listed.map((n: { id: number }) => n.id)).toEqual([2, 1]);
    const shown = await cli("show", "1");
    expect(shown.stdout).toContain("enriched by: scripted");
    expect(shown.stdout).toContain("the first Tuesday of March");
    expect((await cli("forget", "2")).stdout).toContain("Forgot [#2 Guest wifi password is tulip-42.]");
    const again = await cli("forget", "2");
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("There is no note #2");

    const doctor = JSON.parse((await inProcess(["doctor", "--json"], env)).stdout) as {
      name: string;
      detail: string;
    }[];
    expect(doctor.find((c) => c.name === "brain store")?.detail).toMatch(
      /embedded .*: 1 note\(s\), 1 waiting for pencil brain reindex/,
    );
    expect(doctor.find((c) => c.name === "brain embeddings")?.detail).toMatch(/full-text search only/);
  }, 90_000);

  test("bad input is refused with what to do, nothing stored", async () => {
    const empty = await cli("dump", "   ");
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("brain dump needs something to store");
    expect((await cli("frobnicate")).code).toBe(2);
    expect((await cli("show", "abc")).stderr).toContain("needs one note id");
    expect((await cli("ask")).code).toBe(2);
    // A paste over the cap is refused before the brain is opened: a home without one is left without one.
    const fresh = baseEnv();
    const proc = Bun.spawn([process.execPath, INDEX, "brain", "dump", "-"], {
      cwd: fresh.HOME!,
      env: withTranspilerCache(fresh),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    proc.stdin.write("y".repeat(5 * 1024 * 1024));
    await proc.stdin.end();
    expect(await proc.exited).toBe(2);
    expect(await new Response(proc.stderr).text()).toContain("a note holds at most 1 MB of text. Nothing was stored");
    expect(existsSync(join(fresh.PENCIL_HOME!, "brain"))).toBe(false);
  }, 60_000);

  test("dump - reads the note from stdin", async () => {
    const proc = Bun.spawn([process.execPath, INDEX, "brain", "dump", "-", "--json"], {
      cwd: env.HOME!,
      env: withTranspilerCache(env),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    proc.stdin.write("Recipe: pancakes need 2 eggs,\n300 ml milk and 120 g flour.\n");
    await proc.stdin.end();
    expect(await proc.exited).toBe(0);
    expect(JSON.parse(await new Response(proc.stdout).text()).note.content).toBe(
      "Recipe: pancakes need 2 eggs,\n300 ml milk and 120 g flour.\n",
    );
  }, 30_000);
});

describe("pencil brain with a chat model and embeddings (local servers)", () => {
  let llm: FakeOpenAIServer;
  let embeddings: FakeEmbeddingServer;
  beforeAll(async () => {
    [llm, embeddings] = await Promise.all([startFakeOpenAIServer(), startFakeEmbeddingServer()]);
  });
  afterAll(async () => {
    await Promise.all([llm.stop(), embeddings.stop()]);
  });

  test("dump is enriched and embedded; ask answers with its sources", async () => {
    const env: Record<string, string> = {
      ...(await createdBrainEnv()),
      GROQ_API_KEY: "gsk_test",
      GROQ_BASE_URL: `${llm.url}/openai/v1`,
      GEMINI_API_KEY: "g",
      GEMINI_BASE_URL: `${embeddings.url}/v1beta`,
    };
    llm.enqueue(
      textReply(
        JSON.stringify({
          title: "Boiler service code",
          tags: ["home"],
          summary: "The boiler code. Needed for bookings.",
        }),
      ),
    );
    const dumped = await inProcess(["brain", "dump", "Boiler service code: BX-4471"], env);
    expect(dumped.code).toBe(0);
    expect(dumped.stdout).toContain("Stored [#1 Boiler service code] #home");
    expect(dumped.stdout).not.toContain("scripted");
    llm.enqueue(textReply("It is BX-4471 [#1 Boiler service code]."));
    const asked = await inProcess(["brain", "ask", "boiler code?"], env);
    expect(asked.code).toBe(0);
    expect(asked.stdout).toContain("It is BX-4471");
    expect(asked.stdout).toMatch(/Sources:\n {2}\[#1 Boiler service code\] \d{4}-\d\d-\d\d/);
  }, 60_000);

  test("dump --image keeps the photo itself: show and --json name it, forget deletes it", async () => {
    const env: Record<string, string> = {
      ...(await createdBrainEnv()),
      GROQ_API_KEY: "gsk_test",
      GROQ_BASE_URL: `${llm.url}/openai/v1`,
    };
    const png = Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
      "base64",
    );
    const photo = join(tempDir(), "whiteboard.png");
    writeFileSync(photo, png);
    llm.enqueue(
      textReply("SPRINT 14\nDescription: a whiteboard."),
      textReply(
        JSON.stringify({ title: "Sprint plan", tags: ["work"], summary: "Sprint 14 plan. On the whiteboard." }),
      ),
    );
    const dumped = await inProcess(["brain", "dump", "--image", photo, "--json"], env);
    expect(dumped.code).toBe(0);
    const kept = join(env.PENCIL_HOME!, "brain", "originals", "1.png");
    expect(JSON.parse(dumped.stdout).note.original).toBe(kept);
    expect(Buffer.compare(readFileSync(kept), png)).toBe(0);
    expect(statSync(kept).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(env.PENCIL_HOME!, "brain", "originals"))).toEqual(["1.png"]);

    expect((await inProcess(["brain", "show", "1"], env)).stdout).toContain(`original: ${kept}`);
    expect(JSON.parse((await inProcess(["brain", "show", "1", "--json"], env)).stdout).original).toBe(kept);
    expect(JSON.parse((await inProcess(["brain", "list", "--json"], env)).stdout)[0].original).toBe(kept);

    const forgot = await inProcess(["brain", "forget", "1"], env);
    expect(forgot.stdout).toContain("Forgot [#1 Sprint plan] and its original photo.");
    expect(existsSync(kept)).toBe(false);
  }, 60_000);
});
