import { join } from "node:path";
import type { RunMode } from "../../agent/prompts.ts";
import type { RunOptions } from "../../app/agent-run.ts";
import type { Runtime } from "../../app/runtime.ts";
import type { Api } from "grammy";
import { ButtonTokens } from "./button-tokens.ts";
import { errorReporter } from "./build-bot.ts";
import type { TelegramConfig } from "./config.ts";
import type { BotDeps } from "./context.ts";
import { Outbox } from "./outbox.ts";
import { PlanDesk } from "./plan-desk.ts";
import { QuestionDesk } from "./question-desk.ts";
import { ReviewCards } from "./review-cards.ts";
import { ReviewDesk } from "./review-desk.ts";
import { RunGate } from "./run-gate.ts";
import { RunLauncher } from "./run-launcher.ts";

/** Knobs of the services (tests and the demo set them). */
export interface ServiceOptions {
  runOptions?: (mode: RunMode) => RunOptions;
  questionTimeoutMs?: number;
  progressIntervalMs?: number;
}

/**
 * The bot's services, wired: state under `$PENCIL_HOME/telegram` (button tokens,
 * review cards), the run gate, and the desks for questions, reviews, plans and runs.
 * Reviews revise through the launcher and plans proceed through it, so it is bound late.
 */
export function createServices(api: Api, config: TelegramConfig, runtime: Runtime, log: (line: string) => void, options: ServiceOptions = {}): BotDeps {
  const stateDir = join(runtime.pencilHome, "telegram");
  const owner = config.ownerId;
  const outbox = new Outbox(api, log);
  const tokens = new ButtonTokens(join(stateDir, "tokens.json"), undefined, log);
  const cards = new ReviewCards(join(stateDir, "cards.json"), log);
  const gate = new RunGate();
  const questions = new QuestionDesk(outbox, tokens, owner, options.questionTimeoutMs);
  let launcher: RunLauncher | undefined;
  const review = new ReviewDesk({ runtime, outbox, tokens, cards, ownerId: owner, log, revise: (run, rejections, applied) => launcher!.revise(run, rejections, applied) });
  const plans = new PlanDesk(outbox, tokens, owner, (goal) => launcher!.launch("agent", goal));
  launcher = new RunLauncher({
    runtime,
    outbox,
    tokens,
    gate,
    review,
    questions,
    plans,
    ownerId: owner,
    report: errorReporter({ outbox, config, log }),
    ...(options.runOptions ? { runOptions: options.runOptions } : {}),
    ...(options.progressIntervalMs !== undefined ? { progressIntervalMs: options.progressIntervalMs } : {}),
  });
  return { config, runtime, outbox, tokens, cards, gate, review, launcher, questions, plans, log, commandList: [] };
}
