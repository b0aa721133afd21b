import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import {
  compilePolicy,
  decide,
  parseRule,
  ruleTarget,
  ruleText,
  type Effect,
  type Rule,
} from "../core/policy/policy.ts";
import { type EnvSettings, DROP_REASONS, refusedVariable, SCRATCH_BOUND } from "../core/sandbox/command-env.ts";
import { closest } from "../core/did-you-mean.ts";
import { isMcpRuleText, parseMcpRule, type McpRule } from "../core/policy/mcp-rules.ts";
import { DEFAULT_LIMITS, type ToolLimits } from "../core/tool-limits.ts";
import { isInside, realPathLoose } from "../core/workspace.ts";
import { ConfigError } from "../core/errors/config-error.ts";

/** Where settings come from: the two files' roots and the trusted CLI flags. */
export interface SettingsInput {
  /** Real path of the workspace root; its `.pencil/settings.json` is read but not trusted. */
  workspaceRoot: string;
  /** PENCIL_HOME; its `settings.json` is the user's own, trusted file. */
  pencilHome: string;
  /** `--allow RULE` flags, trusted like the user file. */
  cliAllow: string[];
  /** `--deny RULE` flags. */
  cliDeny: string[];
  /** Home directory `~/` expands to (default: the OS home). */
  home?: string;
}

/** Merged settings, ready for compilePolicy and the tools. */
export interface Settings {
  rules: Rule[];
  limits: ToolLimits;
  /**
   * How run_command's sandbox is set up: `network` (default false) lets commands reach the network; `env`
   * (sandbox.env) sets or removes variables of the commands' environment, the owner's file and the workspace's apart.
   */
  sandbox: { network: boolean; env: EnvSettings };
  /** One sentence per ignored or pointless setting; the caller shows them. */
  warnings: string[];
  /** Settings files that existed and were read, user file first. */
  files: string[];
  /** `Mcp(server/tool-glob)` rules (core/policy/mcp-rules.ts); a workspace file's allow rules are not among them. */
  mcpRules: McpRule[];
  /** `git.commitButton` in the user's file: the bot's card offers "Approve all & commit" (off by default). */
  gitCommitButton: boolean;
  /**
   * `review` in the user's file: `intentCheck` (default true) asks the chat model once per changeset whether the
   * diff does what the goal asked; `intentSeconds` (default 8) is how long that answer is waited for.
   */
  review: ReviewSettings;
  /** The user file's `mcpServers`, unparsed (tools/mcp/config.ts checks it); a workspace file's is ignored. */
  mcpServers?: unknown;
}

/** The review's own settings (`review.*`), the owner's alone. */
interface ReviewSettings {
  intentCheck: boolean;
  intentSeconds: number;
}

/**
 * How long the intent check's answer is waited for by default: one short structured completion (a few
 * thousand tokens in, a sentence out) that a cloud model answers in one to three seconds; eight leave room
 * for a slow first byte while the summary still comes without a wait anyone minds.
 */
export const DEFAULT_INTENT_SECONDS = 8;
/** The longest intentSeconds accepted: the review waits this long at most. */
const MAX_INTENT_SECONDS = 120;

/** Largest settings file read: anything bigger is not a hand-written settings file. */
const MAX_SETTINGS_BYTES = 1024 * 1024;

const SHAPE_HELP =
  'A settings file looks like {"permissions": {"deny": [], "ask": [], "allow": ["Read(../shared-lib/**)"]}, "limits": {"maxFileBytes": 2097152}}.';

const ruleList = z.array(z.string());
const limitKeys = Object.keys(DEFAULT_LIMITS) as (keyof ToolLimits)[];
const SettingsSchema = z.looseObject({
  permissions: z
    .looseObject({ deny: ruleList.optional(), ask: ruleList.optional(), allow: ruleList.optional() })
    .optional(),
  limits: z
    .looseObject(Object.fromEntries(limitKeys.map((k) => [k, z.number().int().positive().optional()])))
    .optional(),
  sandbox: z
    .looseObject({
      network: z.boolean().optional(),
      env: z.record(z.string(), z.union([z.string(), z.null()])).optional(),
    })
    .optional(),
  review: z
    .looseObject({
      intentCheck: z.boolean({ error: "true or false (false: no intent check)" }).optional(),
      intentSeconds: z
        .number({ error: `a number of seconds, from 1 to ${MAX_INTENT_SECONDS}` })
        .min(1, `at least 1 second`)
        .max(MAX_INTENT_SECONDS, `at most ${MAX_INTENT_SECONDS} seconds`)
        .optional(),
    })
    .optional(),
});
type SettingsFile = z.infer<typeof SettingsSchema>;

