import { tool, type ToolSet } from "ai";
import type { CommandRecord } from "../core/staging/command-record.ts";
import type { FileOps } from "../core/file-ops.ts";
import { LinkGuard } from "../core/policy/hard-links.ts";
import { type Gate, judgeNeeds, judgePath, judgeRequest } from "../core/policy/call-judge.ts";
import { decide, type Decision, type Policy } from "../core/policy/policy.ts";
import type { ReadLedger } from "../core/staging/read-ledger.ts";
import type { PencilTool, ToolContext } from "../tools/tool.ts";
import type { NetRequest } from "../core/policy/claims.ts";
import { PathError } from "../core/errors/path-error.ts";
import { ToolError } from "../core/errors/tool-error.ts";
import type { ToolLimits } from "../core/tool-limits.ts";
import { resolveInWorkspace, type Workspace } from "../core/workspace.ts";
import { workspaceRelativeHint } from "../tools/path-near-miss.ts";
import { fitAnswer } from "../core/answer-budget.ts";
import { RepeatedCalls } from "./nudges.ts";
import { invalidReason, lenientSchema, spreadInputs } from "./tool-call-repair.ts";
import type { Approver, PermissionAnswer, PermissionQuestion } from "../core/policy/approver.ts";
import type { EventSink } from "./events.ts";
import { toModelOutput, toolFailure, toolSuccess, type ToolOutcome } from "./tool-outcome.ts";
import type { McpPolicy } from "../core/policy/mcp-rules.ts";

/** What the seam needs to judge and run tool calls. */
export interface SeamDeps {
  ws: Workspace;
  policy: Policy;
  approver: Approver;
  /** The overlay the tools read and stage through. */
  fs: FileOps;
  reads: ReadLedger;
  limits: ToolLimits;
  /** Label of the model that is producing the current step. */
  currentModel: () => string;
  emit: EventSink;
  signal?: AbortSignal;
  /** Judges files with several hard links by all their names (default: one over the workspace and home's credentials). */
  links?: LinkGuard;
  /** Receives every command a tool ran or the policy refused, for the run's record. */
  recordCommand?: (record: CommandRecord) => void;
  /** The run's Mcp(server/tool) rules; without them every MCP call asks. */
  mcpPolicy?: McpPolicy;
  /** Characters one tool answer may have (from the model's context window); longer answers are cut with how to get the rest. */
  answerBudget?: number;
  /** Watches for repeated calls; the session stops the run when it says so (default: one of the seam's own). */
  repeats?: RepeatedCalls;
}

/**
 * The one place policy is enforced: every tool call's declared paths are
 * resolved to real paths and judged before the tool runs; asks go to the
 * Approver. Tool failures of any kind come back as results the model reads,
 * marked as errors for the provider (ToolOutcome).
 */
export function guardTools(tools: PencilTool[], given: SeamDeps): ToolSet {
  const deps: SeamDeps = {
    ...given,
    links: given.links ?? new LinkGuard({ root: given.ws.root, home: given.ws.home }),
  };
  const asker = new Asker(deps);
  const repeats = given.repeats ?? new RepeatedCalls();
  const set: ToolSet = {};
  for (const t of tools) {
    set[t.name] = tool({
      description: t.description,
      // Misnamed fields and "true"/"42" strings are read leniently; what still does not fit gets one readable line.
      inputSchema: lenientSchema(t),
      execute: async (input: unknown, options: { toolCallId: string }): Promise<ToolOutcome> =>
        runGuarded(t, input, options.toolCallId, deps, asker, repeats),
      toModelOutput: ({ output }) => toModelOutput(output),
    });
  }
  return set;
}

/** One question for the owner, with what an "always" answer would cover (`key`; none when it may not be remembered). */
interface Ask {
  callId: string;
  question: PermissionQuestion;
  key: string | null;
}

/**
 * Asks the owner one question at a time. The tool calls of one model step run in
 * parallel; serialising their questions means an "always" given to the first
 * answers the next ones, and no answer can be taken for another question.
 */
class Asker {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly always = new Set<string>();

  constructor(private readonly deps: SeamDeps) {}

  /** True when the owner already said "always" for this key in this run. */
  remembered(key: string): boolean {
    return this.always.has(key);
  }

