import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { embeddedPath } from "../embedded-files.ts";
import type { Node, Parser } from "web-tree-sitter";
import { ShellParserNotLoaded } from "../errors/shell-parser-not-loaded.ts";

/** One `NAME=value` a command line sets; `value` is null when it is only known at run time. */
export interface Assignment {
  name: string;
  value: string | null;
}

/** One simple command as the shell would run it. */
interface SimpleCommand {
  /** Its words (name first), each the static text, or null where it expands at run time ($x, $(…), {a,b}). */
  words: (string | null)[];
  /** The `NAME=value` prefixes that go into its environment. */
  env: Assignment[];
  /** Its source text, for messages. */
  text: string;
}

/** A command line as data: every simple command it would run (pipelines, lists, substitutions, function bodies, all of them). */
export interface ParsedScript {
  commands: SimpleCommand[];
  /** Shell variables it sets or exports outside a command's prefix (`X=1;`, `export X=1`, `declare -x X=1`). */
  assigns: Assignment[];
  /** True when the parser found a syntax error: the line is not judged as a whole. */
  malformed: boolean;
}

let parser: Parser | null = null;
let loading: Promise<void> | null = null;

/**
 * Loads tree-sitter's bash grammar (WebAssembly, from the tree-sitter-bash
 * package) once per process; parseShell needs it. Lazy so that commands which
 * never judge a command line do not pay for it.
 */
export function loadShellParser(): Promise<void> {
  loading ??= (async () => {
    // Imported here, not at the top: start-up of commands that judge no command line stays free of it.
    const { Language, Parser } = await import("web-tree-sitter");
    // The single executable carries both WebAssembly files; from source they are in their packages.
    const runtime = embeddedPath("treeSitterWasm");
    await Parser.init(runtime ? { locateFile: () => runtime } : undefined);
    const grammar =
      embeddedPath("bashGrammar") ?? createRequire(import.meta.url).resolve("tree-sitter-bash/tree-sitter-bash.wasm");
    const bash = await Language.load(new Uint8Array(readFileSync(grammar)));
    const p = new Parser();
    p.setLanguage(bash);
    parser = p;
  })();
  return loading;
}

/**
 * Parses a command line with tree-sitter-bash into the simple commands it
 * would run. A variable is replaced by its value only when the line assigns it
 * exactly once, to a literal, before the use; anything else is run-time (null).
 */
export function parseShell(text: string): ParsedScript {
  return quickParse(text) ?? parseShellTree(text);
}

/** parseShell through tree-sitter always (parseShell takes a faster way for plain lines; tests compare the two). */
export function parseShellTree(text: string): ParsedScript {
  if (parser === null) throw new ShellParserNotLoaded();
  const tree = parser.parse(text);
  if (tree === null) return { commands: [], assigns: [], malformed: true };
  try {
    const root = tree.rootNode;
    const walker = new Walker(literalVariables(root));
    walker.walk(root);
    return { commands: walker.commands, assigns: walker.assigns, malformed: root.hasError };
  } finally {
    tree.delete();
  }
}

/** Variables assigned exactly once in the whole line, at statement level, to a literal: name → (value, where the assignment ends). */
function literalVariables(root: Node): Map<string, { value: string; end: number }> {
  const seen = new Map<string, { value: string | null; end: number; count: number }>();
  const visit = (n: Node, inPrefix: boolean) => {
    if (n.type === "variable_assignment" && !inPrefix) {
      const name = n.childForFieldName("name")?.text ?? "";
      const valueNode = n.childForFieldName("value");
      const value = valueNode ? staticValue(valueNode, EMPTY_VARS) : "";
      const prev = seen.get(name);
      seen.set(name, { value, end: n.endIndex, count: (prev?.count ?? 0) + 1 });
    }
    // `for x in …`, `read x` and the like also set variables: counted so they are never taken as literal.
    if (n.type === "for_statement") {
      const v = n.childForFieldName("variable")?.text;
      if (v) seen.set(v, { value: null, end: 0, count: 2 });
    }
    for (const c of n.namedChildren) if (c) visit(c, n.type === "command");
  };
  visit(root, false);
  const out = new Map<string, { value: string; end: number }>();
  for (const [name, s] of seen) if (s.count === 1 && s.value !== null) out.set(name, { value: s.value, end: s.end });
  return out;
}

