import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ALREADY_DECIDED, DIFF_FIRST, PRESS_AGAIN } from "../../../modes/telegram/press-answers.ts";
import {
  callbackUpdate,
  type FakeTelegram,
  messageUpdate,
  type StoredMessage,
} from "../../support/fake-telegram-server.ts";
import {
  diffsSince,
  LONG_SCRIPT,
  message,
  OWNER,
  PAYLOAD,
  press,
  say,
  until,
  world,
} from "../../support/telegram-world.ts";

/*
 * The bot against a Bot API that fails the way Telegram does (issue 16): updates
 * delivered again, presses delivered twice, another poller, calls that never answer,
 * rate limits, a blocked chat, a connection reset after a send was handled.
 */

const installer = () =>
  world([
    { toolCalls: [{ name: "create_file", input: { path: "install.sh", content: LONG_SCRIPT } }] },
    { text: "made it" },
  ]);

/** The callback data of the button labelled `label` on a message as the owner sees it now. */
function buttonData(fake: FakeTelegram, on: StoredMessage, label: string): string {
  const now = fake.messages.get(`${on.chat_id}:${on.message_id}`) ?? on;
  const data = now.reply_markup?.inline_keyboard.flat().find((b: { text: string }) => b.text === label)?.callback_data;
  if (!data) throw new Error(`no button ${label}`);
  return data;
}

/** Sends the owner's /help and waits for its answer: every update queued before it has been handled by then. */
async function barrier(fake: FakeTelegram): Promise<void> {
  const from = fake.calls.length;
  fake.pushUpdate(messageUpdate(OWNER, "/help"));
  await fake.waitFor("sendMessage", (p) => String(p.text).includes("writes in pencil"), { from, timeoutMs: 10_000 });
}

const answersTo = (fake: FakeTelegram, queryId: string) =>
  fake.callsOf("answerCallbackQuery").filter((c) => c.payload.callback_query_id === queryId);

/** Waits for the bot's answer to a pushed press (presses are handled in their own lane, not behind /help). */
const answered = (fake: FakeTelegram, update: ReturnType<typeof callbackUpdate>) =>
  fake.waitFor("answerCallbackQuery", (p) => p.callback_query_id === (update as any).callback_query.id);

