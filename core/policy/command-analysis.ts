import { parseShell, type Assignment } from "./shell-parse.ts";

/** One command a line would run, after the wrappers around it are taken off. */
export interface CommandPart {
  /** The forms it was seen as, outermost first: as written, then after each wrapper (sudo, env, timeout, sh -c…) or global option (git -C) came off. */
  forms: string[];
  /** The words of the command actually run (the last form); null where a word is only known at run time. */
  words: (string | null)[];
  /** Why the command actually run cannot be known before it runs ($g push, eval $x, a shell reading its input), or null. */
  opaque: string | null;
  /** Run through sudo or doas. */
  privileged: boolean;
}

/** A command line as the rules judge it. */
export interface CommandAnalysis {
  parts: CommandPart[];
  /** Settings that change what code programs load (LD_PRELOAD=…, NODE_OPTIONS=…, PATH=…, git -c …), as written. */
  loaders: string[];
  /** The line does not parse as shell. */
  malformed: boolean;
}

/**
 * Environment variables that change which code a program loads or runs:
 * setting one (as a prefix, with env, export or a plain assignment) is never
 * covered by an allow rule.
 */
const LOADER_VARIABLES: ReadonlySet<string> = new Set([
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "LD_AUDIT",
  "NODE_OPTIONS",
  "NODE_PATH",
  "PYTHONPATH",
  "PYTHONSTARTUP",
  "PYTHONHOME",
  "PATH",
  "GIT_SSH_COMMAND",
  "GIT_SSH",
  "GIT_EXEC_PATH",
  "GIT_CONFIG",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_SYSTEM",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG_COUNT",
  "GIT_ASKPASS",
  "GIT_EDITOR",
  "GIT_PAGER",
  "GIT_EXTERNAL_DIFF",
  "BASH_ENV",
  "ENV",
  "PROMPT_COMMAND",
  "IFS",
  "SHELLOPTS",
  "BASHOPTS",
  "PERL5LIB",
  "PERL5OPT",
  "RUBYOPT",
  "RUBYLIB",
  "JAVA_TOOL_OPTIONS",
  "_JAVA_OPTIONS",
  "BUN_OPTIONS",
  "NODE_EXTRA_CA_CERTS",
  "EDITOR",
  "VISUAL",
  "PAGER",
  "SSH_ASKPASS",
]);

const loaderName = (name: string) =>
  LOADER_VARIABLES.has(name) || name.startsWith("LD_") || name.startsWith("DYLD_") || name.startsWith("GIT_CONFIG_");

/** Options of a wrapper: short letters and long names that take the next word as their value. */
interface OptionSpec {
  short: string;
  long: readonly string[];
}

