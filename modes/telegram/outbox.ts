import { type Api, GrammyError, HttpError, InputFile } from "grammy";
import type { InlineKeyboardMarkup, Message } from "grammy/types";
import { neverSent } from "./api-retries.ts";

/** How many times a message whose delivery is unknown is sent again (see sendAgainIfUnknown). */
const RESENDS = 2;

/** An inline keyboard: rows of buttons, each a label and its callback data. */
export type Keyboard = InlineKeyboardMarkup;

/**
 * Everything the bot sends, in HTML. A refused HTML text is retried as plain text
 * by the html-fallback transformer; an edit that changes nothing is not an error;
 * a failed edit is logged and never breaks the flow that made it.
 */
export class Outbox {
  constructor(
    private readonly api: Api,
    private readonly log: (line: string) => void,
    /** Wait before sending a message again whose first send's outcome is unknown (doubles each time). */
    private readonly resendWaitSeconds = 1,
  ) {}

  /**
   * Sends like `send`, and sends again (twice more at most) when the outcome is unknown:
   * the connection broke after the request left (a reset, a timeout), so Telegram may or
   * may not have taken it. For a message whose second copy is harmless and whose absence
   * is not, such as a changeset card. A refusal by Telegram (an answer) is not retried, nor
   * a request that never left: networkRetry (api-retries.ts) already tried that one again.
   */
  async sendAgainIfUnknown(chatId: number, html: string, keyboard?: Keyboard): Promise<Message.TextMessage> {
    for (let tries = 0; ; tries += 1) {
      try {
        return await this.send(chatId, html, keyboard);
      } catch (error) {
        if (!(error instanceof HttpError) || neverSent(error) || tries >= RESENDS) throw error;
        this.log(`a send's outcome is unknown (${error.message}); sending it again`);
        await Bun.sleep(this.resendWaitSeconds * 1000 * 2 ** tries);
      }
    }
  }

  /** Sends an HTML message (with buttons, when given) and returns it. */
  send(chatId: number, html: string, keyboard?: Keyboard): Promise<Message.TextMessage> {
    return this.api.sendMessage(chatId, html, {
      parse_mode: "HTML",
      link_preview_options: { is_disabled: true },
      ...(keyboard ? { reply_markup: keyboard } : {}),
    });
  }

  /** Replaces an HTML message's text and buttons (none when `keyboard` is undefined); false when the edit failed. */
  async edit(chatId: number, messageId: number, html: string, keyboard?: Keyboard): Promise<boolean> {
    try {
      await this.api.editMessageText(chatId, messageId, html, {
        parse_mode: "HTML",
        link_preview_options: { is_disabled: true },
        reply_markup: keyboard ?? { inline_keyboard: [] },
      });
      return true;
    } catch (error) {
      if (error instanceof GrammyError && /message is not modified/i.test(error.description)) return true;
      this.log(`could not edit message ${messageId}: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  }

  /** Shows "typing…" in the chat for about five seconds; a failure is logged, never thrown. */
  async typing(chatId: number): Promise<void> {
    try {
      await this.api.sendChatAction(chatId, "typing");
    } catch (error) {
      this.log(`could not send the typing action: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Sends text as a document named `filename` with an HTML caption. */
  async document(
    chatId: number,
    filename: string,
    content: string | Uint8Array,
    captionHtml: string,
  ): Promise<Message.DocumentMessage> {
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    return this.api.sendDocument(chatId, new InputFile(bytes, filename), { caption: captionHtml, parse_mode: "HTML" });
  }
}
