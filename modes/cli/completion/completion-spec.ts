import { COMMAND_OPTIONS, optionTakesValue, optionWords, type OptionName } from "../args.ts";

/** What a shell completes for one command: its options, the words after it, whether it takes a changeset id. */
export interface CommandSpec {
  name: string;
  /** Every spelling of every option it takes, `--help` and `--version` included. */
  flags: string[];
  /** Options whose next word is their value (a file or directory is offered there). */
  valueFlags: string[];
  /** Fixed words it takes first (`brain dump|ask…`, `recover finish|rollback`, `completion bash|zsh|fish`). */
  words: string[];
  /** True when its first argument may be a changeset id (`review ID`, `undo ID`…). */
  ids: boolean;
}

/** The shells `pencil completion` writes for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

/** Commands whose first argument is a changeset id. */
const ID_COMMANDS = new Set(["review", "undo", "steps", "discard"]);

/**
 * The completion spec, from the CLI's own definitions: the commands main dispatches,
 * the options each takes (args.ts), and the fixed words of the commands that have them.
 */
export function completionSpec(
  commands: readonly string[],
  fixedWords: Readonly<Record<string, readonly string[]>>,
): CommandSpec[] {
  return commands.map((name) => {
    const options = (COMMAND_OPTIONS[name] ?? []) as readonly OptionName[];
    return {
      name,
      flags: [...options.flatMap(optionWords), "-h", "--help", "-V", "--version"],
      valueFlags: options.filter(optionTakesValue).flatMap(optionWords),
      words: [...(fixedWords[name] ?? [])],
      ids: ID_COMMANDS.has(name),
    };
  });
}