const NONE: OptionSpec = { short: "", long: [] };
/** Wrappers that run the rest of their words as a command, with the options they take before it. */
const WRAPPERS: Record<string, OptionSpec> = {
  sudo: {
    short: "ugCDprtUTRh",
    long: [
      "--user",
      "--group",
      "--chdir",
      "--prompt",
      "--role",
      "--type",
      "--other-user",
      "--command-timeout",
      "--close-from",
      "--host",
      "--chroot",
    ],
  },
  doas: { short: "uC", long: [] },
  env: { short: "uCS", long: ["--unset", "--chdir", "--split-string"] },
  timeout: { short: "sk", long: ["--signal", "--kill-after"] },
  nice: { short: "n", long: ["--adjustment"] },
  nohup: NONE,
  setsid: NONE,
  builtin: NONE,
  time: { short: "fo", long: ["--format", "--output"] },
  command: NONE,
  exec: { short: "a", long: [] },
  stdbuf: { short: "ioe", long: ["--input", "--output", "--error"] },
  ionice: { short: "cnpPu", long: ["--class", "--classdata", "--pid", "--pgid", "--uid"] },
  chronic: NONE,
  xargs: {
    short: "adEILnPs",
    long: [
      "--arg-file",
      "--delimiter",
      "--max-lines",
      "--max-args",
      "--max-procs",
      "--max-chars",
      "--process-slot-var",
    ],
  },
};
const SHELLS: ReadonlySet<string> = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "busybox-sh"]);
const SHELL_OPTIONS: OptionSpec = { short: "oO", long: ["--rcfile", "--init-file"] };
/** Global options of tools with subcommands, taken off so rules see the subcommand (`git -C . push` is `git push`). */
const GLOBALS: Record<string, OptionSpec> = {
  git: { short: "Cc", long: ["--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"] },
  npm: {
    short: "Cw",
    long: ["--prefix", "--workspace", "--loglevel", "--registry", "--userconfig", "--globalconfig", "--cache"],
  },
  npx: { short: "Cw", long: ["--prefix", "--workspace", "--package"] },
  pnpm: { short: "CwF", long: ["--dir", "--prefix", "--filter", "--workspace", "--loglevel", "--registry"] },
  yarn: { short: "", long: ["--cwd", "--registry"] },
  bun: { short: "", long: ["--cwd", "--config", "--registry"] },
  bunx: { short: "", long: ["--cwd"] },
  docker: {
    short: "Hcl",
    long: ["--host", "--context", "--config", "--log-level", "--tlscacert", "--tlscert", "--tlskey"],
  },
  podman: { short: "", long: ["--url", "--connection", "--root", "--runroot", "--log-level"] },
  gh: { short: "R", long: ["--repo", "--hostname"] },
};
/** Tools whose second word picks what they do: a run-time second word makes the command unknown. */
const SUBCOMMAND_TOOLS: ReadonlySet<string> = new Set([
  ...Object.keys(GLOBALS),
  "cargo",
  "go",
  "kubectl",
  "helm",
  "pip",
  "pip3",
  "uv",
  "poetry",
  "make",
  "deno",
]);
const MAX_DEPTH = 4;

/** Parses a command line and resolves each simple command to the one actually run (needs loadShellParser first). */
export function analyzeCommand(text: string): CommandAnalysis {
  const out: CommandAnalysis = { parts: [], loaders: [], malformed: false };
  analyzeInto(text, [], 0, out);
  return out;
}

function analyzeInto(text: string, outer: string[], depth: number, out: CommandAnalysis): void {
  if (depth > MAX_DEPTH) {
    out.parts.push({
      forms: [...outer],
      words: [null],
      opaque: "it nests shells too deeply to be read",
      privileged: false,
    });
    return;
  }
  const script = parseShell(text);
  if (script.malformed) out.malformed = true;
  noteLoaders(script.assigns, out.loaders);
  for (const c of script.commands) {
    noteLoaders(c.env, out.loaders);
    resolve(c.words, outer, depth, false, out);
  }
}

function noteLoaders(assigns: readonly Assignment[], loaders: string[]): void {
  for (const a of assigns) if (loaderName(a.name)) loaders.push(`${a.name}=${a.value ?? "…"}`);
}

/** The words as text: a run-time word shows as `…`. */
export function formText(words: readonly (string | null)[]): string {
  return words.map((w) => (w === null ? "…" : w)).join(" ");
}

