import { COMMAND_OPTIONS, optionSpelling } from "./args.ts";

/** What one command's help says beside its options: usage line, description, and option lines of its own. */
interface CommandText {
  usage: string;
  about: string;
  /** Lines for options whose meaning is particular to this command (else the common line is used). */
  own?: Partial<Record<string, string>>;
}

// The common meaning of each option; a command's `own` line replaces it.
const OPTION_LINES: Record<string, string> = {
  workspace: "workspace (default: current directory)",
  allow: "add an allow rule, e.g. --allow 'Read(../lib/**)' (repeatable)",
  deny: "add a deny rule, e.g. --deny 'Edit(src/generated/**)' (repeatable)",
  model: "model override (NAME, groq:NAME, openrouter:NAME, local:NAME)",
  "no-project-doc": "do not give AGENTS.md / CLAUDE.md instructions to the model",
  continue: "continue this workspace's latest session (its conversation and pending changes)",
  resume: "continue the session ID (pencil log lists them)",
  verbose: "show commands' whole output (else the first and last lines)",
  json: "one JSON document on stdout",
};

const TEXTS: Record<string, CommandText> = {
  agent: {
    usage: 'pencil agent "<goal>" [options]',
    about: `Runs the agent on the workspace. Every change it makes is staged; at the end each
file's diff is reviewed, one key per file: [y]es [n]o [a]ll [q]uit [r]eason [e]dit
[s]teps. Then, in a terminal, › asks for a follow-up in the same session (an empty
line or Ctrl-D ends). With a changeset pending in the workspace, the goal continues
its session. Without a terminal nothing is applied: the changeset is saved (exit 3).`,
    own: {
      json: "one JSON document: the run and its staged changeset (nothing is asked or applied; exit 3 when something is staged)",
      commit:
        "after the review, one git commit of exactly the applied files (message from the goal and the applied files; never a push)",
    },
  },
  plan: {
    usage: 'pencil plan "<goal>" [options]',
    about: `Makes a structured plan with read-only tools, lets you pick steps, and optionally
runs them as an agent run.`,
    own: { json: "print the plan as one JSON document (nothing is asked)" },
  },
  ask: {
    usage: 'pencil ask "<question>" [options]',
    about: `Answers from the code with read-only tools. The answer's footer offers [s] to save
it to a file (a staged write, reviewed); Enter ends.`,
    own: { json: "print {question, answer, models} as one JSON document" },
  },
  wakeup: {
    usage: "pencil wakeup [options]",
    about: "The banner, then choose CLI or Telegram. In a terminal, bare `pencil` is this session.",
  },
  review: {
    usage: "pencil review [ID] [options]",
    about: `Reviews a pending changeset; with no ID and several pending, lists them newest
first and asks which. A run that was interrupted (kill -9, crash) is offered too.
Applying judges every path again under the rules in force (--allow/--deny included).`,
    own: {
      patch: "print it as a unified diff that git apply accepts",
      commit: "one git commit of exactly the applied files (never a push)",
      open: "open each staged file in $VISUAL/$EDITOR (else vi) before deciding it (or press e on a file); what you save is what is reviewed",
    },
  },
  undo: {
    usage: "pencil undo [ID] [options]",
    about: `Reverts an applied changeset (this workspace's latest when no ID), leaving alone any
file changed since (exit 4 then). With nothing to undo it says so (exit 0).`,
  },
  recover: {
    usage: "pencil recover [finish|rollback ID] [options]",
    about: "Lists applies that were interrupted (crash, kill -9), or finishes or rolls one back.",
  },
  log: {
    usage: "pencil log [options]",
    about: `Lists this workspace's sessions and changesets, newest first: id, time, goal, model,
status, files (a file whose approval met a conflict says conflict).`,
    own: {
      json: "one JSON document: the changesets (with --runs: the runs), newest first",
      runs: "list every run instead, with its commands and their exit status, also those that staged nothing",
    },
  },
  steps: {
    usage: "pencil steps [ID] [options]",
    about: `The checkpoints of a session (or of a changeset's session; the latest when no ID):
one per model step that staged something, with its tool, files and +/-.`,
  },
  rewind: {
    usage: "pencil rewind N [ID] [options]",
    about: `Takes the session's pending changes back to checkpoint N: later staged changes and
later conversation are dropped; the next follow-up (pencil agent -c) goes on from there.`,
  },
  fork: {
    usage: "pencil fork N DIR [ID] [options]",
    about: `Writes a copy of the workspace with the changes up to checkpoint N into DIR, which
must be new or empty and outside the workspace. The workspace is not touched.`,
  },
  discard: {
    usage: "pencil discard [ID] [options]",
    about: `Removes a pending changeset (this workspace's latest when no ID); asks first in a
terminal. Nothing of it is applied.`,
  },
  demo: {
    usage: "pencil demo",
    about: `Runs a scripted agent on a fresh copy of examples/demo, offline, no keys needed. Its
changesets show in pencil log marked demo; its temporary folder is removed when it ends.`,
    own: { keep: "keep the demo's temporary folder (its copy of the project) when it ends" },
  },
  doctor: {
    usage: "pencil doctor [options]",
    about: `What is configured and what is missing, with the fix for each: the configuration
files read, keys, models reachable, ripgrep, sandbox, state, bot.`,
  },
  telegram: {
    usage: "pencil telegram [options]",
    about: `Starts the Telegram bot (TELEGRAM_BOT_TOKEN; see docs/telegram.md). With no
TELEGRAM_OWNER_ID it pairs first: it prints a six-digit code, and the account that
sends /start <code> to the bot within 10 minutes becomes its owner (saved in
$PENCIL_HOME/.env).`,
    own: { pair: "pair again: whoever sends the new code replaces the owner (asks first)" },
  },
  completion: {
    usage: "pencil completion bash|zsh|fish",
    about: `Prints a shell completion script: commands, their options, and changeset ids for
review, undo, steps and discard (asked of pencil itself as you type). Install it:
  bash   pencil completion bash > ~/.local/share/bash-completion/completions/pencil
  zsh    pencil completion zsh > "\${fpath[1]}/_pencil"   (then restart zsh)
  fish   pencil completion fish > ~/.config/fish/completions/pencil.fish`,
  },
  brain: {
    usage: `pencil brain dump "<text or url>" | dump --image FILE | dump -
       pencil brain ask "<question>"
       pencil brain list | show ID | forget ID | reindex`,
    about: `The second brain: notes you dump (text, a URL's page, a photo's text), enriched with a
title, tags and a summary, and embedded so that brain ask finds them by meaning.
  dump      store a note (- reads stdin; --image FILE reads a photo's text)
  ask       answer from your notes only, citing each as [#id title]
  list      the most recent notes
  show ID   one note whole, with where it came from
  forget ID delete a note
  reindex   enrich and embed notes stored without, or with another embedding model`,
    own: {
      model: "the model that enriches and answers (NAME, groq:NAME, openrouter:NAME, local:NAME)",
      image: "with dump: a photo whose text becomes the note",
      json: "one JSON document on stdout",
    },
  },
};