describe("telegram faults: one physical press acts once", () => {
  test("a press delivered again after a restart (its confirmation lost) neither approves nor sends the diff again", async () => {
    const w = installer();
    const first = await w.start();
    const { fake, root } = w;
    say(fake, "/agent write an installer");
    const card = await message(fake, (t) => t.includes("📝 Review"));
    fake.loseConfirmations = true; // the getUpdates that would confirm the press never reaches Telegram
    const from = fake.calls.length;
    expect(await press(fake, "✅ Approve 1", card)).toBe(DIFF_FIRST);
    expect(diffsSince(fake, from).join("\n")).toContain(PAYLOAD);
    await first.stop();
    expect(fake.queued()).toBeGreaterThan(0); // Telegram still holds the press

    fake.loseConfirmations = false;
    const restart = fake.calls.length;
    await w.start();
    await barrier(fake);
    expect(existsSync(join(root, "install.sh"))).toBe(false);
    expect(diffsSince(fake, restart)).toEqual([]);
    expect(fake.callsOf("answerCallbackQuery").length).toBe(1);
    expect(w.logs.some((l) => l.includes("already taken in once"))).toBe(true);

    // A new press, on the card as it is now, approves.
    expect(await press(fake, "✅ Approve 1", card)).toBe("Approved.");
    expect(readFileSync(join(root, "install.sh"), "utf8")).toBe(LONG_SCRIPT);
  });

  test("one press delivered as two updates (same callback query) is acted on once: one diff, one answer, nothing applied", async () => {
    const w = installer();
    await w.start();
    const { fake, root } = w;
    say(fake, "/agent write an installer");
    const card = await message(fake, (t) => t.includes("📝 Review"));
    const update = callbackUpdate(OWNER, buttonData(fake, card, "✅ Approve 1"), {
      chat_id: OWNER,
      message_id: card.message_id,
    });
    const from = fake.calls.length;
    fake.pushUpdate(update);
    fake.pushUpdate(update);
    await answered(fake, update);
    await barrier(fake); // the second delivery was taken in (and dropped) before /help
    const queryId = (update as any).callback_query.id;
    expect(answersTo(fake, queryId).map((c) => c.payload.text)).toEqual([DIFF_FIRST]);
    expect(diffsSince(fake, from).length).toBe(1);
    expect(existsSync(join(root, "install.sh"))).toBe(false);
  });

  test("two presses made before the diff arrived (a double tap): the second does not approve; only a press after the diff does", async () => {
    const w = installer();
    await w.start();
    const { fake, root } = w;
    say(fake, "/agent write an installer");
    const card = await message(fake, (t) => t.includes("📝 Review"));
    const data = buttonData(fake, card, "✅ Approve 1");
    const tap1 = callbackUpdate(OWNER, data, { chat_id: OWNER, message_id: card.message_id });
    const tap2 = callbackUpdate(OWNER, data, { chat_id: OWNER, message_id: card.message_id });
    fake.pushUpdate(tap1);
    fake.pushUpdate(tap2);
    await answered(fake, tap2);
    expect(answersTo(fake, (tap1 as any).callback_query.id).map((c) => c.payload.text)).toEqual([DIFF_FIRST]);
    expect(answersTo(fake, (tap2 as any).callback_query.id).map((c) => c.payload.text)).toEqual([PRESS_AGAIN]);
    expect(existsSync(join(root, "install.sh"))).toBe(false);
    expect(buttonData(fake, card, "✅ Approve 1")).not.toBe(data); // the card carries a new Approve since the diff
    expect(await press(fake, "✅ Approve 1", card)).toBe("Approved.");
    expect(readFileSync(join(root, "install.sh"), "utf8")).toBe(LONG_SCRIPT);
  });

  test("Approve all pressed twice before its diffs arrived applies nothing", async () => {
    const w = installer();
    await w.start();
    const { fake, root } = w;
    say(fake, "/agent write an installer");
    const card = await message(fake, (t) => t.includes("📝 Review"));
    const data = buttonData(fake, card, "✅ Approve all");
    fake.pushUpdate(callbackUpdate(OWNER, data, { chat_id: OWNER, message_id: card.message_id }));
    const tap2 = callbackUpdate(OWNER, data, { chat_id: OWNER, message_id: card.message_id });
    fake.pushUpdate(tap2);
    await answered(fake, tap2);
    expect(answersTo(fake, (tap2 as any).callback_query.id).map((c) => c.payload.text)).toEqual([PRESS_AGAIN]);
    expect(existsSync(join(root, "install.sh"))).toBe(false);
    expect(await press(fake, "✅ Approve all", card)).toBe("Approved 1 file.");
    expect(existsSync(join(root, "install.sh"))).toBe(true);
  });

  test("a /agent message delivered again after a restart does not start the run twice", async () => {
    const w = world([{ text: "looked around" }, { text: "a second run would take this" }]);
    const first = await w.start();
    const { fake } = w;
    fake.loseConfirmations = true;
    say(fake, "/agent look around");
    await message(fake, (t) => t.includes("looked around"));
    await first.stop();
    fake.loseConfirmations = false;
    const second = await w.start();
    await barrier(fake);
    await until(() => !second.held().activeRun, "no run going");
    expect(w.model.remaining).toBe(1);
  });
});

/** Short deadlines and waits, so a test sees many retries in little time. */
const QUICK = {
  pollTimeoutSeconds: 1,
  timeouts: { pollSlackSeconds: 0.5, callSeconds: 1, retryBaseSeconds: 0.01, retryCapSeconds: 0.1 },
};

/** The waits the bot announced between failed getUpdates, in seconds. */
const pollWaits = (logs: string[]) =>
  logs.flatMap((l) => /getUpdates failed .*; polling again in ([\d.]+) s$/.exec(l)?.[1] ?? []).map(Number);

