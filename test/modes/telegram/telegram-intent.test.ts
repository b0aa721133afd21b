import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScriptedTurn } from "../../../ai/scripted-model.ts";
import { message, press, say, textOf, world } from "../../support/telegram-world.ts";

// The intent check on the phone: the run's one structured call is answered before the card is sent
// (at most review.intentSeconds later), and the card carries the model's opinion as one line.

const PRICING = "export const TAX = 0.1;\nexport const total = (n: number) => n * (1 + TAX);\n";
const hardCode: ScriptedTurn[] = [
  { toolCalls: [{ name: "read_file", input: { path: "pricing.ts" } }] },
  {
    toolCalls: [
      { name: "edit_file", input: { path: "pricing.ts", old_string: "(1 + TAX)", new_string: "(1 + 0.15)" } },
    ],
  },
  { text: "Done." },
];

function settings(pencilHome: string, review: Record<string, unknown>): void {
  mkdirSync(pencilHome, { recursive: true });
  writeFileSync(join(pencilHome, "settings.json"), JSON.stringify({ review }));
}

describe("telegram: the intent check on the card", () => {
  test("the card shows the model's opinion as one line, and the review works as ever", async () => {
    const w = world(hardCode, { "pricing.ts": PRICING }, [
      { json: { verdict: "more than asked", what: "also hard-codes 0.15 inside total" } },
    ]);
    await w.start();
    say(w.fake, "/agent raise TAX to 0.15");
    const card = await message(w.fake, (t) => t.includes("📝 Review"));
    expect(card.visible).toContain(
      "⚠️ Model's view of intent: more than asked — also hard-codes 0.15 inside total (scripted:demo)",
    );
    expect(w.model.structuredCalls).toHaveLength(1);
    expect(JSON.stringify(w.model.structuredCalls[0]!.prompt)).toContain("raise TAX to 0.15");
    await press(w.fake, "✅ Approve all", card);
    expect(readFileSync(join(w.root, "pricing.ts"), "utf8")).toContain("(1 + 0.15)");
    // The settled card still says what the model thought.
    expect(textOf(w.fake, card)).toContain("Model's view of intent: more than asked");
  }, 60_000);

  test("no answer within review.intentSeconds: the card comes after the bound and says the check timed out", async () => {
    const w = world(hardCode, { "pricing.ts": PRICING }, [{ json: { verdict: "matches", what: "" }, delayMs: 10_000 }]);
    settings(w.pencilHome, { intentSeconds: 1 });
    await w.start();
    const started = performance.now();
    say(w.fake, "/agent raise TAX to 0.15");
    const card = await message(w.fake, (t) => t.includes("📝 Review"));
    expect(performance.now() - started).toBeLessThan(8000);
    expect(card.visible).toContain("🧭 intent not checked: the model timed out after 1 s (scripted:demo)");
    await press(w.fake, "✅ Approve all", card);
    expect(readFileSync(join(w.root, "pricing.ts"), "utf8")).toContain("(1 + 0.15)");
  }, 60_000);

  test("review.intentCheck false: the model is not asked and the card has no intent line", async () => {
    const w = world(hardCode, { "pricing.ts": PRICING }, [{ json: { verdict: "matches", what: "" } }]);
    settings(w.pencilHome, { intentCheck: false });
    await w.start();
    say(w.fake, "/agent raise TAX to 0.15");
    const card = await message(w.fake, (t) => t.includes("📝 Review"));
    expect(w.model.structuredCalls).toHaveLength(0);
    expect(card.visible).not.toContain("intent");
  }, 60_000);
});
