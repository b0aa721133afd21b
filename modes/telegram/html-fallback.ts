import type { Transformer } from "grammy";
import { htmlToPlain } from "./html.ts";

/** Methods whose text or caption may carry parse_mode. */
const TEXT_METHODS = new Set(["sendMessage", "editMessageText", "sendDocument", "editMessageCaption"]);

/**
 * An API transformer: when Telegram refuses a message's HTML ("can't parse
 * entities"), the same call is repeated once as plain text (tags dropped, entities
 * decoded), so a formatting mistake never loses the message.
 */
export function htmlFallback(onFallback?: (method: string, description: string) => void): Transformer {
  return async (prev, method, payload, signal) => {
    const result = await prev(method, payload, signal);
    const p = payload as Record<string, unknown> | undefined;
    if (result.ok || !TEXT_METHODS.has(method) || !p || p.parse_mode !== "HTML") return result;
    if (result.error_code !== 400 || !/can't parse entities/i.test(result.description)) return result;
    onFallback?.(method, result.description);
    const { parse_mode: _dropped, ...rest } = p;
    const plain: Record<string, unknown> = { ...rest };
    if (typeof rest.text === "string") plain.text = htmlToPlain(rest.text);
    if (typeof rest.caption === "string") plain.caption = htmlToPlain(rest.caption);
    return prev(method, plain as typeof payload, signal);
  };
}
