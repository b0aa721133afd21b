import type { AgentRun } from "../../app/agent-run.ts";
import type { Rejection } from "../../app/rejection.ts";
import type { Runtime } from "../../app/runtime.ts";
import type { ApplyResult } from "../../core/apply/apply.ts";
import type { ButtonTokens } from "./button-tokens.ts";
import type { Outbox } from "./outbox.ts";
import type { ReviewCards } from "./review-cards.ts";

/** What the review desk needs from the bot. */
export interface ReviewDeps {
  runtime: Runtime;
  /** The runtime of the workspace a changeset was made in, when the bot has it open (cards outlive a workspace switch). */
  runtimeFor?: (workspaceRoot: string) => Runtime | null;
  outbox: Outbox;
  tokens: ButtonTokens;
  cards: ReviewCards;
  ownerId: number;
  log: (line: string) => void;
  /** Sends rejections with reasons back to the run that wrote them (a detached revise run). */
  revise: (run: AgentRun, rejections: Rejection[], applied: ApplyResult) => void;
}
