import type { Context, MiddlewareFn } from "grammy";
import type { Update } from "grammy/types";

/** Whether an update comes from the owner in their private chat with the bot, and who sent it otherwise. */
export interface OwnerVerdict {
  owner: boolean;
  /** The update's kind (message, callback_query, …). */
  kind: string;
  /** Sender user id, when the update has one. */
  senderId: number | null;
  chatId: number | null;
  chatType: string | null;
}

/**
 * Judges an update: only a message or a button press whose sender AND private chat
 * are both the owner passes. Groups, channels, other users, inline messages and
 * every other update kind do not.
 */
export function judgeUpdate(update: Update, ownerId: number): OwnerVerdict {
  const kind = Object.keys(update).find((k) => k !== "update_id") ?? "unknown";
  const source = update.message ?? update.callback_query;
  const chat = update.message?.chat ?? update.callback_query?.message?.chat ?? anyChat(update);
  const senderId = source?.from?.id ?? anySender(update);
  const owner =
    (kind === "message" || kind === "callback_query") &&
    senderId === ownerId &&
    chat !== undefined &&
    chat.type === "private" &&
    chat.id === ownerId;
  return { owner, kind, senderId: senderId ?? null, chatId: chat?.id ?? null, chatType: chat?.type ?? null };
}

/**
 * Middleware that stops every update not from the owner: no action, no answer, one
 * log line naming the sender, and (with `ignored`) the sender remembered for `pencil doctor`.
 */
export function ownerGuard<C extends Context>(
  ownerId: number,
  log: (line: string) => void,
  ignored?: { note(from: { id: number; first_name?: string; username?: string }): void },
): MiddlewareFn<C> {
  return async (ctx, next) => {
    const verdict = judgeUpdate(ctx.update, ownerId);
    if (verdict.owner) return next();
    log(
      `ignored ${verdict.kind} update ${ctx.update.update_id} from sender ${verdict.senderId ?? "unknown"}` +
        ` in chat ${verdict.chatId ?? "unknown"} (${verdict.chatType ?? "no chat"}): not the owner's private chat` +
        " (pencil doctor says who wrote; if it was you, pencil telegram --pair)",
    );
    const from = ctx.from;
    if (ignored && from && verdict.senderId === from.id) ignored.note(from);
  };
}

function anyChat(update: Update): { id: number; type: string } | undefined {
  for (const value of Object.values(update)) {
    if (value && typeof value === "object" && "chat" in value)
      return (value as { chat: { id: number; type: string } }).chat;
  }
  return undefined;
}

function anySender(update: Update): number | undefined {
  for (const value of Object.values(update)) {
    if (value && typeof value === "object" && "from" in value) return (value as { from?: { id: number } }).from?.id;
  }
  return undefined;
}