describe("telegram faults: the bot keeps listening", () => {
  test("another process polling with the same token for a moment (409 Conflict) does not stop the bot: it polls again and answers", async () => {
    const w = world([]);
    const bot = await w.start(QUICK);
    const { fake } = w;
    await until(() => fake.polls() >= 1, "the bot to poll");
    for (let i = 0; i < 3; i += 1) {
      // The other process's getUpdates ends the bot's waiting one with 409, as Telegram does.
      await until(() => fake.pollWaiting(), "the bot's poll to wait");
      await fetch(`${fake.apiRoot}/bot${fake.token}/getUpdates`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ timeout: 0 }),
      });
    }
    expect(fake.conflicts()).toBe(3);
    await barrier(fake);
    expect(w.logs.some((l) => l.includes("409 Conflict"))).toBe(true);
    let settled = false;
    void bot.done.then(() => (settled = true));
    await Bun.sleep(0);
    expect(settled).toBe(false);
  }, 15_000);

  test("a getUpdates that never answers is given up after the poll timeout plus slack, and the bot answers", async () => {
    const w = world([]);
    w.fake.hangNext("getUpdates");
    await w.start(QUICK);
    await barrier(w.fake);
    expect(
      w.logs.filter((l) => l.includes("getUpdates failed (Request to 'getUpdates' got no answer within 1.5 s)")).length,
    ).toBe(1);
  }, 15_000);

  test("any other call that never answers is given up after its deadline: the bot is not blocked behind it", async () => {
    const w = world([]);
    await w.start(QUICK);
    const { fake } = w;
    fake.hangNext("sendMessage", { when: (p) => String(p.text).includes("Workspace") });
    say(fake, "/status");
    await barrier(fake);
    // The reply hung and was given up (not sent again: it may have arrived); the owner is told.
    await fake.waitFor(
      "sendMessage",
      (p) => String(p.text).includes("Something went wrong") && String(p.text).includes("no answer within 1 s"),
    );
  }, 15_000);

  test("after a long outage the bot polls again within the capped wait, not after as long again", async () => {
    const w = world([]);
    await w.start(QUICK);
    const { fake } = w;
    fake.failNext("getUpdates", { error_code: 502, description: "Bad Gateway", times: 8 });
    fake.resetAfterHandling("getUpdates", { times: 8 });
    await barrier(fake);
    const waits = pollWaits(w.logs);
    expect(waits.length).toBeGreaterThanOrEqual(16);
    expect(Math.max(...waits)).toBe(0.1);
    expect(w.logs.some((l) => /polling again after 1[6-9] failed tries/.test(l))).toBe(true);
  }, 15_000);

  test("the bot stops promptly in the middle of an outage", async () => {
    const w = world([]);
    const bot = await w.start(QUICK);
    w.fake.failNext("getUpdates", { error_code: 502, description: "Bad Gateway", times: 1000 });
    say(w.fake, "/help"); // ends the waiting poll; every later one fails
    await until(() => pollWaits(w.logs).length >= 3, "a few failed polls");
    await bot.stop();
    expect(w.fake.polls()).toBeLessThan(1000);
  }, 15_000);

  test("a 429 on getUpdates is waited out for its retry_after and polling goes on", async () => {
    const w = world([]);
    await w.start(QUICK);
    w.fake.failNext("getUpdates", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 });
    await barrier(w.fake);
    expect(pollWaits(w.logs)).toEqual([1]);
  }, 15_000);
});

const isCard = (p: Record<string, any>) => String(p.text).startsWith("📝 <b>Review</b>");
const createA = () =>
  world([{ toolCalls: [{ name: "create_file", input: { path: "a.txt", content: "alpha\n" } }] }, { text: "made a" }]);

