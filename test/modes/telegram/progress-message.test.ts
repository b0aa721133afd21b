import { describe, expect, test } from "bun:test";
import { Api } from "grammy";
import { Outbox } from "../../../modes/telegram/outbox.ts";
import { ProgressMessage } from "../../../modes/telegram/progress-message.ts";
import { startFakeTelegram } from "../../support/fake-telegram-server.ts";

const OWNER = 4242;

describe("progress message", () => {
  test("edits are throttled to one per interval, the last state is never lost, and it ends with the summary", async () => {
    const fake = startFakeTelegram();
    try {
      const outbox = new Outbox(new Api(fake.token, { apiRoot: fake.apiRoot }), () => {});
      const progress = new ProgressMessage(outbox, OWNER, "Agent: many tools", 150);
      await progress.start();
      const started = Date.now();
      for (let i = 0; i < 60; i++) {
        progress.sink({ type: "tool-call", callId: `c${i}`, tool: "read_file", input: { path: `src/f${i}.ts` } });
        progress.sink({ type: "tool-result", callId: `c${i}`, tool: "read_file", ok: i !== 59, output: "", ms: 1 });
        await Bun.sleep(5);
      }
      await Bun.sleep(200);
      const edits = fake.callsOf("editMessageText");
      const elapsed = Date.now() - started;
      expect(edits.length).toBeLessThanOrEqual(Math.ceil(elapsed / 150) + 1);
      expect(edits.length).toBeGreaterThanOrEqual(2);
      // Arrival times at the fake server carry the machine's scheduling jitter; unthrottled
      // edits would arrive ~5 ms apart, so half the interval still tells the two apart.
      for (let i = 1; i < edits.length; i++) expect(edits[i]!.at - edits[i - 1]!.at).toBeGreaterThanOrEqual(75);
      const last = String(edits.at(-1)!.payload.text);
      expect(last).toContain("✗ reading src/f59.ts");
      expect(last).toContain("… 48 earlier");
      await progress.finish("<b>✅ Done</b> · summary");
      const final = String(fake.callsOf("editMessageText").at(-1)!.payload.text);
      expect(final).toContain("✅ Done</b> · summary");
      expect(final.startsWith("⏳")).toBe(false);
      progress.sink({ type: "tool-call", callId: "late", tool: "x", input: {} });
      await Bun.sleep(200);
      expect(String(fake.callsOf("editMessageText").at(-1)!.payload.text)).toBe(final); // nothing after the end
    } finally {
      await fake.close();
    }
  });
});
