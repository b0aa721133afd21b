import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CallNeeds, type Gate, judgeNeeds, judgeRequest } from "../../../core/policy/call-judge.ts";
import { LinkGuard } from "../../../core/policy/hard-links.ts";
import { compileMcpPolicy, parseMcpRule } from "../../../core/policy/mcp-rules.ts";
import { compilePolicy, parseRule, type Effect } from "../../../core/policy/policy.ts";
import { loadShellParser } from "../../../core/policy/shell-parse.ts";
import { openWorkspace } from "../../../core/workspace.ts";
import { tempDir } from "../../support/temp.ts";

beforeAll(loadShellParser);

// <base>/home (PENCIL_HOME inside), <base>/ws the workspace with src/a.ts, a .env, and a link out to <base>/other.
const base = realpathSync(tempDir("pencil-call-judge-"));
const home = join(base, "home");
const wsRoot = join(base, "ws");
for (const d of [join(home, ".pencil"), join(wsRoot, "src"), join(base, "other")]) mkdirSync(d, { recursive: true });
writeFileSync(join(wsRoot, "src/a.ts"), "export const a = 1;\n");
writeFileSync(join(wsRoot, ".env"), "KEY=1\n");
writeFileSync(join(base, "other/x.txt"), "x\n");
symlinkSync(join(base, "other"), join(wsRoot, "out"));
const ws = openWorkspace(wsRoot, home);

function depsOf(rules: Partial<Record<Effect, string[]>>, mcp: string[] = []) {
  const parsed = (["deny", "ask", "allow"] as const).flatMap((effect) =>
    (rules[effect] ?? []).map((text) => parseRule(text, effect, "/cfg/settings.json")),
  );
  return {
    ws,
    policy: compilePolicy({ workspaceRoot: ws.root, home, pencilHome: join(home, ".pencil"), rules: parsed }),
    links: new LinkGuard({ root: ws.root, home }),
    mcpPolicy: compileMcpPolicy(
      mcp.map((m) => parseMcpRule(`Mcp(${m.slice(m.indexOf(" ") + 1)})`, m.slice(0, m.indexOf(" ")) as Effect, "/cfg")),
    ),
  };
}

/** A gate as one short line: what it is about and the rules' decision. */
function line(g: Gate): string {
  switch (g.kind) {
    case "refuse":
      return `refuse`;
    case "mcp":
      return `mcp ${g.label} ${g.verdict.decision} key=${g.key}`;
    case "command":
      return `command ${g.command} ${g.decision} key=${g.key ?? "none"}${g.once ? " once" : ""}`;
    case "send":
      return `send ${g.destination} ${g.decision} key=${g.key}`;
    case "path":
      return `path ${g.access} ${g.shown} ${g.verdict.decision}`;
  }
}

