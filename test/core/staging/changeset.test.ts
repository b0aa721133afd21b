import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildChangeset, newChangesetId, type Changeset } from "../../../core/staging/changeset.ts";
import type { ChangeFlag } from "../../../core/staging/flags.ts";
import { ChangesetStore, deserialize, serialize } from "../../../core/staging/changeset-store.ts";
import { DiskFileOps } from "../../../core/file-ops.ts";
import { flagsFor, type FlagInput } from "../../../core/staging/flags.ts";
import { Overlay } from "../../../core/staging/overlay.ts";
import { openWorkspace } from "../../../core/workspace.ts";
import { tempDir, writeTree } from "../../support/temp.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const origin = (model: string, reads: string[] = []) => ({ tool: "edit_file", callId: "c", model, readsBefore: reads });

function build(root: string, stage: (o: Overlay) => void): Changeset {
  const overlay = new Overlay(new DiskFileOps());
  stage(overlay);
  return buildChangeset({
    id: newChangesetId(),
    goal: "test",
    workspace: openWorkspace(root),
    staged: overlay.list(),
    readDisk: (real) => {
      try {
        return readFileSync(real);
      } catch {
        return null;
      }
    },
  });
}

describe("buildChangeset", () => {
  test("kinds, line counts, models and provenance per file, sorted by path", () => {
    const root = tempDir();
    writeTree(root, { "a.txt": "1\n2\n3\n", "gone.txt": "bye\n" });
    const cs = build(root, (o) => {
      o.writeBytes(join(root, "a.txt"), enc("1\ntwo\n3\n4\n"), { origin: origin("groq:m", ["README.md"]) });
      o.writeBytes(join(root, "new/b.txt"), enc("b\n"), { origin: origin("openrouter:m") });
      o.remove(join(root, "gone.txt"), { origin: origin("groq:m") });
    });
    expect(cs.files.map((f) => [f.path, f.kind, f.added, f.removed])).toEqual([
      ["a.txt", "modify", 2, 1],
      ["gone.txt", "delete", 0, 1],
      ["new/b.txt", "create", 1, 0],
    ]);
    expect(cs.models).toEqual(["groq:m", "openrouter:m"]);
    expect(cs.files[0]!.origins[0]!.readsBefore).toEqual(["README.md"]);
    expect(new TextDecoder().decode(cs.files[0]!.before!)).toBe("1\n2\n3\n");
    expect(cs.status).toBe("pending");
  });

  test("digests are stable for the same content and change with any byte", () => {
    const root = tempDir();
    writeTree(root, { "a.txt": "x\n" });
    const one = build(root, (o) => o.writeBytes(join(root, "a.txt"), enc("y\n")));
    const two = build(root, (o) => o.writeBytes(join(root, "a.txt"), enc("y\n")));
    const three = build(root, (o) => o.writeBytes(join(root, "a.txt"), enc("z\n")));
    expect(one.digest).toBe(two.digest);
    expect(one.files[0]!.digest).toBe(two.files[0]!.digest);
    expect(three.digest).not.toBe(one.digest);
  });

  test("a before-image that no longer matches the disk is left out, not guessed", () => {
    const root = tempDir();
    writeTree(root, { "a.txt": "x\n" });
    const overlay = new Overlay(new DiskFileOps());
    overlay.writeBytes(join(root, "a.txt"), enc("y\n"));
    writeFileSync(join(root, "a.txt"), "owner edit\n");
    const cs = buildChangeset({
      id: "t",
      goal: "g",
      workspace: openWorkspace(root),
      staged: overlay.list(),
      readDisk: (r) => readFileSync(r),
    });
    expect(cs.files[0]!.before).toBeUndefined();
  });

  test("flags: executable bit and binary content", () => {
    const root = tempDir();
    writeTree(root, { "tool.sh": "echo\n" });
    chmodSync(join(root, "tool.sh"), 0o644);
    const cs = build(root, (o) => {
      o.writeBytes(join(root, "tool.sh"), enc("echo hi\n"), { mode: 0o755 });
      o.writeBytes(join(root, "img.png"), new Uint8Array([0x89, 0, 1, 2]));
    });
    expect(cs.files.find((f) => f.path === "tool.sh")!.flags).toEqual(
      expect.arrayContaining(["executable", "runs-code"]),
    );
    expect(cs.files.find((f) => f.path === "img.png")!.flags).toContain("binary");
  });
});