describe("telegram faults: cards that did not arrive, or arrived once", () => {
  test("a card Telegram refused (403: the owner had blocked the bot) is not counted as open: /status offers Review, which sends it", async () => {
    const w = createA();
    await w.start();
    const { fake, root } = w;
    fake.failNext("sendMessage", {
      error_code: 403,
      description: "Forbidden: bot was blocked by the user",
      when: isCard,
    });
    say(fake, "/agent make a");
    await message(fake, (t) => t.includes("Something went wrong") && t.includes("blocked"));
    const from = fake.calls.length;
    say(fake, "/status");
    const offer = await message(fake, (t) => t.includes("waiting for review"), from);
    expect(await press(fake, "📝 Review", offer)).toBe("Card sent.");
    const card = await message(fake, (t) => t.includes("📝 Review") && t.includes("a.txt"), from);
    expect(await press(fake, "✅ Approve all", card)).toBe("Approved 1 file.");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("alpha\n");
  });

  test("a connection reset after Telegram took the card: the card is sent again; the stale copy's buttons say it was decided", async () => {
    const w = createA();
    await w.start({ timeouts: { retryBaseSeconds: 0.05 } });
    const { fake, root } = w;
    fake.resetAfterHandling("sendMessage", { when: isCard });
    say(fake, "/agent make a");
    await until(() => fake.messagesIn(OWNER).filter((m) => isCard(m)).length === 2, "the card sent again");
    await barrier(fake);
    const [stale, known] = fake.messagesIn(OWNER).filter((m) => isCard(m));
    expect(fake.messagesIn(OWNER).some((m) => m.text.includes("Something went wrong"))).toBe(false);
    expect(w.logs.some((l) => l.includes("outcome is unknown") && l.includes("sending it again"))).toBe(true);
    // The copy whose send came back is the one the bot knows: its inline diff counts as shown.
    expect(await press(fake, "✅ Approve all", known!)).toBe("Approved 1 file.");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("alpha\n");
    // The first copy, delivered unknown to the bot, still shows its buttons: a press says it was decided, and clears them.
    expect(await press(fake, "✅ Approve all", stale!)).toBe(ALREADY_DECIDED);
    await until(
      () => fake.messages.get(`${OWNER}:${stale!.message_id}`)?.reply_markup?.inline_keyboard?.length === 0,
      "the stale copy's buttons cleared",
    );
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("alpha\n");
  });

  test("a connection reset before Telegram took the card: it is sent again, and the owner gets it once", async () => {
    const w = createA();
    await w.start({ timeouts: { retryBaseSeconds: 0.05 } });
    const { fake, root } = w;
    fake.resetBeforeHandling("sendMessage", { when: isCard });
    say(fake, "/agent make a");
    const card = await message(fake, (t) => t.includes("📝 Review"));
    await barrier(fake);
    expect(fake.messagesIn(OWNER).filter((m) => isCard(m))).toHaveLength(1);
    expect(fake.callsOf("sendMessage").filter((c) => isCard(c.payload))).toHaveLength(2);
    expect(fake.messagesIn(OWNER).some((m) => m.text.includes("Something went wrong"))).toBe(false);
    expect(await press(fake, "✅ Approve all", card)).toBe("Approved 1 file.");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("alpha\n");
  });
});

describe("telegram faults: a rate limit holds only what it limits", () => {
  test("a reply waiting out a 429 does not hold the Approve pressed behind it", async () => {
    const w = createA();
    await w.start();
    const { fake, root } = w;
    say(fake, "/agent make a");
    const card = await message(fake, (t) => t.includes("📝 Review"));
    fake.failNext("sendMessage", {
      error_code: 429,
      description: "Too Many Requests: retry after 3",
      retry_after: 3,
      when: (p) => String(p.text).includes("Workspace"),
    });
    const from = fake.calls.length;
    say(fake, "/status");
    await until(() => fake.calls.slice(from).some((c) => c.method === "sendMessage" && !c.ok), "the reply's 429"); // it waits now
    expect(await press(fake, "✅ Approve all", card)).toBe("Approved 1 file.");
    expect(readFileSync(join(root, "a.txt"), "utf8")).toBe("alpha\n");
    // The press was answered while the reply still waited: it arrives only now.
    expect(
      fake.calls
        .slice(from)
        .filter((c) => c.method === "sendMessage" && c.ok && String(c.payload.text).includes("Workspace")),
    ).toEqual([]);
    await fake.waitFor("sendMessage", (p) => String(p.text).includes("Workspace"), { from, timeoutMs: 10_000 });
  }, 15_000);
});
