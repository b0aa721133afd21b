import { analyzeCommand, formText, irreversibleAction, isReadOnly, type CommandPart } from "./command-analysis.ts";
import type { Decision } from "./policy-rules.ts";

/** One compiled Run(...) rule: the pattern as a regular expression over a command's words, and what it decides. */
interface RunRule {
  re: RegExp;
  result: Decision;
}

/** The Run(...) rules by effect. */
export interface RunRules {
  deny: RunRule[];
  ask: RunRule[];
  allow: RunRule[];
}

const RUN_EMPTY: Decision = {
  decision: "deny",
  reason: "The command is empty: give the command line to run, e.g. bun test.",
};
const RUN_DEFAULT_REASON =
  "Running a command needs the user's approval unless a Run(...) allow rule covers it or it only reads (ls, cat, rg, git status|diff|log|show, test runners). If it is refused, do without it or ask the user to run it.";
const READ_ONLY_REASON = "It only reads (or runs tests, whose writes come back staged), so it runs without asking.";

/** `*` matches any text; everything else is literal; whitespace runs count as one space. */
export function runPattern(pattern: string): RegExp {
  const body = collapse(pattern)
    .split("*")
    .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("[\\s\\S]*");
  return new RegExp(`^${body}$`);
}

/**
 * Judges a command line (pure, given a loaded shell parser): every simple
 * command it would run is resolved through its wrappers and global options; a
 * deny (then an ask) rule matching any form of any of them decides; an
 * irreversible action (git push, npm publish…) asks every time; settings that
 * change what code loads, a line that does not parse and a command only known
 * at run time ask; otherwise it runs unasked only when every command is
 * allowed by a rule or only reads.
 */
export function decideCommand(rules: RunRules, command: string | undefined): Decision {
  if (typeof command !== "string") return RUN_EMPTY;
  const whole = collapse(command);
  if (whole === "") return RUN_EMPTY;
  if (command.includes("\0"))
    return {
      decision: "ask",
      reason: "The command contains a NUL byte, so no rule covers it and the user must approve it.",
    };
  const a = analyzeCommand(command);
  const forms = [whole];
  for (const p of a.parts) for (const f of p.forms) forms.push(f);
  const hit = firstMatch(rules.deny, forms) ?? firstMatch(rules.ask, forms);
  if (hit) return hit;
  for (const p of a.parts) {
    const action = irreversibleAction(p.words);
    if (action) {
      return {
        decision: "ask",
        reason: `\`${action}\` is irreversible (it publishes or sends outside this machine), so the user approves it every time, whatever the rules say; with nobody to ask it is refused.`,
        irreversible: action,
      };
    }
  }
  if (a.malformed)
    return {
      decision: "ask",
      reason:
        "The command line does not parse as shell, so no rule covers it and the user must approve it. Check its quoting.",
    };
  if (a.loaders.length > 0) {
    return {
      decision: "ask",
      reason: `It sets ${a.loaders.slice(0, 3).join(", ")}, which changes what code programs load, so no allow rule covers it and the user must approve it.`,
    };
  }
  const opaque = a.parts.find((p) => p.opaque !== null);
  if (opaque)
    return {
      decision: "ask",
      reason: `\`${shorten(opaque.forms[opaque.forms.length - 1] ?? whole)}\` cannot be judged before it runs (${opaque.opaque}), so the user must approve it.`,
    };
  let allowedBy: Decision | undefined;
  const uncovered: string[] = [];
  for (const p of a.parts) {
    const verdict = allowedPart(rules, p);
    if (verdict === null) uncovered.push(formText(p.words));
    else if (verdict !== "read-only") allowedBy ??= verdict;
  }
  if (uncovered.length > 0) {
    if (a.parts.length === 1) return { decision: "ask", reason: RUN_DEFAULT_REASON };
    return {
      decision: "ask",
      reason: `Every command of a pipeline or list must be allowed for the line to run without asking; not covered: ${uncovered
        .slice(0, 3)
        .map((u) => `\`${shorten(u)}\``)
        .join(", ")}. The user must approve it, or run one command at a time.`,
    };
  }
  return allowedBy ?? { decision: "allow", reason: READ_ONLY_REASON };
}

/** The allow rule covering a part, "read-only" for a built-in read-only command, null when nothing covers it. */
function allowedPart(rules: RunRules, p: CommandPart): Decision | "read-only" | null {
  // Through sudo or doas only a rule for the whole line as written covers it.
  if (p.privileged) return firstMatch(rules.allow, [p.forms[0]!]) ?? null;
  const final = formText(p.words);
  return firstMatch(rules.allow, [final]) ?? (isReadOnly(p.words) ? "read-only" : null);
}

function firstMatch(rules: readonly RunRule[], candidates: readonly string[]): Decision | undefined {
  for (const r of rules) for (const c of candidates) if (r.re.test(c)) return r.result;
  return undefined;
}

function collapse(s: string): string {
  return s.trim().replace(/\s+/g, " ");
}

function shorten(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
}
