import { describe, expect, test } from "bun:test";
import { judgeUpdate } from "../../../modes/telegram/owner-guard.ts";
import { callbackUpdate, messageUpdate } from "../../support/fake-telegram-server.ts";

const OWNER = 4242;

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
