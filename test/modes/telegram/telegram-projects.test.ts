import { afterEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScriptedTurn } from "../../../ai/scripted-model.ts";
import { ChangesetStore } from "../../../core/staging/changeset-store.ts";
import { messageUpdate } from "../../support/fake-telegram-server.ts";
import {
  message,
  OWNER,
  press,
  type TelegramWorld,
  telegramWorld,
  textOf,
  until,
} from "../../support/telegram-world.ts";
import { writeTree } from "../../support/temp.ts";

const worlds: TelegramWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.stop();
});

/** A world whose user settings list `a` (the start workspace), `b`, and a path that is gone. */
function listed(turns: ScriptedTurn[]) {
  const w = telegramWorld(turns);
  worlds.push(w);
  const b = join(w.base, "wsb");
  mkdirSync(b);
  writeTree(b, { "secret-plan.txt": "b's own\n", "c.txt": "bee\n" });
  // b's own settings tighten its policy: runs in b may not read secret-plan.txt.
  writeTree(b, { ".pencil/settings.json": JSON.stringify({ permissions: { deny: ["Read(secret-plan.txt)"] } }) });
  // A workspace file cannot list workspaces: this entry must never show up.
  writeTree(w.root, { ".pencil/settings.json": JSON.stringify({ telegram: { workspaces: { evil: "/etc" } } }) });
  mkdirSync(w.pencilHome, { recursive: true });
  writeFileSync(
    join(w.pencilHome, "settings.json"),
    JSON.stringify({ telegram: { workspaces: { a: w.root, b, gone: join(w.base, "deleted") } } }),
  );
  const say = (text: string) => w.fake.pushUpdate(messageUpdate(OWNER, text));
  return { w, a: w.root, b, say };
}

const create = (path: string, content: string): ScriptedTurn[] => [
  { toolCalls: [{ name: "create_file", input: { path, content } }] },
  { text: `Created ${path}.` },
];

