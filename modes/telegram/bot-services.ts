import { IgnoredSenders } from "./ignored-senders.ts";
import { join } from "node:path";
import type { RunMode } from "../../agent/prompts.ts";
import type { RunOptions } from "../../app/agent-run.ts";
import { createRuntime, type Runtime } from "../../app/runtime.ts";
import type { Api } from "grammy";
import { ButtonTokens } from "./button-tokens.ts";
import { errorReporter } from "./build-bot.ts";
import type { TelegramConfig } from "./config.ts";
import type { BotDeps } from "./context.ts";
import { CommandFailures } from "./command-failures.ts";
import { readPrices } from "../../app/run-cost.ts";
import { CostLedger } from "./cost-ledger.ts";
import { Outbox } from "./outbox.ts";
import { PlanDesk } from "./plan-desk.ts";
import { Projects, readListedWorkspaces } from "./projects.ts";
import { QuestionDesk } from "./question-desk.ts";
import { ReviewCards } from "./review-cards.ts";
import { ReviewDesk } from "./review-desk.ts";
import { RunLauncher } from "./run-launcher.ts";

/** Knobs of the services (tests and the demo set them). */
export interface ServiceOptions {
  runOptions?: (mode: RunMode) => RunOptions;
  questionTimeoutMs?: number;
  progressIntervalMs?: number;
  typingRenewMs?: number;
  /** The trusted rule flags and model override, applied to every workspace the owner switches to. */
  allow?: string[];
  deny?: string[];
  model?: string;
  /** Wait before a card whose delivery is unknown is sent again (the API timeouts' retry base). */
  resendWaitSeconds?: number;
}

/**
 * The bot's services, wired: state under `$PENCIL_HOME/telegram` (button tokens,
 * review cards), the run gate, and the desks for questions, reviews, plans and runs.
 * Reviews revise through the launcher and plans proceed through it, so it is bound late.
 */
export function createServices(
  api: Api,
  config: TelegramConfig,
  runtime: Runtime,
  log: (line: string) => void,
  options: ServiceOptions = {},
): BotDeps {
  const stateDir = join(runtime.pencilHome, "telegram");
  const owner = config.ownerId;
  const outbox = new Outbox(api, log, options.resendWaitSeconds);
  const tokens = new ButtonTokens(join(stateDir, "tokens.json"), undefined, log);
  const cards = new ReviewCards(join(stateDir, "cards.json"), log);
  const projects = new Projects(
    runtime,
    (path) =>
      createRuntime({
        workspace: path,
        env: runtime.env,
        ...(options.allow ? { allow: options.allow } : {}),
        ...(options.deny ? { deny: options.deny } : {}),
        ...(options.model ? { model: options.model } : {}),
      }),
    () => readListedWorkspaces(runtime.pencilHome, runtime.ws.home).list,
  );
  const questions = new QuestionDesk(outbox, tokens, owner, options.questionTimeoutMs);
  let launcher: RunLauncher | undefined;
  const review = new ReviewDesk({
    get runtime() {
      return projects.runtime;
    },
    runtimeFor: (root) => projects.runtimeFor(root),
    outbox,
    tokens,
    cards,
    ownerId: owner,
    log,
    revise: (run, rejections, applied) => launcher!.revise(run, rejections, applied),
  });
  const plans = new PlanDesk(outbox, tokens, owner, async (goal) => void (await launcher!.launch("agent", goal)));
  const failures = new CommandFailures(outbox, tokens, owner, errorReporter({ outbox, config, log }));
  launcher = new RunLauncher({
    get runtime() {
      return projects.runtime;
    },
    get gate() {
      return projects.gate;
    },
    gateFor: (root) => projects.gateFor(root),
    workspaceName: (root) => projects.nameOf(root),
    costs: new CostLedger(join(stateDir, "costs.json"), () => readPrices(runtime.pencilHome), log),
    allRuns: () => projects.activeRuns().map((r) => r.run),
    outbox,
    tokens,
    review,
    questions,
    plans,
    ownerId: owner,
    report: errorReporter({ outbox, config, log }),
    failures,
    ...(options.runOptions ? { runOptions: options.runOptions } : {}),
    ...(options.progressIntervalMs !== undefined ? { progressIntervalMs: options.progressIntervalMs } : {}),
    ...(options.typingRenewMs !== undefined ? { typingRenewMs: options.typingRenewMs } : {}),
  });
  return {
    config,
    get runtime() {
      return projects.runtime;
    },
    get gate() {
      return projects.gate;
    },
    projects,
    outbox,
    tokens,
    cards,
    review,
    launcher,
    questions,
    plans,
    failures,
    log,
    ignoredSenders: new IgnoredSenders(runtime.pencilHome),
    commandList: [],
  };
}
