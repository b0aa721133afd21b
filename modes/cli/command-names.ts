// The command words, apart from the modules that run them: help, completion and did-you-mean read the
// list without loading any command (main.ts's table is typed by it, so the two cannot drift).

/** The commands a person types, in the order help and completion list them. */
export const COMMAND_NAMES = [
  "agent",
  "plan",
  "ask",
  "review",
  "undo",
  "log",
  "recover",
  "steps",
  "rewind",
  "fork",
  "discard",
  "demo",
  "doctor",
  "wakeup",
  "telegram",
  "brain",
  "completion",
] as const;

/** A command a person types. */
export type CommandName = (typeof COMMAND_NAMES)[number];

/** Commands only Pencil's own scripts call: `__complete` answers a completion script (changeset ids). */
export type HiddenCommandName = "__complete";
