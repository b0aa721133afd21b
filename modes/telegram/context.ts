import type { IgnoredSenders } from "./ignored-senders.ts";
import type { Composer, Context } from "grammy";
import type { Runtime } from "../../app/runtime.ts";
import type { ButtonAction, ButtonTokens, ResolvedButton } from "./button-tokens.ts";
import type { TelegramConfig } from "./config.ts";
import type { CommandFailures } from "./command-failures.ts";
import type { Outbox } from "./outbox.ts";
import type { PlanDesk } from "./plan-desk.ts";
import type { Projects } from "./projects.ts";
import type { QuestionDesk } from "./question-desk.ts";
import type { ReviewCards } from "./review-cards.ts";
import type { ReviewDesk } from "./review-desk.ts";
import type { RunGate } from "./run-gate.ts";
import type { RunLauncher } from "./run-launcher.ts";

/** grammY's context plus the button binding a press resolved to (set by the button resolver). */
export type PencilContext = Context & { button?: ResolvedButton };

/** The services every feature module shares. */
export interface BotDeps {
  config: TelegramConfig;
  /** The active workspace's runtime (changes when the owner switches with /projects). */
  runtime: Runtime;
  /** The workspaces the bot may work on, and which is active. */
  projects: Projects;
  outbox: Outbox;
  tokens: ButtonTokens;
  cards: ReviewCards;
  /** The active workspace's run gate. */
  gate: RunGate;
  review: ReviewDesk;
  launcher: RunLauncher;
  questions: QuestionDesk;
  plans: PlanDesk;
  /** Failed commands' notices and their "Full output" buttons. */
  failures: CommandFailures;
  log: (line: string) => void;
  /** The senders the owner guard ignored, remembered for `pencil doctor`. */
  ignoredSenders?: IgnoredSenders;
  /** Every installed feature's commands, in menu order (filled when the features are installed). */
  commandList: { command: string; description: string }[];
}

/** One feature of the bot: its commands (for the menu and /help) and its handlers. Adding a feature is adding one of these. */
export interface Feature {
  name: string;
  commands: { command: string; description: string }[];
  composer: Composer<PencilContext>;
}

/** Builds a feature from the shared services. */
export type FeatureFactory = (deps: BotDeps) => Feature;

/** True when the update is a press of a resolved button with one of these actions. */
export function pressed(...actions: ButtonAction[]): (ctx: PencilContext) => boolean {
  return (ctx) => ctx.button !== undefined && actions.includes(ctx.button.action);
}
