import { describe, expect, test } from "bun:test";
import { message, say, world } from "../../support/telegram-world.ts";

// An unknown /command is named as unknown, with the list of real ones; plain text still gets the hint.
describe("telegram: unknown commands", () => {
  test("/frobnicate gets 'unknown command' and the commands the bot has", async () => {
    const w = world([]);
    await w.start();
    say(w.fake, "/frobnicate now");
    const reply = await message(w.fake, (t) => t.includes("frobnicate"));
    expect(reply.visible).toMatch(/unknown command \/frobnicate/i);
    for (const command of ["/agent", "/plan", "/ask", "/dump", "/status", "/help"])
      expect(reply.visible).toContain(command);
    expect(w.model.calls).toEqual([]);
  });

  test("a known command is not called unknown", async () => {
    const w = world([]);
    await w.start();
    say(w.fake, "/help");
    const reply = await message(w.fake, (t) => t.includes("/agent"));
    expect(reply.visible).not.toMatch(/unknown command/i);
  });
});
