import { formatBytes } from "../core/format-bytes.ts";
import { pencilHomeOf } from "../core/pencil-home.ts";
import { failureWindow } from "../core/failure-window.ts";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { z } from "zod";
import type { CommandOutcomeKind } from "../core/staging/command-record.ts";
import { stripANSI } from "bun";
import { planCommandEnv } from "../core/sandbox/command-env.ts";
import { placeSettings, showFilteredSettings } from "../core/sandbox/package-config.ts";
import { isFilteredSettingsName } from "../core/policy/settings-names.ts";
import { commandDenies, type Hiding, planHiding, secretPaths, shownReadOnly } from "../core/sandbox/hiding.ts";
import {
  runIn,
  sandboxKnown,
  sandboxProbe,
  type CommandRunOptions,
  type RunOutcome,
} from "../core/sandbox/namespace.ts";
import { diffScratch, sharedLeaks } from "../core/scratch/diff.ts";
import { DIFF_CAPS, type ScratchChange } from "../core/scratch/read-change.ts";
import { disposeScratch } from "../core/scratch/dispose.ts";
import { type KeptScratch, ScratchKeeper } from "../core/scratch/kept.ts";
import { makeScratch, stagedInside } from "../core/scratch/make.ts";
import { DEPENDENCY_DIRS } from "../core/scratch/share.ts";
import { overlayProbe, overlayWorks, SCRATCH_ENV, type ScratchKind } from "../core/scratch/overlay.ts";
import type { Scratch, ShareMode } from "../core/scratch/types.ts";
import { realPathLoose } from "../core/workspace.ts";
import type { PencilTool, ToolContext } from "./tool.ts";
import type { NetRequest } from "../core/policy/claims.ts";
import { ScratchError } from "../core/errors/scratch-error.ts";
import { ToolError } from "../core/errors/tool-error.ts";
import { DEFAULT_LIMITS } from "../core/tool-limits.ts";
import { builtinPolicy, type Effects, NOT_STAGED_CAP, stageChanges } from "./command-staging.ts";
import { NETWORK_FAILURE, networkOffReport } from "./network-off-report.ts";

/**
 * Where the command runs.
 * - `namespace` (Linux with unprivileged user namespaces and util-linux's
 *   `setpriv`): private user, mount, IPC and network namespaces. The scratch copy
 *   is mounted at the workspace's own path, shared directories are
 *   bind-mounted read-only, the real home directory and the host's
 *   /tmp, /var/tmp, /run and /dev/shm are covered by empty ones (the toolchain
 *   on PATH, the workspace and the scratch copy stay reachable; the temporary
 *   directories are fresh and writable), credentials, PENCIL_HOME, Pencil's
 *   own .env and host sockets are masked, every other mount is remounted
 *   read-only (/proc, /sys and /dev included), there is no network unless
 *   `network` is set, and the command runs with every capability dropped and
 *   no_new_privs, so it cannot unmount or remount any of that. Writes can
 *   reach only the scratch copy and the private temporary directories,
 *   whatever path the command uses. If any of that fails the command does not
 *   run (a ToolError says why).
 * - `plain` (anywhere else): NOT a sandbox. The command runs in the scratch
 *   copy at its temp path but with the user's full permissions: it can read
 *   and write anything the user can. The tool reports `sandboxed() === false`
 *   so the policy seam asks the owner before every such run.
 * - `auto`: `namespace` when the system allows it, else `plain`; a run whose
 *   namespace setup fails is refused, never downgraded to `plain`.
 */
export type SandboxChoice = "auto" | "namespace" | "plain";

