import { describe, expect, test } from "bun:test";
import { cpSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { ApplyError } from "../../../core/errors/apply-error.ts";
import { BrainStoreError } from "../../../core/errors/brain-store-error.ts";
import { CheckpointError } from "../../../core/errors/checkpoint-error.ts";
import { ConfigError } from "../../../core/errors/config-error.ts";
import { DumpRefused } from "../../../core/errors/dump-refused.ts";
import { GitConfigSyntaxError } from "../../../core/errors/git-config-syntax-error.ts";
import { JournalError } from "../../../core/errors/journal-error.ts";
import { LockBusyError } from "../../../core/errors/lock-busy-error.ts";
import { MissingModelKeyError } from "../../../core/errors/missing-model-key-error.ts";
import { ModelCallError } from "../../../core/errors/model-call-error.ts";
import { ModelTimeoutError } from "../../../core/errors/model-timeout-error.ts";
import { OverlayMissError } from "../../../core/errors/overlay-miss-error.ts";
import { PatchError } from "../../../core/errors/patch-error.ts";
import { PathError } from "../../../core/errors/path-error.ts";
import { PatternError } from "../../../core/errors/pattern-error.ts";
import { PencilError } from "../../../core/errors/pencil-error.ts";
import { ScratchError } from "../../../core/errors/scratch-error.ts";
import { SessionFileError } from "../../../core/errors/session-file-error.ts";
import { ShellParserNotLoaded } from "../../../core/errors/shell-parser-not-loaded.ts";
import { TelegramConfigError } from "../../../core/errors/telegram-config-error.ts";
import { TelegramFileError } from "../../../core/errors/telegram-file-error.ts";
import { ToolError } from "../../../core/errors/tool-error.ts";
import { TranscriptionError } from "../../../core/errors/transcription-error.ts";
import { UndoError } from "../../../core/errors/undo-error.ts";
import { UnknownChangesetError } from "../../../core/errors/unknown-changeset-error.ts";
import { UnknownSessionError } from "../../../core/errors/unknown-session-error.ts";
import { UnreadableStateError } from "../../../core/errors/unreadable-state-error.ts";
import { UsageFailure } from "../../../core/errors/usage-failure.ts";
import { VisionError } from "../../../core/errors/vision-error.ts";
import { runCli } from "../../support/cli.ts";
import { tempDir } from "../../support/temp.ts";

/** An error class of Pencil's as the tests see it: how to make one and how to recognise one. */
interface Kind {
  name: string;
  isInstance(error: unknown): boolean;
}

/**
 * Every error class, with one instance, the classes it is a kind of (nearest first), and what the CLI
 * prints and exits with when it reaches the top: `label userMessage`, exit code.
 */
const KINDS: readonly {
  kind: Kind;
  make: () => PencilError;
  parents: readonly Kind[];
  exitCode: 1 | 2;
  printed: string;
}[] = [
  { kind: PencilError, make: () => new PencilError("m"), parents: [], exitCode: 1, printed: "error: m" },
  { kind: UsageFailure, make: () => new UsageFailure("m"), parents: [PencilError], exitCode: 2, printed: "error: m" },
  {
    kind: UnknownChangesetError,
    make: () => new UnknownChangesetError("m"),
    parents: [UsageFailure, PencilError],
    exitCode: 2,
    printed: "error: m",
  },
  {
    kind: UnknownSessionError,
    make: () => new UnknownSessionError("m", ["s1"]),
    parents: [UsageFailure, PencilError],
    exitCode: 2,
    printed: "error: m",
  },
  {
    kind: CheckpointError,
    make: () => new CheckpointError("m"),
    parents: [UsageFailure, PencilError],
    exitCode: 2,
    printed: "error: m",
  },
  {
    kind: MissingModelKeyError,
    make: () => new MissingModelKeyError("m", ["GROQ_API_KEY"]),
    parents: [UsageFailure, PencilError],
    exitCode: 2,
    printed: "error: m",
  },
  {
    kind: ConfigError,
    make: () => new ConfigError("m", "settings.json", "Read(**)"),
    parents: [UsageFailure, PencilError],
    exitCode: 2,
    printed: "configuration error in settings.json (rule Read(**)): m",
  },
  {
    kind: TelegramConfigError,
    make: () => new TelegramConfigError("m", "TELEGRAM_BOT_TOKEN"),
    parents: [ConfigError, UsageFailure, PencilError],
    exitCode: 2,
    printed: "configuration error in environment (.env): m",
  },
  {
    kind: ModelCallError,
    make: () => new ModelCallError([{ model: "groq:m", reason: "HTTP 500", error: null }], false),
    parents: [PencilError],
    exitCode: 1,
    printed: "error: The model failed: groq:m (HTTP 500). Try again later, or check its key and base URL.",
  },
  ...(
    [
      ModelTimeoutError,
      TranscriptionError,
      VisionError,
      UnreadableStateError,
      SessionFileError,
      JournalError,
      ApplyError,
      UndoError,
      BrainStoreError,
      DumpRefused,
      TelegramFileError,
      ToolError,
      PathError,
      PatchError,
      PatternError,
      ScratchError,
      LockBusyError,
      GitConfigSyntaxError,
      OverlayMissError,
    ] as const
  ).map((Class) => ({
    kind: Class,
    make: () => new Class("m"),
    parents: [PencilError],
    exitCode: 1 as const,
    printed: "error: m",
  })),
  {
    kind: ShellParserNotLoaded,
    make: () => new ShellParserNotLoaded(),
    parents: [PencilError],
    exitCode: 1,
    printed:
      "error: This command line needs the shell parser, which is not loaded yet: await loadShellParser() and judge it again.",
  },
];

const ERRORS_DIR = join(import.meta.dir, "../../../core/errors");

test("the table holds every class of core/errors/, each in the file named after it", () => {
  const files = readdirSync(ERRORS_DIR)
    .filter((f) => f.endsWith(".ts") && f !== "fs-error-code.ts")
    .sort();
  const kebab = (name: string) => `${name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase()}.ts`;
  expect(KINDS.map((k) => kebab(k.kind.name)).sort()).toEqual(files);
});

describe.each(KINDS.map((k) => [k.kind.name, k] as const))("%s", (name, k) => {
  const error = k.make();

  test("is recognised by its own isInstance and by each class it is a kind of", () => {
    expect(k.kind.isInstance(error)).toBe(true);
    for (const parent of k.parents) expect(parent.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
  });

  test("is not recognised by any other class: siblings, subclasses, a look-alike, a plain Error, null", () => {
    const mine = new Set<Kind>([k.kind, ...k.parents]);
    for (const other of KINDS) {
      if (!mine.has(other.kind)) expect(other.kind.isInstance(error)).toBe(false);
    }
    // The other way round: this class recognises exactly its own kinds among every instance of the table.
    const recognised = KINDS.filter((o) => k.kind.isInstance(o.make())).map((o) => o.kind.name);
    const kinds = KINDS.filter((o) => o.kind === k.kind || o.parents.includes(k.kind)).map((o) => o.kind.name);
    expect(recognised).toEqual(kinds);
    const lookAlike = { name, message: "m", exitCode: k.exitCode, label: error.label, stack: "" };
    for (const value of [lookAlike, new Error("m"), new TypeError("m"), null, undefined, "m", 1]) {
      expect(k.kind.isInstance(value)).toBe(false);
    }
  });

  test(`exits ${k.exitCode} and prints "${k.printed.slice(0, 40)}…" as the CLI reports it`, () => {
    expect(error.exitCode).toBe(k.exitCode);
    expect(`${error.label} ${error.userMessage}`).toBe(k.printed);
  });
});

test("isInstance reads a marker, not the prototype chain: an error made by another copy of the modules is recognised", async () => {
  // A second copy of core/errors/ is a second set of classes, as two installed copies of Pencil would be.
  const copy = join(tempDir("pencil-errors-copy-"), "errors");
  cpSync(ERRORS_DIR, copy, { recursive: true });
  const other = (await import(join(copy, "telegram-config-error.ts"))) as {
    TelegramConfigError: typeof TelegramConfigError;
  };
  const foreign = new other.TelegramConfigError("m", "TELEGRAM_OWNER_ID");
  expect(foreign).not.toBeInstanceOf(TelegramConfigError);
  expect(foreign).not.toBeInstanceOf(PencilError);
  expect(TelegramConfigError.isInstance(foreign)).toBe(true);
  expect(ConfigError.isInstance(foreign)).toBe(true);
  expect(UsageFailure.isInstance(foreign)).toBe(true);
  expect(PencilError.isInstance(foreign)).toBe(true);
  expect(MissingModelKeyError.isInstance(foreign)).toBe(false);
  // The registered symbols are the whole contract: PencilError's own marker stays "pencil.error".
  expect(PencilError.isInstance({ [Symbol.for("pencil.error")]: true })).toBe(true);
  expect(UsageFailure.isInstance({ [Symbol.for("pencil.error")]: true })).toBe(false);
  expect(UsageFailure.isInstance({ [Symbol.for("pencil.error.UsageFailure")]: true })).toBe(true);
  expect(UsageFailure.isInstance({ [Symbol.for("pencil.error.UsageFailure")]: "yes" })).toBe(false);
});

describe("the real CLI maps an error to its exit code and words", () => {
  const world = () => {
    const home = tempDir("pencil-errors-home-");
    const workspace = tempDir("pencil-errors-ws-");
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, PENCIL_HOME: join(home, "p"), NO_COLOR: "1" };
    return { workspace, env };
  };

  test("a flag it does not know is a usage failure: exit 2, `error:` and the fix", async () => {
    const { workspace, env } = world();
    const result = await runCli(["review", "--nope", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(2);
    expect(result.stderr).toStartWith("error: Unknown option --nope.");
  });

  test("a rule it cannot read is a configuration error: exit 2, labelled with the place at fault", async () => {
    const { workspace, env } = world();
    const result = await runCli(["review", "--allow", "Bogus(x)", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(2);
    expect(result.stderr).toStartWith('configuration error in --allow (rule Bogus(x)): Bad permission rule "Bogus(x)"');
  });

  test("an undo of an id the journal does not hold fails at run time: exit 1, `error:`", async () => {
    const { workspace, env } = world();
    const result = await runCli(["undo", "nosuchid", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toStartWith("error: No apply or changeset with id nosuchid in the journal:");
  });
});

// The checks this file held before the classes moved into core/errors/, kept as they were.
test.each([
  ["UsageFailure", new UsageFailure("x"), 2],
  ["MissingModelKeyError", new MissingModelKeyError("x", ["GROQ_API_KEY"]), 2],
  ["UnknownChangesetError", new UnknownChangesetError("x"), 2],
  ["ConfigError", new ConfigError("x", "settings.json"), 2],
  ["ApplyError", new ApplyError("x"), 1],
  ["ToolError", new ToolError("x"), 1],
  ["ModelCallError", new ModelCallError([], false), 1],
] as const)("%s is a PencilError with its exit code", (_name, error, code) => {
  expect(PencilError.isInstance(error)).toBe(true);
  expect(error).toBeInstanceOf(Error);
  expect(error.exitCode).toBe(code);
});

test("isInstance knows the marker, not the prototype chain; plain errors and non-errors are not PencilErrors", () => {
  expect(PencilError.isInstance(new Error("x"))).toBe(false);
  expect(PencilError.isInstance("Error: x")).toBe(false);
  expect(PencilError.isInstance(null)).toBe(false);
  // An error from another copy of the module carries the same registered symbol.
  expect(PencilError.isInstance({ [Symbol.for("pencil.error")]: true })).toBe(true);
});

test("a configuration error names its file and rule in the person's message", () => {
  const error = new ConfigError("unknown key", "/w/.pencil/settings.json", "Read(**)");
  expect(`${error.label} ${error.userMessage}`).toBe(
    "configuration error in /w/.pencil/settings.json (rule Read(**)): unknown key",
  );
  expect(`${new UsageFailure("no such flag").label} ${new UsageFailure("no such flag").userMessage}`).toBe(
    "error: no such flag",
  );
});
