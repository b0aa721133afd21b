// Models served without native tool calling (Ollama's qwen2.5-coder and Llama
// templates, a proxy that drops `tools`) write their calls as text: bare JSON
// `{"name":…,"arguments":…}`, Hermes/Qwen `<tool_call>…</tool_call>`, Llama's
// `<function=name>{…}</function>` or Qwen3-coder's `<parameter=…>` tags, or a
// fenced JSON block. This finds them in a reply; the caller decides to run them.

import { jsonrepair } from "jsonrepair";
import { stripHarmony } from "./tool-call-repair.ts";

/** A tool call found in a reply's text: the name as written, its arguments, and the text it was read from. */
interface TextToolCall {
  name: string;
  input: unknown;
  raw: string;
  /** True when the text is unmistakably a call (a tag, or an `arguments` key), not merely JSON with a `name`. */
  explicit: boolean;
}

/** What a reply's text holds: the calls written in it, and the prose around them. */
export interface TextCalls {
  calls: TextToolCall[];
  prose: string;
}

// Keys under which a call's arguments arrive, in the order they are looked for.
const ARGUMENT_KEYS = ["arguments", "parameters", "input", "args", "params"];
const NAME_KEYS = ["name", "tool", "tool_name", "function", "recipient_name"];

/** The calls written as text in `text`, or null when it holds none (prose, or code that is not a call). */
export function findTextToolCalls(text: string): TextCalls | null {
  const calls: TextToolCall[] = [];
  let prose = text;
  const take = (pattern: RegExp, read: (m: RegExpExecArray) => TextToolCall | null) => {
    prose = prose.replace(pattern, (...args) => {
      const m = args as unknown as RegExpExecArray;
      const call = read(m);
      if (!call) return m[0];
      calls.push(call);
      return "";
    });
  };
  // <tool_call>{…}</tool_call> (Hermes, Qwen 2.5); the closing tag may be missing at the end of a reply.
  take(/<tool_call>\s*([\s\S]*?)\s*(?:<\/tool_call>|$)/g, (m) => explicit(callFromJson(m[1]!, m[0])));
  // <function=name>{…}</function> (Llama 3.1) or <function=name><parameter=p>v</parameter></function> (Qwen3-coder).
  take(/<function=([\w.\-:]+)>\s*([\s\S]*?)\s*(?:<\/function>|$)/g, (m) => {
    const body = m[2]!;
    const params = [...body.matchAll(/<parameter=([\w-]+)>\n?([\s\S]*?)\n?<\/parameter>/g)];
    const name = stripHarmony(m[1]!);
    if (params.length > 0)
      return { name, input: Object.fromEntries(params.map((p) => [p[1], p[2]])), raw: m[0], explicit: true };
    const input = body.trim() === "" ? {} : readJson(body);
    return input !== undefined && isRecord(input) ? { name, input, raw: m[0], explicit: true } : null;
  });
  // ```json {"name": …} ``` (any fence language, or none).
  take(/```[\w-]*\s*\n?([\s\S]*?)```/g, (m) => callFromJson(m[1]!, m[0]));
  // The whole reply (or its last line) is the JSON of a call.
  const trimmed = prose.trim();
  if (calls.length === 0 && trimmed.startsWith("{")) {
    const call = callFromJson(trimmed, trimmed);
    if (call) {
      calls.push(call);
      prose = "";
    }
  }
  if (calls.length === 0) {
    const start = prose.lastIndexOf('\n{"name"');
    if (start !== -1) {
      const call = callFromJson(prose.slice(start + 1), prose.slice(start + 1));
      if (call) {
        calls.push(call);
        prose = prose.slice(0, start);
      }
    }
  }
  return calls.length > 0 ? { calls, prose: prose.trim() } : null;
}

/** A call from JSON text holding `{name, arguments}` (or a list of them: the first is taken); null when it is not one. */
function callFromJson(text: string, raw: string): TextToolCall | null {
  let read = readJson(text);
  if (Array.isArray(read)) read = read[0];
  if (!isRecord(read)) return null;
  // OpenAI's own shape: {"type":"function","function":{"name":…,"arguments":"…"}}.
  const value: Record<string, any> =
    isRecord(read.function) && typeof read.function.name === "string" ? read.function : read;
  const nameKey = NAME_KEYS.find((k) => typeof value[k] === "string");
  if (!nameKey) return null;
  const argKey = ARGUMENT_KEYS.find((k) => Object.hasOwn(value, k));
  let input: unknown = argKey
    ? value[argKey]
    : Object.fromEntries(Object.entries(value).filter(([k]) => k !== nameKey));
  if (typeof input === "string") input = readJson(input) ?? input;
  return { name: stripHarmony(String(value[nameKey])), input, raw, explicit: argKey !== undefined };
}

function explicit(call: TextToolCall | null): TextToolCall | null {
  return call ? { ...call, explicit: true } : null;
}

function readJson(text: string): unknown {
  const t = stripHarmony(text).trim();
  try {
    return JSON.parse(t);
  } catch {
    try {
      return JSON.parse(jsonrepair(t));
    } catch {
      return undefined;
    }
  }
}

function isRecord(v: unknown): v is Record<string, any> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
