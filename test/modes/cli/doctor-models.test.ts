import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { modelWorld } from "../../support/cli-world.ts";
import { runCli } from "../../support/cli.ts";

interface ModelEntry {
  label: string;
  role: string;
  provider: string;
  model: string;
  setIn: string;
  price?: { input: number; output: number } | null;
}

/** Groq and OpenRouter configured, Groq's model named in the user's .env, a price for Groq's, and an embedding key. */
async function configured() {
  const { env } = await modelWorld({}, { fallback: true });
  const home = env.PENCIL_HOME!;
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, ".env"), "GROQ_DEFAULT_MODEL=moonshotai/kimi-k2\n");
  writeFileSync(
    join(home, "settings.json"),
    JSON.stringify({ telegram: { prices: { "groq:moonshotai/kimi-k2": { input: 1, output: 3 } } } }),
  );
  return { env: { ...env, GEMINI_API_KEY: "gm-test" } as Record<string, string>, home };
}

test("doctor --json names each model a run would use, where it was chosen, and whether it has a price", async () => {
  const { env, home } = await configured();
  const result = await runCli(["doctor", "--json"], { cwd: env.HOME!, env });
  const checks = JSON.parse(result.stdout) as { name: string; models?: ModelEntry[] }[];
  const models = checks.find((c) => c.name === "models")?.models;
  expect(models).toBeDefined();
  const byRole = Object.fromEntries(models!.map((m) => [m.role, m]));
  expect(byRole.primary).toMatchObject({
    label: "groq:moonshotai/kimi-k2",
    provider: "GROQ_API_KEY",
    model: "GROQ_DEFAULT_MODEL",
    setIn: join(home, ".env"),
    price: { input: 1, output: 3 },
  });
  expect(byRole.fallback).toMatchObject({
    label: "openrouter:openai/gpt-oss-120b",
    provider: "OPENROUTER_API_KEY",
    model: "default",
    setIn: "the environment",
    price: null,
  });
  expect(byRole.embeddings).toMatchObject({ label: "gemini:gemini-embedding-001", provider: "GEMINI_API_KEY" });
  expect(byRole.vision?.label).toMatch(/^groq:/);
}, 30_000);

test("doctor's text names the models, their origin and price, and --model as the primary's origin", async () => {
  const { env } = await configured();
  // Read as words: the report wraps to the terminal's width.
  const words = async (args: string[], e = env) =>
    (await runCli(args, { cwd: e.HOME!, env: e })).stdout.replace(/\s+/g, " ");
  const text = await words(["doctor"]);
  expect(text).toMatch(
    /models:[\s\S]*primary groq:moonshotai\/kimi-k2 — GROQ_API_KEY, GROQ_DEFAULT_MODEL \(\S+\.env\); price \$1\.00 in \/ \$3\.00 out per million tokens/,
  );
  expect(text).toMatch(
    /fallback openrouter:openai\/gpt-oss-120b — OPENROUTER_API_KEY, Pencil's default model \(the environment\); no price set/,
  );
  expect(text).toContain("embeddings gemini:gemini-embedding-001");
  const chosen = await words(["doctor", "--model", "openrouter:qwen/qwen3-coder"]);
  expect(chosen).toMatch(/primary openrouter:qwen\/qwen3-coder — OPENROUTER_API_KEY, model from --model/);
  // A local model costs nothing per token; the cloud fallback is not used with a local server.
  const local = await words(["doctor"], {
    ...env,
    LOCAL_LLM_BASE_URL: "http://127.0.0.1:9/v1",
    LOCAL_LLM_MODEL: "qwen2.5-coder:7b",
  });
  expect(local).toMatch(
    /primary local:qwen2\.5-coder:7b — LOCAL_LLM_BASE_URL, LOCAL_LLM_MODEL \(the environment\); free/,
  );
  expect(local).not.toMatch(/fallback openrouter/);
}, 30_000);