function resolve(
  start: (string | null)[],
  outer: string[],
  depth: number,
  privilegedIn: boolean,
  out: CommandAnalysis,
): void {
  let words = start;
  let privileged = privilegedIn;
  const forms = [...outer];
  const done = (opaque: string | null): void => {
    out.parts.push({ forms, words, opaque, privileged });
  };
  for (let round = 0; round < 32; round++) {
    if (words.length === 0) return; // `exec` or `command` alone: nothing runs
    forms.push(formText(words));
    const first = words[0]!;
    if (first === null) return done("its command name is only known when it runs");
    const name = first.includes("/") ? first.slice(first.lastIndexOf("/") + 1) : first;
    if (name !== first) {
      // `/usr/bin/git push` is `git push` to the rules; a path to any other program stays as written for allow rules.
      const bare = [name, ...words.slice(1)];
      forms.push(formText(bare));
      if (WRAPPERS[name] || SHELLS.has(name) || GLOBALS[name] || name === "eval" || name === "find") words = bare;
    }
    const wrapper = WRAPPERS[name];
    if (wrapper) {
      if (name === "command" && words.slice(1).some((w) => w === "-v" || w === "-V")) return done(null);
      if (name === "sudo" || name === "doas") privileged = true;
      let i = skipOptions(words, 1, wrapper);
      if (i < 0) return done("its options are only known when it runs");
      if (name === "env") {
        // -S splits its value into words; a leading `VAR=value` sets the environment.
        const split = splitStringOption(words);
        if (split === undefined) return done("its -S string is only known when it runs");
        if (split !== null) {
          words = [...split, ...words.slice(i)];
          i = 0;
        }
      }
      if (name === "env" || name === "sudo") {
        while (i < words.length && typeof words[i] === "string" && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!)) {
          const w = words[i] as string;
          const eq = w.indexOf("=");
          noteLoaders([{ name: w.slice(0, eq), value: w.slice(eq + 1) }], out.loaders);
          i++;
        }
        if (words[i] === null) return done("its command is only known when it runs");
      }
      if (name === "timeout") i++; // the duration
      const rest = words.slice(i);
      if (rest.length === 0) {
        // xargs with no command runs echo; the others alone run nothing (env alone prints the environment).
        words = name === "xargs" ? ["echo"] : words;
        if (name !== "xargs") return done(null);
        continue;
      }
      words = rest;
      continue;
    }
    if (SHELLS.has(name)) return shellC(words, forms, depth, privileged, out);
    const interpreter = interpreterOf(name);
    if (interpreter) return done(programFromInput(words, interpreter));
    if (name === "eval") {
      const args = words.slice(1);
      if (args.some((w) => w === null)) return done("eval runs text only known when it runs");
      return analyzeInto(args.join(" "), forms, depth + 1, out);
    }
    if (name === "source" || name === ".") return done("it runs the commands of a file in the shell itself");
    if (name === "find") findExec(words, forms, depth, privileged, out);
    const globals = GLOBALS[name];
    if (globals) {
      const i = skipGlobals(name, words, globals, out);
      if (i < 0) return done("its options are only known when it runs");
      if (i > 1) {
        words = [name, ...words.slice(i)];
        continue;
      }
    }
    if (SUBCOMMAND_TOOLS.has(name) && words.length > 1 && words[1] === null)
      return done("what it does is only known when it runs");
    return done(null);
  }
  return done("its wrappers nest too deeply to be read");
}

/** Index of the first word after `from` that is not an option of `spec` (-1 when an option position is a run-time word). */
function skipOptions(words: readonly (string | null)[], from: number, spec: OptionSpec): number {
  let i = from;
  while (i < words.length) {
    const w = words[i] as string | null;
    if (w === null) return -1;
    if (w === "--") return i + 1;
    if (!w.startsWith("-") || w === "-") return i;
    if (w.startsWith("--")) {
      i += !w.includes("=") && spec.long.includes(w) ? 2 : 1;
      continue;
    }
    let takesNext = false;
    for (let k = 1; k < w.length; k++) {
      if (spec.short.includes(w[k]!)) {
        takesNext = k === w.length - 1;
        break;
      }
    }
    i += takesNext ? 2 : 1;
  }
  return i;
}

/** env -S STRING / --split-string=STRING: its words (null when none given, undefined when only known at run time). */
function splitStringOption(words: readonly (string | null)[]): (string | null)[] | null | undefined {
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string | null;
    if (w === null) return undefined;
    let value: string | null | undefined;
    if (w === "-S" || w === "--split-string") value = words[i + 1];
    else if (w.startsWith("--split-string=")) value = w.slice("--split-string=".length);
    else if (/^-[^-]*S./.test(w)) value = w.slice(w.indexOf("S") + 1);
    else if (!w.startsWith("-")) return null;
    else continue;
    if (value === null || value === undefined) return undefined;
    return value.split(/\s+/).filter(Boolean);
  }
  return null;
}

