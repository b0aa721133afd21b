// Live smoke checks against the real services. They run only when real keys are in
// the environment (PENCIL_LIVE=1 plus the service's key) and are skipped with a
// visible message otherwise: tests never touch the internet by default.
import { describe, expect, test } from "bun:test";
import { generateText } from "ai";
import { resolveModels } from "../../ai/resolve-models.ts";

const live = process.env.PENCIL_LIVE === "1";
const env = process.env;

function gate(name: string, keys: string[]): boolean {
  const missing = keys.filter((k) => !env[k]?.trim());
  const on = live && missing.length === 0;
  if (!on) {
    console.log(
      `live smoke: ${name} skipped — ${live ? `set ${missing.join(", ")}` : "set PENCIL_LIVE=1 and the service's key"} to run it against the real service.`,
    );
  }
  return on;
}

describe("live smoke", () => {
  const groq = gate("Groq", ["GROQ_API_KEY"]);
  test.skipIf(!groq)("Groq answers a one-word prompt", async () => {
    const { model } = resolveModels({ GROQ_API_KEY: env.GROQ_API_KEY, GROQ_DEFAULT_MODEL: env.GROQ_DEFAULT_MODEL });
    const result = await generateText({ model, prompt: "Reply with the single word: pencil", maxRetries: 0 });
    expect(result.text.toLowerCase()).toContain("pencil");
  });

  const openrouter = gate("OpenRouter", ["OPENROUTER_API_KEY"]);
  test.skipIf(!openrouter)("OpenRouter answers a one-word prompt", async () => {
    const { model } = resolveModels({
      OPENROUTER_API_KEY: env.OPENROUTER_API_KEY,
      OPENROUTER_DEFAULT_MODEL: env.OPENROUTER_DEFAULT_MODEL,
    });
    const result = await generateText({ model, prompt: "Reply with the single word: pencil", maxRetries: 0 });
    expect(result.text.toLowerCase()).toContain("pencil");
  });

  const telegram = gate("Telegram", ["TELEGRAM_BOT_TOKEN"]);
  test.skipIf(!telegram)("Telegram getMe accepts the token", async () => {
    const root = env.TELEGRAM_API_ROOT?.trim() || "https://api.telegram.org";
    const response = await fetch(`${root}/bot${env.TELEGRAM_BOT_TOKEN}/getMe`);
    const body = (await response.json()) as { ok: boolean; result?: { is_bot: boolean } };
    expect(body.ok).toBe(true);
    expect(body.result?.is_bot).toBe(true);
  });
});
