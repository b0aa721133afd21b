// Checks on new content before it is staged, for create, write and edit alike.
// Small models send a diff where content belongs, wrap a whole file in a
// Markdown fence, HTML-escape code, leave conflict markers, or indent a Makefile
// recipe with spaces. What can be read one way only is repaired and the answer
// says so (the review's diff shows it); the rest is refused with what to do.

import { applyPatch, parsePatch, type StructuredPatch } from "diff";
import { applyHunks, isApplyPatchText, parseApplyPatch } from "./patch-format.ts";
import { PatchError } from "../../core/errors/patch-error.ts";
import { ToolError } from "../../core/errors/tool-error.ts";

/** New content after the checks, with one note per repair made (empty when none). */
export interface CheckedContent {
  text: string;
  notes: string[];
}

// Files whose content is Markdown or markup: a fence or an entity there is meant.
const MARKDOWN = /\.(?:md|markdown|mdx|rst|txt|adoc)$/i;
const MARKUP =
  /\.(?:html?|xhtml|xml|svg|vue|svelte|jsx|tsx|php|erb|ejs|hbs|handlebars|mustache|njk|jinja2?|astro|xsl|plist|rss|atom)$/i;
const PATCH_FILE = /\.(?:diff|patch)$/i;

/** The whole new content of a file (create_file, write_file): fences, patches, conflict markers, entities, indentation, final newline. */
export function checkWholeContent(display: string, before: string | null, content: string): CheckedContent {
  const notes: string[] = [];
  let text = content;
  const fence = unwrapFence(display, text);
  if (fence !== null) {
    text = fence.text;
    notes.push(`the content was wrapped in one \`\`\`${fence.lang} fence, which was removed`);
  }
  const patched = patchAsContent(display, before ?? "", text, "content");
  if (patched !== null) {
    text = patched.text;
    notes.push(patched.note);
  }
  refuseConflictMarkers(display, before ?? "", text);
  const unescaped = unescapeEntities(display, before ?? "", text);
  if (unescaped !== null) {
    text = unescaped.text;
    notes.push(unescaped.note);
  }
  const tabs = keepTabs(display, before, text);
  if (tabs !== null) {
    text = tabs.text;
    notes.push(tabs.note);
  }
  if (before !== null && before.endsWith("\n") && text !== "" && !text.endsWith("\n")) {
    text += "\n";
    notes.push("the file's final newline was kept");
  }
  return { text, notes };
}

/**
 * An edit's new_string: a patch sent as new_string is applied to the whole file
 * (returned as `whole`); otherwise new_string with its fence, entities and
 * indentation repaired. Conflict markers are refused.
 */
export function checkNewString(
  display: string,
  file: string,
  oldString: string,
  newString: string,
): { whole: string | null; newString: string; notes: string[] } {
  const notes: string[] = [];
  const patched = patchAsContent(display, file, newString, "new_string");
  if (patched !== null) return { whole: patched.text, newString, notes: [patched.note] };
  let text = newString;
  const fence = /```/.test(oldString) ? null : unwrapFence(display, text);
  if (fence !== null) {
    text = fence.text.replace(/\n$/, newString.endsWith("\n") ? "\n" : "");
    notes.push(`new_string was wrapped in one \`\`\`${fence.lang} fence, which was removed`);
  }
  refuseConflictMarkers(display, file, text);
  const unescaped = unescapeEntities(display, file, text);
  if (unescaped !== null) {
    text = unescaped.text;
    notes.push(unescaped.note.replace("the content", "new_string"));
  }
  // Spaces in old_string too: a tolerant match re-indents new_string to the file's own indentation.
  const tabs = /^ {2,}\S/m.test(oldString) ? null : keepTabs(display, file, text);
  if (tabs !== null) {
    text = tabs.text;
    notes.push(tabs.note.replace("the content", "new_string"));
  }
  return { whole: null, newString: text, notes };
}

/** The body of a content that is exactly one fenced block, for a file that is not Markdown; null otherwise. */
function unwrapFence(display: string, text: string): { text: string; lang: string } | null {
  if (MARKDOWN.test(display)) return null;
  const m = /^\s*```([\w+#.-]*)[^\n]*\n([\s\S]*?)\n?```\s*$/.exec(text);
  if (!m || m[2]!.includes("```")) return null;
  return { text: `${m[2]!}\n`, lang: m[1]! };
}

/**
 * A unified diff or a `*** Begin Patch` body sent as a file's content: the file
 * with it applied, when it applies cleanly; null when the content is no patch.
 * Throws ToolError with the hunk that fails.
 */