/** `sh -c STRING`: the string parsed as a command line; a shell with a script file is that command; one reading its input is opaque. */
function shellC(
  words: (string | null)[],
  forms: string[],
  depth: number,
  privileged: boolean,
  out: CommandAnalysis,
): void {
  let hasC = false;
  let i = 1;
  while (i < words.length) {
    const w = words[i] as string | null;
    if (w === null) {
      out.parts.push({ forms, words, opaque: "its options are only known when it runs", privileged });
      return;
    }
    if (w === "--" || w === "-") {
      i++;
      break;
    }
    if (!/^[-+]/.test(w)) break;
    if (w.startsWith("--")) i += SHELL_OPTIONS.long.includes(w) ? 2 : 1;
    else {
      if (w.startsWith("-") && w.includes("c")) hasC = true;
      // -s: the commands come from standard input, the words after it are only the script's arguments.
      else if (w.startsWith("-") && w.includes("s")) {
        out.parts.push({ forms, words, opaque: STDIN_PROGRAM, privileged });
        return;
      }
      i += /[oO]$/.test(w) ? 2 : 1;
    }
  }
  if (hasC) {
    const script = words[i];
    if (script === null || script === undefined) {
      out.parts.push({
        forms,
        words,
        opaque:
          script === null ? "it runs a command string only known when it runs" : "it has -c but no command string",
        privileged,
      });
      return;
    }
    analyzeInto(script, forms, depth + 1, out);
    return;
  }
  const opaque = i >= words.length ? STDIN_PROGRAM : null;
  out.parts.push({ forms, words, opaque, privileged });
}

const STDIN_PROGRAM = "a shell reading commands from its input runs what only that input says";
const INPUT_PROGRAM =
  "it reads its program from its input, a shell reading its input by another name, and runs what only that input says";

/**
 * How an interpreter is told where its program is: options whose next word (or the rest of the word) is the program
 * text or its file (`-c`, `-e`, php's `-f`), options that take some other value (so that value is not mistaken for
 * the script), options that run something other than a program text (`-m module`, `--version`), first words that
 * come before the script (`deno run`, `deno eval`), and whether it reads its program from standard input when given
 * no script.
 */
interface InterpreterSpec {
  inline: readonly string[];
  valued: readonly string[];
  /** Options after which no program is read: a module, a test runner, the version or the help. */
  other: readonly string[];
  subcommands?: Record<string, { inline: boolean }>;
  stdinWithoutScript: boolean;
}

const INFO = ["--version", "--help", "-h", "-V"];
const INTERPRETERS: [RegExp, InterpreterSpec][] = [
  [
    /^(python|pypy)[0-9.]*$/,
    { inline: ["-c"], valued: ["-W", "-X", "-Q"], other: ["-m", ...INFO], stdinWithoutScript: true },
  ],
  [
    /^(node|nodejs)$/,
    {
      inline: ["-e", "--eval", "-p", "--print"],
      valued: [
        "-r",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "-C",
        "--conditions",
        "--input-type",
      ],
      other: ["--test", "--run", "-v", "-i", "--interactive", ...INFO],
      stdinWithoutScript: true,
    },
  ],
  [
    /^perl[0-9.]*$/,
    { inline: ["-e", "-E"], valued: ["-I", "-M", "-m"], other: ["-v", ...INFO], stdinWithoutScript: true },
  ],
  [/^ruby[0-9.]*$/, { inline: ["-e"], valued: ["-I", "-r", "-C", "-E"], other: INFO, stdinWithoutScript: true }],
  [
    /^php[0-9.]*$/,
    { inline: ["-r", "-f"], valued: ["-d", "-c", "-z"], other: ["-v", "-m", "-i", ...INFO], stdinWithoutScript: true },
  ],
  [/^(lua[0-9.]*|luajit)$/, { inline: ["-e"], valued: ["-l"], other: ["-v", "-i", ...INFO], stdinWithoutScript: true }],
  [
    /^deno$/,
    {
      inline: [],
      valued: ["--config", "-c", "--import-map", "--location", "--cert"],
      other: INFO,
      subcommands: { run: { inline: false }, eval: { inline: true } },
      stdinWithoutScript: false,
    },
  ],
  [
    /^bun$/,
    {
      inline: ["-e", "--eval", "-p", "--print"],
      valued: ["--cwd", "--config", "-r", "--preload"],
      other: INFO,
      subcommands: { run: { inline: false } },
      stdinWithoutScript: false,
    },
  ],
];

function interpreterOf(name: string): InterpreterSpec | null {
  return INTERPRETERS.find(([re]) => re.test(name))?.[1] ?? null;
}

