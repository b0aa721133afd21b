import type { RunMode } from "../../agent/prompts.ts";

/** What a caption asks for: a run (its mode and goal), or nothing this feature takes (another feature may). */
export type CaptionIntent = { kind: "goal"; mode: RunMode; goal: string } | { kind: "pass" };

const RUN_COMMAND = /^\/(agent|plan|ask)(?:@\w+)?(?:\s+([\s\S]*))?$/;

/**
 * The one place that routes media by caption (README "Telegram mode"): a caption is a goal (`/plan …` and
 * `/ask …` pick the mode, `/agent …` or plain words an agent run); no caption, or any
 * other command (`/dump`), passes on: a bare photo is a brain note, not a goal.
 */
export function captionIntent(caption: string | undefined): CaptionIntent {
  const text = (caption ?? "").trim();
  if (!text) return { kind: "pass" };
  if (!text.startsWith("/")) return { kind: "goal", mode: "agent", goal: text };
  const match = RUN_COMMAND.exec(text);
  const goal = match?.[2]?.trim();
  return match && goal ? { kind: "goal", mode: match[1] as RunMode, goal } : { kind: "pass" };
}
