import type { ModelMessage } from "ai";
import type { ApplyResult } from "../core/apply/apply.ts";
import type { Overlay } from "../core/staging/overlay.ts";
import { displayPath, type Workspace } from "../core/workspace.ts";
import type { Rejection } from "./rejection.ts";
import type { SavedSession } from "./saved-session.ts";

/** A run's sessionMemory: what its saved session says was applied and rejected, and what its overlay stages now. */
export function runMemory(goal: string, session: SavedSession | null, ws: Workspace, overlay: Overlay): string {
  let applied: string[] = [];
  let rejections: Rejection[] = [];
  try {
    const state = session?.state();
    applied = state?.applied ?? [];
    rejections = state?.rejections ?? [];
  } catch {
    // A session that cannot be read still has its goal and overlay.
  }
  const staged = overlay.list().map((e) => displayPath(ws, e.real));
  return sessionMemory(goal, applied, rejections, staged);
}

/** What compaction keeps whatever else goes: the goal, every rejection reason, what was applied and what is staged. */
function sessionMemory(goal: string, applied: string[], rejections: Rejection[], staged: string[]): string {
  return [
    "Session memory (kept when older turns are compacted):",
    `Goal: ${goal}`,
    rejections.length
      ? `The user rejected, with reasons (respect them):\n${rejections.map((r) => `- ${r.path}: ${r.reason}`).join("\n")}`
      : "No rejection reasons so far.",
    `Applied to disk so far: ${applied.join(", ") || "nothing"}.`,
    `Staged now, pending review: ${staged.join(", ") || "nothing"}.`,
  ].join("\n");
}

/** The owner's next request, after what the agent is told first (`notes`: what happened in the review since). */
export function followUpMessage(notes: string[], text: string): ModelMessage {
  return { role: "user", content: [...notes, notes.length ? `The user's next request: ${text}` : text].join("\n") };
}

/** The owner's verdict sent back: what was applied, what conflicted, and each rejection with its reason. */
export function revisionMessage(rejections: Rejection[], applied?: ApplyResult): ModelMessage {
  const lines = [
    "The user reviewed your staged changes.",
    applied && applied.applied.length > 0 ? `Applied to disk: ${applied.applied.join(", ")}.` : "",
    applied && applied.conflicts.length > 0
      ? `Not applied because the files changed on disk meanwhile: ${applied.conflicts.map((c) => c.path).join(", ")}. Read them again before changing them.`
      : "",
    "Rejected, with the user's reasons:",
    ...rejections.map((r) => `- ${r.path}: ${r.reason}`),
    "Revise the rejected changes according to these reasons. Files already applied are on disk now.",
  ].filter((l) => l !== "");
  return { role: "user", content: lines.join("\n") };
}