// Keys that, in tools Pencil is often compared with, switch off or loosen permission checks.
const MODE_KEY = /mode|^bypass|^dangerous|skip.*permission|^yolo|^trust|additionalDirectories/i;
const KNOWN_TOP = new Set(["permissions", "limits", "sandbox", "$schema", "mcpServers", "git", "review"]);
const EFFECTS: readonly Effect[] = ["deny", "ask", "allow"];
/** The keys under `sandbox` (each validated by SettingsSchema). */
const SANDBOX_KEYS: readonly string[] = ["network", "env"];
/** The keys under `review`. */
const REVIEW_KEYS: readonly string[] = ["intentCheck", "intentSeconds"];

/**
 * How far a layer of settings is trusted, as gemini-cli's policy tiers: `user` (your
 * own file under $PENCIL_HOME, and the flags you type) may loosen anything;
 * `workspace` (a repository's file, written by whoever wrote the repository) may only
 * tighten — what would weaken safety is ignored with a warning.
 */
type Trust = "user" | "workspace";

/** One source of settings: its trust, the file it came from (none for flags), and the rule source per effect. */
interface Layer {
  trust: Trust;
  file: string | null;
  settings: SettingsFile;
  source: (effect: Effect) => string;
}

/**
 * Merges the layers in order — `$PENCIL_HOME/settings.json` (user), then
 * `<workspace>/.pencil/settings.json` (workspace), then the CLI flags (user) — and
 * returns the merged rules and limits. Throws ConfigError naming the file (and
 * rule) for malformed JSON, wrong types or a bad rule.
 */
