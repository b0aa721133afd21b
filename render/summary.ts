import pc from "picocolors";
import type { Changeset, FileChange } from "../core/staging/changeset.ts";
import type { ChangeFlag } from "../core/staging/flags.ts";
import { commandRecordLine } from "../core/staging/command-record.ts";
import { intentLine, intentWarns } from "./intent-line.ts";
import { visible } from "./visible-text.ts";
import { wrapText } from "./wrap.ts";

/** One file of a changeset summary: what changed, how much, why to look twice, who wrote it and what it read first. */
export interface FileSummary {
  path: string;
  kind: FileChange["kind"];
  added: number;
  removed: number;
  flags: ChangeFlag[];
  binary: boolean;
  /** The permission change in words (`mode 644 → 755, now executable`); null when the mode does not change. */
  mode: string | null;
  models: string[];
  /** Union of the files read before each tool call that staged it, first read first. */
  readsBefore: string[];
  /** Tools that staged it, in order of first use. */
  tools: string[];
  /** What was repaired in the model's content before it was staged (a fence removed, entities read), in words. */
  repairs: string[];
}

/** Totals over a changeset summary. */
interface SummaryTotals {
  files: number;
  added: number;
  removed: number;
  created: number;
  modified: number;
  deleted: number;
  /** Files carrying at least one flag. */
  flagged: number;
}

/** A changeset reduced to plain data that any front end can format. */
export interface ChangesetSummary {
  id: string;
  goal: string;
  models: string[];
  files: FileSummary[];
  totals: SummaryTotals;
}

/** Read-before paths shown per line in the terminal; the rest are counted, the full list is in the data. */
const READS_SHOWN = 12;
/** Paths wider than this do not widen the path column for every line. */
const PATH_COLUMN_MAX = 48;

/** Summarises a changeset per file (counts, flags, models, tools, read-before provenance) with totals. */
export function summarizeChangeset(cs: Changeset): ChangesetSummary {
  const files = cs.files.map(
    (f): FileSummary => ({
      path: f.path,
      kind: f.kind,
      added: f.added,
      removed: f.removed,
      flags: [...f.flags],
      binary: f.binary,
      mode: modeWords(f),
      models: [...f.models],
      readsBefore: unionInOrder(f.origins.map((o) => o.readsBefore)),
      tools: unionInOrder(f.origins.map((o) => [o.tool])),
      repairs: unionInOrder(f.origins.map((o) => o.repairs ?? [])),
    }),
  );
  const totals: SummaryTotals = {
    files: files.length,
    added: 0,
    removed: 0,
    created: 0,
    modified: 0,
    deleted: 0,
    flagged: 0,
  };
  for (const f of files) {
    totals.added += f.added;
    totals.removed += f.removed;
    if (f.kind === "create") totals.created++;
    else if (f.kind === "delete") totals.deleted++;
    else totals.modified++;
    if (f.flags.length > 0) totals.flagged++;
  }
  return { id: cs.id, goal: cs.goal, models: [...cs.models], files, totals };
}

/**
 * The terminal summary: a totals line, then one line per file with kind, path,
 * `+N -M`, flags, model(s) and "read before: …" provenance, wrapped to `width` when
 * given. All text from files and models is escaped, so nothing in it can drive the terminal.
 */
