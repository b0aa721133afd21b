// Small models call tools by other names (`Read_File`, `str_replace_editor`),
// send JSON with single quotes or trailing commas, misname fields (`file_path`,
// `oldString`) and send numbers as strings. What can be read one way only is
// repaired; the rest gets one readable line, never raw validation JSON. A call
// whose arguments were cut off is never completed by guessing: the model resends.

import { jsonSchema, zodSchema, type Schema, type ToolCallRepairFunction, type ToolSet } from "ai";
import { jsonrepair } from "jsonrepair";
import { z } from "zod";
import type { PencilTool } from "../tools/tool.ts";

// Other names models use for Pencil's tools, compared after lower-casing and dropping `_`, `-` and spaces.
const ALIASES: Record<string, string> = {
  strreplaceeditor: "edit_file",
  strreplace: "edit_file",
  strreplacebasededittool: "edit_file",
  replaceinfile: "edit_file",
  edit: "edit_file",
  editfile: "edit_file",
  applyedit: "edit_file",
  modifyfile: "edit_file",
  searchreplace: "edit_file",
  read: "read_file",
  view: "read_file",
  viewfile: "read_file",
  openfile: "read_file",
  cat: "read_file",
  readfile: "read_file",
  getfile: "read_file",
  ls: "list_files",
  listdir: "list_files",
  listdirectory: "list_files",
  glob: "list_files",
  findfiles: "list_files",
  listfiles: "list_files",
  grep: "search",
  rg: "search",
  ripgrep: "search",
  searchfiles: "search",
  grepsearch: "search",
  codesearch: "search",
  searchcode: "search",
  write: "write_file",
  writefile: "write_file",
  overwritefile: "write_file",
  savefile: "write_file",
  create: "create_file",
  createfile: "create_file",
  newfile: "create_file",
  delete: "delete_file",
  deletefile: "delete_file",
  removefile: "delete_file",
  rm: "delete_file",
  bash: "run_command",
  shell: "run_command",
  exec: "run_command",
  run: "run_command",
  execute: "run_command",
  executecommand: "run_command",
  runcommand: "run_command",
  terminal: "run_command",
};

// Other names for fields, same comparison; a field is renamed only when the real one is absent.
const FIELD_ALIASES: Record<string, string[]> = {
  path: ["filepath", "file", "filename", "targetfile", "pathname", "dir", "directory", "folder"],
  old_string: ["oldstr", "old", "oldtext", "search", "find", "original", "from"],
  new_string: ["newstr", "new", "newtext", "replace", "replacement", "to"],
  content: ["contents", "text", "filecontent", "filetext", "data", "body", "code"],
  command: ["cmd", "script", "commandline"],
  pattern: ["regex", "query", "searchpattern", "grep"],
  replace_all: ["replaceall", "all", "global"],
};

/** Key under which an unreadable call carries its one-line explanation to the seam. */
export const UNREADABLE_CALL = "__pencil_unreadable_call";

const squash = (s: string) => s.toLowerCase().replace(/[\s_\-.]/g, "");

/**
 * Text with the Harmony format's control tokens taken out: gpt-oss on some servers leaks
 * `<|channel|>commentary`, `<|constrain|>json`, `<|call|>` into tool names and arguments.
 */
export function stripHarmony(text: string): string {
  if (!text.includes("<|")) return text;
  const to = /to=(?:functions\.)?([\w\-.]+)/.exec(text);
  const cleaned = text
    .replace(
      /<\|(?:channel|constrain|message|call|end|start|return)\|>(?:\s*(?:commentary|analysis|final|json)\b)?/g,
      " ",
    )
    .trim();
  // "assistant<|channel|>commentary to=functions.read_file": the name is the recipient.
  return to && /^(?:assistant\s*)?to=/.test(cleaned) ? to[1]! : cleaned.replace(/\s+to=\S+/, "").trim();
}

// The editor tool Anthropic's models and SWE-agent use: one tool, a `command` field.
const EDITOR_TOOLS = new Set(["strreplaceeditor", "strreplacebasededittool", "texteditor", "editor"]);

