import { parseArgs } from "node:util";
import { closest } from "../../core/did-you-mean.ts";
import { UsageFailure } from "../../core/errors/usage-failure.ts";

/** The parsed command line: the command, its positional words, and the common options. */
export interface CliArgs {
  command: string;
  positionals: string[];
  workspace?: string;
  allow: string[];
  deny: string[];
  model?: string;
  json: boolean;
  patch: boolean;
  verbose: boolean;
  help: boolean;
  /** `-V/--version` anywhere on the line. */
  version: boolean;
  image?: string;
  /** `--no-project-doc`: skip AGENTS.md / CLAUDE.md. */
  noProjectDoc: boolean;
  /** `--commit`: one git commit of exactly the applied files. */
  commit: boolean;
  /** `review --open`: edit staged files in $VISUAL/$EDITOR before deciding. */
  open: boolean;
  /** `review --web`: review on a page served on 127.0.0.1. */
  web: boolean;
  /** `-c/--continue`: continue the workspace's latest session. */
  continue: boolean;
  /** `--resume ID`: continue a named session. */
  resume?: string;
  /** `log --runs`: every run, with its commands, whether or not it staged anything. */
  runs: boolean;
  /** `telegram --pair`: make a new owner with a pairing code, replacing the one set. */
  pair: boolean;
  /** `demo --keep`: leave the demo's temporary folder in place when it ends. */
  keep: boolean;
}

const OPTIONS = {
  workspace: { type: "string", short: "w" },
  allow: { type: "string", multiple: true },
  deny: { type: "string", multiple: true },
  model: { type: "string" },
  json: { type: "boolean" },
  patch: { type: "boolean" },
  verbose: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
  image: { type: "string" },
  "no-project-doc": { type: "boolean" },
  commit: { type: "boolean" },
  open: { type: "boolean" },
  web: { type: "boolean" },
  continue: { type: "boolean", short: "c" },
  resume: { type: "string" },
  pair: { type: "boolean" },
  keep: { type: "boolean" },
  runs: { type: "boolean" },
} as const;

type OptionName = keyof typeof OPTIONS;

/** Options of a command that runs a session (the agent loop). */
const SESSION: readonly OptionName[] = [
  "workspace",
  "allow",
  "deny",
  "model",
  "no-project-doc",
  "continue",
  "resume",
  "verbose",
];

/**
 * The options each command takes, besides -h/--help and --version. A flag given to a
 * command that does not take it is a usage error, never silently ignored.
 */
export const COMMAND_OPTIONS: Record<string, readonly OptionName[]> = {
  agent: [...SESSION, "json", "commit"],
  plan: [...SESSION, "json"],
  ask: [...SESSION, "json"],
  wakeup: SESSION,
  // Applying re-judges every path under today's rules, so --allow/--deny matter here.
  review: ["workspace", "allow", "deny", "patch", "commit", "open", "web"],
  undo: ["workspace", "allow", "deny"],
  recover: ["workspace", "allow", "deny"],
  log: ["workspace", "json", "runs"],
  steps: ["workspace", "json"],
  rewind: ["workspace"],
  fork: ["workspace"],
  discard: ["workspace"],
  demo: ["keep"],
  doctor: ["workspace", "allow", "deny", "model", "no-project-doc", "json"],
  telegram: ["workspace", "allow", "deny", "model", "pair"],
  brain: ["model", "json", "image"],
  completion: [],
};

/** How an option is written as words a shell completes: `["-w", "--workspace"]`. */
export function optionWords(name: OptionName): string[] {
  const spec = OPTIONS[name] as { short?: string };
  return [...(spec.short ? [`-${spec.short}`] : []), `--${name}`];
}

/** True when the option takes a value (`--workspace DIR`), so the word after it is that value. */
export function optionTakesValue(name: OptionName): boolean {
  return (OPTIONS[name] as { type: string }).type === "string";
}

/** Every option name, for completion. */
export type { OptionName };

/** How an option is written on the command line: `-w, --workspace DIR`. */
export function optionSpelling(name: OptionName): string {
  const spec = OPTIONS[name] as { type: string; short?: string };
  const long = `--${name}${spec.type === "string" ? ` ${name === "workspace" ? "DIR" : name === "image" ? "FILE" : name === "resume" ? "ID" : name === "model" ? "NAME" : "RULE"}` : ""}`;
  return spec.short ? `-${spec.short}/${long}` : long;
}

/**
 * Parses argv (without `bun index.ts`) with node's own parser: strict, so a mistyped
 * flag is an error, not ignored. Errors say it in Pencil's words, with a guess. A flag
 * that exists but that the command does not take is an error too, naming the ones it does.
 */
export function parseCli(argv: string[], invocation = "pencil"): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      tokens: true,
      options: OPTIONS,
    });
  } catch (error) {
    throw new UsageFailure(usageMessage(error as Error & { code?: string }, argv, invocation));
  }
  const [command = "", ...positionals] = parsed.positionals;
  const v = parsed.values;
  if (!v.help && !v.version && Object.hasOwn(COMMAND_OPTIONS, command)) {
    const takes = COMMAND_OPTIONS[command]!;
    for (const token of parsed.tokens ?? []) {
      if (token.kind !== "option" || token.name === "help" || token.name === "version") continue;
      if (takes.includes(token.name as OptionName)) continue;
      const list = takes.length
        ? `It takes ${takes.map((o) => optionSpelling(o)).join(", ")}.`
        : "It takes no options.";
      throw new UsageFailure(
        `${invocation} ${command} does not take ${token.rawName}. ${list} Run \`${invocation} ${command} --help\` for what each does.`,
      );
    }
  }
  return {
    command,
    positionals,
    ...(v.workspace !== undefined ? { workspace: v.workspace } : {}),
    allow: v.allow ?? [],
    deny: v.deny ?? [],
    ...(v.model !== undefined ? { model: v.model } : {}),
    json: v.json ?? false,
    patch: v.patch ?? false,
    verbose: v.verbose ?? false,
    help: v.help ?? false,
    version: v.version ?? false,
    ...(v.image !== undefined ? { image: v.image } : {}),
    noProjectDoc: v["no-project-doc"] ?? false,
    commit: v.commit ?? false,
    open: v.open ?? false,
    web: v.web ?? false,
    continue: v.continue ?? false,
    ...(v.resume !== undefined ? { resume: v.resume } : {}),
    runs: v.runs ?? false,
    pair: v.pair ?? false,
    keep: v.keep ?? false,
  };
}

function usageMessage(error: Error & { code?: string }, argv: string[], invocation: string): string {
  const command = argv.find((a) => !a.startsWith("-")) ?? "";
  const help = command ? `${invocation} ${command} --help` : `${invocation} --help`;
  // Node's messages quote the flag oddly ('--x'); name it plainly instead.
  const flag = /'(-[^']*)'/.exec(error.message)?.[1];
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && flag) {
    const name = flag.replace(/=.*$/, "");
    const guess = name.startsWith("--") ? closest(name.slice(2), Object.keys(OPTIONS)) : null;
    return `Unknown option ${name}.${guess ? ` Did you mean --${guess}?` : ""} Run \`${help}\` for the options.`;
  }
  if (error.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && flag) {
    const option = /--[\w-]+/.exec(flag)?.[0] ?? flag.split(/[ ,]/)[0];
    return `The option ${option} ${/argument missing/.test(error.message) ? "needs a value" : "takes no value"}. Run \`${help}\` for the options.`;
  }
  return `${error.message.replace(/\.$/, "")}. Run \`${help}\` for the options.`;
}
