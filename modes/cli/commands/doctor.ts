import { installation } from "../../../core/installation.ts";
import { accessSync, constants, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { modelSpecs, type ModelSpec } from "../../../ai/model-specs.ts";
import { createRuntime } from "../../../app/runtime.ts";
import { pencilHomeOf, type Env } from "../../../core/pencil-home.ts";
import { ChangesetStore } from "../../../core/staging/changeset-store.ts";
import { entryIds, readEntry } from "../../../core/apply/journal.ts";
import { describeInstructions, instructionsFor } from "../../../app/project-instructions.ts";
import { McpApprovals, type McpServerConfig, readProposals } from "../../../tools/mcp/config.ts";
import { bindingOf, inspectServer } from "../../../tools/mcp/confine.ts";
import { findInterruptedApplies } from "../../../core/apply/recovery.ts";
import { DROP_REASONS, planCommandEnv, type EnvSettings } from "../../../core/sandbox/command-env.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { SCRATCH_ENV } from "../../../core/scratch/overlay.ts";
import { useOverlay } from "../../../tools/run-command.ts";
import { readBotAccess } from "../../telegram/config.ts";
import { readIgnoredSenders } from "../../telegram/ignored-senders.ts";
import { wrapText } from "../../../render/wrap.ts";
import { describeModel, type ModelEntry, modelOverview } from "../model-overview.ts";
import type { CommandContext } from "../command-context.ts";

/** One line of the doctor's report: what was checked, how it stands, and the fix when it is not ok. */
interface Check {
  name: string;
  status: "ok" | "warn" | "fail";
  detail: string;
  fix?: string;
  /** The models check's models, each with where it was chosen and its price (in `--json`). */
  models?: ModelEntry[];
}

const DEFAULT_BASE: Record<string, string> = {
  groq: "https://api.groq.com/openai/v1",
  openrouter: "https://openrouter.ai/api/v1",
};

/** `pencil doctor [--json]`: what is configured and what is missing, with the fix for each. Exit 2 when something needed fails. */
export async function run(ctx: CommandContext): Promise<number> {
  const checks: Check[] = [];
  checks.push(checkConfigFiles(ctx));
  checks.push(...checkWorkspace(ctx));
  checks.push(...(await checkModels(ctx.env, ctx.args.model, configPlaces(ctx))));
  checks.push(...checkModelChoice(ctx));
  checks.push(checkRipgrep());
  checks.push(checkSandbox(ctx));
  checks.push(...checkStore(ctx.env));
  checks.push(...checkTelegram(ctx.env));
  checks.push(...(await checkBrain(ctx.env)));
  checks.push(
    checkOptional(
      ctx.env,
      "FIRECRAWL_API_KEY",
      "web search for plan and ask",
      "set FIRECRAWL_API_KEY to let plan and ask search the web",
    ),
  );
  const { io } = ctx;
  if (ctx.args.json) {
    io.out(`${JSON.stringify(checks, null, 2)}\n`);
  } else {
    const c = io.colors;
    for (const check of checks) {
      const mark = check.status === "ok" ? c.green("✓") : check.status === "warn" ? c.yellow("!") : c.red("✗");
      io.out(`${wrapText(`${mark} ${c.bold(check.name)}: ${check.detail}`, io.columns, "  ")}\n`);
      if (check.fix)
        io.out(
          `${wrapText(`  ${c.dim("fix:")} ${check.fix.replace(/\bpencil (?=[a-z])/g, `${io.invocation ?? "pencil"} `)}`, io.columns, "       ")}\n`,
        );
    }
  }
  return checks.some((c) => c.status === "fail") ? 2 : 0;
}

function checkWorkspace(ctx: CommandContext): Check[] {
  try {
    const runtime = createRuntime({
      env: ctx.env,
      ...(ctx.args.workspace ? { workspace: ctx.args.workspace } : {}),
      allow: ctx.args.allow,
      deny: ctx.args.deny,
      projectDoc: !ctx.args.noProjectDoc,
    });
    const out: Check[] = [{ name: "workspace", status: "ok", detail: runtime.ws.root }];
    out.push({
      name: "settings",
      status: runtime.settings.warnings.length ? "warn" : "ok",
      detail: runtime.settings.files.length
        ? `read ${runtime.settings.files.join(", ")}`
        : "no settings files (built-in rules only)",
      ...(runtime.settings.warnings.length ? { fix: runtime.settings.warnings.join(" ") } : {}),
    });
    out.push(checkCommandEnv(ctx.env, runtime.settings.sandbox.env, runtime.settings.sandbox.network));
    const loaded = instructionsFor(runtime);
    out.push({
      name: "project instructions",
      status: loaded.skipped.length > 0 ? "warn" : "ok",
      detail: runtime.projectDoc ? describeInstructions(loaded) : "off (--no-project-doc)",
      ...(loaded.skipped.length > 0
        ? {
            fix: "a skipped AGENTS.md is a symlink or hard link to a file the policy does not let Pencil read, or past the 32 KiB cap; make it a plain file in the workspace",
          }
        : {}),
    });
    // Listed, not started: doctor never runs a server.
    const proposals = readProposals(runtime.ws.root);
    const approvals = new McpApprovals(runtime.pencilHome);
    // Approvals are bound to the program's content and where its paths lead: found as a run would, nothing started.
    const bindingFor = (p: McpServerConfig) =>
      p.kind === "stdio"
        ? bindingOf(
            inspectServer(p.command, p.args, {
              workspaceRoot: runtime.ws.root,
              home: runtime.ws.home,
              pencilHome: runtime.pencilHome,
              policy: runtime.policy,
              scanLinks: false,
            }),
          )
        : undefined;
    const unapproved = proposals.servers.filter((p) => !approvals.approved(runtime.ws.root, p, bindingFor(p)));
    if (runtime.mcpServers.length > 0 || proposals.servers.length > 0 || proposals.warning) {
      out.push({
        name: "MCP servers",
        status: unapproved.length > 0 || proposals.warning ? "warn" : "ok",
        detail:
          [
            ...runtime.mcpServers.map((s) => `${s.name} (${s.kind})`),
            ...proposals.servers.map(
              (s) =>
                `${s.name} (${s.kind}, proposed by .pencil/mcp.json, ${unapproved.includes(s) ? "not approved" : "approved"})`,
            ),
          ].join(", ") || "none",
        ...(unapproved.length > 0 || proposals.warning
          ? {
              fix:
                proposals.warning ??
                "a proposed server starts only after you approve its exact command in an agent run at a terminal",
            }
          : {}),
      });
    }
    return out;
  } catch (error) {
    const e = error as Error & { file?: string };
    return [
      {
        name: "workspace and settings",
        status: "fail",
        detail: e.message,
        fix: e.file ? `correct ${e.file}` : "pass an existing directory with -w",
      },
    ];
  }
}

/** Every configuration file read at start, by name, and the ones that could have been. */
function checkConfigFiles(ctx: CommandContext): Check {
  const sources = ctx.config;
  if (!sources) return { name: "configuration", status: "ok", detail: "the environment only" };
  const read = [...sources.bun, ...(sources.user.read ? [sources.user.path] : [])];
  const detail =
    (read.length ? `read ${read.join(", ")}` : "read no .env file") +
    ` (also looked for ${[...sources.bunMissing, ...(sources.user.read ? [] : [sources.user.path])].join(", ")}); a workspace's .env is never read`;
  if (sources.user.error)
    return {
      name: "configuration",
      status: "warn",
      detail: `${sources.user.path}: ${sources.user.error}`,
      fix: `make ${sources.user.path} a readable KEY=value file`,
    };
  return { name: "configuration", status: "ok", detail };
}

/** Where a variable can be put so that Pencil reads it. */
function configPlaces(ctx: CommandContext): string {
  // An installed package's folder is replaced on every upgrade: only a clone's own .env is worth suggesting.
  const own = installation().kind === "clone" ? (ctx.config?.bun[0] ?? ctx.config?.bunMissing[0]) : undefined;
  const user = ctx.config?.user.path;
  return [own, user].filter(Boolean).join(" or ") || ".env";
}

async function checkModels(env: Env, override: string | undefined, places: string): Promise<Check[]> {
  let specs: ModelSpec[];
  try {
    specs = modelSpecs(env, override);
  } catch (error) {
    // The message says what is wrong, then what to do: the detail and the fix, never two different stories.
    const message = (error as Error).message;
    const split = /^(.*?)(?:: |\. )(.*)$/s.exec(message);
    const detail = split ? split[1]! : message;
    if (/^No model is configured/.test(message)) {
      return [
        {
          name: "model",
          status: "fail",
          detail: `${detail} (none of GROQ_API_KEY, OPENROUTER_API_KEY, LOCAL_LLM_BASE_URL is set)`,
          fix: `set GROQ_API_KEY (or OPENROUTER_API_KEY, or LOCAL_LLM_BASE_URL + LOCAL_LLM_MODEL) in the environment or in ${places}; pencil demo needs none`,
        },
      ];
    }
    // "X is set but Y is not: set it to …" — the fix names Y, as the detail does.
    const named = detail.match(/\b[A-Z][A-Z0-9_]{2,}\b/g)?.at(-1);
    const todo = (split ? split[2]! : "set the variable named above")
      .replace(/\.$/, "")
      .replace(/^set it\b/, named ? `set ${named}` : "set it");
    return [{ name: "model", status: "fail", detail, fix: `${todo} (in the environment, or in ${places})` }];
  }
  return Promise.all(specs.map((spec, i) => reachModel(spec, i === 0 ? "primary model" : "fallback model")));
}

/** Which models a run would use (chat chain, embeddings, vision), where each was chosen, and whether it has a price. */
function checkModelChoice(ctx: CommandContext): Check[] {
  const models = modelOverview(ctx.env, ctx.args.model, pencilHomeOf(ctx.env), ctx.config);
  if (models.length === 0) return [];
  return [
    {
      name: "models",
      status: "ok",
      detail: `what a run would use (telegram.prices gives a model its price):\n${models.map((m) => `  ${describeModel(m)}`).join("\n")}`,
      models,
    },
  ];
}

/** Asks the provider's /models endpoint, briefly: reachable and accepting the key, or not and why. */
async function reachModel(spec: ModelSpec, role: string): Promise<Check> {
  const base = (spec.baseURL ?? DEFAULT_BASE[spec.provider] ?? "").replace(/\/+$/, "");
  const name = `${role} ${spec.label}`;
  try {
    const response = await fetch(`${base}/models`, {
      headers: { authorization: `Bearer ${spec.apiKey}` },
      signal: AbortSignal.timeout(4000),
    });
    if (response.ok) return { name, status: "ok", detail: `reachable at ${base}` };
    if (response.status === 401 || response.status === 403)
      return {
        name,
        status: "fail",
        detail: `${base} refused the key (HTTP ${response.status})`,
        fix: `check the ${spec.provider.toUpperCase()} key`,
      };
    return {
      name,
      status: "warn",
      detail: `${base} answered HTTP ${response.status}`,
      fix: "the provider may be down; the fallback takes over when configured",
    };
  } catch (error) {
    return {
      name,
      status: "warn",
      detail: `${base} not reachable (${(error as Error).message})`,
      fix: "check the network or the *_BASE_URL variable",
    };
  }
}

/**
 * What run_command's commands get of this environment, by name (values are never printed): the owner's variables
 * passed, those Pencil or sandbox.env set, and those left out with the reason.
 */
export function checkCommandEnv(env: Env, settings: EnvSettings, network: boolean): Check {
  const plan = planCommandEnv(
    env,
    { home: "<scratch>/home", tmp: "<scratch>/tmp" },
    { settings, ...(env.HOME ? { realHome: env.HOME } : {}) },
  );
  const setBy = new Map(plan.set.map((x) => [x.name, x.by]));
  const passed = Object.keys(plan.env)
    .filter((n) => !setBy.has(n))
    .sort();
  const bySetter = new Map<string, string[]>();
  for (const { name, by } of plan.set) bySetter.set(by, [...(bySetter.get(by) ?? []), name]);
  const byReason = new Map<string, string[]>();
  for (const { name, why } of plan.dropped) byReason.set(why, [...(byReason.get(why) ?? []), name]);
  const parts = [
    `commands get your environment: ${passed.length ? passed.join(", ") : "(nothing of it)"}`,
    ...[...bySetter].map(([by, names]) => `set by ${by}: ${names.sort().join(", ")}`),
    network
      ? "also the proxy and CA variables (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, …) pointing at Pencil's proxy, which asks for each host"
      : "also the proxy variables (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, …), pointing at a proxy that refuses every request at once, since the network is off (sandbox.network opens it)",
    ...[...byReason].map(
      ([why, names]) => `not passed, ${DROP_REASONS[why as keyof typeof DROP_REASONS]}: ${names.sort().join(", ")}`,
    ),
    "no CI, NO_COLOR or TERM is added; what the model reads has colour codes removed",
    'sandbox.env in your settings sets a variable ("NAME": "value") or removes one ("NAME": null)',
  ];
  return { name: "command environment", status: "ok", detail: parts.join("; ") };
}

function checkRipgrep(): Check {
  const rg = Bun.which("rg");
  return rg
    ? { name: "ripgrep", status: "ok", detail: rg }
    : {
        name: "ripgrep",
        status: "warn",
        detail: "not found: search uses its built-in engine (same results, slower on big trees)",
        fix: "install ripgrep (apt install ripgrep, brew install ripgrep)",
      };
}

function checkSandbox(ctx: CommandContext): Check {
  const shell = Bun.which("bash") ?? Bun.which("sh");
  if (!sandboxAvailable()) {
    return {
      name: "sandbox",
      status: "warn",
      detail:
        "no sandbox for run_command here (Linux user namespaces with unshare and setpriv are needed): every command is asked about, each time, and runs with your full permissions if you allow it",
      fix: "on Linux, install util-linux and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)",
    };
  }
  try {
    const dir = mkdtempSync(join(tmpdir(), "pencil-doctor-"));
    rmSync(dir, { recursive: true, force: true });
  } catch (error) {
    return {
      name: "sandbox",
      status: "fail",
      detail: `cannot create scratch copies in ${tmpdir()}: ${(error as Error).message}`,
      fix: "set TMPDIR to a writable directory",
    };
  }
  let wsRoot = ctx.args.workspace ?? process.cwd();
  try {
    wsRoot = realpathSync(wsRoot);
  } catch {
    // the workspace check says what is wrong with it
  }
  const forced = ctx.env[SCRATCH_ENV] === "copy";
  const scratch = useOverlay(wsRoot, forced ? { scratch: "copy" } : {})
    ? "copy-on-write (an overlay of the workspace in the command's namespace: nothing is copied, the diff reads only what the command changed)"
    : forced
      ? `a copy (${SCRATCH_ENV}=copy)`
      : "a copy (unprivileged overlayfs does not work here for this workspace)";
  return shell
    ? {
        name: "sandbox",
        status: "ok",
        detail: `run_command runs in a namespace (scratch in ${tmpdir()}), with ${shell}; network off unless sandbox.network is set in your settings, and then only through Pencil's proxy, which opens HTTPS with a CA of its own for each run (Net rules; every non-GET asked, https included); scratch: ${scratch}`,
      }
    : { name: "sandbox", status: "warn", detail: "no bash or sh on PATH: run_command cannot run", fix: "install bash" };
}

function checkStore(env: Env): Check[] {
  const home = pencilHomeOf(env);
  try {
    accessSync(home, constants.W_OK);
  } catch {
    return [
      {
        name: "state",
        status: "warn",
        detail: `${home} does not exist yet or is not writable`,
        fix: `it is created on first use; or set PENCIL_HOME to a writable directory`,
      },
    ];
  }
  const journalDir = join(home, "journal");
  const damaged: string[] = [];
  new ChangesetStore(home).list((file, error) => damaged.push(`${file} (${error.message})`));
  for (const id of entryIds(journalDir)) {
    try {
      readEntry(journalDir, id);
    } catch (error) {
      damaged.push(`${join(journalDir, id)} (${(error as Error).message})`);
    }
  }
  let interrupted: ReturnType<typeof findInterruptedApplies> = [];
  try {
    interrupted = findInterruptedApplies(journalDir);
  } catch {
    // A damaged entry marked as in progress: reported above.
  }
  return [
    { name: "state", status: "ok", detail: home },
    damaged.length
      ? {
          name: "damaged state",
          status: "fail",
          detail: `${damaged.length} file(s) under ${home} cannot be read: ${damaged.join("; ")}`,
          fix: "move each aside (mv PATH PATH.damaged): Pencil then ignores it; a damaged changeset has to be re-run, a damaged journal entry can no longer be undone",
        }
      : { name: "damaged state", status: "ok", detail: "every changeset and journal entry reads back whole" },
    interrupted.length
      ? {
          name: "journal",
          status: "fail",
          detail: `${interrupted.length} interrupted apply(s) or undo(s): ${interrupted.map((i) => i.applyId).join(", ")}`,
          fix: "pencil recover lists them; pencil recover finish|rollback ID settles one",
        }
      : { name: "journal", status: "ok", detail: "no interrupted apply" },
  ];
}

function checkTelegram(env: Env): Check[] {
  if (!env.TELEGRAM_BOT_TOKEN?.trim() && !env.TELEGRAM_OWNER_ID?.trim()) {
    return [
      {
        name: "telegram",
        status: "warn",
        detail: "not configured (optional)",
        fix: "create a bot with @BotFather (/newbot), put its token in ~/.pencil/.env as TELEGRAM_BOT_TOKEN, then run pencil telegram to pair your account (see docs/telegram.md)",
      },
    ];
  }
  // The bot's own reading of its settings, so doctor and `pencil telegram` never disagree.
  try {
    const access = readBotAccess(env);
    if (access.ownerId === null) {
      return [
        {
          name: "telegram",
          status: "warn",
          detail: `token set, no owner yet (TELEGRAM_OWNER_ID), API ${access.apiRoot}`,
          fix: "run pencil telegram in a terminal: it prints a six-digit code; send /start <code> to the bot from your own account to become its owner",
        },
      ];
    }
    const checks: Check[] = [
      { name: "telegram", status: "ok", detail: `owner ${access.ownerId}, API ${access.apiRoot}` },
    ];
    // Who wrote and was ignored: a wrong owner id leaves the bot silent for its real owner.
    for (const sender of readIgnoredSenders(pencilHomeOf(env)).slice(0, 3)) {
      const who = [sender.firstName, sender.username ? `@${sender.username}` : ""].filter(Boolean).join(" ");
      checks.push({
        name: "telegram",
        status: "warn",
        detail: `ignored ${sender.count} update(s) from sender ${sender.id}${who ? ` (${who})` : ""}, last ${sender.last}: the bot answers only its owner, user ${access.ownerId}, in their private chat`,
        fix: `if that was you, TELEGRAM_OWNER_ID is not your id: run pencil telegram --pair (it asks first), then send the bot /start <code> from that account; if it was not you, nothing to do`,
      });
    }
    return checks;
  } catch (error) {
    return [
      {
        name: "telegram",
        status: "fail",
        detail: (error as Error).message,
        fix: "fix the variable named above in .env",
      },
    ];
  }
}

async function checkBrain(env: Env): Promise<Check[]> {
  const { brainReport } = await import("../../../brain/brain-report.ts");
  const report = await brainReport(env);
  return [
    {
      name: "brain store",
      status: report.store.ok ? "ok" : "fail",
      detail: report.store.detail,
      ...(report.store.fix ? { fix: report.store.fix } : {}),
    },
    {
      name: "brain embeddings",
      status: report.embeddings.ok ? "ok" : "warn",
      detail: report.embeddings.detail,
      ...(report.embeddings.fix ? { fix: report.embeddings.fix } : {}),
    },
  ];
}

function checkOptional(env: Env, name: string, what: string, fix: string): Check {
  return env[name]?.trim()
    ? { name: what, status: "ok", detail: `${name} set` }
    : { name: what, status: "warn", detail: `${name} not set (optional)`, fix };
}
