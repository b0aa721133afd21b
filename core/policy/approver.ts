/** A question the session asks its human during a run (e.g. a read outside the workspace). */
export interface PermissionQuestion {
  tool: string;
  access: "read" | "write" | "run" | "send";
  /** Display path (or the command, for run). */
  subject: string;
  /** The policy's reason for asking. */
  reason: string;
  /** True when the answer may only cover this one call: "always" is not offered (e.g. a command with no sandbox). */
  once?: boolean;
}

/** The human's answer: yes once, no (optionally with a reason for the model), or always for this subject in this run. */
export type PermissionAnswer = { kind: "yes" } | { kind: "always" } | { kind: "no"; reason?: string };

/** Whoever answers permission questions during a run: the terminal, Telegram buttons, or nobody. */
export interface Approver {
  ask(question: PermissionQuestion, signal?: AbortSignal): Promise<PermissionAnswer>;
}

/** Nobody is there to answer: every ask is a no. An ask never quietly becomes yes. */
export const nobodyApprover: Approver = {
  async ask() {
    return { kind: "no", reason: "No one is at the terminal to approve this, so it was refused." };
  },
};
