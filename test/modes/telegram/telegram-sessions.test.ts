import { describe, expect, test } from "bun:test";
import type { ScriptedTurn } from "../../../ai/scripted-model.ts";
import { ChangesetStore } from "../../../core/staging/changeset-store.ts";
import { message, press, say, until, type World, world } from "../../support/telegram-world.ts";

const create = (path: string, content: string): ScriptedTurn => ({
  toolCalls: [{ name: "create_file", input: { path, content } }],
});
const promptText = (w: World, i: number) => JSON.stringify(w.model.prompts[i]);

describe("telegram sessions", () => {
  test("plain text after a run is a follow-up that sees the earlier turn; a goal sent while pending is held with buttons", async () => {
    const w = world(
      [
        create("c.txt", "gamma\n"),
        { text: "Made c." },
        create("d.txt", "delta\n"),
        { text: "Made d." },
        { text: "Noted the new goal." },
      ],
      { "a.txt": "alpha\n" },
    );
    await w.start();
    const { fake } = w;
    say(fake, "/agent make c");
    await message(fake, (t) => t.includes("📝 Review") && t.includes("c.txt"));

    let from = fake.calls.length;
    say(fake, "also make d");
    const second = await message(fake, (t) => t.includes("📝 Review") && t.includes("d.txt"), from);
    expect(second.visible).toContain("c.txt");
    const followUp = promptText(w, 2);
    expect(followUp).toContain("make c");
    expect(followUp).toContain("Made c.");
    expect(followUp).toContain("also make d");
    // One pending changeset, grown: not a second one.
    expect(new ChangesetStore(w.pencilHome).list().filter((cs) => cs.status === "pending").length).toBe(1);

    from = fake.calls.length;
    say(fake, "/agent rename everything");
    const held = await message(fake, (t) => t.includes("Your goal is kept"), from);
    expect(held.visible).toContain("rename everything");
    const labels = held.reply_markup.inline_keyboard.flat().map((b: { text: string }) => b.text);
    expect(labels).toEqual(["▶️ Continue with it pending", "📝 Review first", "🗑 Discard it"]);
    await press(fake, "▶️ Continue with it pending", held);
    await until(() => w.model.prompts.length === 5, "the held goal to run");
    const continued = promptText(w, 4);
    expect(continued).toContain("rename everything");
    expect(continued).toContain("also make d");
  }, 30_000);

  test("/new starts a fresh session; /steps lists checkpoints and Rewind takes the pending changes back", async () => {
    const w = world(
      [create("c.txt", "gamma\n"), create("d.txt", "delta\n"), { text: "Made two." }, { text: "Fresh start." }],
      { "a.txt": "alpha\n" },
    );
    await w.start();
    const { fake } = w;
    say(fake, "/agent make two files");
    await message(fake, (t) => t.includes("📝 Review") && t.includes("d.txt"));

    let from = fake.calls.length;
    say(fake, "/steps");
    const steps = await message(fake, (t) => t.includes("Steps"), from);
    expect(steps.visible).toMatch(/1 .*create_file[\s\S]*c\.txt[\s\S]*2 .*create_file[\s\S]*d\.txt/);
    from = fake.calls.length;
    await press(fake, "⏪ Rewind to 1", steps);
    const card = await message(fake, (t) => t.includes("📝 Review"), from);
    expect(card.visible).toContain("c.txt");
    expect(card.visible).not.toContain("d.txt");
    const pending = new ChangesetStore(w.pencilHome).list().filter((cs) => cs.status === "pending");
    expect(pending.map((cs) => cs.files.map((f) => f.path))).toEqual([["c.txt"]]);

    say(fake, "/new");
    await message(fake, (t) => t.includes("fresh session"));
    from = fake.calls.length;
    say(fake, "start over please");
    // c.txt is still pending: the goal is held until the owner says what to do with it.
    const held = await message(fake, (t) => t.includes("Your goal is kept"), from);
    await press(fake, "🗑 Discard it", held);
    await until(() => w.model.prompts.length === 4, "the fresh run");
    const fresh = promptText(w, 3);
    expect(fresh).toContain("start over please");
    expect(fresh).not.toContain("make two files");
    expect(new ChangesetStore(w.pencilHome).list().filter((cs) => cs.status === "pending").length).toBe(0);
  }, 30_000);
});
