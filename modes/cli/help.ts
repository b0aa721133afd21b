// Kept free of imports so `pencil --help` loads nothing else.

/** The usage text printed by `pencil --help`. */
export const HELP = `pencil — a coding agent that writes in pencil: every change is staged until you approve its diff.

Usage: pencil <command> [options]

Commands:
  wakeup                 banner, then choose CLI or Telegram
  agent "<goal>"         run the agent; review the staged changes at the end
  plan "<goal>"          make a structured plan (read-only), pick steps, optionally run them
  ask "<question>"       answer from the code (read-only); optionally save the answer (staged)
  review [ID]            review a pending changeset (latest if no ID); --patch prints a git-apply-able diff
  undo [ID]              revert an applied changeset (latest if no ID), refusing files changed since
  log                    changesets: id, time, goal, model, status, files
  recover [finish|rollback ID]
                         list or settle an apply that was interrupted (crash, kill -9)
  demo                   offline: a scripted agent on a copy of examples/demo, no keys needed
  doctor                 what is configured and what is missing, with the fix for each
  telegram               start the Telegram bot
  brain dump|ask|list|reindex
                         the second brain (not in this version)

Options:
  -w, --workspace DIR    workspace (default: current directory)
      --allow RULE       add an allow rule, e.g. --allow 'Read(../lib/**)' (repeatable)
      --deny RULE        add a deny rule, e.g. --deny 'Edit(src/generated/**)' (repeatable)
      --model NAME       model override (NAME, groq:NAME, openrouter:NAME, local:NAME)
      --json             machine-readable output (log, doctor, plan, ask)
      --patch            with review: print the changeset as a unified diff
      --verbose          show commands' whole output (else the first and last lines;
                         the run's log file under $PENCIL_HOME/logs has all of it)
  -h, --help             this help
      --version          print the version

Exit codes: 0 done · 1 runtime error · 2 usage or configuration error ·
3 changes left pending (saved for review) · 4 approved changes not applied (files changed on disk)
`;
