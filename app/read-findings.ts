import type { Changeset } from "../core/staging/changeset.ts";
import { type InstructionFinding, scanForInstructions } from "../core/staging/instruction-scan.ts";
import type { StagedEntry } from "../core/staging/overlay.ts";

/** A finding in content the agent read, with where it was read from: `path:line`, a URL, an MCP tool, a note. */
export interface InstructionSource extends InstructionFinding {
  /** Where it was read: `docs/a.md:12`, `https://…`, `MCP server/tool`, `note 42`, `web search "…"`. */
  source: string;
  /** The tool whose answer held it; `document` for a document the owner attached to the goal. */
  tool: string;
  /** Milliseconds since the epoch when the agent got it; changes staged from then on are flagged. */
  at: number;
}

/** Tools whose answers carry content from elsewhere (files, pages, notes, MCP servers) into the model's context. */
const READERS = new Set(["read_file", "search", "fetch_url", "web_search", "recall"]);
/** Findings kept per run. */
const MAX_SOURCES = 20;

/**
 * What a run read that holds instructions addressed to an AI or hidden text. Fed each
 * tool call and its answer; it never changes what the model gets, it only remembers.
 */
export class ReadFindings {
  private readonly inputs = new Map<string, unknown>();
  readonly sources: InstructionSource[] = [];

  call(callId: string, input: unknown): void {
    this.inputs.set(callId, input);
  }

  /**
   * A document the owner attached to the goal (a file sent from the phone): the model reads it in its first message,
   * so text in it addressed to an AI flags what is staged after, like a file the agent read. `name` is the file's
   * name as sent; the source is `document NAME:LINE`.
   */
  document(name: string, text: string, now = Date.now()): void {
    for (const f of scanForInstructions(text)) {
      if (this.sources.length >= MAX_SOURCES) return;
      this.sources.push({ ...f, tool: "document", at: now, source: `document ${name}:${f.line}` });
    }
  }

  result(callId: string, tool: string, ok: boolean, output: string, now = Date.now()): void {
    const input = (this.inputs.get(callId) ?? {}) as Record<string, unknown>;
    this.inputs.delete(callId);
    if (!ok || this.sources.length >= MAX_SOURCES || !(READERS.has(tool) || tool.startsWith("mcp__"))) return;
    const lines = output.split("\n");
    for (const f of scanForInstructions(output)) {
      // read_file's own line numbers are not part of what the file says.
      const quote = tool === "read_file" ? f.quote.replace(/^\d+\t/, "") : f.quote;
      this.sources.push({ ...f, quote, tool, at: now, source: sourceOf(tool, input, lines, f.line) });
      if (this.sources.length >= MAX_SOURCES) return;
    }
  }
}

function sourceOf(tool: string, input: Record<string, unknown>, lines: string[], line: number): string {
  const text = lines[line - 1] ?? "";
  if (tool === "read_file") {
    // read_file numbers its lines (`    12\tcontent`): the file's own line number.
    const n = text.match(/^\s*(\d+)\t/)?.[1];
    return `${String(input.path ?? "?")}${n ? `:${n}` : ""}`;
  }
  if (tool === "search") {
    const hit = text.match(/^(.+?):(\d+):/);
    return hit ? `${hit[1]}:${hit[2]}` : `search ${JSON.stringify(String(input.pattern ?? ""))}`;
  }
  if (tool === "fetch_url") return String(input.url ?? "a fetched page");
  if (tool === "web_search") return `web search ${JSON.stringify(String(input.query ?? ""))}`;
  if (tool === "recall") {
    for (let i = line - 1; i >= 0; i--) {
      const id = lines[i]?.match(/\[#([\w-]+)/)?.[1];
      if (id) return `note ${id}`;
    }
    return "a note (recall)";
  }
  const [, server, name] = tool.split("__");
  return `MCP ${server ?? "?"}/${name ?? "?"}`;
}

/**
 * Flags `after-instructions` on every file of `cs` staged at or after a finding, and
 * records those findings on the changeset for the summary, the card and the page.
 */
export function flagAfterInstructions(
  cs: Changeset,
  staged: readonly StagedEntry[],
  sources: readonly InstructionSource[],
): void {
  if (sources.length === 0) return;
  const first = Math.min(...sources.map((s) => s.at));
  const stagedAt = new Map(staged.map((e) => [e.real, e.stagedAt]));
  let any = false;
  for (const file of cs.files) {
    const at = stagedAt.get(file.real);
    if (at === undefined || at < first) continue;
    if (!file.flags.includes("after-instructions")) file.flags.push("after-instructions");
    any = true;
  }
  if (any) cs.instructions = sources.filter((s) => s.at <= Math.max(...cs.files.map((f) => stagedAt.get(f.real) ?? 0)));
}
