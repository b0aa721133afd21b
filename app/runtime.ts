import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { type Env, pencilHomeOf } from "../core/pencil-home.ts";
import { ChangesetStore } from "../core/staging/changeset-store.ts";
import { compilePolicy, type Policy } from "../core/policy/policy.ts";
import { loadSettings, type Settings } from "./settings.ts";
import { compileMcpPolicy, type McpPolicy } from "../core/policy/mcp-rules.ts";
import { parseServers, type McpServerConfig } from "../tools/mcp/config.ts";
import type { ToolLimits } from "../core/tool-limits.ts";
import { isInside, openWorkspace, realPathLoose, type Workspace } from "../core/workspace.ts";
import { ConfigError } from "../core/errors/config-error.ts";
import { PathError } from "../core/errors/path-error.ts";

/** How a front end asks for a runtime: the options every command takes (README "Commands"). */
export interface RuntimeOptions {
  /** `-w/--workspace`, else PENCIL_WORKSPACE for the bot, else the current directory. */
  workspace?: string;
  env: Env;
  allow?: string[];
  deny?: string[];
  /** `--model NAME`. */
  model?: string;
  /** False with `--no-project-doc`: no AGENTS.md / CLAUDE.md is given to the model. */
  projectDoc?: boolean;
}

/** Everything a run needs that comes from configuration: workspace, policy, limits and where state lives. */
export interface Runtime {
  env: Env;
  ws: Workspace;
  /** `$PENCIL_HOME` (default `~/.pencil`): changesets, journal, brain, bot state. */
  pencilHome: string;
  settings: Settings;
  policy: Policy;
  limits: ToolLimits;
  store: ChangesetStore;
  journalDir: string;
  /** The `--model` override, if any. */
  model?: string;
  /** The MCP servers of the owner's settings (`mcpServers`); a workspace's proposals are read per run. */
  mcpServers: McpServerConfig[];
  /** The compiled Mcp(server/tool) rules. */
  mcpPolicy: McpPolicy;
  /** Whether AGENTS.md / CLAUDE.md instructions are given to the model (off with `--no-project-doc`). */
  projectDoc: boolean;
}

/**
 * Opens the workspace, reads and merges the settings and compiles the policy.
 * Throws ConfigError (exit 2) for a bad workspace, settings file or rule.
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const env = options.env;
  const pencilHome = realPathLoose(pencilHomeOf(env)).real;
  let ws: Workspace;
  try {
    ws = openWorkspace(options.workspace ?? process.cwd(), env.HOME ?? homedir());
  } catch (error) {
    if (PathError.isInstance(error)) throw new ConfigError(error.message, "--workspace");
    throw error;
  }
  const defaultHome = realPathLoose(join(ws.home, ".pencil")).real;
  if (env.PENCIL_HOME?.trim() && pencilHome !== defaultHome && isInside(ws.root, pencilHome)) {
    // State inside the work tree would let the repository plant its own "trusted" settings and records.
    throw new ConfigError(
      `PENCIL_HOME (${pencilHome}) is inside the workspace ${ws.root}. Keep Pencil's state outside the code it works on: unset PENCIL_HOME (default ~/.pencil) or point it elsewhere; if a .env in this directory sets it, run Pencil through bin/pencil.`,
      "PENCIL_HOME",
    );
  }
  mkdirSync(pencilHome, { recursive: true, mode: 0o700 });
  const settings = loadSettings({
    workspaceRoot: ws.root,
    pencilHome,
    cliAllow: options.allow ?? [],
    cliDeny: options.deny ?? [],
    home: ws.home,
  });
  const policy = compilePolicy({ workspaceRoot: ws.root, home: ws.home, pencilHome, rules: settings.rules });
  return {
    env,
    ws,
    pencilHome,
    settings,
    policy,
    limits: settings.limits,
    store: new ChangesetStore(pencilHome),
    journalDir: join(pencilHome, "journal"),
    projectDoc: options.projectDoc ?? true,
    mcpServers:
      settings.mcpServers === undefined
        ? []
        : parseServers(settings.mcpServers, join(pencilHome, "settings.json"), "owner"),
    mcpPolicy: compileMcpPolicy(settings.mcpRules),
    ...(options.model ? { model: options.model } : {}),
  };
}
