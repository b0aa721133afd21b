import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Update } from "grammy/types";
import { UpdateLedger } from "../../../modes/telegram/update-ledger.ts";
import { tempDir } from "../../support/temp.ts";

describe("telegram update ledger", () => {
  const press = (update_id: number, id: string) => ({ update_id, callback_query: { id } }) as unknown as Update;
  const text = (update_id: number) => ({ update_id, message: {} }) as unknown as Update;

  test("admits each update and each press once, and remembers across a restart", () => {
    const file = join(tempDir(), "telegram", "updates.json");
    const ledger = new UpdateLedger(file);
    expect([
      ledger.admit(text(1)),
      ledger.admit(text(1)),
      ledger.admit(press(2, "q")),
      ledger.admit(press(3, "q")),
    ]).toEqual([true, false, true, false]);
    const again = new UpdateLedger(file);
    expect([again.admit(text(1)), again.admit(press(9, "q")), again.admit(text(4))]).toEqual([false, false, true]);
  });

  test("keeps a bounded window of ids", () => {
    const file = join(tempDir(), "updates.json");
    const ledger = new UpdateLedger(file, undefined, 3);
    for (let id = 1; id <= 5; id += 1) ledger.admit(text(id));
    expect(JSON.parse(readFileSync(file, "utf8")).updates).toEqual([3, 4, 5]);
    expect(ledger.admit(text(1))).toBe(true);
  });

  test("a damaged ledger is reported and starts empty rather than stopping the bot", () => {
    const dir = tempDir();
    const file = join(dir, "updates.json");
    writeFileSync(file, "{ not json");
    const bad: string[] = [];
    const ledger = new UpdateLedger(file, (m) => bad.push(m));
    expect(bad.join("")).toContain("not valid JSON");
    expect(ledger.admit(text(1))).toBe(true);
    expect(existsSync(file)).toBe(true);
  });
});