export function formatSummary(cs: Changeset, options: { color: boolean; width?: number }): string {
  const c = pc.createColors(options.color);
  const s = summarizeChangeset(cs);
  const t = s.totals;
  const kinds = [
    t.created ? `${t.created} created` : "",
    t.modified ? `${t.modified} modified` : "",
    t.deleted ? `${t.deleted} deleted` : "",
  ].filter(Boolean);
  const lines = [
    `${c.bold(`${t.files} ${t.files === 1 ? "file" : "files"}`)}, ${c.green(`+${t.added}`)} ${c.red(`-${t.removed}`)}` +
      (kinds.length ? ` (${kinds.join(", ")})` : "") +
      (t.flagged ? c.yellow(`, ${t.flagged} flagged`) : ""),
  ];
  const shownPaths = s.files.map((f) => visible(f.path));
  // On a narrow terminal the path column gives way: a line then wraps under its path.
  const widest = options.width ? Math.max(12, Math.floor(options.width / 2)) : PATH_COLUMN_MAX;
  const pathWidth = Math.min(PATH_COLUMN_MAX, widest, Math.max(0, ...shownPaths.map((p) => p.length)));
  const counts = s.files.map((f) => (f.binary ? "binary" : `+${f.added} -${f.removed}`));
  const countWidth = Math.max(0, ...counts.map((x) => x.length));
  s.files.forEach((f, i) => {
    const kind = f.kind === "create" ? c.green("create") : f.kind === "delete" ? c.red("delete") : c.yellow("modify");
    const parts = [`  ${kind} ${shownPaths[i]!.padEnd(pathWidth)}  ${colorCounts(counts[i]!.padEnd(countWidth), c)}`];
    if (f.flags.length) parts.push(f.flags.map((flag) => c.red(`[${flag}]`)).join(" "));
    if (f.mode) parts.push(c.yellow(f.mode));
    if (f.models.length) parts.push(c.cyan(f.models.map(visible).join(", ")));
    // The owner replaced the agent's content in their editor (app/edit-staged.ts records it as an origin).
    if (f.tools.includes("edited by you")) parts.push(c.magenta("edited by you"));
    // Reviewed hunk by hunk: what stays staged is the base plus the hunks the owner kept (app/keep-hunks.ts).
    if (f.tools.includes("hunks kept by you")) parts.push(c.magenta("hunks kept by you"));
    // A repair of the model's content is said here; the diff shows exactly what it did.
    if (f.repairs.length) parts.push(c.yellow(`repaired: ${f.repairs.map(visible).join("; ")}`));
    if (f.readsBefore.length) parts.push(c.dim("read before: ") + readsList(f.readsBefore));
    lines.push(parts.join("  "));
  });
  const commands = cs.commands ?? [];
  if (commands.length > 0) {
    lines.push(c.bold(`${commands.length} ${commands.length === 1 ? "command" : "commands"} run:`));
    for (const r of commands)
      lines.push(`  ${(r.outcome === "exited" && r.exitCode === 0 ? c.dim : c.yellow)(visible(commandRecordLine(r)))}`);
  }
  // MCP calls act outside the overlay: the review says which ran, and who let them.
  for (const call of cs.mcpCalls ?? [])
    lines.push(
      c.dim(`  mcp ${call.decision === "deny" ? "refused" : "called"}: `) +
        visible(call.subject.slice(0, 200)) +
        c.dim(` (${call.decision}, by ${call.by})`),
    );
  lines.push(...instructionLines(cs, c));
  // The model's opinion of the diff against the goal: one line, said to be an opinion; it decides nothing.
  if (cs.intent) lines.push((intentWarns(cs.intent) ? c.yellow : c.dim)(visible(intentLine(cs.intent))));
  const text = lines.join("\n");
  return (options.width ? wrapText(text, options.width, " ".repeat(9)) : text) + "\n";
}

/**
 * The `after-instructions` findings: what the agent read before staging that was written
 * to an AI, or hidden, with where it was read and the text quoted. It tells; it decides nothing.
 */
function instructionLines(cs: Changeset, c: ReturnType<typeof pc.createColors>): string[] {
  const found = cs.instructions ?? [];
  if (found.length === 0) return [];
  return [
    c.yellow(
      c.bold("after-instructions: the agent read text addressed to an AI, or hidden text, before these changes:"),
    ),
    ...found.map(
      (f) =>
        `  ${c.yellow("!")} ${visible(f.source)}${f.kind === "hidden" ? c.dim(" (hidden text)") : ""}${f.within ? c.dim(` (in ${f.within})`) : ""}: “${visible(f.quote)}”`,
    ),
  ];
}

/**
 * A file's permission change in words: `mode 644 → 755, now executable`,
 * `mode 755 → 644, no longer executable`, `new, mode 755, executable`; null when
 * the mode stays (or a new file gets a plain one).
 */
function modeWords(f: Pick<FileChange, "kind" | "base" | "after">): string | null {
  if (!f.after) return null;
  const exec = (m: number) => (m & 0o111) !== 0;
  const after = f.after.mode & 0o7777;
  if (f.kind === "create" || f.base.mode === null) {
    return exec(after) || after & 0o7000 ? `new, mode ${octal(after)}${exec(after) ? ", executable" : ""}` : null;
  }
  const before = f.base.mode & 0o7777;
  if (before === after) return null;
  const words = [`mode ${octal(before)} → ${octal(after)}`];
  if (exec(after) && !exec(before)) words.push("now executable");
  if (!exec(after) && exec(before)) words.push("no longer executable");
  return words.join(", ");
}

function octal(mode: number): string {
  return mode.toString(8).padStart(3, "0");
}

/** The read-before list, capped for one terminal line; the count of the rest is always shown. */
function readsList(paths: string[]): string {
  const shown = paths.slice(0, READS_SHOWN).map(visible).join(", ");
  return paths.length > READS_SHOWN ? `${shown} (+${paths.length - READS_SHOWN} more)` : shown;
}

function colorCounts(text: string, c: ReturnType<typeof pc.createColors>): string {
  return text.replace(/\+\d+/, (m) => c.green(m)).replace(/-\d+/, (m) => c.red(m));
}

/** The distinct items of several lists, first occurrence first. */
function unionInOrder(lists: string[][]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const list of lists) {
    for (const item of list) {
      if (!seen.has(item)) {
        seen.add(item);
        out.push(item);
      }
    }
  }
  return out;
}