/** `pencil <command> --help`: usage, what it does, and exactly the options it takes. */
export function commandHelp(command: string, invocation = "pencil"): string | undefined {
  if (!Object.hasOwn(TEXTS, command)) return undefined;
  const text = TEXTS[command]!;
  const options = COMMAND_OPTIONS[command] ?? [];
  const rows = options.map(
    (name) => [helpSpelling(optionSpelling(name)), text.own?.[name] ?? OPTION_LINES[name] ?? ""] as const,
  );
  rows.push(["-h, --help", "this help"] as const, ["-V, --version", "print the version"] as const);
  const width = Math.max(...rows.map(([flag]) => flag.length)) + 2;
  const lines = rows.map(([flag, about]) => `  ${flag.padEnd(width)}${wrap(about, 88 - width, " ".repeat(width + 2))}`);
  return `Usage: ${text.usage}\n\n${text.about}\n\nOptions:\n${lines.join("\n")}\n`.replaceAll(
    "pencil ",
    `${invocation} `,
  );
}

/** Words wrapped to `width` columns, continuation lines indented by `indent`. */
function wrap(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join(`\n${indent}`);
}

/** `-w/--workspace DIR` as help lists it: `-w, --workspace DIR`, and long-only options aligned under the long ones. */
function helpSpelling(spelling: string): string {
  return spelling.startsWith("--") ? `    ${spelling}` : spelling.replace("/", ", ");
}

/** The commands that have help of their own (for checks that none is missing). */
export const HELP_COMMANDS = Object.keys(TEXTS);