/** Knobs of run_command; every one has a default. */
export interface RunCommandOptions extends CommandRunOptions {
  sandbox?: SandboxChoice;
  /** The scratch in the namespace sandbox: copy-on-write `overlay`, a `copy`, or `auto` (default `auto`: the overlay where it works, else the copy; PENCIL_SCRATCH=copy in Pencil's environment forces the copy). */
  scratch?: ScratchKind;
  /** Where scratch directories are made (default: the OS temp dir). */
  scratchParent?: string;
  /** Directory names always shared instead of copied (default DEPENDENCY_DIRS). */
  shareNames?: readonly string[];
  /** Ignored directories with more entries than this are shared (default 1000). */
  shareOver?: number;
  /**
   * Where the sandbox's searches of toolchain and system directories are saved for later processes (the app gives a
   * directory under PENCIL_HOME, which no command can reach); default none, each process searches afresh.
   */
  indexDir?: string;
  /** Entries a kept toolchain directory may hold to be searched whole for secrets and shown to the command (default SCAN_LIMIT, 1,000,000). */
  scanLimit?: number;
  /** Pencil's state directory, never visible to the command (default $PENCIL_HOME, else ~/.pencil). */
  pencilHome?: string;
  /**
   * Starts the proxy through which a sandboxed command with `network` reaches the network (the app passes
   * net/command-proxy's; tests may map host names). Without it, `network` in the sandbox gives no network.
   */
  startProxy?: StartProxy;
  /**
   * With the network off in the namespace sandbox, point the command's proxy variables at a proxy that refuses
   * every request at once and records its host (default true), so clients fail in milliseconds, saying why.
   */
  refuseNetwork?: boolean;
  /** The most milliseconds a call's `timeout` may ask for (default limits.commandSecondsMax of the context). */
  timeoutCapMs?: number;
}

/** A running proxy, as run_command uses it: what went through it, and how to stop it. */
export interface ProxyHandle {
  readonly log: { method: string; host: string; port: number; url?: string; allowed: boolean; refused?: string }[];
  /** The proxy's own CA (PEM), which signs what the command sees inside HTTPS tunnels; the command is told to trust it. */
  readonly caCertPem?: string;
  /** The system's trusted certificates and then that CA (PEM), for clients whose setting replaces their trust store. */
  readonly trustBundlePem?: string;
  close(): Promise<void>;
}

/** Starts a proxy on a unix socket that lets a request go when `reach` resolves true. */
export type StartProxy = (options: {
  socketPath: string;
  reach: (r: NetRequest) => Promise<boolean>;
}) => Promise<ProxyHandle>;

const input = z.object({
  command: z.string().min(1).describe("The shell command line to run (bash -c), from the workspace root."),
  timeout: z
    .number()
    .positive()
    .optional()
    .describe(
      "Seconds the command may run before it is killed (optional; default and cap in the tool's description). Ask for more only for a command known to be slow (a full build or test suite).",
    ),
});

/** `run_command`: runs a command in a scratch copy of workspace + overlay; the files it creates, changes or deletes come back staged. */
export function createRunCommandTool(options: RunCommandOptions = {}): PencilTool<z.infer<typeof input>> {
  // The copy-on-write scratch is kept across the commands of the run this tool belongs to (toolsFor makes one per run).
  const keeper = new ScratchKeeper();
  // The sandbox's probe starts now, in the background: by the first command (after a model's reply) it has its answer.
  if ((options.sandbox ?? "auto") !== "plain") void sandboxProbe();
  return {
    name: "run_command",
    description:
      "Run a shell command (bash -c) in a scratch copy of the workspace that includes your staged changes, e.g. tests, a build, a linter or a formatter. " +
      "Files it creates, modifies or deletes come back as staged changes for review; the real workspace is not changed. " +
      `No stdin; ${options.network ? "" : "no network access (installs and downloads fail: ask the user to allow network access or to run them); "}a ${Math.round(defaultLimitMs(options) / 1000)} s time limit unless \`timeout\` asks for another (at most ${Math.round(limitCapMs(options) / 1000)} s); secrets (.env files, API keys in the environment) are not available. ` +
      "You get the exit code and the end of the output.",
    inputSchema: input,
    claims: () => [],
    runCommand: ({ command }) => command,
    // A `namespace` choice never runs unconfined (it refuses instead), so only `plain` and an `auto` without namespaces are unsandboxed.
    sandboxed: () => {
      const choice = options.sandbox ?? "auto";
      if (choice !== "auto") return choice === "namespace";
      return sandboxKnown() ?? sandboxProbe();
    },
    async execute({ command, timeout }, ctx) {
      const limit = timeLimit(timeout, options, ctx);
      const text = await runCommand(command, ctx, { ...options, timeoutMs: limit.ms }, keeper);
      return limit.note ? `${text}\n${limit.note}` : text;
    },
    async close() {
      await keeper.close();
    },
  };
}

