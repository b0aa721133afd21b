import { z } from "zod";

/** What became of a command: it ran to an exit or signal, was stopped (timeout, write cap, cancel), never started, or was refused by the policy or the owner. */
export type CommandOutcomeKind =
  | "exited"
  | "killed"
  | "timed-out"
  | "write-cap"
  | "cancelled"
  | "sandbox-failed"
  | "refused";

/** One command the agent asked to run, as recorded with the run (and saved in its changeset), whether or not it staged anything. */
export interface CommandRecord {
  /** The command line as the model gave it. */
  command: string;
  /** ISO time it was started (or refused). */
  at: string;
  outcome: CommandOutcomeKind;
  /** Exit status when it exited, else null. */
  exitCode: number | null;
  /** Wall-clock milliseconds it ran (0 when it never started). */
  durationMs: number;
  /** How it was confined: the namespace sandbox, none (`plain`), or null when it never ran. */
  sandbox: "namespace" | "plain" | null;
  /** Files it changed that came back staged (workspace-relative), with the change. */
  staged: { path: string; change: "create" | "edit" | "delete" }[];
  /** Changes it made that were not staged (ignored output, .git, refused paths, over the limits). */
  notStaged: number;
  /** Network access it had: none (a private network with only its own loopback), through Pencil's proxy, or the host's (no sandbox). */
  network: "none" | "proxy" | "host";
  /** Requests it made through the proxy, each allowed or refused. */
  connections?: { method: string; host: string; port: number; url?: string; allowed: boolean }[];
}

/** The shape a saved CommandRecord is checked against (in a changeset, in a session's runs); unknown keys are kept. */
export const CommandRecordShape = z.looseObject({
  command: z.string(),
  at: z.string(),
  outcome: z.enum(["exited", "killed", "timed-out", "write-cap", "cancelled", "sandbox-failed", "refused"]),
  exitCode: z.number().nullable(),
  durationMs: z.number(),
  sandbox: z.enum(["namespace", "plain"]).nullable(),
  staged: z.array(z.looseObject({ path: z.string(), change: z.enum(["create", "edit", "delete"]) })),
  notStaged: z.number(),
  network: z.enum(["none", "proxy", "host"]),
  connections: z
    .array(
      z.looseObject({
        method: z.string(),
        host: z.string(),
        port: z.number(),
        url: z.string().optional(),
        allowed: z.boolean(),
      }),
    )
    .optional(),
});

/** A one-line account of a command for people: `$ bun test  exit 0, 1.20 s, 2 staged`. */
export function commandRecordLine(r: CommandRecord): string {
  const secs = `${(r.durationMs / 1000).toFixed(2)} s`;
  const how =
    r.outcome === "exited"
      ? `exit ${r.exitCode}, ${secs}`
      : r.outcome === "refused"
        ? "refused, not run"
        : r.outcome === "sandbox-failed"
          ? "not run: the sandbox could not be set up"
          : `${r.outcome}, ${secs}`;
  const effects = [
    r.staged.length ? `${r.staged.length} staged` : "nothing staged",
    r.notStaged ? `${r.notStaged} not staged` : "",
  ]
    .filter(Boolean)
    .join(", ");
  const conns = r.connections ?? [];
  const refused = conns.filter((c) => !c.allowed).length;
  const net =
    conns.length > 0
      ? `; ${conns.length} network ${conns.length === 1 ? "request" : "requests"}${refused ? `, ${refused} refused` : ""}`
      : r.network === "host"
        ? "; network on, unsandboxed"
        : "";
  return `$ ${r.command}  (${how}; ${effects}${net})`;
}
