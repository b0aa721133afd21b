import { readFileSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import type { Runtime } from "../../app/runtime.ts";
import { realPathLoose } from "../../core/workspace.ts";
import { type ActiveRun, RunGate } from "./run-gate.ts";

/** One workspace the owner listed in `telegram.workspaces`: its name and its path as written (absolute or `~/…`). */
export interface ListedWorkspace {
  name: string;
  path: string;
}

/** A listed workspace as /projects shows it: where it resolves, whether it is there, whether it is the active one. */
export interface ProjectView extends ListedWorkspace {
  /** Real path, or the expanded path when it does not exist. */
  root: string;
  missing: boolean;
  active: boolean;
}

/** Name of the workspace the bot was started on when no listed name resolves to it. */
const DEFAULT_NAME = "default";

const NAME = /^[\p{L}\p{N}][\p{L}\p{N} ._-]{0,39}$/u;
const ListSchema = z.looseObject({
  telegram: z.looseObject({ workspaces: z.record(z.string(), z.string()).optional() }).optional(),
});

/**
 * Reads `telegram.workspaces` (name → path) from the user's own `$PENCIL_HOME/settings.json`
 * only (a workspace's settings file cannot list workspaces). Bad entries are left out with
 * a warning; a missing file or key lists nothing.
 */
export function readListedWorkspaces(
  pencilHome: string,
  home: string,
): { list: ListedWorkspace[]; warnings: string[] } {
  const file = join(pencilHome, "settings.json");
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch {
    return { list: [], warnings: [] };
  }
  let parsed: z.infer<typeof ListSchema>;
  try {
    const result = ListSchema.safeParse(JSON.parse(raw));
    if (!result.success)
      return {
        list: [],
        warnings: [
          `telegram.workspaces in ${file} must map names to paths, e.g. {"telegram": {"workspaces": {"api": "~/code/api"}}}.`,
        ],
      };
    parsed = result.data;
  } catch {
    return { list: [], warnings: [`${file} is not valid JSON; no workspaces are listed.`] };
  }
  const list: ListedWorkspace[] = [];
  const warnings: string[] = [];
  for (const [name, path] of Object.entries(parsed.telegram?.workspaces ?? {})) {
    if (!NAME.test(name))
      warnings.push(
        `Left out workspace "${name.slice(0, 40)}": a name is 1–40 letters, digits, spaces, dots, dashes or underscores.`,
      );
    else if (!isAbsolute(path) && !path.startsWith("~/"))
      warnings.push(
        `Left out workspace "${name}": its path must be absolute or start with ~/ (it is ${JSON.stringify(path.slice(0, 80))}).`,
      );
    else list.push({ name, path: path.startsWith("~/") ? join(home, path.slice(2)) : path });
  }
  return { list, warnings };
}

/** Whether a path is a directory that exists now. */
function present(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The workspaces the bot works on: the one it started on, and those listed in the
 * user's settings. Each has its own runtime (its settings and policy) and its own
 * run gate, so a run may go on in one while the owner works in another. Only a
 * listed, existing path can become active.
 */
export class Projects {
  private readonly runtimes = new Map<string, Runtime>();
  private readonly gates = new Map<string, RunGate>();
  private activeRoot: string;

  constructor(
    initial: Runtime,
    /** Opens a workspace's runtime (its settings and policy); throws ConfigError for a bad one. */
    private readonly open: (path: string) => Runtime,
    /** The listed workspaces, read afresh each time (the settings file may change while the bot runs). */
    private readonly listed: () => ListedWorkspace[],
  ) {
    this.activeRoot = initial.ws.root;
    this.runtimes.set(initial.ws.root, initial);
  }

  /** The active workspace's runtime. */
  get runtime(): Runtime {
    return this.runtimes.get(this.activeRoot)!;
  }

  /** The active workspace's run gate. */
  get gate(): RunGate {
    return this.gateFor(this.activeRoot);
  }

  /** The active workspace's name: its listed name, else `default`. */
  get activeName(): string {
    return this.nameOf(this.activeRoot);
  }

  /** The listed workspaces as /projects shows them. */
  views(): ProjectView[] {
    return this.listed().map((w) => {
      const missing = !present(w.path);
      const root = missing ? w.path : realPathLoose(w.path).real;
      return { ...w, root, missing, active: root === this.activeRoot };
    });
  }

  /** Makes the listed workspace `name` active; returns its view, or why it cannot (text for the owner). */
  switchTo(name: string, expectedRoot: string): ProjectView | string {
    const view = this.views().find((v) => v.name === name);
    if (!view) return `“${name}” is no longer listed in telegram.workspaces.`;
    if (view.missing) return `“${name}” (${view.path}) does not exist any more.`;
    if (view.root !== expectedRoot) return `“${name}” now points elsewhere; send /projects again.`;
    if (!this.runtimes.has(view.root)) {
      try {
        this.runtimes.set(view.root, this.open(view.root));
      } catch (error) {
        return `“${name}” cannot be opened: ${error instanceof Error ? error.message : String(error)}`;
      }
    }
    this.activeRoot = view.root;
    return { ...view, active: true };
  }

  /**
   * The runtime of a workspace (to apply a changeset made there): one already open,
   * else a listed, existing one opened now (a card from before a restart); null otherwise.
   */
  runtimeFor(root: string): Runtime | null {
    const open = this.runtimes.get(root);
    if (open) return open;
    if (!this.views().some((v) => !v.missing && v.root === root)) return null;
    try {
      const runtime = this.open(root);
      this.runtimes.set(root, runtime);
      return runtime;
    } catch {
      return null;
    }
  }

  /** Runs going on in every workspace, with the workspace's name. */
  activeRuns(): { name: string; root: string; run: ActiveRun }[] {
    return [...this.gates]
      .filter(([, g]) => g.active)
      .map(([root, g]) => ({ name: this.nameOf(root), root, run: g.active! }));
  }

  /** The run gate of a workspace (made on first use). */
  gateFor(root: string): RunGate {
    let gate = this.gates.get(root);
    if (!gate) this.gates.set(root, (gate = new RunGate()));
    return gate;
  }

  /** A workspace's listed name, else `default`. */
  nameOf(root: string): string {
    return this.views().find((v) => v.root === root)?.name ?? DEFAULT_NAME;
  }
}