const EMPTY_VARS: ReadonlyMap<string, { value: string; end: number }> = new Map();

class Walker {
  readonly commands: SimpleCommand[] = [];
  readonly assigns: Assignment[] = [];

  constructor(private readonly vars: ReadonlyMap<string, { value: string; end: number }>) {}

  walk(n: Node): void {
    switch (n.type) {
      case "command":
        this.command(n);
        // Substitutions inside its words run too.
        for (const c of n.namedChildren) if (c) this.walkInside(c);
        return;
      case "variable_assignment":
        // At statement level (a command's prefixes are taken by command()).
        this.assigns.push(this.assignment(n));
        this.walkInside(n);
        return;
      case "declaration_command":
        for (const c of n.namedChildren) {
          if (c?.type === "variable_assignment") this.assigns.push(this.assignment(c));
          if (c) this.walkInside(c);
        }
        return;
    }
    for (const c of n.namedChildren) if (c) this.walk(c);
  }

  /** Below a command's words only substitutions run commands. */
  private walkInside(n: Node): void {
    if (n.type === "command_substitution" || n.type === "process_substitution") {
      for (const c of n.namedChildren) if (c) this.walk(c);
      return;
    }
    for (const c of n.namedChildren) if (c) this.walkInside(c);
  }

  private command(n: Node): void {
    const words: (string | null)[] = [];
    const env: Assignment[] = [];
    for (const c of n.namedChildren) {
      if (!c) continue;
      if (c.type === "variable_assignment") env.push(this.assignment(c));
      else if (c.type === "command_name") words.push(c.firstNamedChild ? this.value(c.firstNamedChild) : c.text);
      else if (c.type.endsWith("_redirect") || c.type === "comment") continue;
      else words.push(this.value(c));
    }
    this.commands.push({ words, env, text: n.text });
  }

  private assignment(n: Node): Assignment {
    const v = n.childForFieldName("value");
    return { name: n.childForFieldName("name")?.text ?? "", value: v ? this.value(v) : "" };
  }

  private value(n: Node): string | null {
    return staticValue(n, this.vars);
  }
}

/** The text a word stands for, or null when it is only known at run time. */
function staticValue(n: Node, vars: ReadonlyMap<string, { value: string; end: number }>): string | null {
  switch (n.type) {
    case "word":
    case "variable_name":
      // A brace list expands to several words; a leading ~ to a home directory.
      if (/^~|\{[^}]*,[^}]*\}/.test(n.text)) return null;
      return unescapeBare(n.text);
    case "number":
      return n.text;
    case "raw_string":
      return n.text.slice(1, -1);
    case "ansi_c_string":
      return ansiC(n.text.slice(2, -1));
    case "string": {
      let out = "";
      for (const c of n.namedChildren) {
        if (!c) continue;
        const part = c.type === "string_content" ? unescapeDouble(c.text) : staticValue(c, vars);
        if (part === null) return null;
        out += part;
      }
      return out;
    }
    case "concatenation": {
      let out = "";
      for (const c of n.namedChildren) {
        if (!c) continue;
        const part = staticValue(c, vars);
        if (part === null) return null;
        out += part;
      }
      return out;
    }
    case "simple_expansion":
    case "expansion": {
      const name = n.firstNamedChild;
      if (!name || name.type !== "variable_name" || n.namedChildCount !== 1) return null;
      if (n.type === "expansion" && n.text !== "${" + name.text + "}") return null;
      const known = vars.get(name.text);
      return known && known.end <= n.startIndex ? known.value : null;
    }
    default:
      return null;
  }
}

function unescapeBare(text: string): string {
  return text.includes("\\") ? text.replace(/\\\n/g, "").replace(/\\([\s\S])/g, "$1") : text;
}