/** Milliseconds a command runs when its call asks for no `timeout`: the option, else limits.commandSeconds. */
function defaultLimitMs(options: RunCommandOptions, ctx?: ToolContext): number {
  return options.timeoutMs ?? (ctx?.limits.commandSeconds ?? DEFAULT_LIMITS.commandSeconds) * 1000;
}

/** The most milliseconds a call's `timeout` may ask for: the option, else limits.commandSecondsMax (never below the default). */
function limitCapMs(options: RunCommandOptions, ctx?: ToolContext): number {
  const cap = options.timeoutCapMs ?? (ctx?.limits.commandSecondsMax ?? DEFAULT_LIMITS.commandSecondsMax) * 1000;
  return Math.max(cap, defaultLimitMs(options, ctx));
}

/** The time limit of one call: its `timeout` up to the cap, else the default; a note when the ask was cut to the cap. */
function timeLimit(
  timeout: number | undefined,
  options: RunCommandOptions,
  ctx: ToolContext,
): { ms: number; note: string | null } {
  if (timeout === undefined || !Number.isFinite(timeout) || timeout <= 0)
    return { ms: defaultLimitMs(options, ctx), note: null };
  const cap = limitCapMs(options, ctx);
  const asked = Math.round(timeout * 1000);
  if (asked <= cap) return { ms: asked, note: null };
  return {
    ms: cap,
    note: `Note: the timeout asked for (${timeout} s) is over the cap, so the command had ${cap / 1000} s (limits.commandSecondsMax in the user's settings).`,
  };
}

/**
 * Runs `command` in a scratch of workspace + overlay, stages its file effects
 * through `ctx.fs`, and returns the model's text. The copy-on-write scratch
 * is `keeper`'s, kept for the run's later commands (without a keeper, one
 * made for this command alone); a copy is made for each command.
 */
async function runCommand(
  command: string,
  ctx: ToolContext,
  options: RunCommandOptions = {},
  keeper?: ScratchKeeper,
): Promise<string> {
  if (command.trim() === "") throw new ToolError("The command is empty: give the command line to run, e.g. bun test.");
  if (command.includes("\0")) throw new ToolError("The command contains a NUL byte: give a plain command line.");
  if (ctx.signal?.aborted) throw new ToolError("The run was cancelled before the command started.");
  const choice = options.sandbox ?? "auto";
  if (choice === "plain") return runCommandAs("plain", command, ctx, options, keeper, null);
  const known = sandboxKnown();
  if (known === false) return runUnsandboxed(choice, command, ctx, options, keeper);
  // Not known yet (the process's first command): planned for the namespace while its probe runs, and run there once
  // the probe passes; where it fails, nothing was started, and the command goes where a known answer would send it.
  try {
    return await runCommandAs("namespace", command, ctx, options, keeper, known === true ? null : sandboxProbe());
  } catch (error) {
    if (error !== NO_SANDBOX) throw error;
    return runUnsandboxed(choice, command, ctx, options, keeper);
  }
}

/** Where the namespace sandbox is not available: `auto` runs the command unconfined (plain), `namespace` refuses. */
function runUnsandboxed(
  choice: SandboxChoice,
  command: string,
  ctx: ToolContext,
  options: RunCommandOptions,
  keeper: ScratchKeeper | undefined,
): Promise<string> {
  if (choice === "namespace")
    throw new ToolError(
      "The namespace sandbox is not available on this system (unshare with user namespaces, or setpriv from util-linux, failed), so the command did not run.",
    );
  return runCommandAs("plain", command, ctx, options, keeper, null);
}