/** The real tool a model-given name stands for, or null: same name in another case or style, or a common alias. */
export function resolveToolName(name: string, available: string[]): string | null {
  if (available.includes(name)) return name;
  name = stripHarmony(name);
  if (available.includes(name)) return name;
  const wanted = squash(name.replace(/^functions\./, ""));
  const direct = available.find((a) => squash(a) === wanted);
  if (direct) return direct;
  const alias = Object.hasOwn(ALIASES, wanted) ? ALIASES[wanted]! : null;
  return alias && available.includes(alias) ? alias : null;
}

/** Arguments text read as a JSON object when only one reading exists; otherwise a one-line reason. */
export function readArguments(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  const trimmed = stripHarmony(text)
    .trim()
    .replace(/^```(?:json)?\s*/i, "")
    .replace(/\s*```$/, "");
  if (trimmed === "") return { ok: true, value: {} };
  const cut = truncation(trimmed);
  if (cut)
    return {
      ok: false,
      message: `your arguments were cut off at ${trimmed.length.toLocaleString("en-US")} characters (${cut}), probably by the output-token limit; nothing was done. Send a smaller change: split it into several calls of a few dozen lines each.`,
    };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    try {
      value = JSON.parse(jsonrepair(trimmed));
    } catch {
      return {
        ok: false,
        message:
          'the arguments are not valid JSON and could not be read unambiguously. Send a JSON object, e.g. {"path": "src/a.ts"}.',
      };
    }
  }
  // Double-encoded: a JSON string holding the object.
  if (typeof value === "string") {
    const inner = readArguments(value);
    return inner.ok
      ? inner
      : { ok: false, message: "the arguments are a JSON string, not an object. Send a JSON object." };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return { ok: false, message: "the arguments must be a JSON object of named fields." };
  return { ok: true, value: value as Record<string, unknown> };
}

/** Where JSON text ends too early: inside a string, or with a value still missing. Null when it is complete up to closing brackets. */
function truncation(text: string): string | null {
  let inString: string | null = null;
  let depth = 0;
  let last = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === "\\") i++;
      else if (c === inString) inString = null;
      continue;
    }
    if (c === '"' || c === "'") inString = c;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    if (!/\s/.test(c)) last = c;
  }
  if (inString) return "it ends inside a string";
  if (depth > 0 && (last === ":" || last === ",")) return "it ends before a value";
  // A number or word at an unclosed end may itself be cut ("5" of "50"): only a closed string or bracket ends safely.
  if (depth > 0 && !`"'}]`.includes(last)) return "it ends inside a value";
  return null;
}

/**
 * The repair hook for the AI SDK: maps a misnamed tool to the real one and reads
 * malformed arguments when unambiguous; an unreadable call goes on to the tool
 * carrying a short reason, which the seam answers without running anything.
 */
export const repairToolCall: ToolCallRepairFunction<ToolSet> = async ({ toolCall, tools }) => {
  const names = Object.keys(tools);
  const read = readArguments(toolCall.input);
  const editor = EDITOR_TOOLS.has(squash(stripHarmony(toolCall.toolName).replace(/^functions\./, "")));
  if (editor && read.ok) {
    const mapped = editorCommand(read.value, names);
    if (!names.includes(mapped.toolName)) return null;
    return { ...toolCall, toolName: mapped.toolName, input: JSON.stringify(mapped.input) };
  }
  const toolName = resolveToolName(toolCall.toolName, names);
  if (toolName === null) return null;
  const input = read.ok ? read.value : { [UNREADABLE_CALL]: `${toolName}: ${read.message}` };
  return { ...toolCall, toolName, input: JSON.stringify(input) };
};

