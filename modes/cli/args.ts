import { parseArgs } from "node:util";

/** The parsed command line: the command, its positional words, and the common options. */
export interface CliArgs {
  command: string;
  positionals: string[];
  workspace?: string;
  allow: string[];
  deny: string[];
  model?: string;
  json: boolean;
  patch: boolean;
  verbose: boolean;
  help: boolean;
  image?: string;
}

/** A command line that cannot be understood; exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Parses argv (without `bun index.ts`) with node's own parser: strict, so a mistyped flag is an error, not ignored. */
export function parseCli(argv: string[]): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        workspace: { type: "string", short: "w" },
        allow: { type: "string", multiple: true },
        deny: { type: "string", multiple: true },
        model: { type: "string" },
        json: { type: "boolean" },
        patch: { type: "boolean" },
        verbose: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        image: { type: "string" },
      },
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}. Run \`pencil --help\` for the options.`);
  }
  const [command = "", ...positionals] = parsed.positionals;
  const v = parsed.values;
  return {
    command,
    positionals,
    ...(v.workspace !== undefined ? { workspace: v.workspace } : {}),
    allow: v.allow ?? [],
    deny: v.deny ?? [],
    ...(v.model !== undefined ? { model: v.model } : {}),
    json: v.json ?? false,
    patch: v.patch ?? false,
    verbose: v.verbose ?? false,
    help: v.help ?? false,
    ...(v.image !== undefined ? { image: v.image } : {}),
  };
}
