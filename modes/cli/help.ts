// Kept free of imports so `pencil --help` loads nothing else.

/** The usage text printed by `pencil --help`. */
export const HELP = `pencil — a coding agent that writes in pencil: every change is staged until you approve its diff.

Usage: pencil <command> [options]

Commands:
  wakeup                 banner, then choose CLI or Telegram
  agent "<goal>"         run the agent; review the staged changes at the end
  plan "<goal>"          make a structured plan (read-only), pick steps, optionally run them
  ask "<question>"       answer from the code (read-only); optionally save the answer (staged)
  review [ID]            review a pending changeset (picks among several if no ID); --patch prints a git-apply-able diff
  steps [ID]             the checkpoints of a session: each model step that staged something (tool, files, +/-)
  rewind N [ID]          take a session's pending changes back to checkpoint N (later staging and turns dropped)
  fork N DIR [ID]        write a copy of the workspace with the changes up to checkpoint N into a new DIR
  discard [ID]           remove a pending changeset (asks in a terminal)
  undo [ID]              revert an applied changeset (latest if no ID), refusing files changed since
  log                    sessions, and changesets: id, time, goal, model, status, files
  recover [finish|rollback ID]
                         list or settle an apply that was interrupted (crash, kill -9)
  demo                   offline: a scripted agent on a copy of examples/demo, no keys needed
  doctor                 what is configured and what is missing, with the fix for each
  telegram               start the Telegram bot
  brain dump "<text or url>" | dump --image FILE | dump -
                         store a note in your second brain (- reads stdin)
  brain ask "<question>" answer from your notes, citing them as [#id title]
  brain list|show ID|forget ID|reindex
                         recent notes; one note; delete one; enrich and embed what waits

Options:
  -c, --continue         agent/plan/ask: continue this workspace's latest session (conversation + pending changes)
      --resume ID        agent/plan/ask: continue the session ID
  -w, --workspace DIR    workspace (default: current directory)
      --allow RULE       add an allow rule, e.g. --allow 'Read(../lib/**)' (repeatable)
      --deny RULE        add a deny rule, e.g. --deny 'Edit(src/generated/**)' (repeatable)
      --model NAME       model override (NAME, groq:NAME, openrouter:NAME, local:NAME)
      --json             one JSON document on stdout (agent, plan, ask, log, doctor, brain, steps)
      --patch            with review: print the changeset as a unified diff
      --verbose          show commands' whole output (else the first and last lines;
                         the run's log file under $PENCIL_HOME/logs has all of it)
      --commit           with agent/review: one git commit of exactly the applied files (never a push)
      --open             with review: edit each staged file in $VISUAL/$EDITOR before deciding
      --no-project-doc   do not give AGENTS.md / CLAUDE.md instructions to the model
  -h, --help             this help
      --version          print the version

In a terminal, after the review a session asks for a follow-up at › (empty line or Ctrl-D ends).
Ctrl-C during a run stops it and keeps what is staged; a second Ctrl-C saves it and exits 3.

Exit codes: 0 done · 1 runtime error · 2 usage or configuration error ·
3 changes left pending (saved for review) · 4 approved changes not applied (files changed on disk)
`;

const COMMON = `
Common options:
  -w, --workspace DIR    workspace (default: current directory)
      --allow RULE       add an allow rule, e.g. --allow 'Read(../lib/**)' (repeatable)
      --deny RULE        add a deny rule, e.g. --deny 'Edit(src/generated/**)' (repeatable)
      --model NAME       model override (NAME, groq:NAME, openrouter:NAME, local:NAME)
  -h, --help             this help`;

const RUN_OPTIONS = `Options:
  -c, --continue         continue this workspace's latest session (its conversation and pending changes)
      --resume ID        continue the session ID (pencil log lists them)
      --verbose          show commands' whole output (else first and last lines)`;

