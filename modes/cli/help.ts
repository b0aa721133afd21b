// Kept free of imports so `pencil --help` loads nothing else.

/** The usage text printed by `pencil --help`. */
export const HELP = `pencil — a coding agent that writes in pencil: every change is staged until you approve its diff.

Usage: pencil <command> [options]

In a terminal, pencil with no command opens a session: the banner, your goal, the
review, follow-ups (without a model configured it offers the demo).

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
  completion bash|zsh|fish
                         print a shell completion script (commands, options, changeset ids)

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
      --web              with review: review on a page in your browser (127.0.0.1, one-time address)
      --no-project-doc   do not give AGENTS.md / CLAUDE.md instructions to the model
  -h, --help             this help
  -V, --version          print the version

In a terminal, after the review a session asks for a follow-up at › (empty line or Ctrl-D ends).
Ctrl-C during a run stops it and keeps what is staged; a second Ctrl-C saves it and exits 3.

Exit codes: 0 done · 1 runtime error · 2 usage or configuration error ·
3 changes left pending (saved for review) · 4 approved changes not applied (files changed on disk)
`;