export function loadSettings(input: SettingsInput): Settings {
  const home = input.home ?? homedir();
  const userFile = join(input.pencilHome, "settings.json");
  const wsFile = join(input.workspaceRoot, ".pencil", "settings.json");
  const warnings: string[] = [];
  const files: string[] = [];
  const rules: Rule[] = [];
  const limits: ToolLimits = { ...DEFAULT_LIMITS };
  const sandbox = { network: false, env: { owner: {}, workspace: {} } as EnvSettings };
  const mcpRules: McpRule[] = [];
  let mcpServers: unknown;
  let gitCommitButton = false;
  const review: ReviewSettings = { intentCheck: true, intentSeconds: DEFAULT_INTENT_SECONDS };
  const roots = { workspaceRoot: realPathLoose(input.workspaceRoot).real, home: realPathLoose(home).real };
  // The rules-free policy answers "is this built-in denied?" for the pointless-allow warnings.
  const builtins = compilePolicy({ ...roots, pencilHome: input.pencilHome, rules: [] });

  const keep = (rule: Rule) => {
    if (rule.effect === "allow") {
      const why = pointless(rule);
      if (why) {
        warnings.push(`The allow rule ${ruleText(rule)} ${where(rule.source)} has no effect: ${why}`);
        return;
      }
    }
    rules.push(rule);
  };
  const pointless = (rule: Rule): string | null => {
    if (rule.kind === "Run")
      return rule.pattern.match(/[;&|`<>]|\$\(/) ? "commands with shell operators are never allowed by a rule." : null;
    if (rule.kind === "Net") return null;
    const { base, glob } = ruleTarget(rule, roots);
    // Glob characters stay literal in the probe path, so a literal `.env` or `.git` component still shows up.
    const probe = glob === null ? base : (base === "/" ? "/" : base + "/") + glob;
    const verdict = decide(builtins, {
      tool: "settings",
      access: rule.kind === "Read" ? "read" : "write",
      real: probe,
    });
    return verdict.decision === "deny" && verdict.rule === undefined ? verdict.reason : null;
  };
  /** Why a workspace layer's allow rule is ignored, or null when it may stand. */
  const workspaceAllowRefusal = (rule: Rule, file: string): string | null => {
    if (rule.kind === "Run") {
      return `Ignored ${ruleText(rule)} in ${file}: a workspace settings file cannot allow commands. Put it in ${userFile} or pass --allow if you trust it.`;
    }
    if (rule.kind === "Net") {
      return `Ignored ${ruleText(rule)} in ${file}: a workspace settings file cannot let data leave the machine unasked. Put it in ${userFile} or pass --allow if you trust it.`;
    }
    const { base } = ruleTarget(rule, roots);
    if (isInside(roots.workspaceRoot, base)) return null;
    return `Ignored ${ruleText(rule)} in ${file}: a workspace settings file cannot allow access outside the workspace (it points to ${base}). Put it in ${userFile} or pass --allow if you trust it.`;
  };

  // Read lazily, one after the other: a bad user file is reported before the workspace file is looked at.
  const layers: (() => Layer | undefined)[] = [
    () => {
      const settings = readSettingsFile(userFile);
      return settings && { trust: "user", file: userFile, settings, source: () => userFile };
    },
    () => {
      if (realPathLoose(wsFile).real === realPathLoose(userFile).real) return undefined;
      const settings = readSettingsFile(wsFile);
      return settings && { trust: "workspace", file: wsFile, settings, source: () => wsFile };
    },
    () => ({
      trust: "user",
      file: null,
      settings: { permissions: { deny: input.cliDeny, allow: input.cliAllow } },
      source: (effect) => `--${effect}`,
    }),
  ];
  for (const load of layers) {
    const layer = load();
    if (!layer) continue;
    const { trust, file, settings } = layer;
    const narrowOnly = trust === "workspace";
    if (file !== null) {
      files.push(file);
      warnUnknownKeys(settings, file, narrowOnly, warnings);
    }
    for (const effect of EFFECTS) {
      for (const text of settings.permissions?.[effect] ?? []) {
        if (isMcpRuleText(text)) {
          const mcp = parseMcpRule(text, effect, layer.source(effect));
          if (narrowOnly && effect === "allow")
            warnings.push(
              `Ignored ${text} in ${file}: a workspace settings file cannot allow MCP tools. Put it in ${userFile} if you trust it.`,
            );
          else mcpRules.push(mcp);
          continue;
        }
        const rule = parseRule(text, effect, layer.source(effect));
        const refused = narrowOnly && effect === "allow" ? workspaceAllowRefusal(rule, file!) : null;
        if (refused) warnings.push(refused);
        else keep(rule);
      }
    }
    for (const key of limitKeys) {
      const value = settings.limits?.[key];
      if (value === undefined) continue;
      if (narrowOnly && value > limits[key]) {
        warnings.push(
          `Ignored limits.${key} = ${value} in ${file}: a workspace settings file can only lower a limit (it is ${limits[key]}). Raise it in ${userFile}.`,
        );
      } else limits[key] = value;
    }
    const network = settings.sandbox?.network;
    if (narrowOnly && network === true) {
      warnings.push(
        `Ignored sandbox.network in ${file}: a workspace settings file cannot open the network to commands. Set it in ${userFile} if you trust it.`,
      );
    } else if (network !== undefined) sandbox.network = network;
    if (settings.sandbox?.env && file !== null)
      Object.assign(
        sandbox.env[trust === "user" ? "owner" : "workspace"],
        envEntries(settings.sandbox.env, file, warnings),
      );
    // Committing and MCP servers are the user's own to turn on: a workspace file only proposes servers, in .pencil/mcp.json.
    if (narrowOnly) {
      if (settings.git !== undefined)
        warnings.push(`Ignored git in ${file}: only your own settings (${userFile}) can turn on committing.`);
      // What the review tells the owner is the owner's to change, not the repository's under review.
      if (settings.review !== undefined)
        warnings.push(`Ignored review in ${file}: only your own settings (${userFile}) change what the review shows.`);
      if (settings.mcpServers !== undefined) {
        warnings.push(
          `Ignored mcpServers in ${file}: a workspace can only propose MCP servers, in .pencil/mcp.json, and each waits for your approval.`,
        );
      }
    } else {
      if (settings.mcpServers !== undefined) mcpServers = settings.mcpServers;
      const git = settings.git as { commitButton?: unknown } | undefined;
      if (git && typeof git === "object" && git.commitButton === true) gitCommitButton = true;
      if (settings.review?.intentCheck !== undefined) review.intentCheck = settings.review.intentCheck;
      if (settings.review?.intentSeconds !== undefined) review.intentSeconds = settings.review.intentSeconds;
    }
  }
  if (limits.commandSeconds > limits.commandSecondsMax) {
    // Each layer is valid alone (a workspace lowered the cap below the owner's default): the cap wins, said.
    warnings.push(
      `limits.commandSeconds (${limits.commandSeconds}) is over limits.commandSecondsMax (${limits.commandSecondsMax}): commands get ${limits.commandSecondsMax} s. Lower commandSeconds or raise commandSecondsMax in ${userFile}.`,
    );
    limits.commandSeconds = limits.commandSecondsMax;
  }
  return {
    rules,
    limits,
    sandbox,
    warnings,
    files,
    mcpRules,
    gitCommitButton,
    review,
    ...(mcpServers !== undefined ? { mcpServers } : {}),
  };
}

/** A variable name sandbox.env accepts: what a shell can export. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The entries of one file's sandbox.env that may stand: a bad name or value stops (ConfigError); a variable Pencil
 * sets itself (HOME, TMPDIR…) or one that may never reach a command (a credential, Pencil's own key, a host socket)
 * is ignored with a warning, from any file.
 */
function envEntries(
  entries: Record<string, string | null>,
  file: string,
  warnings: string[],
): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(entries)) {
    if (!ENV_NAME.test(name))
      throw new ConfigError(
        `${file}: sandbox.env has the variable name ${JSON.stringify(name)}: a name is letters, digits and _, not starting with a digit. Fix or remove it.`,
        file,
      );
    if (value?.includes("\0"))
      throw new ConfigError(
        `${file}: sandbox.env.${name} holds a NUL byte, which no environment can: remove it.`,
        file,
      );
    if (SCRATCH_BOUND.includes(name)) {
      warnings.push(
        `Ignored sandbox.env.${name} in ${file}: Pencil sets ${name} itself (to the command's scratch, where it may write).`,
      );
      continue;
    }
    const why = value === null ? null : refusedVariable(name, value);
    if (why) {
      warnings.push(
        `Ignored sandbox.env.${name} in ${file}: it is never passed to commands (${DROP_REASONS[why]}), since what a command prints reaches the model.`,
      );
      continue;
    }
    out[name] = value;
  }
  return out;
}

/** Reads and validates one settings file; undefined when it does not exist. */
function readSettingsFile(file: string): SettingsFile | undefined {
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile())
      throw new ConfigError(`${file} is not a regular file: settings must be a JSON file. Remove or replace it.`, file);
    size = st.size;
  } catch (error) {
    if (ConfigError.isInstance(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new ConfigError(`Cannot read ${file} (${code ?? String(error)}): fix its permissions or remove it.`, file);
  }
  if (size > MAX_SETTINGS_BYTES) {
    throw new ConfigError(
      `${file} is ${size} bytes, more than a settings file needs (1 MiB at most): remove or shorten it.`,
      file,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new ConfigError(
      `${file} is not valid JSON (${(error as Error).message}): fix the syntax (no comments or trailing commas) or remove the file. ${SHAPE_HELP}`,
      file,
    );
  }
  const parsed = SettingsSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const at = issue.path.length > 0 ? issue.path.join(".") : "the top level";
      return `${at}: ${issue.message}`;
    });
    throw new ConfigError(`${file} has the wrong shape (${problems.join("; ")}). ${SHAPE_HELP}`, file);
  }
  return parsed.data;
}

