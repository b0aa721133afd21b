import { join } from "node:path";
import { autoRetry } from "@grammyjs/auto-retry";
import { type Api, Bot, type BotError } from "grammy";
import { except, networkRetry, pollingRetry } from "./api-retries.ts";
import { type ApiTimeouts, callDeadlines, longestCall } from "./api-timeouts.ts";
import { resolveButtons } from "./buttons.ts";
import type { TelegramConfig } from "./config.ts";
import type { BotDeps, Feature, FeatureFactory, PencilContext } from "./context.ts";
import { FEATURES } from "./features/index.ts";
import { htmlFallback } from "./html-fallback.ts";
import { escapeHtml } from "./html.ts";
import { ownerGuard } from "./owner-guard.ts";
import { NOT_PENDING } from "./press-answers.ts";
import { errorText } from "./scrub.ts";
import { UpdateLanes } from "./update-lanes.ts";
import { admitOnce, UpdateLedger } from "./update-ledger.ts";

/**
 * The bot with no handler and no retries yet, so that checking the token at startup
 * fails fast; every request already has its deadline (a long poll its timeout plus
 * slack), so no call waits on a silent connection for grammY's default 500 s.
 */
export function createBot(config: TelegramConfig, timeouts: ApiTimeouts): Bot<PencilContext> {
  const bot = new Bot<PencilContext>(config.token, {
    client: { apiRoot: config.apiRoot, timeoutSeconds: longestCall(timeouts) },
  });
  bot.api.config.use(callDeadlines(timeouts));
  return bot;
}

/**
 * Makes the API client dependable: polling survives outages, 409s and 429s with a
 * capped backoff; other calls are retried after network errors unless a retry could
 * deliver a message twice; Telegram's 429s (and 5xx) are waited out, honouring
 * retry_after; a message whose HTML Telegram refuses is sent again as plain text.
 */
export function hardenApi(bot: { api: Api }, log: (line: string) => void, timeouts: ApiTimeouts): void {
  bot.api.config.use(
    pollingRetry(timeouts, log),
    networkRetry(timeouts),
    except("getUpdates", autoRetry({ maxRetryAttempts: 5, maxDelaySeconds: 120, rethrowHttpErrors: true })),
    htmlFallback((method, description) =>
      log(`Telegram refused the HTML of a ${method} (${description}); sent it as plain text`),
    ),
  );
}

/** Logs an error (token scrubbed) and tells the owner, never throwing. */
export function errorReporter(
  deps: Pick<BotDeps, "outbox" | "config" | "log">,
): (what: string, error: unknown) => void {
  return (what, error) => {
    const text = errorText(error, deps.config.token);
    deps.log(`error in ${what}: ${text}`);
    deps.outbox
      .send(deps.config.ownerId, `⚠️ Something went wrong in ${what}: ${escapeHtml(text.slice(0, 3000))}`)
      .catch((sendError) =>
        deps.log(`could not report that error to the owner: ${errorText(sendError, deps.config.token)}`),
      );
  };
}

/**
 * Installs, in order: the owner guard (everything else only ever sees the owner's
 * updates), the intake that lets each update and press act once (persisted under
 * `$PENCIL_HOME/telegram`, so a restart does not forget), the lanes that hand each
 * update on without holding the polling loop (see UpdateLanes), the button resolver,
 * every feature inside its own error boundary, the fallbacks for what no feature
 * took, and bot.catch. Fills deps.commandList; returns the features and the lanes
 * (a stopping bot waits for them to be idle).
 */
export function installFeatures(
  bot: Bot<PencilContext>,
  deps: BotDeps,
  factories: FeatureFactory[] = FEATURES,
): { features: Feature[]; lanes: UpdateLanes } {
  const report = errorReporter(deps);
  const onError = async (error: BotError<PencilContext>) => {
    report(`handling update ${error.ctx.update.update_id}`, error.error);
    // A press whose handler failed still gets an answer, so the phone stops waiting.
    if (error.ctx.callbackQuery)
      await error.ctx.answerCallbackQuery({ text: "Something went wrong; see the message." }).catch(() => {});
  };
  const lanes = new UpdateLanes(deps.tokens, onError);
  bot.use(ownerGuard(deps.config.ownerId, deps.log, deps.ignoredSenders));
  bot.use(admitOnce(new UpdateLedger(join(deps.runtime.pencilHome, "telegram", "updates.json"), deps.log), deps.log));
  bot.use(lanes.middleware());
  bot.use(resolveButtons(deps.tokens, (line) => deps.log(line)));
  const features = factories.map((make) => make(deps));
  deps.commandList.splice(0, deps.commandList.length, ...features.flatMap((f) => f.commands));
  for (const feature of features) bot.errorBoundary(onError, feature.composer);
  bot.on("callback_query", (ctx) => ctx.answerCallbackQuery({ text: NOT_PENDING }));
  bot.on("message", async (ctx) => {
    const command = /^\/([A-Za-z0-9_]+)/.exec(ctx.message?.text ?? "")?.[1];
    if (command === undefined) {
      await deps.outbox.send(deps.config.ownerId, "Send /agent &lt;goal&gt; to start, or /help for the commands.");
      return;
    }
    // A command no feature took: say so and list the real ones, rather than a generic hint.
    const list = deps.commandList.map((c) => `/${c.command} — ${escapeHtml(c.description)}`).join("\n");
    await deps.outbox.send(deps.config.ownerId, `Unknown command /${escapeHtml(command)}. The commands:\n${list}`);
  });
  bot.catch(onError);
  return { features, lanes };
}
