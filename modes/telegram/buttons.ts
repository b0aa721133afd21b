import type { MiddlewareFn } from "grammy";
import type { ButtonTokens } from "./button-tokens.ts";
import type { PencilContext } from "./context.ts";
import { NOT_PENDING } from "./press-answers.ts";

/**
 * Resolves a pressed button's callback data to its server-side binding (only the
 * owner's presses get here). Unknown, malformed, replayed or foreign data is
 * answered "no longer pending" and goes no further; a button of a card already
 * decided (an old copy of it, sent again after a lost connection) says so, and that
 * copy's buttons are taken off so it reads as decided.
 */
export function resolveButtons(
  tokens: ButtonTokens,
  log: (line: string) => void = () => {},
): MiddlewareFn<PencilContext> {
  return async (ctx, next) => {
    const query = ctx.callbackQuery;
    if (!query) return next();
    const button = tokens.resolve(query.data, query.from.id);
    if (!button) {
      // The copy the bot kept up to date already shows the outcome; only another copy needs telling.
      const stale = query.message;
      const retired = tokens.retiredAnswer(query.data);
      const otherCopy = retired && stale && stale.message_id !== retired.messageId ? retired : null;
      await ctx.answerCallbackQuery({ text: otherCopy?.answer ?? NOT_PENDING });
      if (otherCopy && stale)
        await ctx.api
          .editMessageReplyMarkup(stale.chat.id, stale.message_id, { reply_markup: { inline_keyboard: [] } })
          .catch((error) => log(`could not take the buttons off an old card: ${String(error)}`));
      return;
    }
    ctx.button = button;
    return next();
  };
}

/** Handles a button press and answers it with the text the handler returns. */
export function answerWith(handler: (ctx: PencilContext) => Promise<string> | string): MiddlewareFn<PencilContext> {
  return async (ctx) => {
    const text = await handler(ctx);
    await ctx.answerCallbackQuery({ text: text.slice(0, 200) });
  };
}