/** Every setting a settings file may hold, as dotted paths (for the unknown-key warning). */
function knownSettings(): string[] {
  return [
    ...EFFECTS.map((e) => `permissions.${e}`),
    ...limitKeys.map((k) => `limits.${k}`),
    ...SANDBOX_KEYS.map((k) => `sandbox.${k}`),
    "mcpServers",
    "git.commitButton",
    ...REVIEW_KEYS.map((k) => `review.${k}`),
    "telegram.workspaces",
    "$schema",
  ];
}

/** Warns about keys Pencil does not know, with a guess and the whole list; in a workspace file, mode switches get a sharper warning. */
function warnUnknownKeys(settings: SettingsFile, file: string, workspace: boolean, warnings: string[]): void {
  const check = (key: string, at: string, siblings: readonly string[]) => {
    if (workspace && MODE_KEY.test(key)) {
      warnings.push(`Ignored "${at}" in ${file}: a workspace settings file cannot switch or loosen permission checks.`);
    } else {
      const guess = closest(key, [...siblings]);
      const prefix = at.slice(0, at.length - key.length);
      warnings.push(
        `Ignored unknown setting "${at}" in ${file}${guess ? ` (did you mean "${prefix}${guess}"?)` : ""}. The settings are: ${knownSettings().join(", ")}.`,
      );
    }
  };
  for (const key of Object.keys(settings)) {
    if (key === "telegram") {
      // Which paths the bot may switch to is the owner's call alone (read by the bot from the user file).
      if (workspace)
        warnings.push(
          `Ignored "telegram" in ${file}: only your own settings file lists the workspaces the bot may work on.`,
        );
    } else if (!KNOWN_TOP.has(key)) check(key, key, [...KNOWN_TOP, "telegram"]);
  }
  for (const key of Object.keys(settings.permissions ?? {})) {
    if (!(EFFECTS as readonly string[]).includes(key)) check(key, `permissions.${key}`, EFFECTS);
  }
  for (const key of Object.keys(settings.limits ?? {})) {
    if (!(limitKeys as string[]).includes(key)) check(key, `limits.${key}`, limitKeys);
  }
  for (const key of Object.keys(settings.sandbox ?? {})) {
    if (!SANDBOX_KEYS.includes(key)) check(key, `sandbox.${key}`, SANDBOX_KEYS);
  }
  for (const key of Object.keys(settings.review ?? {})) {
    if (!REVIEW_KEYS.includes(key)) check(key, `review.${key}`, REVIEW_KEYS);
  }
}

function where(source: string): string {
  return source.startsWith("--") ? `given with ${source}` : `in ${source}`;
}