function unescapeDouble(text: string): string {
  return text.includes("\\") ? text.replace(/\\\n/g, "").replace(/\\([$`"\\])/g, "$1") : text;
}

const C_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

/** The value of a `$'…'` string (octal, hex and unicode escapes too). */
function ansiC(body: string): string | null {
  let bad = false;
  const out = body.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|[\s\S])/g,
    (_, e: string) => {
      if (e[0] === "x" || e[0] === "u" || e[0] === "U") return String.fromCodePoint(parseInt(e.slice(1), 16));
      if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8));
      if (e[0] === "c") {
        bad = true;
        return "";
      }
      return C_ESCAPES[e] ?? `\\${e}`;
    },
  );
  return bad ? null : out;
}

/** Characters of a plain line outside quotes: words and the separators | || && ; & and blanks. */
const PLAIN_LINE = /^[A-Za-z0-9_\-./:=@%+,^*?'" \t|&;]*$/;
/** Words that mean something else at the start of a command: such lines go to tree-sitter. */
const RESERVED: ReadonlySet<string> = new Set([
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "case",
  "esac",
  "for",
  "while",
  "until",
  "function",
  "select",
  "time",
  "coproc",
  "in",
  "!",
]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

/**
 * The parse of a plain line (words, simple quotes without expansions or
 * escapes, and | || && ; & between commands), the same as tree-sitter's but
 * without it; null for anything else, which tree-sitter then parses. Most
 * command lines an agent runs are plain, and judging them is then cheap.
 */
export function quickParse(text: string): ParsedScript | null {
  if (!PLAIN_LINE.test(text)) return null;
  const commands: SimpleCommand[] = [];
  const assigns: Assignment[] = [];
  let words: string[] = [];
  /** Each word as written: only an unquoted NAME= makes an assignment. */
  let raws: string[] = [];
  let start = -1;
  let end = 0;
  let word: string | null = null;
  let wordStart = 0;
  const endWord = (at: number) => {
    if (word === null) return;
    if (words.length === 0) start = wordStart;
    words.push(word);
    raws.push(text.slice(wordStart, at));
    end = at;
    word = null;
  };
  /** Ends a command at a separator; false when there is none to end (a separator with no command before it). */
  const endCommand = (): boolean => {
    if (words.length === 0) return false;
    let k = 0;
    const env: Assignment[] = [];
    while (k < words.length && ASSIGNMENT.test(raws[k]!)) {
      const w = words[k]!;
      env.push({ name: w.slice(0, w.indexOf("=")), value: w.slice(w.indexOf("=") + 1) });
      k++;
    }
    if (k === words.length) assigns.push(...env);
    else if (RESERVED.has(words[k]!)) return false;
    else commands.push({ words: words.slice(k), env, text: text.slice(start, end) });
    words = [];
    raws = [];
    return true;
  };
  let pendingOperator = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      const close = text.indexOf(c, i + 1);
      if (close === -1) return null;
      if (word === null) {
        word = "";
        wordStart = i;
      }
      word += text.slice(i + 1, close);
      i = close;
      continue;
    }
    if (c === " " || c === "\t") {
      endWord(i);
      continue;
    }
    if (c === "|" || c === "&" || c === ";") {
      endWord(i);
      const two = text.slice(i, i + 2);
      if (two === "||" || two === "&&") i++;
      else if (two === "|&" || two === ";;" || two === ";&" || two === "&;" || two === "&|") return null;
      if (!endCommand()) return null;
      // A trailing ; or & ends the line; a trailing | || && leaves it incomplete.
      pendingOperator = c === "|" || two === "&&";
      continue;
    }
    if (word === null) {
      word = "";
      wordStart = i;
    }
    word += c;
    pendingOperator = false;
  }
  endWord(text.length);
  if (words.length > 0) {
    if (!endCommand()) return null;
  } else if (pendingOperator) {
    return null;
  }
  return { commands, assigns, malformed: false };
}
