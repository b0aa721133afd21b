import { GrammyError } from "grammy";
import type { RunMode } from "../../agent/prompts.ts";
import type { RunOptions } from "../../app/agent-run.ts";
import { chooseModels } from "../../app/model-choice.ts";
import { createRuntime } from "../../app/runtime.ts";
import type { Env } from "../../core/pencil-home.ts";
import { findInterruptedApplies } from "../../core/apply/recovery.ts";
import { createServices } from "./bot-services.ts";
import { type ApiTimeouts, DEFAULT_TIMEOUTS } from "./api-timeouts.ts";
import { createBot, errorReporter, hardenApi, installFeatures } from "./build-bot.ts";
import { readBotAccess, readTelegramConfig, type TelegramConfig } from "./config.ts";
import { saveOwnerId } from "./owner-file.ts";
import { type PairedOwner, pairOwner } from "./pairing.ts";
import { announceInterrupted } from "./interrupted-notice.ts";
import { errorText, scrubbedLog } from "./scrub.ts";
import { TelegramConfigError } from "../../core/errors/telegram-config-error.ts";

/** How to start the bot: the environment (README "Configuration"), and knobs for tests and the demo. */
export interface TelegramBotOptions {
  env: Env;
  /** Default: PENCIL_WORKSPACE, else the current directory. */
  workspace?: string;
  /** Overrides PENCIL_HOME. */
  pencilHome?: string;
  allow?: string[];
  deny?: string[];
  model?: string;
  /** Where log lines go (every line is scrubbed of the token); default stderr. */
  log?: (line: string) => void;
  /** Extra run options per mode (tests and the demo pass a scripted model). */
  runOptions?: (mode: RunMode) => RunOptions;
  /** How long a permission question waits before it counts as Deny (default 120 s). */
  questionTimeoutMs?: number;
  /** Least time between two edits of a progress message (default 1 s). */
  progressIntervalMs?: number;
  /** How often "typing…" is renewed while the model works (default 4.5 s: Telegram shows it for about 5). */
  typingRenewMs?: number;
  /** getUpdates long-poll timeout in seconds (default 30). */
  pollTimeoutSeconds?: number;
  /** Deadlines and retry waits of Bot API calls (DEFAULT_TIMEOUTS; tests shorten them). */
  timeouts?: Partial<ApiTimeouts>;
  /** Pairing: without it a missing TELEGRAM_OWNER_ID is a configuration error, as before. */
  pairing?: PairingHooks;
}

/** How `pencil telegram` pairs an owner when none is set (or `--pair` replaces one). */
export interface PairingHooks {
  /** Pair even though an owner is set (`--pair`, after the terminal's confirmation). */
  replace?: boolean;
  /** Prints the code for the person at the terminal. */
  onCode(code: string, botUsername: string): void;
  /** Says who paired and where the id was saved. */
  onPaired(owner: PairedOwner, envFile: string): void;
  /** Default 10 minutes. */
  timeoutMs?: number;
  /** A fixed code (tests); default a fresh random one. */
  code?: string;
}

/** What the bot holds in memory and on disk; forged updates must leave all of it unchanged. */
export interface HeldState {
  tokens: number;
  cards: number;
  questions: number;
  plans: number;
  liveRuns: number;
  activeRun: boolean;
}

/** A running bot. */
export interface TelegramBot {
  /** Stops polling (confirming the updates handled) and cancels a run in progress. */
  stop(): Promise<void>;
  /**
   * Settles when polling has ended: null after stop(), else the error that ended it
   * (one no retry can mend, such as a revoked token). A process that stays alive after
   * that would no longer listen, so `pencil telegram` exits non-zero then.
   */
  done: Promise<Error | null>;
  held(): HeldState;
  username: string;
}

/**
 * Starts Pencil's Telegram bot on the workspace: checks the settings (throws
 * TelegramConfigError / ConfigError / UsageFailure, all exit 2, never showing
 * the token), checks the token with getMe, installs the features, sets the command
 * menu, starts long polling, and tells the owner about a changeset still pending.
 */