/** `pencil <command> --help`: what one command does, its arguments and its options. */
export const COMMAND_HELP: Record<string, string> = {
  agent: `Usage: pencil agent "<goal>" [options]

Runs the agent on the workspace. Every change it makes is staged; at the end each
file's diff is reviewed, one key per file: [y]es [n]o [a]ll [q]uit [r]eason [e]dit
[s]teps. Then, in a terminal, › asks for a follow-up in the same session (an empty
line or Ctrl-D ends). With a changeset pending in the workspace, the goal continues
its session. Without a terminal nothing is applied: the changeset is saved (exit 3).

${RUN_OPTIONS}
      --json             one JSON document: the run and its staged changeset (nothing
                         is asked or applied; exit 3 when something is staged)
      --commit           after the review, one git commit of exactly the applied files
                         (message from the goal and the model's summary; never a push)
      --no-project-doc   do not give AGENTS.md / CLAUDE.md instructions to the model
${COMMON}`,
  plan: `Usage: pencil plan "<goal>" [options]

Makes a structured plan with read-only tools, lets you pick steps, and optionally
runs them as an agent run.

${RUN_OPTIONS}
      --json             print the plan as one JSON document (nothing is asked)
${COMMON}`,
  ask: `Usage: pencil ask "<question>" [options]

Answers from the code with read-only tools. The answer's footer offers [s] to save
it to a file (a staged write, reviewed); Enter ends.

${RUN_OPTIONS}
      --json             print {question, answer, models} as one JSON document
${COMMON}`,
  review: `Usage: pencil review [ID] [options]

Reviews a pending changeset; with no ID and several pending, lists them newest
first and asks which. A run that was interrupted (kill -9, crash) is offered too.

Options:
      --patch            print it as a unified diff that git apply accepts
      --commit           one git commit of exactly the applied files (never a push)
      --open             open each staged file in $VISUAL/$EDITOR before deciding it
                         (or press e on a file); what you save is what is reviewed
${COMMON}`,
  undo: `Usage: pencil undo [ID] [options]

Reverts an applied changeset (this workspace's latest when no ID), leaving alone any
file changed since (exit 4 then). With nothing to undo it says so (exit 0).

${COMMON}`,
  log: `Usage: pencil log [options]

Lists changesets, newest first: id, time, goal, model, status, files (a file whose
approval met a conflict says conflict).

Options:
      --json             one JSON document
${COMMON}`,
  steps: `Usage: pencil steps [ID] [options]

The checkpoints of a session (or of a changeset's session; the latest when no ID):
one per model step that staged something, with its tool, files and +/-.

Options:
      --json             one JSON document
${COMMON}`,
  rewind: `Usage: pencil rewind N [ID] [options]

Takes the session's pending changes back to checkpoint N: later staged changes and
later conversation are dropped; the next follow-up (pencil agent -c) goes on from there.
${COMMON}`,
  fork: `Usage: pencil fork N DIR [ID] [options]

Writes a copy of the workspace with the changes up to checkpoint N into DIR, which
must be new or empty and outside the workspace. The workspace is not touched.
${COMMON}`,
  discard: `Usage: pencil discard [ID] [options]

Removes a pending changeset (this workspace's latest when no ID); asks first in a
terminal. Nothing of it is applied.
${COMMON}`,
  recover: `Usage: pencil recover [finish|rollback ID] [options]

Lists applies that were interrupted (crash, kill -9), or finishes or rolls one back.

${COMMON}`,
  demo: `Usage: pencil demo

Runs a scripted agent on a fresh copy of examples/demo, offline, no keys needed.`,
  doctor: `Usage: pencil doctor [options]

What is configured and what is missing, with the fix for each: the configuration
files read, keys, models reachable, ripgrep, sandbox, state, bot.

Options:
      --json             one JSON document
${COMMON}`,
  telegram: `Usage: pencil telegram

Starts the Telegram bot (TELEGRAM_BOT_TOKEN, TELEGRAM_OWNER_ID; see the README).`,
  wakeup: `Usage: pencil wakeup

The banner, then choose CLI or Telegram.`,
  brain: `Usage: pencil brain dump|ask|list|reindex

The second brain: not in this version.`,
};