/** What an interpreter's program word says: read from input (`-`), only known at run time, or written (judged as any command). */
function programWord(word: string | null | undefined): string | null {
  if (word === null) return "it runs a program only known when it runs";
  return word === "-" ? INPUT_PROGRAM : null;
}

/**
 * Whether an interpreter reads its program from its input or from text only known when it runs (`python3 -`,
 * `node -`, `perl` with no script, `python3 -c "$(curl …)"`, `deno run -`, `bun -`): that is a shell reading its
 * input, whatever the rules say. A script file or literal program text is judged like any command.
 */
function programFromInput(words: readonly (string | null)[], spec: InterpreterSpec): string | null {
  let i = 1;
  let stdin = spec.stdinWithoutScript;
  const sub = spec.subcommands;
  if (sub) {
    const w = words[1];
    if (w === null) return "what it runs is only known when it runs";
    if (w !== undefined && sub[w]) {
      // `deno eval TEXT` takes its program as its first word; `deno run`/`bun run` a file, or `-` for standard input.
      if (sub[w].inline) return programWord(words.slice(2).find((x) => x === null || !x.startsWith("-")));
      i = 2;
      stdin = false;
    } else if (w !== undefined && w !== "-" && !w.startsWith("-")) return null; // `bun test`, `bun x.ts`, `deno fmt`
  }
  for (; i < words.length; i++) {
    const w = words[i] as string | null;
    if (w === null) return "its program or its options are only known when it runs";
    if (w === "-") return INPUT_PROGRAM;
    if (w === "--") return words[i + 1] === undefined ? (stdin ? INPUT_PROGRAM : null) : programWord(words[i + 1]);
    if (!w.startsWith("-")) return null; // the script file
    if (w.startsWith("--")) {
      const eq = w.indexOf("=");
      const flag = eq === -1 ? w : w.slice(0, eq);
      if (spec.other.includes(flag)) return null;
      if (spec.inline.includes(flag)) return eq === -1 ? programWord(words[i + 1]) : programWord(w.slice(eq + 1));
      if (spec.valued.includes(flag) && eq === -1) {
        if (words[i + 1] === null) return "its options are only known when it runs";
        i++;
      }
      continue;
    }
    // A bundle of short options (`-ne`, `-uc`, `-MFoo`): a letter that takes a value takes the rest of the word, or the next.
    if (spec.other.includes(w)) return null;
    for (let k = 1; k < w.length; k++) {
      const opt = `-${w[k]}`;
      const rest = w.slice(k + 1);
      if (spec.other.includes(opt) && (opt === "-m" || rest === "")) return null;
      if (spec.inline.includes(opt)) return programWord(rest !== "" ? rest : words[i + 1]);
      if (spec.valued.includes(opt)) {
        if (rest === "") {
          if (words[i + 1] === null) return "its options are only known when it runs";
          i++;
        }
        break;
      }
    }
  }
  return stdin ? INPUT_PROGRAM : null;
}

/** find's -exec/-execdir/-ok/-okdir commands, each judged as a command of its own. */
function findExec(
  words: readonly (string | null)[],
  forms: string[],
  depth: number,
  privileged: boolean,
  out: CommandAnalysis,
): void {
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string | null;
    if (w !== "-exec" && w !== "-execdir" && w !== "-ok" && w !== "-okdir") continue;
    let j = i + 1;
    while (j < words.length && words[j] !== ";" && words[j] !== "+") j++;
    const inner = words.slice(i + 1, j).map((x) => (x === "{}" ? "FILE" : x));
    if (inner.length > 0) resolve(inner, forms, depth + 1, privileged, out);
    i = j;
  }
}