/** Thrown (and caught in runCommand) when the namespace's probe, awaited just before the command would start, failed. */
const NO_SANDBOX = new Error("the namespace sandbox is not available");

/**
 * Runs the command in `mode`. `probe`, when given, is the namespace sandbox's probe still running: the scratch and the
 * plan are made meanwhile, and the command starts only once it passed (else NO_SANDBOX, everything undone).
 */
async function runCommandAs(
  mode: ShareMode,
  command: string,
  ctx: ToolContext,
  options: RunCommandOptions,
  keeper: ScratchKeeper | undefined,
  probe: Promise<boolean> | null,
): Promise<string> {
  // The overlay's probe also runs while the namespace's does (each is a few processes, run once per process).
  const overlay = mode === "namespace" ? overlayWanted(ctx.ws.root, options) : Promise.resolve(false);
  const realHome = options.realHome ?? homedir();
  const pencilHome = options.pencilHome || pencilHomeOf(process.env);
  const builtins = builtinPolicy(ctx, pencilHome);
  const secrets = secretPaths(realHome, pencilHome, options.parentEnv ?? process.env);
  // The built-in read denies even when a caller forgot them, and credentials below home (the workspace may be the
  // home directory itself): never in the copy, masked where the sandbox would show them.
  const { hidden: denied, key: deniedKey } = commandDenies(builtins, secrets);
  // Plus the session's visibility for the copy (it says no to everything outside the workspace, so it cannot judge kept
  // toolchains). The package managers' settings files are among the built-in denies: the sandbox shows them filtered.
  const visible = (real: string) => ctx.visible(real) && !denied(real);
  const env: CommandSetting = { ctx, options, mode, realHome, pencilHome, secrets, denied, deniedKey, probe };
  // A link leading out of the workspace is kept when the sandbox shows its target read-only anyway (a virtualenv's
  // bin/python into /usr or a pyenv root on PATH); planned once, and only when the scratch meets such a link.
  let shown: Hiding | null = null;
  const linkVisible =
    mode === "namespace"
      ? (real: string) => {
          shown ??= hidingFor(env, join(options.scratchParent ?? tmpdir(), "pencil-link-probe"));
          return !denied(real) && shownReadOnly(shown, real);
        }
      : undefined;
  if (mode === "namespace" && (await overlay)) {
    const own = keeper ?? new ScratchKeeper();
    try {
      return await own.use(ctx.ws, ctx.fs, options.scratchParent, async (kept) => {
        let s: Scratch;
        try {
          s = kept.prepare(visible, options.writeCapBytes ?? ctx.limits.scratchWriteBytes, linkVisible);
        } catch (error) {
          kept.settle(null, null, () => false);
          throw scratchFailure(error);
        }
        return runPrepared(command, s, env, kept);
      });
    } catch (error) {
      // The kept scratch could not be opened (its parent inside the workspace, a full temp dir).
      throw ScratchError.isInstance(error) ? scratchFailure(error) : error;
    } finally {
      if (!keeper) await own.close();
    }
  }
  let s: Scratch;
  try {
    s = await makeScratch(ctx.ws, {
      fs: ctx.fs,
      visible,
      ...(linkVisible ? { linkVisible } : {}),
      share: mode,
      listHidden: isFilteredSettingsName,
      ...(options.scratchParent ? { parent: options.scratchParent } : {}),
      ...(options.shareNames ? { shareNames: options.shareNames } : {}),
      ...(options.shareOver !== undefined ? { shareOver: options.shareOver } : {}),
    });
  } catch (error) {
    throw scratchFailure(error);
  }
  return runPrepared(command, s, env, null);
}