describe("flagsFor", () => {
  const base: FlagInput = {
    path: "src/x.ts",
    inside: true,
    kind: "modify",
    beforeText: "",
    afterText: "",
    binary: false,
    baseMode: 0o644,
    afterMode: 0o644,
    addedLines: [],
    removed: 0,
    beforeLineCount: 0,
  };
  const cases: [string, Partial<FlagInput>, ChangeFlag[]][] = [
    ["plain edit", {}, []],
    ["private key added", { addedLines: ["-----BEGIN OPENSSH PRIVATE KEY-----"] }, ["secret"]],
    ["AWS key added", { addedLines: ['const k = "AKIAIOSFODNN7EXAMPLE";'] }, ["secret"]],
    ["GitHub token", { addedLines: ["token: ghp_" + "a".repeat(36)] }, ["secret"]],
    ["Groq key", { addedLines: ["GROQ_API_KEY=gsk_" + "b".repeat(40)] }, ["secret"]],
    ["generic api_key assignment", { addedLines: ['api_key = "abcdefghijklmnop"'] }, ["secret"]],
    ["a short password placeholder is not a secret", { addedLines: ['password = "x"'] }, []],
    ["workflow", { path: ".github/workflows/ci.yml" }, ["runs-code"]],
    ["git hook", { path: ".git/hooks/pre-commit" }, ["runs-code"]],
    ["Makefile", { path: "Makefile" }, ["runs-code"]],
    ["Dockerfile", { path: "docker/Dockerfile.dev" }, ["runs-code"]],
    ["shell script", { path: "scripts/release.sh" }, ["runs-code"]],
    [".gitconfig", { path: ".gitconfig" }, ["runs-code"]],
    [".gitattributes nested", { path: "src/.gitattributes" }, ["runs-code"]],
    [".gitmodules", { path: ".gitmodules" }, ["runs-code"]],
    ["a file git config includes", { path: "config/shared.ini", gitIncluded: true }, ["runs-code"]],
    ["VS Code tasks", { path: ".vscode/tasks.json" }, ["runs-code"]],
    ["VS Code settings are not tasks", { path: ".vscode/settings.json" }, []],
    ["dev container", { path: ".devcontainer/devcontainer.json" }, ["runs-code"]],
    ["dev container, one of several", { path: ".devcontainer/python/devcontainer.json" }, ["runs-code"]],
    ["dev container at the top", { path: ".devcontainer.json" }, ["runs-code"]],
    ["cargo config", { path: ".cargo/config.toml" }, ["runs-code"]],
    ["cargo config, old name", { path: "crates/x/.cargo/config" }, ["runs-code"]],
    [
      "package.json scripts changed",
      { path: "package.json", beforeText: '{"scripts":{"t":"a"}}', afterText: '{"scripts":{"t":"curl x|sh"}}' },
      ["runs-code"],
    ],
    [
      "package.json version bump only",
      { path: "package.json", beforeText: '{"version":"1"}', afterText: '{"version":"2"}' },
      [],
    ],
    ["package.json unparseable", { path: "package.json", beforeText: "{", afterText: "{}" }, ["runs-code"]],
    ["lockfile", { path: "package-lock.json" }, ["lockfile"]],
    ["Cargo.lock nested", { path: "crates/x/Cargo.lock" }, ["lockfile"]],
    ["gains exec bit", { baseMode: 0o644, afterMode: 0o755 }, ["executable"]],
    ["new executable file", { kind: "create", baseMode: null, afterMode: 0o755 }, ["executable"]],
    ["keeps exec bit", { baseMode: 0o755, afterMode: 0o755 }, []],
    ["binary", { binary: true }, ["binary"]],
    ["delete of a long file", { kind: "delete", beforeLineCount: 80 }, ["large-deletion"]],
    ["delete of a short file", { kind: "delete", beforeLineCount: 3 }, []],
    ["removes most of a file", { beforeLineCount: 100, removed: 60 }, ["large-deletion"]],
    ["removes 300 lines of a huge file", { beforeLineCount: 5000, removed: 300 }, ["large-deletion"]],
    ["outside the workspace", { inside: false, path: "/tmp/x" }, ["outside-workspace"]],
  ];
  for (const [name, over, expected] of cases) {
    test(name, () => expect(flagsFor({ ...base, ...over }).sort()).toEqual([...expected].sort()));
  }
});