/** Index of the subcommand after a tool's global options; git -c and --exec-path=… are noted as loaders. -1 when an option is a run-time word. */
function skipGlobals(name: string, words: readonly (string | null)[], spec: OptionSpec, out: CommandAnalysis): number {
  let i = 1;
  while (i < words.length) {
    const w = words[i] as string | null;
    if (w === null) return -1;
    if (!w.startsWith("-") || w === "-" || w === "--") return i;
    if (name === "git" && (w === "-c" || w === "--config-env"))
      out.loaders.push(`git ${w} ${words[i + 1] ?? ""}`.trim());
    else if (name === "git" && (w.startsWith("--config-env=") || w.startsWith("--exec-path=")))
      out.loaders.push(`git ${w}`);
    else if (name === "git" && /^-c./.test(w)) out.loaders.push(`git ${w}`);
    if (w.startsWith("--")) i += !w.includes("=") && spec.long.includes(w) ? 2 : 1;
    else i += spec.short.includes(w[w.length - 1]!) && w.length === 2 ? 2 : 1;
  }
  return i;
}

/**
 * Commands that only read (or, like test runners, only write what comes back
 * staged in the sandbox): they run without asking. A name maps to null (any
 * arguments) or to the subcommands (leading words) that qualify.
 */
const READ_ONLY_COMMANDS: ReadonlyMap<string, readonly (readonly string[])[] | null> = new Map<
  string,
  readonly (readonly string[])[] | null
>([
  ...[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    "test",
    "[",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "tree",
    "stat",
    "file",
    "du",
    "df",
    "which",
    "type",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "date",
    "whoami",
    "id",
    "uname",
    "jq",
    "nl",
    "column",
    "less",
    "more",
    "sha256sum",
    "md5sum",
    "hostname",
    "cd",
    "pushd",
    "popd",
    ":",
    "exit",
  ].map((n) => [n, null] as const),
  ["command", [["-v"], ["-V"]]],
  [
    "git",
    [
      ["status"],
      ["diff"],
      ["log"],
      ["show"],
      ["blame"],
      ["ls-files"],
      ["rev-parse"],
      ["grep"],
      ["shortlog"],
      ["describe"],
    ],
  ],
  ["bun", [["test"], ["run", "test"], ["run", "typecheck"], ["run", "lint"]]],
  ["npm", [["test"], ["t"], ["run", "test"], ["run", "typecheck"], ["run", "lint"]]],
  ["pnpm", [["test"], ["run", "test"]]],
  ["yarn", [["test"], ["run", "test"]]],
  ["npx", [["vitest"], ["jest"], ["tsc", "--noEmit"]]],
  ["bunx", [["vitest"], ["jest"], ["tsc", "--noEmit"]]],
  ["pytest", null],
  ["python", [["-m", "pytest"]]],
  ["python3", [["-m", "pytest"]]],
  ["go", [["test"], ["vet"]]],
  ["cargo", [["test"], ["check"]]],
]);

/** find's actions that write: a find with one is not read-only. */
const FIND_WRITES = new Set(["-delete", "-fprint", "-fprint0", "-fprintf", "-fls"]);

/** True when the resolved words name a read-only command (see READ_ONLY_COMMANDS). */
export function isReadOnly(words: readonly (string | null)[]): boolean {
  const name = words[0];
  if (typeof name !== "string") return false;
  if (name === "find") return words.every((w) => w === null || !FIND_WRITES.has(w));
  if (name === "sort" || name === "tree")
    return !words.some((w) => w === "-o" || (typeof w === "string" && w.startsWith("--output")));
  if (!READ_ONLY_COMMANDS.has(name)) return false;
  const subs = READ_ONLY_COMMANDS.get(name)!;
  if (subs === null) return true;
  return subs.some((sub) => sub.every((w, k) => words[k + 1] === w));
}

/** Irreversible actions: asked every time whatever the rules say, refused with nobody to ask. */
const IRREVERSIBLE: readonly (readonly string[])[] = [
  ["git", "push"],
  ["npm", "publish"],
  ["bun", "publish"],
  ["pnpm", "publish"],
  ["yarn", "publish"],
  ["yarn", "npm", "publish"],
  ["gh", "release", "create"],
  ["gh", "pr", "create"],
  ["docker", "push"],
  ["podman", "push"],
];

/** The irreversible action the resolved words perform (`git push`, `npm publish`…), or null. */
export function irreversibleAction(words: readonly (string | null)[]): string | null {
  for (const action of IRREVERSIBLE) if (action.every((w, k) => words[k] === w)) return action.join(" ");
  return null;
}