/** What runPrepared needs besides the command and its scratch. */
interface CommandSetting {
  ctx: ToolContext;
  options: RunCommandOptions;
  mode: ShareMode;
  realHome: string;
  pencilHome: string;
  /** The credential places below home (secretPaths), found once per command. */
  secrets: readonly string[];
  denied: (real: string) => boolean;
  /** Names `denied` exactly, so the sandbox's searches for what it hides are remembered under it (HidingInput.hiddenKey). */
  deniedKey: string;
  /** The namespace sandbox's probe still running (see runCommandAs), or null: known to work. */
  probe: Promise<boolean> | null;
}

/** What the namespace sandbox hides for a command whose scratch is at `scratchRoot`. */
function hidingFor(
  { ctx, options, realHome, pencilHome, secrets, denied, deniedKey }: CommandSetting,
  scratchRoot: string,
): Hiding {
  const parentEnv = options.parentEnv ?? process.env;
  const proxied = options.network === true && typeof options.startProxy === "function";
  const refusing = options.network !== true && options.refuseNetwork !== false;
  return planHiding({
    realHome,
    pencilHome,
    wsRoot: ctx.ws.root,
    scratchRoot,
    // The command's own PATH (sandbox.env may set it): what it leads to is what must stay reachable.
    path: planCommandEnv(
      parentEnv,
      { home: "", tmp: "" },
      {
        ...(options.envSettings ? { settings: options.envSettings } : {}),
      },
    ).env.PATH!,
    env: parentEnv,
    secrets,
    hidden: denied,
    hiddenKey: deniedKey,
    ...(options.indexDir ? { indexDir: options.indexDir } : {}),
    ...(options.scanLimit !== undefined ? { scanLimit: options.scanLimit } : {}),
    // The forwarder to the proxy (or to the refusing one) is run by Pencil's own Bun.
    ...(proxied || refusing ? { keep: [dirname(process.execPath)] } : {}),
  });
}

function scratchFailure(error: unknown): ToolError {
  if (ToolError.isInstance(error)) return error;
  const why = ScratchError.isInstance(error)
    ? error.message
    : `${(error as Error).message ?? String(error)}. Free disk space in the temp directory or ask the user.`;
  return new ToolError(`The scratch copy for the command could not be made, so it did not run: ${why}`);
}

