import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { CostLedger } from "../../../modes/telegram/cost-ledger.ts";

describe("cost: pure parts", () => {
  const prices = { "groq:a": { input: 0.15, output: 0.75 }, "openrouter:b": { input: 1, output: 2 } };
  test("the ledger keeps today's totals across restarts", () => {
    const file = join(require("node:os").tmpdir(), `pencil-costs-${process.pid}-${Date.now()}.json`);
    const day = new Date("2026-12-01T10:00:00Z");
    new CostLedger(file, () => prices).add({ "groq:a": { inputTokens: 1000, outputTokens: 100 } }, day);
    const again = new CostLedger(file, () => prices);
    again.add({ "groq:a": { inputTokens: 1000, outputTokens: 100 } }, day);
    expect(again.today(day)).toBe("Today: 2 runs · groq:a · 2k in / 200 out · $0.00045");
    expect(again.today(new Date("2026-12-02T10:00:00Z"))).toBe("Today: no runs yet.");
  });
});
