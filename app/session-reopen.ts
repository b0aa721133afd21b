import { type ModelMessage, modelMessageSchema } from "ai";
import { z } from "zod";
import { type RunMode, runModeOf } from "../agent/prompts.ts";
import { PencilError } from "../core/errors/pencil-error.ts";
import { SessionFileError } from "../core/errors/session-file-error.ts";
import { UnknownChangesetError } from "../core/errors/unknown-changeset-error.ts";
import type { Changeset } from "../core/staging/changeset.ts";
import type { StagedEntry } from "../core/staging/overlay.ts";
import type { Runtime } from "./runtime.ts";
import { SavedSession } from "./saved-session.ts";
import { SessionStore } from "./session-store.ts";

/** What a reopened run starts from: its mode, goal, checked conversation, staged files, session and changeset. */
export interface RunStart {
  /** The saved session it goes on in; null when it has none or it is damaged (then nothing of it is saved). */
  session: SavedSession | null;
  mode: RunMode;
  goal: string;
  messages: ModelMessage[];
  staged: StagedEntry[];
  /** The current changeset; null when the session names none, or one that is no longer there. */
  changeset: Changeset | null;
}

/** A saved session read back as the start of a run. */
export interface ReopenedSession extends RunStart {
  session: SavedSession;
}

/**
 * Reads a saved session to continue it (`-c`, `--resume`, a restart after a crash): its conversation
 * checked against the AI SDK's message schema, its staged files and its current changeset. Throws
 * SessionFileError for a damaged or newer session, one of another workspace, or an unreadable changeset.
 */
export function reopenSession(runtime: Runtime, id: string, asMode?: RunMode): ReopenedSession {
  const session = SavedSession.open(sessionStore(runtime), id);
  const header = session.header;
  if (header.workspace !== runtime.ws.root)
    throw new SessionFileError(
      `Session ${id} belongs to ${header.workspace}, not ${runtime.ws.root}: run it with -w ${header.workspace}.`,
    );
  // The next turn may be another kind of work than the first (ask -c after an agent run): same conversation, that mode's tools.
  const mode: RunMode = asMode ?? runModeOf(header.mode);
  const state = session.state();
  const messages = validMessages(state.messages, id, session.checkedMessages);
  const staged = session.stagedEntries(state);
  let changeset: Changeset | null = null;
  if (header.changeset) {
    try {
      changeset = runtime.store.load(header.changeset);
    } catch (error) {
      // Only a record that is not there is none (the staged files come from the session and get a new one). One that
      // is there but unreadable would be orphaned by a new id while it may hold decisions: stop and say so.
      if (!UnknownChangesetError.isInstance(error)) {
        const why = PencilError.isInstance(error) ? error.userMessage : (error as Error).message;
        throw new SessionFileError(
          `Session ${id}'s changeset ${header.changeset} cannot be read (${why}). Fix or move it aside, then continue the session; nothing was changed.`,
        );
      }
    }
  }
  return { session, mode, goal: header.goal, messages, staged, changeset };
}

/**
 * A saved pending changeset read back as the start of a run (after a restart, or from `pencil review`): its staged
 * content, and the conversation of the session it was made in, checked; without a readable session, the
 * conversation saved with the changeset (read only then), else the goal alone.
 */
export function resumeChangeset(runtime: Runtime, changeset: Changeset): RunStart {
  const made = changesetSession(runtime, changeset);
  const messages = made?.messages ??
    (runtime.store.loadConversation(changeset.id) as ModelMessage[] | null) ?? [
      { role: "user", content: changeset.goal },
    ];
  const stagedAt = Date.parse(changeset.createdAt) || Date.now();
  const staged = changeset.files.map((file) => ({
    real: file.real,
    base: file.base,
    after: file.after ? { bytes: file.after.bytes, mode: file.after.mode } : null,
    origins: file.origins,
    models: file.models,
    stagedAt,
  }));
  return {
    session: made?.session ?? null,
    mode: runModeOf(changeset.mode),
    goal: changeset.goal,
    messages,
    staged,
    changeset,
  };
}

/** The session a saved changeset was made in, with its checked conversation; null when it has none or it is damaged. */
function changesetSession(
  runtime: Runtime,
  changeset: Changeset,
): { session: SavedSession; messages: ModelMessage[] } | null {
  if (!changeset.session) return null;
  try {
    const session = SavedSession.open(sessionStore(runtime), changeset.session);
    return { session, messages: validMessages(session.state().messages, session.id, session.checkedMessages) };
  } catch {
    // A damaged session leaves the changeset reviewable; revisions then start from the saved conversation.
    return null;
  }
}

/** The sessions of the runtime's Pencil home. */
export function sessionStore(runtime: Runtime): SessionStore {
  return new SessionStore(runtime.pencilHome);
}

/** A saved conversation, checked message by message against the AI SDK's schema before the model sees it. */
function validMessages(messages: unknown[], id: string, alreadyChecked = 0): ModelMessage[] {
  // The first `alreadyChecked` are byte for byte what Pencil wrote at the end of a run (the log's digest says so).
  const parsed = z.array(modelMessageSchema).safeParse(messages.slice(alreadyChecked));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SessionFileError(
      `Session ${id}: message ${alreadyChecked + Number(issue?.path[0] ?? 0)} is not a valid model message (${issue?.message}). Its changeset, if saved, is still reviewable with pencil review; nothing was changed.`,
    );
  }
  return [...(messages.slice(0, alreadyChecked) as ModelMessage[]), ...parsed.data];
}
