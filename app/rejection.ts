/** A rejected file and the owner's reason, sent back to the agent (reason "" when none was given). */
export interface Rejection {
  path: string;
  reason: string;
}

/** Rounds of "rejected with a reason → the agent revises" before a front end stops sending work back. */
export const MAX_REVISION_ROUNDS = 3;