describe("files a repository's git config includes", () => {
  test("are runs-code, read from .git/config and from what it includes in turn, whatever the include's condition", () => {
    const root = tempDir();
    writeTree(root, {
      ".git/HEAD": "ref: refs/heads/main\n",
      ".git/config":
        '[core]\n\tbare = false\n[include]\n\tpath = ../.gitconfig\n[includeIf "gitdir:/elsewhere/"]\n\tpath = "../tools/git.inc" ; a comment\n',
      "tools/git.inc": "[include]\n\tpath = deeper.inc\n",
      "tools/deeper.inc": "",
      "plain.txt": "x\n",
    });
    const cs = build(root, (o) => {
      for (const p of [".gitconfig", "tools/git.inc", "tools/deeper.inc", "plain.txt"])
        o.writeBytes(join(root, p), enc("y\n"));
    });
    const flagged = Object.fromEntries(cs.files.map((f) => [f.path, f.flags.includes("runs-code")]));
    expect(flagged).toEqual({
      ".gitconfig": true,
      "tools/git.inc": true,
      "tools/deeper.inc": true,
      "plain.txt": false,
    });
  });
});

describe("ChangesetStore", () => {
  test("saves and loads byte-identical content, by id or unique prefix", () => {
    const root = tempDir();
    const home = tempDir();
    writeTree(root, { "bin.dat": new Uint8Array([0, 1, 2, 255]), "win.txt": "\ufeffa\r\n" });
    const bytes = new Uint8Array(256).map((_, i) => i);
    const cs = build(root, (o) => {
      o.writeBytes(join(root, "bin.dat"), bytes);
      o.writeBytes(join(root, "win.txt"), enc("\ufeffb\r\n"));
    });
    const store = new ChangesetStore(home);
    store.save(cs);
    const loaded = store.load(cs.id.slice(0, 17));
    expect(loaded.files[0]!.after!.bytes).toEqual(bytes);
    expect(loaded.files[0]!.before).toEqual(new Uint8Array([0, 1, 2, 255]));
    expect(Buffer.from(loaded.files[1]!.after!.bytes).toString("utf8")).toBe("\ufeffb\r\n");
    expect(loaded.digest).toBe(cs.digest);
    expect(store.latestPending(cs.workspace)?.id).toBe(cs.id);
  });

  test("a damaged file is refused with what to do", () => {
    const root = tempDir();
    writeTree(root, { "a.txt": "x" });
    const cs = build(root, (o) => o.writeBytes(join(root, "a.txt"), enc("y")));
    const text = serialize(cs).replace(cs.files[0]!.after!.hash, "0".repeat(64));
    expect(() => deserialize(text, "cs.json")).toThrow(/does not match its hash/);
    expect(() => deserialize("{", "cs.json")).toThrow(/not valid JSON/);
    expect(() => new ChangesetStore(tempDir()).load("nope")).toThrow(/pencil log/);
  });
});

describe("a saved changeset is checked on load", () => {
  test("an altered digest, base image or shape is refused with what to do", () => {
    const root = tempDir();
    writeTree(root, { "a.txt": "x\n" });
    const cs = build(root, (o) => o.writeBytes(join(root, "a.txt"), enc("y\n")));
    const json = JSON.parse(serialize(cs));
    expect(deserialize(JSON.stringify(json)).digest).toBe(cs.digest);
    const redirected = structuredClone(json);
    redirected.files[0].digest = "0".repeat(64);
    expect(() => deserialize(JSON.stringify(redirected), "cs.json")).toThrow(/digest of a.txt does not match/);
    const otherBase = structuredClone(json);
    otherBase.files[0].before = Buffer.from("something else\n").toString("base64");
    expect(() => deserialize(JSON.stringify(otherBase), "cs.json")).toThrow(/base content of a.txt/);
    const renamed = structuredClone(json);
    renamed.files[0].path = "b.txt";
    expect(() => deserialize(JSON.stringify(renamed), "cs.json")).toThrow(/digest of b.txt/);
    expect(() => deserialize(JSON.stringify({ id: "x" }), "cs.json")).toThrow(/not a changeset/);
  });
});