/** A `str_replace_editor` call as the Pencil tool its command means: view → read_file, create → write_file, str_replace and insert → edit_file. */
export function editorCommand(
  args: Record<string, unknown>,
  names: string[],
): { toolName: string; input: Record<string, unknown> } {
  const path = args.path;
  // Without a command, the fields say which one was meant.
  const command =
    typeof args.command === "string"
      ? args.command
      : args.insert_line !== undefined
        ? "insert"
        : args.old_str !== undefined || args.old_string !== undefined
          ? "str_replace"
          : args.file_text !== undefined
            ? "create"
            : "view";
  const unreadable = (why: string) => ({
    toolName: names.includes("edit_file") ? "edit_file" : names[0]!,
    input: { [UNREADABLE_CALL]: why },
  });
  switch (command) {
    case "view": {
      const range = Array.isArray(args.view_range) ? args.view_range.map(Number) : null;
      const input: Record<string, unknown> = { path };
      if (range && Number.isFinite(range[0])) {
        input.offset = range[0];
        if (Number.isFinite(range[1]) && range[1]! >= range[0]!) input.limit = range[1]! - range[0]! + 1;
      }
      return { toolName: "read_file", input };
    }
    case "create":
      return { toolName: "write_file", input: { path, content: args.file_text ?? args.content } };
    case "str_replace":
      return {
        toolName: "edit_file",
        input: { path, old_string: args.old_str ?? args.old_string, new_string: args.new_str ?? args.new_string ?? "" },
      };
    case "insert":
      return {
        toolName: "edit_file",
        input: { path, insert_line: args.insert_line, new_string: args.new_str ?? args.new_string },
      };
    case "undo_edit":
      return unreadable(
        "str_replace_editor: undo_edit is not available here: every change is staged for the user's review. To take a change back, edit the file again (or write_file its earlier content).",
      );
    default:
      return unreadable(
        `str_replace_editor: the command ${JSON.stringify(command || null)} is not one of view, create, str_replace, insert. Use read_file, write_file or edit_file directly.`,
      );
  }
}

/** Inputs found invalid, with the one-line reason the seam answers with. */
const invalid = new WeakMap<object, string>();
/** Inputs that name several paths where one is expected, with one input per path (for tools that read each). */
const spread = new WeakMap<object, unknown[]>();

/** The reason an input reaching `execute` was found unusable, or null when it is the tool's valid input. */
export function invalidReason(input: unknown): string | null {
  return input !== null && typeof input === "object" ? (invalid.get(input) ?? null) : null;
}

/** One input per path when the model gave a list of paths to a tool that reads each; null otherwise. */
export function spreadInputs(input: unknown): unknown[] | null {
  return input !== null && typeof input === "object" ? (spread.get(input) ?? null) : null;
}

/**
 * The tool's schema as the model sees it, with lenient validation: misnamed
 * fields renamed, "true"/"42" read as the boolean or number the field wants.
 * An input that still does not fit is passed on marked with a one-line reason
 * (see invalidReason), so the model reads that rather than raw validation JSON.
 */
export function lenientSchema(t: PencilTool): Schema<unknown> {
  const strict = zodSchema(t.modelSchema ?? t.inputSchema);
  return jsonSchema(() => strict.jsonSchema, {
    validate: (value) => {
      const result = normalizeInput(t, value);
      if (result.ok) return { success: true, value: result.value };
      const carrier = value !== null && typeof value === "object" && !Array.isArray(value) ? value : {};
      invalid.set(carrier, result.message);
      if (result.each) spread.set(carrier, result.each);
      return { success: true, value: carrier };
    },
  });
}

// Keys under which an envelope carries a call's arguments, and its tool name.
const ENVELOPE_ARGS = ["arguments", "parameters", "input", "args", "params"];
const ENVELOPE_NAMES = ["name", "tool", "tool_name", "function"];

