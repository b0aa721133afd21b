import type { MiddlewareFn } from "grammy";
import type { ButtonTokens } from "./button-tokens.ts";
import type { PencilContext } from "./context.ts";
import { NOT_PENDING } from "./review-desk.ts";

/**
 * Resolves a pressed button's callback data to its server-side binding (only the
 * owner's presses get here). Unknown, malformed, replayed or foreign data is
 * answered "no longer pending" and goes no further.
 */
export function resolveButtons(tokens: ButtonTokens): MiddlewareFn<PencilContext> {
  return async (ctx, next) => {
    const query = ctx.callbackQuery;
    if (!query) return next();
    const button = tokens.resolve(query.data, query.from.id);
    if (!button) {
      await ctx.answerCallbackQuery({ text: NOT_PENDING });
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