export async function startTelegramBot(options: TelegramBotOptions): Promise<TelegramBot> {
  const access = options.pairing ? readBotAccess(options.env) : readTelegramConfig(options.env);
  const log = scrubbedLog(access.token, options.log ?? ((line) => process.stderr.write(`${line}\n`)));
  const env = options.pencilHome ? { ...options.env, PENCIL_HOME: options.pencilHome } : options.env;
  const runtime = createRuntime({
    workspace: options.workspace ?? (env.PENCIL_WORKSPACE?.trim() || process.cwd()),
    env,
    ...(options.allow ? { allow: options.allow } : {}),
    ...(options.deny ? { deny: options.deny } : {}),
    ...(options.model ? { model: options.model } : {}),
  });
  // A missing model key is a configuration error now, not a surprise at the first /agent.
  if (!options.runOptions?.("agent").models) chooseModels(runtime, { emit: () => {} });
  for (const warning of runtime.settings.warnings) log(`warning: ${warning}`);
  for (const interrupted of findInterruptedApplies(runtime.journalDir))
    log(`interrupted apply ${interrupted.applyId}: ${interrupted.message}`);

  const timeouts: ApiTimeouts = {
    ...DEFAULT_TIMEOUTS,
    ...options.timeouts,
    ...(options.pollTimeoutSeconds !== undefined ? { pollSeconds: options.pollTimeoutSeconds } : {}),
  };
  let ownerId = access.ownerId;
  if (options.pairing && (ownerId === null || options.pairing.replace)) {
    const owner = await pairOwner({
      token: access.token,
      apiRoot: access.apiRoot,
      timeouts,
      log,
      onCode: options.pairing.onCode,
      ...(options.pairing.timeoutMs !== undefined ? { timeoutMs: options.pairing.timeoutMs } : {}),
      ...(options.pairing.code !== undefined ? { code: options.pairing.code } : {}),
    }).catch((error) => {
      throw TelegramConfigError.isInstance(error) ? error : new Error(errorText(error, access.token));
    });
    options.pairing.onPaired(owner, saveOwnerId(runtime.pencilHome, owner.id));
    ownerId = owner.id;
  }
  const config: TelegramConfig = { ...access, ownerId: ownerId! };
  const bot = createBot(config, timeouts);
  try {
    // One getMe, not bot.init(): init retries a network failure forever, and startup must fail fast instead.
    bot.botInfo = await bot.api.getMe();
  } catch (error) {
    if (error instanceof GrammyError && error.error_code === 401) {
      throw new TelegramConfigError(
        "Telegram refused TELEGRAM_BOT_TOKEN (401 Unauthorized): copy the token again from @BotFather (/mybots → API Token).",
        "TELEGRAM_BOT_TOKEN",
      );
    }
    throw new Error(
      `Cannot reach the Telegram Bot API at ${config.apiRoot}: ${errorText(error, config.token)}. Check the network, or TELEGRAM_API_ROOT.`,
    );
  }
  hardenApi(bot, log, timeouts);

  const deps = createServices(bot.api, config, runtime, log, {
    ...options,
    resendWaitSeconds: timeouts.retryBaseSeconds,
  });
  const { outbox, review, tokens, cards, questions, plans, projects } = deps;
  const report = errorReporter(deps);
  const { lanes } = installFeatures(bot, deps);

  await bot.api
    .setMyCommands(deps.commandList)
    .catch((error) => log(`could not set the command menu: ${errorText(error, config.token)}`));

  let polling: Promise<void> = Promise.resolve();
  let stopping = false;
  await new Promise<void>((resolve, reject) => {
    polling = bot.start({
      timeout: timeouts.pollSeconds,
      allowed_updates: ["message", "callback_query"],
      onStart: () => resolve(),
    });
    polling.catch((error) => {
      log(`polling stopped: ${errorText(error, config.token)}`);
      reject(new Error(`The bot stopped polling: ${errorText(error, config.token)}`));
    });
  });
  const done = polling.then(
    () => (stopping ? null : new Error("The bot stopped polling.")),
    (error) => new Error(`The bot stopped polling: ${errorText(error, config.token)}`),
  );
  log(`Telegram bot @${bot.botInfo.username} is polling for its owner (user ${config.ownerId}) on ${runtime.ws.root}`);

  const presented = await announceInterrupted(deps).catch((error) => {
    report("announcing an interrupted run", error);
    return [] as string[];
  });
  const pending = runtime.store.latestPending(runtime.ws.root);
  if (pending && !presented.includes(pending.id)) {
    const offer = review.offer(pending, "✏️ Pencil is back.");
    await outbox
      .send(config.ownerId, offer.html, offer.keyboard)
      .catch((error) => report("announcing a pending changeset", error));
  }

  return {
    username: bot.botInfo.username,
    done,
    async stop() {
      stopping = true;
      for (const { run } of projects.activeRuns()) run.controller.abort();
      await bot.stop().catch((error) => log(`stopping: ${errorText(error, config.token)}`));
      await polling.catch(() => {});
      await lanes.idle();
      deps.ignoredSenders?.flush();
    },
    held: () => ({
      tokens: tokens.size,
      cards: cards.size,
      questions: questions.size,
      plans: plans.size,
      liveRuns: review.liveSize,
      activeRun: projects.activeRuns().length > 0,
    }),
  };
}
