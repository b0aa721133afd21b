import pc from "picocolors";
import type { Checkpoint } from "../app/session-replay.ts";
import { visible } from "./visible-text.ts";

/**
 * The checkpoints of a session as text, one block per model step that staged
 * something: its number, time, tools and model, then each file with `+/-`.
 * Reviewed checkpoints (applied or rejected since) are marked: rewind cannot go back to them.
 * With `path`, only the checkpoints that staged that file.
 */
export function formatSteps(checkpoints: Checkpoint[], options: { color?: boolean; path?: string } = {}): string {
  const c = pc.createColors(options.color ?? false);
  // With a path (the review's [s]), only the steps that staged that file.
  if (options.path !== undefined)
    checkpoints = checkpoints.filter((cp) => cp.files.some((f) => f.path === options.path));
  if (checkpoints.length === 0)
    return options.path !== undefined
      ? `No checkpoint of this session staged ${visible(options.path)}.\n`
      : "No checkpoints: no step of this session staged anything.\n";
  const lines: string[] = [];
  for (const cp of checkpoints) {
    const when = cp.at.replace("T", " ").slice(0, 19);
    const mark = cp.reviewed ? c.dim(" (reviewed)") : "";
    lines.push(
      `${c.bold(String(cp.n).padStart(3))}  ${c.dim(when)}  ${cp.tools.map(visible).join(", ") || "-"}${cp.model ? c.dim(`  ${visible(cp.model)}`) : ""}${mark}`,
    );
    for (const f of cp.files) {
      const counts =
        f.kind === "unstaged"
          ? c.dim("unstaged")
          : `${c.green(`+${f.added}`)} ${c.red(`-${f.removed}`)}${f.kind === "modify" ? "" : c.dim(` ${f.kind}`)}`;
      lines.push(`       ${visible(f.path)} ${counts}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