function patchAsContent(
  display: string,
  file: string,
  content: string,
  field: string,
): { text: string; note: string } | null {
  if (PATCH_FILE.test(display)) return null;
  const body = content.replace(/^\s*```[\w-]*\s*\n/, "").replace(/\n```\s*$/, "\n");
  if (isApplyPatchText(body)) {
    try {
      const ops = parseApplyPatch(body);
      const updates = ops.filter((o) => o.kind === "update" || o.kind === "add");
      if (ops.length !== 1 || updates.length !== 1)
        throw new PatchError(
          `it holds ${ops.length} operations; as ${field} only one for this file can be applied. Send it to apply_patch instead.`,
        );
      const op = updates[0]!;
      const text = op.kind === "add" ? op.content : applyHunks(file, op.hunks, display);
      return { text, note: `${field} was an apply_patch body; it was applied as the patch it is` };
    } catch (error) {
      if (!PatchError.isInstance(error)) throw error;
      throw new ToolError(
        `${field} is an apply_patch body, not the file's text, and it cannot be applied to ${display}: ${error.message}`,
      );
    }
  }
  const first = body.split("\n").find((l) => l.trim() !== "") ?? "";
  if (!/^(?:diff --git |--- \S|Index: |@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@)/.test(first)) return null;
  if (!/^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/m.test(body)) return null;
  let patches: StructuredPatch[];
  try {
    // A bare hunk without file headers is read as a patch of this file.
    patches = parsePatch(first.startsWith("@@") ? `--- a/${display}\n+++ b/${display}\n${body}` : body);
  } catch (error) {
    throw new ToolError(
      `${field} looks like a unified diff, not the file's text, but it cannot be read (${error instanceof Error ? error.message : String(error)}). Send the file's text, or use edit_file with old_string and new_string.`,
    );
  }
  const withHunks = patches.filter((p) => p.hunks.length > 0);
  if (withHunks.length !== 1)
    throw new ToolError(
      `${field} is a unified diff of ${withHunks.length} files; only a diff of ${display} can be applied here. Send each file's change separately (edit_file), or use apply_patch.`,
    );
  const patch = withHunks[0]!;
  const result = applyPatch(file, patch);
  if (result !== false)
    return { text: result, note: `${field} was a unified diff; it was applied to ${display} as the patch it is` };
  // Find the first hunk that does not apply, applying them one more at a time.
  let failing = patch.hunks.length - 1;
  for (let k = 1; k <= patch.hunks.length; k++) {
    if (applyPatch(file, { ...patch, hunks: patch.hunks.slice(0, k) }) === false) {
      failing = k - 1;
      break;
    }
  }
  const h = patch.hunks[failing]!;
  const shown = h.lines.slice(0, 12).map((l) => `  ${l}`);
  throw new ToolError(
    [
      `${field} is a unified diff, not the file's text, and hunk ${failing + 1} of ${patch.hunks.length} does not apply to ${display} (its context or "-" lines are not at line ${h.oldStart}):`,
      `  @@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`,
      ...shown,
      ...(h.lines.length > 12 ? [`  … ${h.lines.length - 12} more lines`] : []),
      "Nothing was staged. read_file the lines there, then use edit_file with old_string copied exactly.",
    ].join("\n"),
  );
}

const MARKERS = /^(?:<{7}(?: .*)?|={7}|>{7}(?: .*)?|\|{7}(?: .*)?)$/;

/** Refuses new conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`) that the file did not have. */
function refuseConflictMarkers(display: string, before: string, text: string): void {
  if (!text.includes("<<<<<<<") && !text.includes(">>>>>>>") && !text.includes("=======")) return;
  const had = new Set(before.split("\n").filter((l) => MARKERS.test(l)));
  const lines = text.split("\n");
  const found: string[] = [];
  for (let i = 0; i < lines.length && found.length < 5; i++)
    if (MARKERS.test(lines[i]!) && !had.has(lines[i]!)) found.push(`line ${i + 1}: ${lines[i]!.slice(0, 60)}`);
  // A lone ======= is a heading underline or a separator; markers come as a set.
  if (found.length === 0 || (found.every((f) => /: ={7}$/.test(f)) && !text.includes("<<<<<<<"))) return;
  throw new ToolError(
    `the new text of ${display} has merge-conflict markers (${found.join("; ")}), which would not compile. Nothing was staged. Resolve the conflict: keep the lines you mean and send them without the <<<<<<< / ======= / >>>>>>> lines.`,
  );
}