  /** The owner's answer ("remembered" when an earlier "always" covers it); every answer is reported as an event. */
  ask(request: Ask): Promise<PermissionAnswer | { kind: "remembered" }> {
    const turn = this.queue.then(async () => {
      if (request.key !== null && this.always.has(request.key)) return { kind: "remembered" as const };
      const { question } = request;
      const answer = await this.deps.approver.ask(question, this.deps.signal);
      this.deps.emit({
        type: "policy",
        callId: request.callId,
        tool: question.tool,
        path: question.subject,
        access: question.access,
        decision: answer.kind === "no" ? "deny" : "allow",
        reason:
          answer.kind === "no" ? (answer.reason ?? "Refused by the user.") : `Approved by the user (${answer.kind}).`,
        answeredBy: "user",
      });
      if (answer.kind === "always" && request.key !== null) this.always.add(request.key);
      return answer;
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  }
}

/** The sentence the model reads after the owner said no. */
function refusal(what: string, answer: { reason?: string }): ToolOutcome {
  const why = answer.reason ? ` The user said: "${answer.reason}"` : "";
  return toolFailure(`the user refused ${what}.${why} Do not retry it; continue without it.`);
}

/**
 * One tool call through the seam, in named steps: judge (every permission the call
 * needs, by the rules) → ask (the owner, for what the rules leave open, in order) →
 * re-check (paths resolve as judged) → execute → finalize (nudge, event, answer).
 * Any failure on the way is a result the model reads.
 */
async function runGuarded(
  t: PencilTool,
  input: unknown,
  callId: string,
  deps: SeamDeps,
  asker: Asker,
  repeats: RepeatedCalls,
): Promise<ToolOutcome> {
  // A list of paths given to a reading tool: each path is its own call, judged and answered in turn.
  const each = spreadInputs(input);
  if (each) {
    const parts: ToolOutcome[] = [];
    for (let k = 0; k < each.length; k++)
      parts.push(await runGuarded(t, each[k], `${callId}.${k + 1}`, deps, asker, repeats));
    const paths = each.map((e) => String((e as { path?: unknown }).path));
    return {
      ok: parts.some((p) => p.ok),
      text: [
        `\`path\` was given as a list of ${each.length} paths; ${t.name} takes one, so each was read in turn (next time call ${t.name} once per file):`,
        ...parts.map((p, k) => `--- ${paths[k]} ---\n${p.text}`),
      ].join("\n"),
    };
  }
  const started = performance.now();
  deps.emit({ type: "tool-call", callId, tool: t.name, input });
  let outcome: ToolOutcome;
  try {
    const gates = await judgeCall(t, input, deps);
    const asked = await askOwner(t, gates, callId, deps, asker);
    outcome =
      "refusal" in asked
        ? asked.refusal
        : (recheckPaths(deps, gates) ?? (await executeCall(t, input, callId, deps, asker, asked.granted)));
  } catch (error) {
    outcome = failureOf(t, error);
  }
  return finalizeCall(t, input, callId, outcome, started, deps, repeats);
}

/**
 * Judge: what the call needs permission for, with the rules' verdicts, in the order
 * they are settled (an MCP tool, the command, sending, then each path). Asks nothing and changes
 * nothing; a problem found on the way (unusable input, a slip, a path that cannot be
 * resolved) is a refusal gate at the place it was found.
 */
async function judgeCall(t: PencilTool, input: unknown, deps: SeamDeps): Promise<Gate[]> {
  const unusable = invalidReason(input);
  if (unusable !== null) return [{ kind: "refuse", message: unusable }];
  // "/src/a.ts" naming a workspace file is a slip, not a question about the machine's root.
  for (const claim of t.claims(input)) {
    const hint = workspaceRelativeHint(
      deps.ws,
      claim.path,
      (real) =>
        deps.fs.stat(real) !== null && decide(deps.policy, { tool: t.name, access: "read", real }).decision !== "deny",
    );
    if (hint) return [{ kind: "refuse", message: hint }];
  }
  return judgeNeeds(
    {
      tool: t.name,
      ...(t.mcp ? { mcp: { ...t.mcp, input } } : {}),
      ...(t.runCommand
        ? { command: { line: t.runCommand(input), unsandboxed: t.sandboxed !== undefined && !(await t.sandboxed()) } }
        : {}),
      ...(t.reaches ? { sending: t.reaches(input) } : {}),
      paths: t.claims(input),
    },
    deps,
  );
}

/**
 * Ask: settles the gates in order — each verdict is reported, a deny or a "no"
 * refuses the call (a refused command is recorded), an ask goes to the owner unless
 * an "always" covers it. Returns the refusal, or the path verdicts the owner granted
 * (walkers may show what falls under the very same ask, nothing more).
 */
async function askOwner(
  t: PencilTool,
  gates: Gate[],
  callId: string,
  deps: SeamDeps,
  asker: Asker,
): Promise<{ refusal: ToolOutcome } | { granted: Decision[] }> {
  const granted: Decision[] = [];
  const policyEvent = (
    path: string,
    access: string,
    decision: Decision["decision"],
    reason: string,
    answeredBy: "rule" | "user",
  ) => deps.emit({ type: "policy", callId, tool: t.name, path, access, decision, reason, answeredBy });
  for (const gate of gates) {
    if (gate.kind === "refuse") return { refusal: toolFailure(gate.message) };
    if (gate.kind === "mcp") {
      const { label, subject, verdict, key } = gate;
      if (verdict.decision === "ask" && asker.remembered(key)) continue;
      policyEvent(subject, "run", verdict.decision, verdict.reason, "rule");
      if (verdict.decision === "deny")
        return { refusal: toolFailure(`the MCP tool ${label} is denied. ${verdict.reason} Continue without it.`) };
      if (verdict.decision === "allow") continue;
      const answer = await asker.ask({
        callId,
        key,
        question: { tool: t.name, access: "run", subject: `MCP ${subject}`, reason: verdict.reason },
      });
      if (answer.kind === "no") return { refusal: refusal(`the MCP call ${label}`, answer) };
      continue;
    }
    if (gate.kind === "command") {
      const refused = await askCommand(t, gate, callId, asker, policyEvent);
      if (refused) {
        deps.recordCommand?.({
          command: gate.command,
          at: new Date().toISOString(),
          outcome: "refused",
          exitCode: null,
          durationMs: 0,
          sandbox: null,
          staged: [],
          notStaged: 0,
          network: "none",
        });
        return { refusal: refused };
      }
    } else if (gate.kind === "send") {
      const { subject, destination, decision, reason, key } = gate;
      if (decision !== "ask") {
        policyEvent(subject, "send", decision, reason, "rule");
        if (decision === "deny") return { refusal: toolFailure(`reaching ${destination} is denied. ${reason}`) };
        continue;
      }
      if (asker.remembered(key)) continue;
      policyEvent(subject, "send", "ask", reason, "rule");
      const answer = await asker.ask({ callId, key, question: { tool: t.name, access: "send", subject, reason } });
      if (answer.kind === "no") return { refusal: refusal(`to let ${t.name} reach ${destination}`, answer) };
    } else {
      const { verdict, shown, access, key } = gate;
      if (verdict.decision === "ask" && asker.remembered(key)) {
        granted.push(verdict);
        policyEvent(shown, access, "allow", "Allowed always for this path in this run.", "user");
        continue;
      }
      policyEvent(shown, access, verdict.decision, verdict.reason, "rule");
      if (verdict.decision === "deny")
        return { refusal: toolFailure(`permission denied for ${access} of ${shown}. ${verdict.reason}`) };
      if (verdict.decision === "ask") {
        const answer = await asker.ask({
          callId,
          key,
          question: { tool: t.name, access, subject: shown, reason: verdict.reason },
        });
        if (answer.kind === "no") return { refusal: refusal(`${access} of ${shown}`, answer) };
        granted.push(verdict);
      }
    }
  }
  return { granted };
}

/** Settles a command gate: null when it may run, else the refusal. */
async function askCommand(
  t: PencilTool,
  gate: Extract<Gate, { kind: "command" }>,
  callId: string,
  asker: Asker,
  policyEvent: (
    path: string,
    access: string,
    decision: Decision["decision"],
    reason: string,
    answeredBy: "rule" | "user",
  ) => void,
): Promise<ToolOutcome | null> {
  const { command, decision, reason, key, once } = gate;
  if (decision === "ask" && key !== null && asker.remembered(key)) return null;
  policyEvent(command, "run", decision, reason, "rule");
  if (decision === "deny") return toolFailure(`running \`${command}\` is denied. ${gate.ruleReason}`);
  if (decision === "allow") return null;
  const answer = await asker.ask({
    callId,
    key,
    question: { tool: t.name, access: "run", subject: command, reason, ...(once ? { once: true } : {}) },
  });
  return answer.kind === "no" ? refusal(`to run \`${command}\``, answer) : null;
}

/** Re-check: an answer can take minutes; a link swapped meanwhile must not redirect what was judged. */
function recheckPaths(deps: SeamDeps, gates: Gate[]): ToolOutcome | null {
  for (const gate of gates) {
    if (gate.kind === "path" && resolveInWorkspace(deps.ws, gate.path).real !== gate.real) {
      return toolFailure(
        `${gate.path} changed on disk (a symbolic link now points elsewhere) while it was being judged. Nothing was done; look at it again before retrying.`,
      );
    }
  }
  return null;
}

/** Execute: runs the tool on the overlay; walkers see only what a read is allowed, or what the owner granted for this very call. */
async function executeCall(
  t: PencilTool,
  input: unknown,
  callId: string,
  deps: SeamDeps,
  asker: Asker,
  granted: Decision[],
): Promise<ToolOutcome> {
  const ctx: ToolContext = {
    ws: deps.ws,
    fs: deps.fs,
    reads: deps.reads,
    call: { id: callId, model: deps.currentModel() },
    limits: deps.limits,
    // Walkers (list, search, the run_command copy) show only what a read would be allowed,
    // or what falls under an ask the owner granted for this very call.
    visible: (real) => {
      const verdict = judgePath(deps, t.name, "read", real);
      return (
        verdict.decision === "allow" ||
        (verdict.decision === "ask" && granted.some((g) => g.reason === verdict.reason && g.rule === verdict.rule))
      );
    },
    ...(deps.recordCommand ? { recordCommand: deps.recordCommand } : {}),
    reach: (r) => judgeReach(t, r, callId, deps, asker),
    writeRefusal: (real) => {
      const verdict = judgePath(deps, t.name, "write", real);
      return verdict.decision === "deny" ? verdict.reason : null;
    },
    ...(deps.signal ? { signal: deps.signal } : {}),
  };
  return toolSuccess(await t.execute(input, ctx));
}

/** Finalize: the answer is held to the budget, a repeat gets its note, the result is reported, and the model gets its answer. */
function finalizeCall(
  t: PencilTool,
  input: unknown,
  callId: string,
  outcome: ToolOutcome,
  started: number,
  deps: SeamDeps,
  repeats: RepeatedCalls,
): ToolOutcome {
  const fitted = deps.answerBudget ? fitAnswer(t.name, outcome.text, deps.answerBudget) : outcome.text;
  const output = repeats.answer(t.name, input, outcome.ok, fitted);
  deps.emit({ type: "tool-result", callId, tool: t.name, ok: outcome.ok, output, ms: performance.now() - started });
  return { ok: outcome.ok, text: output };
}

/** A thrown failure as the model's answer: a tool's or a path's own message, or a plain note of the unexpected. */
function failureOf(t: PencilTool, error: unknown): ToolOutcome {
  if (ToolError.isInstance(error) || PathError.isInstance(error)) return toolFailure(error.message);
  const message = error instanceof Error ? error.message : String(error);
  return toolFailure(`${t.name} failed unexpectedly: ${message}. Try a different approach or report it to the user.`);
}

/** Ask, for a request a sandboxed command makes through Pencil's proxy: the rules' verdict (judgeRequest), then the owner. With nobody there the answer is no. */
async function judgeReach(
  t: PencilTool,
  r: NetRequest,
  callId: string,
  deps: SeamDeps,
  asker: Asker,
): Promise<boolean> {
  const { decision, reason, key, subject, irreversible } = judgeRequest(deps.policy, t.name, r);
  const ruled = () =>
    deps.emit({
      type: "policy",
      callId,
      tool: t.name,
      path: subject,
      access: "send",
      decision,
      reason,
      answeredBy: "rule",
    });
  if (decision !== "ask") {
    ruled();
    return decision === "allow";
  }
  if (key !== null && asker.remembered(key)) return true;
  ruled();
  const answer = await asker.ask({
    callId,
    key,
    question: { tool: t.name, access: "send", subject, reason, ...(irreversible ? { once: true } : {}) },
  });
  return answer.kind !== "no";
}
