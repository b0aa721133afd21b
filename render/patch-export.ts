import { createHash } from "node:crypto";
import { deflateSync } from "node:zlib";
import { structuredPatch, type StructuredPatchHunk } from "diff";
import type { Changeset, FileChange } from "../core/staging/changeset.ts";
import { isBinary } from "../core/text.ts";
import { hunkHeader } from "./diff-view.ts";
import { visible } from "./visible-text.ts";

/** A file a patch could not carry, and why. */
interface SkippedFile {
  path: string;
  reason: string;
}

/** A git patch of a changeset and the files left out of it (also listed as `#` comments at its top). */
export interface PatchExport {
  patch: string;
  skipped: SkippedFile[];
}

/** Options of a patch export. */
export interface PatchExportOptions {
  /** Only these paths (as in `FileChange.path`), in changeset order; all files when absent. */
  files?: string[];
  /** Time one file's line diff may take before it is written as one whole-file hunk (default 2,000 ms). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 2000;
const CONTEXT = 3;
const NULL_OID = "0".repeat(40);
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The changeset (or the named files of it) as a git-format unified diff that `git apply` accepts. */
export function changesetToPatch(cs: Changeset, files?: string[]): string {
  return exportPatch(cs, files ? { files } : {}).patch;
}

/**
 * Builds the patch and reports the files it cannot carry: those outside the
 * workspace, and modifications or deletions whose base content is not known.
 * Text hunks are built on the exact bytes (CRLF, BOM and a missing final newline
 * survive); binary content goes as `GIT binary patch` literals.
 */
export function exportPatch(cs: Changeset, options: PatchExportOptions = {}): PatchExport {
  const chosen = selectFiles(cs, options.files);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const skipped: SkippedFile[] = [];
  const parts: string[] = [];
  for (const change of chosen) {
    const result = filePatch(change, timeoutMs);
    if (typeof result === "string") parts.push(result);
    else if (result) skipped.push({ path: change.path, reason: result.skip });
  }
  const comments = skipped.length
    ? [
        `# pencil changeset ${visible(cs.id)}: ${skipped.length} file(s) not in this patch`,
        ...skipped.map((s) => `#   ${quotePath(s.path)}: ${s.reason}`),
        "",
      ].join("\n")
    : "";
  return { patch: comments + parts.join(""), skipped };
}

function selectFiles(cs: Changeset, paths: string[] | undefined): FileChange[] {
  if (!paths) return cs.files;
  const known = new Set(cs.files.map((f) => f.path));
  const unknown = paths.filter((p) => !known.has(p));
  if (unknown.length) {
    throw new Error(
      `Changeset ${cs.id} has no file ${unknown.map((p) => JSON.stringify(p)).join(", ")}; ` +
        `pass paths exactly as the review lists them: ${cs.files.map((f) => f.path).join(", ") || "(it has no files)"}.`,
    );
  }
  const wanted = new Set(paths);
  return cs.files.filter((f) => wanted.has(f.path));
}

/** One file's `diff --git` section; `{ skip }` when it cannot be written, null when there is nothing to write. */
function filePatch(change: FileChange, timeoutMs: number): string | { skip: string } | null {
  if (change.path.startsWith("/") || change.path.split("/").includes("..")) {
    return { skip: "outside the workspace; a patch only carries paths inside it" };
  }
  const before = change.kind === "create" ? null : change.before;
  if (before === undefined) {
    return { skip: "its base content is not known (the file changed on disk since it was staged); review it again" };
  }
  const after = change.after?.bytes ?? null;
  const oldMode = change.kind === "create" ? null : gitMode(change.base.mode ?? 0o644);
  const newMode = change.after ? gitMode(change.after.mode) : null;
  const modeChanged = oldMode !== null && newMode !== null && oldMode !== newMode;
  const sameContent = before !== null && after !== null && equalBytes(before, after);
  if (change.kind === "modify" && sameContent && !modeChanged) {
    if (change.base.mode !== null && change.after && change.base.mode !== change.after.mode) {
      return {
        skip: `permission change ${change.base.mode.toString(8)} → ${change.after.mode.toString(8)} cannot be expressed in a git patch`,
      };
    }
    return null;
  }

  const a = quotePath(`a/${change.path}`);
  const b = quotePath(`b/${change.path}`);
  const head = [`diff --git ${a} ${b}`];
  if (change.kind === "create") head.push(`new file mode ${newMode}`);
  else if (change.kind === "delete") head.push(`deleted file mode ${oldMode}`);
  else if (modeChanged) head.push(`old mode ${oldMode}`, `new mode ${newMode}`);
  const oldOid = before ? blobId(before) : NULL_OID;
  const newOid = after ? blobId(after) : NULL_OID;
  if (!sameContent)
    head.push(`index ${oldOid}..${newOid}${change.kind === "modify" && !modeChanged ? ` ${oldMode}` : ""}`);
  if (sameContent || (before?.length ?? 0) + (after?.length ?? 0) === 0) return head.join("\n") + "\n";

  const binary = [before, after].some((bytes) => bytes !== null && (isBinary(bytes) || bytes.includes(0)));
  if (binary)
    return (
      [
        ...head,
        "GIT binary patch",
        binaryLiteral(after ?? new Uint8Array()),
        ...(before ? [binaryLiteral(before)] : []),
      ].join("\n") + "\n"
    );

  const oldText = before ? utf8.decode(before) : "";
  const newText = after ? utf8.decode(after) : "";
  head.push(
    before ? `--- ${a}${tabIfSpace(change.path)}` : "--- /dev/null",
    after ? `+++ ${b}${tabIfSpace(change.path)}` : "+++ /dev/null",
  );
  const hunks = structuredPatch("a", "b", oldText, newText, undefined, undefined, {
    context: CONTEXT,
    timeout: timeoutMs,
  })?.hunks ?? [wholeFileHunk(oldText, newText)];
  for (const hunk of hunks) head.push(hunkHeader(hunk), ...hunk.lines);
  return head.join("\n") + "\n";
}

/** The one hunk that removes every old line and adds every new one: always correct, used when diffing takes too long. */
function wholeFileHunk(oldText: string, newText: string): StructuredPatchHunk {
  const oldLines = linesWithMarker(oldText, "-");
  const newLines = linesWithMarker(newText, "+");
  return {
    oldStart: 1,
    oldLines: oldLines.count,
    newStart: 1,
    newLines: newLines.count,
    lines: [...oldLines.lines, ...newLines.lines],
  };
}

/** Patch lines of a whole text (its line breaks, CRs included, kept), with git's no-final-newline marker. */
function linesWithMarker(text: string, sign: "+" | "-"): { lines: string[]; count: number } {
  if (text === "") return { lines: [], count: 0 };
  const parts = text.split("\n");
  const complete = parts[parts.length - 1] === "";
  if (complete) parts.pop();
  const lines = parts.map((p) => sign + p);
  const count = lines.length;
  if (!complete) lines.push("\\ No newline at end of file");
  return { lines, count };
}

/** The two modes git records for a regular file. */
function gitMode(mode: number): string {
  return (mode & 0o111) !== 0 ? "100755" : "100644";
}

/** Git's blob id: SHA-1 over `blob <size>\0` and the content (git apply checks it for binary patches). */
export function blobId(bytes: Uint8Array): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

/** One `literal` hunk of a `GIT binary patch`: size, then zlib-deflated bytes in git's base85 lines, then a blank line. */
export function binaryLiteral(bytes: Uint8Array): string {
  const data = deflateSync(bytes);
  const lines = [`literal ${bytes.length}`];
  for (let i = 0; i < data.length; i += 52) {
    const chunk = data.subarray(i, Math.min(i + 52, data.length));
    const n = chunk.length;
    const lengthChar = n <= 26 ? String.fromCharCode(0x41 + n - 1) : String.fromCharCode(0x61 + n - 27);
    lines.push(lengthChar + base85(chunk));
  }
  lines.push("");
  return lines.join("\n");
}

const B85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";

/** Git's base85: each 4-byte big-endian group (the last zero-padded) as 5 digits, most significant first. */
export function base85(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 4) {
    let acc = 0;
    for (let j = 0; j < 4; j++) acc = acc * 256 + (bytes[i + j] ?? 0);
    const group = new Array<string>(5);
    for (let k = 4; k >= 0; k--) {
      group[k] = B85[acc % 85]!;
      acc = Math.floor(acc / 85);
    }
    out += group.join("");
  }
  return out;
}

/** A path as git writes it in patch headers: C-quoted (octal for bytes outside printable ASCII) when needed. */
export function quotePath(path: string): string {
  const bytes = new TextEncoder().encode(path);
  if (!bytes.some((b) => b < 0x20 || b >= 0x7f || b === 0x22 || b === 0x5c)) return path;
  const named: Record<number, string> = {
    7: "a",
    8: "b",
    9: "t",
    10: "n",
    11: "v",
    12: "f",
    13: "r",
    34: '"',
    92: "\\",
  };
  let out = '"';
  for (const b of bytes) {
    if (named[b] !== undefined) out += "\\" + named[b];
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += "\\" + b.toString(8).padStart(3, "0");
  }
  return out + '"';
}

/** Git ends a `---`/`+++` name that holds a space with a tab, so the name's end is unambiguous. */
function tabIfSpace(path: string): string {
  return path.includes(" ") ? "\t" : "";
}

function equalBytes(x: Uint8Array, y: Uint8Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