const ENTITIES: Record<string, string> = {
  "&lt;": "<",
  "&gt;": ">",
  "&amp;": "&",
  "&quot;": '"',
  "&#39;": "'",
  "&#x27;": "'",
  "&apos;": "'",
};

/**
 * HTML entities in new code (`a &lt; b &amp;&amp; c`), read as the characters they
 * stand for when that is unambiguous: the file is not markup, it holds none of
 * these entities itself, and it does use the literal characters (or is new).
 */
function unescapeEntities(display: string, before: string, text: string): { text: string; note: string } | null {
  if (MARKUP.test(display) || MARKDOWN.test(display)) return null;
  const found = text.match(/&(?:lt|gt|amp|quot|apos|#39|#x27);/g);
  if (!found) return null;
  if (/&(?:lt|gt|amp|quot|apos|#39|#x27);/.test(before)) return null;
  // An entity inside a string or regex literal may be meant (an escapeHtml function): then nothing is read.
  if (inLiteral(text)) return null;
  const kinds = [...new Set(found)];
  const unescaped = text.replace(/&(?:lt|gt|amp|quot|apos|#39|#x27);/g, (e) => ENTITIES[e]!);
  return {
    text: unescaped,
    note: `the content had HTML entities (${kinds.join(" ")}) where code has the characters; they were read as ${kinds.map((k) => ENTITIES[k]).join(" ")}`,
  };
}

/** True when an entity stands inside a quoted string or a regex literal on its line. */
function inLiteral(text: string): boolean {
  for (const line of text.split("\n")) {
    if (!line.includes("&")) continue;
    const literals = line.match(/(["'`])(?:\\.|(?!\1).)*\1|\/(?:\\.|[^/\n])+\/[gimsuy]*/g) ?? [];
    if (literals.some((l) => /&(?:lt|gt|amp|quot|apos|#39|#x27);/.test(l))) return true;
  }
  return false;
}

/**
 * Tabs where the file needs them: a Makefile recipe line must start with a tab,
 * and a Go file (gofmt) or any file indented only with tabs keeps tabs. Lines of
 * the new text indented with spaces get tabs instead; null when nothing changes.
 */
function keepTabs(display: string, before: string | null, text: string): { text: string; note: string } | null {
  const name = display.split("/").pop() ?? display;
  const makefile = /^(?:GNU)?[Mm]akefile$|\.mk$/.test(name);
  const lines = text.split("\n");
  if (makefile) {
    let changed = 0;
    let inRule = false;
    const out = lines.map((l) => {
      if (/^[^\s#][^=]*:(?!=)/.test(l)) inRule = true;
      else if (l.trim() === "") return l;
      else if (!/^\s/.test(l)) inRule = false;
      if (inRule && /^ {2,}\S/.test(l)) {
        changed++;
        return `\t${l.trimStart()}`;
      }
      return l;
    });
    return changed > 0
      ? {
          text: out.join("\n"),
          note: `${changed} Makefile recipe line${changed === 1 ? "" : "s"} indented with spaces now start with a tab, as make requires`,
        }
      : null;
  }
  const beforeLines = (before ?? "").split("\n");
  const tabbed = beforeLines.filter((l) => l.startsWith("\t")).length;
  const spaced = beforeLines.filter((l) => /^ {2,}\S/.test(l)).length;
  const go = /\.go$/.test(name);
  if (!(go || (tabbed >= 3 && spaced === 0))) return null;
  const unit = spaceUnit(lines);
  if (unit === 0) return null;
  let changed = 0;
  const out = lines.map((l) => {
    const lead = /^ +/.exec(l)?.[0] ?? "";
    if (lead.length < unit || lead.length % unit !== 0 || l.trim() === "") return l;
    changed++;
    return "\t".repeat(lead.length / unit) + l.slice(lead.length);
  });
  return changed > 0
    ? {
        text: out.join("\n"),
        note: `${changed} line${changed === 1 ? "" : "s"} indented with spaces were indented with tabs, as the rest of ${display} is`,
      }
    : null;
}

/** Spaces per indentation level in `lines` (the smallest leading run that every indented line is a multiple of), 0 when none. */
function spaceUnit(lines: string[]): number {
  const leads = lines.map((l) => /^ +(?=\S)/.exec(l)?.[0].length ?? 0).filter((n) => n > 0);
  if (leads.length === 0) return 0;
  const min = Math.min(...leads);
  return leads.every((n) => n % min === 0) ? min : 0;
}