/** The input fitted to the tool's schema, or a one-line reason naming the actual mistake. */
export function normalizeInput(
  t: PencilTool,
  value: unknown,
): { ok: true; value: unknown } | { ok: false; message: string; each?: unknown[] } {
  if (value !== null && typeof value === "object" && Object.hasOwn(value, UNREADABLE_CALL)) {
    return { ok: false, message: String((value as Record<string, unknown>)[UNREADABLE_CALL]) };
  }
  // Arguments JSON-encoded twice arrive as a string holding the object.
  if (typeof value === "string") {
    const inner = readArguments(value);
    if (!inner.ok) return { ok: false, message: `${t.name}: ${inner.message}` };
    value = inner.value;
  }
  const schema = t.inputSchema;
  const direct = schema.safeParse(value);
  if (direct.success) return { ok: true, value: direct.data };
  if (!(schema instanceof z.ZodObject) || value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, message: `${t.name}: ${shortIssues(direct.error)}` };
  }
  const shape = schema.shape as Record<string, z.ZodType>;
  let fixed: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const unwrapped = unwrapEnvelope(fixed, shape);
  if (unwrapped) fixed = unwrapped;
  for (const field of Object.keys(shape)) {
    if (Object.hasOwn(fixed, field)) continue;
    const accepted = new Set([squash(field), ...(FIELD_ALIASES[field] ?? [])]);
    const sources = Object.keys(fixed).filter((k) => !Object.hasOwn(shape, k) && accepted.has(squash(k)));
    if (sources.length === 1) {
      fixed[field] = fixed[sources[0]!];
      delete fixed[sources[0]!];
    }
  }
  for (const [field, fieldSchema] of Object.entries(shape)) {
    const v = fixed[field];
    const optional = fieldSchema.safeParse(undefined).success;
    // null for an optional field means "not given".
    if (v === null && optional) {
      delete fixed[field];
      continue;
    }
    if (typeof v !== "string") continue;
    const kind = baseType(fieldSchema);
    if (kind === "boolean" && /^(true|false)$/i.test(v.trim())) fixed[field] = v.trim().toLowerCase() === "true";
    else if (kind === "number" && /^-?\d+(\.\d+)?$/.test(v.trim())) fixed[field] = Number(v.trim());
    else if ((kind === "array" || kind === "object") && /^\s*[[{]/.test(v)) {
      // Stringified JSON inside JSON: `"edits": "[{…}]"`.
      const inner = readJsonValue(v);
      if (inner !== undefined) fixed[field] = inner;
    }
  }
  const again = schema.safeParse(fixed);
  if (again.success) return { ok: true, value: again.data };
  // A list of paths where one is expected: a reading tool reads each, the others are told to call once per file.
  const paths = fixed.path;
  if (Array.isArray(paths) && paths.length > 0 && paths.every((p) => typeof p === "string")) {
    const each = paths.map((path) => ({ ...fixed, path }));
    const fits = each.every((e) => schema.safeParse(e).success);
    const message = `${t.name}: \`path\` was given as a list (${paths.length} paths); it takes one path. Call ${t.name} once per file.`;
    return fits && t.readsEach
      ? { ok: false, message, each: each.map((e) => schema.parse(e)) }
      : { ok: false, message };
  }
  const fields = Object.entries(shape)
    .filter(([k]) => !(t.modelSchema instanceof z.ZodObject) || Object.hasOwn(t.modelSchema.shape, k))
    .map(([k, s]) => `${k}${s.safeParse(undefined).success ? "?" : ""} (${baseType(s)})`)
    .join(", ");
  return { ok: false, message: `${t.name}: ${shortIssues(again.error)}. Its fields: ${fields}.` };
}

/** `{"name": "edit_file", "arguments": {…}}` sent as the arguments themselves: the inner arguments, when none of the tool's own fields is beside them. */
function unwrapEnvelope(
  value: Record<string, unknown>,
  shape: Record<string, z.ZodType>,
): Record<string, unknown> | null {
  if (Object.keys(shape).some((k) => Object.hasOwn(value, k))) return null;
  const argKey = ENVELOPE_ARGS.find((k) => Object.hasOwn(value, k));
  if (!argKey) return null;
  const others = Object.keys(value).filter((k) => k !== argKey);
  if (!others.every((k) => ENVELOPE_NAMES.includes(k) || k === "type" || k === "id")) return null;
  let inner = value[argKey];
  if (typeof inner === "string") inner = readJsonValue(inner);
  return inner !== null && typeof inner === "object" && !Array.isArray(inner)
    ? { ...(inner as Record<string, unknown>) }
    : null;
}

function readJsonValue(text: string): unknown {
  const read = readArguments(`{"v": ${text}}`);
  return read.ok ? read.value.v : undefined;
}

function baseType(schema: z.ZodType): string {
  let s: z.ZodType = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault)
    s = s.unwrap() as z.ZodType;
  return s.def.type;
}

/** Zod issues as one short line: which field, what was wrong. */
function shortIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => {
      if (i.path.length === 0)
        return i.code === "custom" ? i.message : "the arguments must be a JSON object of named fields";
      const field = i.path.join(".");
      if (i.code === "custom") return i.message;
      if (i.code === "invalid_type") {
        const received = /received (\w+)/.exec(i.message)?.[1];
        if (received === "undefined") return `${field} is missing`;
        if (received === "array") return `\`${field}\` was given as a list; it must be a ${i.expected}`;
        if (received === "null") return `\`${field}\` was null; it must be a ${i.expected}`;
        return `${field} must be a ${i.expected}${received ? `, not a ${received}` : ""}`;
      }
      return `${field}: ${i.message}`;
    })
    .join("; ");
}
