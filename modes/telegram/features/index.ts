import type { FeatureFactory } from "../context.ts";
import { agentFeature } from "./agent.ts";
import { askFeature } from "./ask.ts";
import { forwardedFeature } from "./forwarded.ts";
import { helpFeature } from "./help.ts";
import { historyFeature } from "./history.ts";
import { mediaFeature } from "./media.ts";
import { planFeature } from "./plan.ts";
import { projectsFeature } from "./projects.ts";
import { questionsFeature } from "./questions.ts";
import { reviewFeature } from "./review.ts";
import { statusFeature } from "./status.ts";
import { voiceFeature } from "./voice.ts";

/** Every feature of the bot, in menu order (forwarded first: it keeps a forwarded command from every other feature). A new capability (/dump, /brain) is one more entry here. */
export const FEATURES: FeatureFactory[] = [forwardedFeature, helpFeature, agentFeature, planFeature, askFeature, reviewFeature, questionsFeature, statusFeature, historyFeature, projectsFeature, voiceFeature, mediaFeature];