/** Runs `command` in the scratch `s` (the command's part of `kept` when kept), stages what it did, removes `s`. */
async function runPrepared(
  command: string,
  s: Scratch,
  setting: CommandSetting,
  kept: KeptScratch | null,
): Promise<string> {
  const { ctx, options, mode, pencilHome } = setting;
  const proxied = mode === "namespace" && options.network === true && typeof options.startProxy === "function";
  // The network off: requests through the proxy variables are refused at once, by a proxy that records their hosts.
  const refusing = mode === "namespace" && options.network !== true && options.refuseNetwork !== false;
  let proxy: ProxyHandle | null = null;
  try {
    // The owner's package-manager and version settings, and the workspace's hidden .npmrc, without their credentials.
    placeSettings(s, setting.realHome, options.parentEnv ?? process.env);
    const hiding = mode === "namespace" ? hidingFor(setting, s.root) : null;
    if (hiding) showFilteredSettings(s, hiding);
    if (setting.probe !== null && !(await setting.probe)) throw NO_SANDBOX;
    const at = new Date().toISOString();
    const writeCap = options.writeCapBytes ?? ctx.limits.scratchWriteBytes;
    // With nobody to judge a request (no seam), every one is refused.
    const reach = ctx.reach?.bind(ctx) ?? (async () => false);
    proxy = proxied
      ? await options.startProxy!({ socketPath: join(s.root, "proxy.sock"), reach: (r) => reach({ ...r, command }) })
      : refusing
        ? // node:http, the refusing proxy's server, loads with the first command that needs it.
          await (await import("../core/sandbox/refusing-proxy.ts")).startRefusingProxy(join(s.root, "proxy.sock"))
        : null;
    const outcome = await runIn(
      s,
      command,
      {
        ...options,
        writeCapBytes: writeCap,
        ...(proxy ? { proxySocket: join(s.root, "proxy.sock") } : {}),
        ...(proxy?.caCertPem && proxy.trustBundlePem
          ? { proxyCa: { cert: proxy.caCertPem, bundle: proxy.trustBundlePem } }
          : {}),
      },
      hiding,
      ctx.signal,
    );
    await proxy?.close();
    const connections = proxy ? [...proxy.log] : [];
    proxy = null;
    const effects: Effects = { staged: [], notStaged: 0, changes: null };
    const record = (kind: CommandOutcomeKind) =>
      ctx.recordCommand?.({
        command,
        at,
        outcome: kind,
        exitCode: kind === "exited" ? outcome.exitCode : null,
        durationMs: kind === "sandbox-failed" ? 0 : Math.round(outcome.durationMs),
        sandbox: kind === "sandbox-failed" ? null : s.share,
        staged: effects.staged,
        notStaged: effects.notStaged,
        network: !options.network ? "none" : s.share === "plain" ? "host" : proxied ? "proxy" : "none",
        connections,
      });
    if (outcome.setupFailure !== null) {
      record("sandbox-failed");
      // Never a silent downgrade to an unconfined run: the model (and through it the user) learns why nothing ran.
      throw new ToolError(
        `The sandbox could not be set up (${outcome.setupFailure}), so the command did not run. Tell the user: unprivileged user namespaces, bind mounts and setpriv must work for commands to run sandboxed (pencil doctor checks).`,
      );
    }
    let text = report(
      command,
      s,
      outcome,
      ctx,
      pencilHome,
      proxied || (options.network === true && s.share === "plain"),
      writeCap,
      effects,
      options.shareNames ?? DEPENDENCY_DIRS,
      refusing,
    );
    if (hiding && hiding.unscanned.length > 0) {
      // Said, so a missing toolchain is not a mystery: what could not be searched for secrets is not shown.
      const dirs = hiding.unscanned.slice(0, 5).join(", ");
      text += `\nNote: ${dirs}${hiding.unscanned.length > 5 ? ` and ${hiding.unscanned.length - 5} more` : ""} ${hiding.unscanned.length === 1 ? "holds" : "hold"} too many entries to be searched for secrets, so the command could not see ${hiding.unscanned.length === 1 ? "it" : "them"}. If the command needs ${hiding.unscanned.length === 1 ? "it" : "them"}, tell the user.`;
    }
    if (refusing) text += networkOffReport(connections, outcome.output);
    else if (connections.length > 0) {
      const shown = connections
        .slice(0, 20)
        .map(
          (c) =>
            `  ${c.allowed ? "allowed" : "REFUSED"}: ${c.method} ${c.url ?? `${c.host}:${c.port}`}${c.refused ? ` (${c.refused})` : ""}`,
        );
      text += `\nNetwork (through Pencil's proxy):\n${shown.join("\n")}${connections.length > 20 ? `\n  …and ${connections.length - 20} more` : ""}`;
      if (connections.some((c) => !c.allowed))
        text +=
          "\nRefused requests were not sent: the user did not allow them. Do not retry them; tell the user what you needed.";
    }
    record(
      outcome.overCap
        ? "write-cap"
        : outcome.timedOut
          ? "timed-out"
          : outcome.aborted
            ? "cancelled"
            : outcome.exitCode !== null
              ? "exited"
              : "killed",
    );
    if (kept) {
      // A kept scratch keeps what ignored trees got, and gets the rest set back to the staged view before the next command.
      kept.settle(s, effects.changes, (c) => c.ignored === true);
      kept.release(s);
      return text;
    }
    // Said, not swallowed: a copy left behind holds the workspace's files in the temp directory.
    return disposeScratch(s)
      ? text
      : `${text}\nWARNING: the scratch copy ${s.root} could not be removed completely; tell the user to delete it.`;
  } catch (error) {
    await proxy?.close();
    kept?.settle(s, null, () => false);
    if (kept) kept.release(s);
    else disposeScratch(s);
    throw error;
  }
}