const rows: {
  name: string;
  needs: CallNeeds;
  rules?: Partial<Record<Effect, string[]>>;
  mcp?: string[];
  gates: string[];
}[] = [
  {
    name: "a read inside the workspace is allowed",
    needs: { tool: "read_file", paths: [{ path: "src/a.ts", access: "read" }] },
    gates: ["path read src/a.ts allow"],
  },
  {
    name: "a .env is denied whatever the rules say",
    needs: { tool: "read_file", paths: [{ path: ".env", access: "read" }] },
    rules: { allow: ["Read(.env)"] },
    gates: ["path read .env deny"],
  },
  {
    name: "a link out of the workspace is judged by where it leads",
    needs: { tool: "read_file", paths: [{ path: "out/x.txt", access: "read" }] },
    gates: [`path read ${join(base, "other/x.txt")} ask`],
  },
  {
    name: "a sandboxed command an allow rule names runs unasked, and an always may cover it",
    needs: { tool: "run_command", command: { line: "npm test", unsandboxed: false }, paths: [] },
    rules: { allow: ["Run(npm test)"] },
    gates: ["command npm test allow key=run:npm test"],
  },
  {
    name: "the same command without a sandbox is asked, every time",
    needs: { tool: "run_command", command: { line: "npm test", unsandboxed: true }, paths: [] },
    rules: { allow: ["Run(npm test)"] },
    gates: ["command npm test ask key=none once"],
  },
  {
    name: "an irreversible command is never remembered",
    needs: { tool: "run_command", command: { line: "git push origin main", unsandboxed: false }, paths: [] },
    gates: ["command git push origin main ask key=none once"],
  },
  {
    name: "a Run deny refuses the command",
    needs: { tool: "run_command", command: { line: "rm -rf build", unsandboxed: false }, paths: [] },
    rules: { deny: ["Run(rm *)"] },
    gates: ["command rm -rf build deny key=run:rm -rf build"],
  },
  {
    name: "sending asks unless a Net rule decides",
    needs: {
      tool: "fetch_url",
      sending: { subject: "GET https://example.com/", destination: "example.com" },
      paths: [],
    },
    gates: ["send example.com ask key=send:example.com"],
  },
  {
    name: "a Net deny refuses the send",
    needs: {
      tool: "fetch_url",
      sending: { subject: "GET https://example.com/", destination: "example.com" },
      paths: [],
    },
    rules: { deny: ["Net(example.com)"] },
    gates: ["send example.com deny key=send:example.com"],
  },
  {
    name: "an MCP tool asks by default, and an Mcp allow lets it",
    needs: { tool: "mcp__fs__read", mcp: { server: "fs", tool: "read", input: { path: "a" } }, paths: [] },
    mcp: ["allow fs/read"],
    gates: ["mcp fs/read allow key=mcp:fs/read"],
  },
  {
    name: "the order is MCP, command, sending, then each path",
    needs: {
      tool: "x",
      mcp: { server: "s", tool: "t", input: {} },
      command: { line: "ls", unsandboxed: false },
      sending: { subject: "GET h", destination: "h" },
      paths: [
        { path: "src/a.ts", access: "write" },
        { path: "src/b.ts", access: "read" },
      ],
    },
    gates: [
      "mcp s/t ask key=mcp:s/t",
      "command ls allow key=run:ls",
      "send h ask key=send:h",
      "path write src/a.ts allow",
      "path read src/b.ts allow",
    ],
  },
  {
    name: "a path that cannot be resolved ends the list with a refusal",
    needs: {
      tool: "read_file",
      paths: [
        { path: "src/a.ts", access: "read" },
        { path: "bad\0name", access: "read" },
        { path: "src/a.ts", access: "write" },
      ],
    },
    gates: ["path read src/a.ts allow", "refuse"],
  },
];

describe("judging a tool call's needs (the seam's first step, pure)", () => {
  for (const row of rows) {
    test(row.name, async () => {
      const gates = await judgeNeeds(row.needs, depsOf(row.rules ?? {}, row.mcp));
      expect(gates.map(line)).toEqual(row.gates);
    });
  }
});

describe("a request through the command proxy", () => {
  const policy = depsOf({ allow: ["Net(registry.npmjs.org)"], deny: ["Net(evil.example)"] }).policy;
  const rows: [string, { method: string; host: string }, string][] = [
    ["a read from an allowed host goes unasked", { method: "GET", host: "registry.npmjs.org" }, "allow none"],
    [
      "a write to an allowed host is asked every time",
      { method: "PUT", host: "registry.npmjs.org" },
      "ask none irreversible",
    ],
    [
      "a read from an unknown host is asked, and an always may cover the host",
      { method: "GET", host: "example.com" },
      "ask send:example.com",
    ],
    ["a denied host is refused, whatever the method", { method: "GET", host: "evil.example" }, "deny none"],
  ];
  for (const [name, r, expected] of rows) {
    test(name, () => {
      const v = judgeRequest(policy, "run_command", { ...r, port: 443, command: "npm publish" });
      expect(`${v.decision} ${v.key ?? "none"}${v.irreversible ? " irreversible" : ""}`).toBe(expected);
      expect(v.subject).toBe(`${r.method} ${r.host}:443`);
    });
  }
  test("an irreversible request's reason names the command and says it cannot be taken back", () => {
    const v = judgeRequest(policy, "run_command", {
      method: "POST",
      host: "example.com",
      port: 443,
      command: "curl -d x",
    });
    expect(v.reason).toContain("made by `curl -d x`");
    expect(v.reason).toContain("cannot be taken back");
  });
});
