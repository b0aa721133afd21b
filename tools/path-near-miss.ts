// Paths a model most likely meant when the one it gave does not exist: the
// same name in another case or directory, or a name a typo or two away.

import { basename, dirname, join } from "node:path";
import type { ToolContext } from "./tool.ts";
import { isSecretName, walk, WalkRules } from "../core/policy/walk.ts";
import { displayPath, isInside, type Workspace } from "../core/workspace.ts";

// Entries looked at while hunting, so a huge tree cannot stall the answer.
const BUDGET = 20_000;
const MAX_SUGGESTIONS = 5;

/** Up to five existing, visible paths near `real` (which does not exist), best first, as the model should write them. */
function nearestPaths(ctx: ToolContext, real: string): string[] {
  if (!isInside(ctx.ws.root, real)) return [];
  const wanted = rel(ctx.ws, real);
  const name = basename(real);
  const lowerName = name.toLowerCase();
  const scored: { path: string; score: number }[] = [];
  const rules = new WalkRules({ fs: ctx.fs, top: ctx.ws.root, visible: (p) => ctx.visible(p) });
  let budget = BUDGET;
  walk(
    ctx.ws.root,
    rules,
    (e) => {
      if (e.kind === "symlink" || isSecretName(e.name)) return --budget > 0;
      const candidate = rel(ctx.ws, e.real);
      const score = closeness(wanted, candidate, lowerName, e.name.toLowerCase(), dirname(real) === dirname(e.real));
      if (score !== null) scored.push({ path: displayPath(ctx.ws, e.real) + (e.kind === "dir" ? "/" : ""), score });
      return --budget > 0;
    },
    ctx.signal,
  );
  return scored
    .sort((a, b) => a.score - b.score || a.path.localeCompare(b.path))
    .slice(0, MAX_SUGGESTIONS)
    .map((s) => s.path);
}

/** Lower is closer; null when the candidate is not a plausible near miss. */
function closeness(
  wanted: string,
  candidate: string,
  name: string,
  candidateName: string,
  sameDir: boolean,
): number | null {
  if (candidate.toLowerCase() === wanted.toLowerCase()) return 0;
  if (candidateName === name) return 1;
  const nameLimit = Math.max(1, Math.min(3, Math.floor(name.length / 4)));
  const byName = editDistance(name, candidateName, nameLimit);
  if (byName !== null) return 2 + byName + (sameDir ? 0 : 1);
  const pathLimit = Math.max(1, Math.min(4, Math.floor(wanted.length / 6)));
  const byPath = editDistance(wanted.toLowerCase(), candidate.toLowerCase(), pathLimit);
  return byPath === null ? null : 3 + byPath;
}

/** Levenshtein distance when it is at most `max`, else null (banded, so long names stay cheap). */
export function editDistance(a: string, b: string, max: number): number | null {
  if (Math.abs(a.length - b.length) > max) return null;
  let prev = new Array<number>(b.length + 1);
  let cur = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (cur[j]! < rowMin) rowMin = cur[j]!;
    }
    if (rowMin > max) return null;
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]! <= max ? prev[b.length]! : null;
}

/** "X does not exist. Did you mean …?" for a tool that needs an existing file; says what else to do when nothing is near. */
export function missingPathMessage(ctx: ToolContext, real: string, display: string, otherwise: string): string {
  const near = nearestPaths(ctx, real);
  if (near.length > 0) return `${display} does not exist. Did you mean: ${near.join(", ")}?`;
  return `${display} does not exist. ${otherwise}`;
}

/** For a write that would create `display`: a refusal naming the existing near-namesakes, or null when there are none. */
export function nearMissRefusal(ctx: ToolContext, real: string, display: string, tool: string): string | null {
  const near = nearestPaths(ctx, real).filter((p) => !p.endsWith("/"));
  if (near.length === 0) return null;
  return `${display} does not exist, and ${tool} would create it. Did you mean: ${near.join(", ")}? Read that file and change it; if you really want a new file named ${display}, use create_file.`;
}

/**
 * A leading "/" naming a path that exists in the workspace (`/src/tax.ts`): the
 * model meant the workspace-relative path. The hint, or null when the path is
 * not of that kind. Nothing outside the workspace is looked at.
 */
export function workspaceRelativeHint(ws: Workspace, path: string, exists: (real: string) => boolean): string | null {
  if (!path.startsWith("/") || path.startsWith("//")) return null;
  const stripped = path.replace(/^\/+/, "");
  if (stripped === "" || isInside(ws.root, path)) return null;
  const candidate = join(ws.root, stripped);
  if (!isInside(ws.root, candidate) || !exists(candidate)) return null;
  return `${path} is an absolute path (from the machine's root). Paths are relative to the workspace: use "${stripped}", which exists. Nothing was done.`;
}

function rel(ws: Workspace, real: string): string {
  return real === ws.root ? "." : real.slice(ws.root.length + 1);
}
