import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ScriptedTurn } from "../../../ai/scripted-model.ts";
import { callbackUpdate } from "../../support/fake-telegram-server.ts";
import { message, OWNER, press, say, textOf, world } from "../../support/telegram-world.ts";

// `✂ Hunks` on the phone, through the fake Bot API: one message per hunk with Keep / Drop,
// then Apply kept; the bytes on disk are the base plus the kept hunks.

const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join("");
const BASE = lines(30);
const STAGED = BASE.replace("line 2\n", "LINE TWO\n").replace("line 15\n", "LINE FIFTEEN\n").replace("line 28\n", "");

const stageBoth: ScriptedTurn[] = [
  { toolCalls: [{ name: "read_file", input: { path: "f.txt" } }] },
  {
    toolCalls: [
      { name: "write_file", input: { path: "f.txt", content: STAGED } },
      { name: "create_file", input: { path: "g.txt", content: "gee\n" } },
    ],
  },
  { text: "Staged f.txt and g.txt." },
];

const read = (root: string, name: string) => readFileSync(join(root, name), "utf8");

describe("telegram bot: hunk review", () => {
  test("✂ Hunks → Keep 1, Drop 2, Keep 3 → Apply kept writes base + hunks 1 and 3; Approve all leaves the split file out", async () => {
    const w = world(stageBoth, { "f.txt": BASE });
    await w.start();
    const { fake, root } = w;
    say(fake, "/agent change f");
    const card = await message(fake, (t) => t.includes("📝 Review"));
    const labels = card.reply_markup.inline_keyboard.flat().map((b: { text: string }) => b.text);
    expect(labels).toContain("✂ Hunks 1");
    // g.txt has a single hunk: no split offered for it.
    expect(labels).not.toContain("✂ Hunks 2");

    expect(await press(fake, "✂ Hunks 1", card)).toBe("3 hunks sent: Keep or Drop each, then Apply kept on the card.");
    const hunk1 = await message(fake, (t) => t.includes("Hunk 1/3"));
    const hunk2 = await message(fake, (t) => t.includes("Hunk 2/3"));
    const hunk3 = await message(fake, (t) => t.includes("Hunk 3/3"));
    expect(hunk1.visible).toContain("+LINE TWO");
    expect(hunk2.visible).toContain("+LINE FIFTEEN");
    expect(hunk3.visible).toContain("-line 28");
    // While split, the file has no Approve of its own, and Approve all covers only g.txt.
    expect(JSON.stringify(fake.messages.get(`${OWNER}:${card.message_id}`)!.reply_markup)).not.toContain("Approve 1");
    expect(await press(fake, "✅ Approve all", card)).toBe("Approved 1 file.");
    expect(textOf(fake, card)).toContain("split: 0 of 3 hunks decided");

    expect(await press(fake, "✅ Keep 1", hunk1)).toBe("Kept hunk 1.");
    // The same press delivered again does nothing.
    const keep1 = hunk1.reply_markup.inline_keyboard.flat().find((b: { text: string }) => b.text === "✅ Keep 1");
    const replay = callbackUpdate(OWNER, keep1.callback_data, { chat_id: OWNER, message_id: hunk1.message_id });
    fake.pushUpdate(replay);
    const answered = await fake.waitFor(
      "answerCallbackQuery",
      (p) => p.callback_query_id === (replay as any).callback_query.id,
    );
    expect(answered.payload.text).toBe("This is no longer pending.");
    expect(textOf(fake, hunk1)).toContain("✅ kept");

    expect(await press(fake, "✖ Drop 2", hunk2)).toBe("Dropped hunk 2.");
    // Drop pressed after Keep on the same hunk does nothing either.
    expect(await press(fake, "✖ Drop 1", hunk1)).toBe("This is no longer pending.");
    expect(await press(fake, "✅ Keep 3", hunk3)).toBe("Kept hunk 3.");
    expect(textOf(fake, card)).toContain("2 of 3 hunks kept — tap Apply kept");
    expect(read(root, "f.txt")).toBe(BASE); // nothing is written before Apply kept

    expect(await press(fake, "✂ Apply kept 1", card)).toBe("Approved 2 of 3 hunks.");
    expect(read(root, "f.txt")).toBe(BASE.replace("line 2\n", "LINE TWO\n").replace("line 28\n", ""));
    expect(read(root, "g.txt")).toBe("gee\n");
    expect(textOf(fake, card)).toContain("Applied");
    // A Keep of the settled file, pressed late, changes nothing.
    expect(await press(fake, "✖ Drop 3", hunk3)).toMatch(/no longer pending|Already decided/);
    expect(read(root, "f.txt")).toBe(BASE.replace("line 2\n", "LINE TWO\n").replace("line 28\n", ""));
  });

  test("every hunk dropped: Apply kept rejects the file and nothing of it is written", async () => {
    const w = world(stageBoth, { "f.txt": BASE });
    await w.start();
    const { fake, root } = w;
    say(fake, "/agent change f");
    const card = await message(fake, (t) => t.includes("📝 Review"));
    await press(fake, "✂ Hunks 1", card);
    for (const n of [1, 2, 3]) {
      const hunk = await message(fake, (t) => t.includes(`Hunk ${n}/3`));
      expect(await press(fake, `✖ Drop ${n}`, hunk)).toBe(`Dropped hunk ${n}.`);
    }
    expect(await press(fake, "✖ Reject 2", card)).toBe("Rejected.");
    await press(fake, "Skip reason");
    expect(await press(fake, "✂ Apply kept 1", card)).toBe("No hunk kept: the file is rejected.");
    expect(read(root, "f.txt")).toBe(BASE);
    expect(textOf(fake, card)).toContain("rejected");
  });

  test("a stale Keep: the file's staged content changed after its hunks were sent, so the old Keep does nothing", async () => {
    const w = world(stageBoth, { "f.txt": BASE });
    await w.start();
    const { fake, root, pencilHome } = w;
    say(fake, "/agent change f");
    const card = await message(fake, (t) => t.includes("📝 Review"));
    await press(fake, "✂ Hunks 1", card);
    const hunk1 = await message(fake, (t) => t.includes("Hunk 1/3"));
    // The stored changeset changes under the card (another front end edited f.txt's staged content).
    const { ChangesetStore } = await import("../../../core/staging/changeset-store.ts");
    const store = new ChangesetStore(pencilHome);
    const cs = store.list().find((c) => c.status === "pending")!;
    const full = store.load(cs.id);
    full.digest = "0".repeat(64);
    store.save(full);
    expect(await press(fake, "✅ Keep 1", hunk1)).toBe("This is no longer pending.");
    expect(read(root, "f.txt")).toBe(BASE);
  });
});
