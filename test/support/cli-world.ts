import { afterEach } from "bun:test";
import { join } from "node:path";
import { type FakeOpenAIServer, startFakeOpenAIServer } from "./fake-openai-server.ts";
import { tempDir, writeTree } from "./temp.ts";

/*
 * The setting of a CLI test: a fresh HOME and PENCIL_HOME, a workspace, and fake model
 * servers the real Groq and OpenRouter clients are pointed at by their base-URL
 * variables. Importing this module registers an afterEach that stops every server it started.
 */

const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/** The environment Pencil runs in for a test, with no model configured: PATH, a fresh HOME and PENCIL_HOME, no colour. */
export function baseEnv(): Record<string, string> {
  const home = tempDir("pencil-home-");
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, PENCIL_HOME: join(home, ".pencil"), NO_COLOR: "1" };
}

/** A workspace holding `files`, and Groq (with `fallback`, OpenRouter too) served by fake servers named in `env`. */
export async function modelWorld(
  files: Record<string, string> = { "a.txt": "alpha\n" },
  options: { fallback?: boolean } = {},
): Promise<{
  workspace: string;
  home: string;
  groq: FakeOpenAIServer;
  openrouter: FakeOpenAIServer | null;
  env: Record<string, string>;
}> {
  const workspace = tempDir("pencil-ws-");
  writeTree(workspace, files);
  const groq = await startFakeOpenAIServer();
  servers.push(groq);
  const env: Record<string, string> = {
    ...baseEnv(),
    GROQ_API_KEY: "gsk_test_key",
    GROQ_BASE_URL: `${groq.url}/openai/v1`,
  };
  let openrouter: FakeOpenAIServer | null = null;
  if (options.fallback) {
    openrouter = await startFakeOpenAIServer();
    servers.push(openrouter);
    Object.assign(env, { OPENROUTER_API_KEY: "sk-or-test-key", OPENROUTER_BASE_URL: `${openrouter.url}/api/v1` });
  }
  return { workspace, home: env.HOME!, groq, openrouter, env };
}
