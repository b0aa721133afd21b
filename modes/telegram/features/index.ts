import type { FeatureFactory } from "../context.ts";
import { agentFeature } from "./agent.ts";
import { askFeature } from "./ask.ts";
import { brainFeature, forwardedNoteFeature } from "./brain.ts";
import { commandOutputFeature } from "./command-output.ts";
import { forwardedFeature } from "./forwarded.ts";
import { helpFeature } from "./help.ts";
import { historyFeature } from "./history.ts";
import { mediaFeature } from "./media.ts";
import { modelFeature } from "./model.ts";
import { planFeature } from "./plan.ts";
import { projectsFeature } from "./projects.ts";
import { questionsFeature } from "./questions.ts";
import { reviewFeature } from "./review.ts";
import { sessionsFeature } from "./sessions.ts";
import { statusFeature } from "./status.ts";
import { voiceFeature } from "./voice.ts";

/**
 * Every feature of the bot, in menu order. Forwarded commands are refused first (they are
 * someone else's words); other forwarded messages are stored as brain notes before any
 * command feature; the brain takes bare photos (and `/dump` captions) before media takes
 * photos with a goal.
 */
export const FEATURES: FeatureFactory[] = [
  forwardedFeature,
  helpFeature,
  forwardedNoteFeature,
  agentFeature,
  planFeature,
  askFeature,
  brainFeature,
  reviewFeature,
  questionsFeature,
  statusFeature,
  historyFeature,
  projectsFeature,
  voiceFeature,
  mediaFeature,
  sessionsFeature,
  modelFeature,
  commandOutputFeature,
];