describe("telegram: /projects", () => {
  test("lists the user's workspaces (missing ones not selectable); a switch isolates runs and changesets, and each keeps its own", async () => {
    const { w, a, b, say } = listed([...create("in-a.txt", "A\n"), ...create("in-b.txt", "B\n")]);
    await w.start();
    say("/projects");
    const list = await message(w.fake, (t) => t.includes("Tap one to work there"));
    expect(list.visible).toContain("✅ a");
    expect(list.visible).toContain("gone");
    expect(list.visible).toContain("missing, not selectable");
    expect(list.visible).not.toContain("evil");
    expect(w.logs.some((l) => l.includes('Ignored "telegram"') && l.includes("only your own settings file"))).toBe(
      true,
    );
    expect(list.reply_markup.inline_keyboard.flat().map((x: { text: string }) => x.text)).toEqual(["✅ a", "📁 b"]);

    say("/agent make a file in a");
    const cardA = await message(w.fake, (t) => t.includes("📝 Review") && t.includes("in-a.txt"));
    expect(cardA.visible).toContain("📍 ws");

    expect(await press(w.fake, "📁 b", list)).toBe("Switched to b.");
    await message(w.fake, (t) => t.includes("Now working in b"));
    // The old list's buttons are spent.
    expect(await press(w.fake, "✅ a", list)).toBe("This is no longer pending.");

    // a's pending changeset does not block b: each workspace has its own.
    const from = w.fake.calls.length;
    say("/agent make a file in b");
    const cardB = await message(w.fake, (t) => t.includes("📝 Review") && t.includes("in-b.txt"), from);
    const progress = w.fake.messagesIn(OWNER).find((m) => textOf(w.fake, m).includes("Agent: make a file in b"))!;
    expect(textOf(w.fake, progress)).toContain("📍 b");
    const store = new ChangesetStore(w.pencilHome);
    expect(store.latestPending(a)!.files.map((f) => f.path)).toEqual(["in-a.txt"]);
    expect(store.latestPending(b)!.files.map((f) => f.path)).toEqual(["in-b.txt"]);

    // Approving a's card while b is active writes into a, and only there.
    expect(await press(w.fake, "✅ Approve all", cardA)).toBe("Approved 1 file.");
    expect(readFileSync(join(a, "in-a.txt"), "utf8")).toBe("A\n");
    expect(existsSync(join(b, "in-a.txt"))).toBe(false);
    expect(await press(w.fake, "✅ Approve all", cardB)).toBe("Approved 1 file.");
    expect(readFileSync(join(b, "in-b.txt"), "utf8")).toBe("B\n");
    expect(existsSync(join(a, "in-b.txt"))).toBe(false);
  });

  test("Approve all & commit on a card of another workspace commits there, where its files were written", async () => {
    const { w, a, b, say } = listed(create("in-a.txt", "A\n"));
    const git = (cwd: string, ...args: string[]) => {
      const run = spawnSync("git", args, { cwd, encoding: "utf8" });
      if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
      return run.stdout;
    };
    for (const ws of [a, b]) {
      git(ws, "init", "-q", "-b", "main");
      git(ws, "config", "user.name", "Phone Owner");
      git(ws, "config", "user.email", "phone@example.com");
      git(ws, "add", "-A");
      git(ws, "commit", "-q", "-m", "initial");
    }
    const settings = JSON.parse(readFileSync(join(w.pencilHome, "settings.json"), "utf8"));
    writeFileSync(join(w.pencilHome, "settings.json"), JSON.stringify({ ...settings, git: { commitButton: true } }));
    await w.start();
    say("/agent make a file in a");
    const card = await message(w.fake, (t) => t.includes("📝 Review") && t.includes("in-a.txt"));
    say("/projects");
    const list = await message(w.fake, (t) => t.includes("Tap one to work there"));
    expect(await press(w.fake, "📁 b", list)).toBe("Switched to b.");
    await message(w.fake, (t) => t.includes("Now working in b"));
    await press(w.fake, /Approve all & commit/, card);
    await until(() => git(a, "log", "--oneline").trim().split("\n").length === 2, "the commit in a");
    expect(git(a, "show", "--name-only", "--format=", "HEAD").trim()).toBe("in-a.txt");
    expect(git(b, "log", "--oneline").trim().split("\n")).toHaveLength(1);
    expect(git(b, "status", "--porcelain")).toBe("");
  });

  test("reasons sent back from a card of another workspace revise there, under that workspace's name", async () => {
    const { w, a, b, say } = listed([
      ...create("in-a.txt", "A\n"),
      ({ prompt }) =>
        JSON.stringify(prompt.at(-1)).includes("louder")
          ? { toolCalls: [{ name: "create_file", input: { path: "in-a.txt", content: "A!\n" } }] }
          : { text: "no reason" },
      { text: "Made it louder." },
    ]);
    await w.start();
    say("/agent make a file in a");
    const card = await message(w.fake, (t) => t.includes("📝 Review") && t.includes("in-a.txt"));
    say("/projects");
    await message(w.fake, (t) => t.includes("Tap one"));
    expect(await press(w.fake, "📁 b")).toBe("Switched to b.");
    expect(await press(w.fake, "✖ Reject 1", card)).toBe("Rejected.");
    await message(w.fake, (t) => t.includes("Why?"));
    say("louder");
    const revised = await message(w.fake, (t) => t.includes("📝 Review") && t.includes("revises"));
    const progress = w.fake.messagesIn(OWNER).find((m) => textOf(w.fake, m).startsWith("Revising"))!;
    expect(textOf(w.fake, progress)).toContain("📍 a");
    expect(await press(w.fake, "✅ Approve all", revised)).toBe("Approved 1 file.");
    expect(readFileSync(join(a, "in-a.txt"), "utf8")).toBe("A!\n");
    expect(existsSync(join(b, "in-a.txt"))).toBe(false);
  });

  test("after a restart, a card from a listed workspace other than the starting one still applies there", async () => {
    const { w, b, say } = listed(create("in-b.txt", "B\n"));
    const first = await w.start();
    say("/projects");
    await message(w.fake, (t) => t.includes("Tap one"));
    expect(await press(w.fake, "📁 b")).toBe("Switched to b.");
    say("/agent make a file in b");
    const card = await message(w.fake, (t) => t.includes("📝 Review") && t.includes("in-b.txt"));
    await first.stop();
    await w.start(); // starts on a again
    expect(await press(w.fake, "✅ Approve all", card)).toBe("Approved 1 file.");
    expect(readFileSync(join(b, "in-b.txt"), "utf8")).toBe("B\n");
  });

  test("a workspace's own policy applies to runs in it", async () => {
    const { w, say } = listed([
      { toolCalls: [{ name: "read_file", input: { path: "secret-plan.txt" } }] },
      ({ prompt }) => ({ text: JSON.stringify(prompt.at(-1)).includes("Denied") ? "was denied" : "was allowed" }),
    ]);
    await w.start();
    say("/projects");
    await message(w.fake, (t) => t.includes("Tap one"));
    expect(await press(w.fake, "📁 b")).toBe("Switched to b.");
    say("/ask what is in secret-plan.txt");
    await message(w.fake, (t) => t === "was denied");
  });

  test("a switch while a run waits in another workspace is allowed; /status shows both", async () => {
    const { w, say } = listed([
      { toolCalls: [{ name: "run_command", input: { command: "make deploy-hi" } }] },
      ...create("in-b.txt", "B\n"),
      { text: "a is done." },
    ]);
    await w.start();
    say("/agent run a command in a");
    const question = await message(w.fake, (t) => t.includes("make deploy-hi"));
    say("/projects");
    await message(w.fake, (t) => t.includes("Tap one"));
    expect(await press(w.fake, "📁 b")).toBe("Switched to b.");
    say("/agent make a file in b");
    await message(w.fake, (t) => t.includes("📝 Review") && t.includes("in-b.txt"));
    const from = w.fake.calls.length;
    say("/status");
    const status = await message(w.fake, (t) => t.includes("Workspace b"), from);
    expect(status.visible).toContain("in a: agent: run a command in a");
    expect(await press(w.fake, /Deny/, question)).toBeTruthy();
    await message(w.fake, (t) => t.includes("a is done."));
  });

  test("with no workspace listed, /projects says how to list them", async () => {
    const w = telegramWorld([]);
    worlds.push(w);
    mkdirSync(w.pencilHome, { recursive: true });
    writeFileSync(
      join(w.pencilHome, "settings.json"),
      JSON.stringify({ telegram: { workspaces: { rel: "code/api" } } }),
    );
    await w.start();
    w.fake.pushUpdate(messageUpdate(OWNER, "/projects"));
    const reply = await message(w.fake, (t) => t.includes("No other workspace is listed"));
    expect(reply.visible).toContain('Left out workspace "rel": its path must be absolute or start with ~/');
    expect(reply.visible).toContain("telegram");
    expect(reply.visible).toContain("settings.json");
  });
});