/** Whether the namespace sandbox's scratch is copy-on-write: asked for (`overlay`, or `auto` not forced off by PENCIL_SCRATCH=copy) and the overlay works for this workspace here; else the copy. */
export function useOverlay(
  wsRoot: string,
  options: Pick<RunCommandOptions, "scratch" | "scratchParent"> = {},
): boolean {
  const layers = overlayLayers(wsRoot, options);
  return layers !== null && overlayWorks(...layers);
}

/** useOverlay without blocking: the overlay's probe runs while the caller does other work. */
function overlayWanted(
  wsRoot: string,
  options: Pick<RunCommandOptions, "scratch" | "scratchParent">,
): Promise<boolean> {
  const layers = overlayLayers(wsRoot, options);
  return layers === null ? Promise.resolve(false) : overlayProbe(...layers);
}

/** The overlay's lower layer and its upper layer's parent when the copy-on-write scratch is asked for and can carry them; else null. */
function overlayLayers(
  wsRoot: string,
  options: Pick<RunCommandOptions, "scratch" | "scratchParent">,
): [lower: string, parent: string] | null {
  const kind: ScratchKind = options.scratch ?? (process.env[SCRATCH_ENV] === "copy" ? "copy" : "auto");
  if (kind === "copy") return null;
  const parent = options.scratchParent ?? tmpdir();
  // overlayfs's mount options cannot carry these characters in a layer's path: such a workspace gets the copy.
  if (/[,:\\\s]/.test(wsRoot + parent)) return null;
  return [wsRoot, realPathLoose(parent).real];
}

function report(
  command: string,
  s: Scratch,
  outcome: RunOutcome,
  ctx: ToolContext,
  pencilHome: string,
  network: boolean,
  writeCap: number,
  effects: Effects,
  shareNames: readonly string[],
  refusedAtOnce = false,
): string {
  const lines: string[] = [`$ ${command}`];
  const secs = (outcome.durationMs / 1000).toFixed(outcome.durationMs < 10_000 ? 2 : 1);
  const cap = formatBytes(writeCap);
  if (outcome.overCap) {
    lines.push(
      `Stopped after ${secs} s: it wrote more than ${cap} to files, the cap on what one command may write (limits.scratchWriteBytes in the user's settings); the command and every process it started were killed.`,
    );
  } else if (outcome.timedOut) {
    lines.push(
      `Timed out after ${secs} s: it ran until its time limit of ${limitText(outcome.limitMs)}, and the command and every process it started were killed. The limit is run_command's timeout when the call gives one, else limits.commandSeconds in the user's settings.`,
    );
  } else if (outcome.aborted) {
    lines.push(`Cancelled after ${secs} s: the command and every process it started were killed.`);
  } else if (outcome.exitCode !== null) {
    lines.push(`Exit code ${outcome.exitCode} after ${secs} s.`);
  } else {
    lines.push(`Killed by signal ${outcome.signal ?? "?"} after ${secs} s.`);
  }
  // Colour and cursor codes are for a terminal: the model reads the text alone.
  let output = stripANSI(outcome.output).replace(/\n$/, "");
  // Plain mode runs at the scratch path; show the workspace's own paths to the model.
  if (s.share === "plain") output = output.split(s.dir).join(s.ws.root);
  if (outcome.outputBytes === 0) lines.push("Output: (none)");
  else if (outcome.outputBytes > outcome.keptBytes) {
    // The first failure is often in the part that was cut (a long log after it): give the model its lines too.
    const failed = outcome.exitCode !== 0 || outcome.timedOut || outcome.aborted || outcome.overCap;
    const headLines = failed && outcome.outputHead ? stripANSI(outcome.outputHead).split("\n") : [];
    const window = failureWindow(headLines.slice(0, -1));
    if (window) {
      lines.push(
        `First failure, near the start of the output (lines ${window.start + 1}-${window.end}):`,
        ...headLines.slice(window.start, window.end),
      );
    }
    lines.push(
      `Output (the last ${formatBytes(outcome.keptBytes)} of ${formatBytes(outcome.outputBytes)}; the first ${formatBytes(outcome.outputBytes - outcome.keptBytes)} were cut):`,
    );
    lines.push(output);
  } else {
    lines.push("Output:");
    lines.push(output);
  }
  lines.push(...s.notes);
  // With the refusing proxy, runPrepared says what was tried and what opens it (networkOffReport).
  if (s.share === "namespace" && !network && NETWORK_FAILURE.test(output) && !refusedAtOnce) {
    lines.push(
      "Note: sandboxed commands have no network access (the user can allow it). Do not retry: ask the user to run the download or install, or to allow network access.",
    );
  }
  if (s.hidden > 0)
    lines.push(
      `Note: ${s.hidden === 1 ? "1 entry" : `${s.hidden} entries`} that the policy keeps private (e.g. .env files) ${s.hidden === 1 ? "was" : "were"} left out of the scratch copy.`,
    );
  const leaks = sharedLeaks(s);
  if (leaks.length > 0) {
    lines.push(
      `WARNING: the command changed ${leaks.length} ${leaks.length === 1 ? "entry" : "entries"} in shared directories of the REAL workspace (no sandbox on this system, so writes through them reached the disk unreviewed; they are not staged):`,
      ...leaks.slice(0, NOT_STAGED_CAP).map((l) => `  ${l.change}: ${l.rel}`),
      ...(leaks.length > NOT_STAGED_CAP ? [`  …and ${leaks.length - NOT_STAGED_CAP} more`] : []),
      "Tell the user; do not run commands that write into dependency directories.",
    );
  }
  if (outcome.overCap) {
    lines.push(
      "Its file effects were discarded: nothing was staged. Write less (no large generated files), or ask the user to raise the cap.",
    );
    return lines.join("\n");
  }
  if (outcome.signal === "SIGXFSZ" || /File too large|File size limit exceeded/.test(output)) {
    lines.push(
      `Note: no file a command writes may exceed ${cap} (limits.scratchWriteBytes in the user's settings); a write past it fails ("File too large", or the writer is killed with "File size limit exceeded").`,
    );
  }
  if (outcome.timedOut) {
    lines.push(
      "Its file effects were discarded: nothing was staged. If it needed the time (a full build or test suite, not a wait for the network or for input), run it again with a larger timeout; else run a narrower or faster command.",
    );
    return lines.join("\n");
  }
  if (outcome.aborted) {
    lines.push("Its file effects were discarded: nothing was staged.");
    return lines.join("\n");
  }
  let changes: ScratchChange[];
  try {
    changes = diffScratch(s, ctx.limits.maxFileBytes, DIFF_CAPS, s.overlay ? ignoredTrees(s, shareNames) : undefined);
    effects.changes = changes;
  } catch (error) {
    if (!ScratchError.isInstance(error)) throw error;
    lines.push(`Not staged: anything, because ${error.message}`);
    return lines.join("\n");
  }
  lines.push(...stageChanges(s, changes, ctx, pencilHome, effects));
  return lines.join("\n");
}

function limitText(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * The paths a kept scratch keeps to itself: inside a dependency directory
 * (node_modules…) or ignored by a .gitignore, and not staged (a staged file
 * shows as staged whatever is ignored). Never .git.
 */
function ignoredTrees(s: Scratch, names: readonly string[]): (rel: string) => boolean {
  const staged = new Set(stagedInside(s.ws, s.fs).map((x) => x.rel));
  const dependency = new Set(names);
  return (rel) => {
    if (rel === ".git" || rel.startsWith(".git/") || staged.has(rel)) return false;
    const parts = rel.split("/");
    for (let i = 0; i < parts.length - 1; i++) if (dependency.has(parts[i]!)) return true;
    return s.rules.ignoredPath(join(s.ws.root, rel), "file");
  };
}
