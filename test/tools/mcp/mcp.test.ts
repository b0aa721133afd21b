import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { nobodyApprover, type Approver, type PermissionQuestion } from "../../../core/policy/approver.ts";
import { parseServers, readProposals, type McpServerConfig } from "../../../tools/mcp/config.ts";
import { openMcpSession, type McpSession } from "../../../tools/mcp/connect.ts";
import { compileMcpPolicy, decideMcp, parseMcpRule, type McpRule } from "../../../core/policy/mcp-rules.ts";
import { ConfigError } from "../../../core/errors/config-error.ts";
import { loadSettings } from "../../../app/settings.ts";
import { startHttpMcpServer } from "../../fixtures/mcp/servers.ts";
import { createServer } from "node:net";
import { createServer as createHttpServer } from "node:http";
import { compilePolicy, parseRule } from "../../../core/policy/policy.ts";
import type { StartProxy } from "../../../tools/run-command.ts";
import { startCommandProxy } from "../../../net/command-proxy.ts";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import {
  startFakeOpenAIServer,
  textReply,
  toolCallReply,
  type FakeOpenAIServer,
} from "../../support/fake-openai-server.ts";
import { runCli, runCliPty } from "../../support/cli.ts";
import { tempDir, writeTree } from "../../support/temp.ts";
import { bundledStdioServer } from "../../support/mcp-stdio-server.ts";

/**
 * An HTTP listener on 127.0.0.1 the stdio server tells its working directory when it starts (its `http://marker.test:PORT/`
 * marker, reached through Pencil's proxy, which the tests' proxy maps to 127.0.0.1; `direct` the same listener by address).
 */
async function startMarker(): Promise<{ arg: string; direct: string; seen: string[]; arrived: () => Promise<void> }> {
  const seen: string[] = [];
  const listener = createHttpServer((req, res) => {
    seen.push(new URL(req.url ?? "/", "http://x").searchParams.get("cwd") ?? req.url ?? "");
    res.end("marker seen");
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  stops.push(() => new Promise<void>((resolve) => listener.close(() => resolve())));
  const arrived = async () => {
    for (let i = 0; i < 100 && seen.length === 0; i++) await Bun.sleep(50);
  };
  const port = (listener.address() as { port: number }).port;
  return { arg: `http://marker.test:${port}/`, direct: `http://127.0.0.1:${port}/`, seen, arrived };
}

/** Pencil's proxy with marker.test (any port) mapped to 127.0.0.1, as the tests' servers listen there. */
const testProxy: StartProxy = (options) =>
  startCommandProxy({ ...options, resolveHost: (h) => (h === "marker.test" ? "127.0.0.1" : h) });

/** The run's policy with these rules (Net(...) ones judge what a proxied server sends). */
function policyWith(rules: string[], ws = tempDir()) {
  return compilePolicy({
    workspaceRoot: ws,
    home: tempDir(),
    pencilHome: tempDir(),
    rules: rules.map((r) => parseRule(r, "allow", "test")),
  });
}

// One file outside the repository (see bundledStdioServer): a start searches that file, not the whole checkout.
const STDIO_SERVER = await bundledStdioServer();
const stdio = (
  name: string,
  args: string[],
  origin: "owner" | "workspace" = "owner",
): Extract<McpServerConfig, { kind: "stdio" }> => ({
  name,
  kind: "stdio",
  command: process.execPath,
  args: [STDIO_SERVER, ...args],
  env: {},
  origin,
});

describe("Mcp(server/tool) rules", () => {
  const rule = (text: string, effect: "allow" | "ask" | "deny"): McpRule => parseMcpRule(text, effect, "test");
  const cases: { rules: McpRule[]; server: string; tool: string; want: "allow" | "ask" | "deny" }[] = [
    { rules: [], server: "docs", tool: "echo", want: "ask" },
    { rules: [rule("Mcp(docs/echo)", "allow")], server: "docs", tool: "echo", want: "allow" },
    { rules: [rule("Mcp(docs/echo)", "allow")], server: "docs", tool: "write_here", want: "ask" },
    { rules: [rule("Mcp(docs)", "allow")], server: "docs", tool: "write_here", want: "allow" },
    {
      rules: [rule("Mcp(docs/*)", "allow"), rule("Mcp(docs/write_*)", "deny")],
      server: "docs",
      tool: "write_here",
      want: "deny",
    },
    { rules: [rule("Mcp(*/*)", "allow"), rule("Mcp(docs/echo)", "ask")], server: "docs", tool: "echo", want: "ask" },
    { rules: [rule("Mcp(*)", "deny"), rule("Mcp(docs/echo)", "allow")], server: "docs", tool: "echo", want: "deny" },
    { rules: [rule("Mcp(docs/echo)", "allow")], server: "other", tool: "echo", want: "ask" },
  ];
  test.each(cases)("%#: deny > ask > allow, default ask", ({ rules, server, tool, want }) => {
    expect(decideMcp(compileMcpPolicy(rules), server, tool).decision).toBe(want);
  });

  test("a malformed rule is a configuration error naming it; a workspace cannot allow MCP tools", () => {
    expect(() => parseMcpRule("Mcp()", "allow", "f")).toThrow(ConfigError);
    expect(() => parseMcpRule("Mcp(a/b/c)", "allow", "f")).toThrow(/Mcp\(server\/tool-glob\)/);
    const ws = tempDir();
    const home = tempDir();
    writeTree(ws, {
      ".pencil/settings.json": JSON.stringify({
        permissions: { allow: ["Mcp(*)"], deny: ["Mcp(docs/write_here)"] },
        mcpServers: { evil: { command: "sh" } },
      }),
    });
    const settings = loadSettings({
      workspaceRoot: ws,
      pencilHome: join(home, ".pencil"),
      cliAllow: ["Mcp(docs/echo)"],
      cliDeny: [],
      home,
    });
    expect(settings.mcpRules.map((r) => `${r.effect} ${r.server}/${r.tool}`)).toEqual([
      "deny docs/write_here",
      "allow docs/echo",
    ]);
    expect(settings.warnings.join("\n")).toContain("cannot allow MCP tools");
    expect(settings.warnings.join("\n")).toContain("can only propose MCP servers");
    expect(settings.mcpServers).toBeUndefined();
  });

  test("mcpServers entries are checked: a bad one stops with the file named", () => {
    expect(
      parseServers(
        { a: { command: "x", args: ["1"] }, b: { url: "http://127.0.0.1:1/mcp", headers: { authorization: "t" } } },
        "f",
        "owner",
      ).map((s) => s.kind),
    ).toEqual(["stdio", "http"]);
    expect(() => parseServers({ a: { command: "" } }, "/home/u/.pencil/settings.json", "owner")).toThrow(ConfigError);
    expect(() => parseServers({ "bad name": { command: "x" } }, "f", "owner")).toThrow(/letters, digits/);
    expect(() => parseServers({ a: { url: "file:///etc/passwd" } }, "f", "owner")).toThrow(ConfigError);
  });
});

const sessions: McpSession[] = [];
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.close();
  for (const stop of stops.splice(0)) await stop();
});

function recordingApprover(answer: "yes" | "no"): Approver & { asked: PermissionQuestion[] } {
  const asked: PermissionQuestion[] = [];
  return {
    asked,
    async ask(question) {
      asked.push(question);
      return answer === "yes" ? { kind: "yes" } : { kind: "no" };
    },
  };
}

describe("MCP servers: started, listed, called", () => {
  test("a stdio and a streamable HTTP server are listed as mcp__<server>__<tool>; calls return the server's text; hostile names are left out", async () => {
    const http = await startHttpMcpServer("web");
    stops.push(http.stop);
    const session = await openMcpSession({
      servers: [
        stdio("docs", ["docs", "-", "--hostile"]),
        { name: "web", kind: "http", url: http.url, headers: {}, origin: "owner" },
      ],
      workspaceRoot: tempDir(),
      pencilHome: tempDir(),
      approver: nobodyApprover,
    });
    sessions.push(session);
    const names = session.tools.map((t) => t.name).sort();
    expect(names).toEqual([
      "mcp__docs__echo",
      "mcp__docs__fail",
      "mcp__docs__fetch",
      "mcp__docs__peek",
      "mcp__docs__reach",
      "mcp__docs__read_file",
      "mcp__docs__write_here",
      "mcp__web__echo",
      "mcp__web__fail",
      "mcp__web__fetch",
      "mcp__web__peek",
      "mcp__web__reach",
      "mcp__web__write_here",
    ]);
    expect(session.notices.join("\n")).toMatch(/tool "xyyy.*left out/);
    const ctx = {} as never;
    const echo = session.tools.find((t) => t.name === "mcp__web__echo")!;
    expect(await echo.execute({ text: "hi" }, ctx)).toBe("web echo: hi");
    expect(await session.tools.find((t) => t.name === "mcp__docs__echo")!.execute({ text: "yo" }, ctx)).toBe(
      "docs echo: yo",
    );
    await expect(session.tools.find((t) => t.name === "mcp__docs__fail")!.execute({}, ctx)).rejects.toThrow(
      "reported an error: it broke",
    );
  });

  test("a server that crashes or never answers is left out with a clear notice; the others still work", async () => {
    const session = await openMcpSession({
      servers: [
        stdio("crashy", ["crashy", "-", "--crash"]),
        stdio("slow", ["slow", "-", "--hang"]),
        stdio("docs", ["docs"]),
      ],
      workspaceRoot: tempDir(),
      pencilHome: tempDir(),
      approver: nobodyApprover,
      timeouts: { connectMs: 5000 },
    });
    sessions.push(session);
    expect(session.tools.map((t) => t.name)).toContain("mcp__docs__echo");
    expect(session.tools.some((t) => t.name.startsWith("mcp__crashy") || t.name.startsWith("mcp__slow"))).toBe(false);
    const crashy = session.notices.find((n) => n.includes('"crashy"'))!;
    expect(crashy).toContain("left out of this run: it exited with code 3; its stderr ended with:");
    expect(crashy).toContain("fatal: the crashy server gives up");
    expect(crashy).not.toContain("closed client");
    expect(session.notices.find((n) => n.includes('"slow"'))).toMatch(/timed out after 5000 ?ms|within 5000 ms/);
  }, 60_000);

  test.if(sandboxAvailable())(
    "a stdio server has no network unless the owner's settings open it, and then only Pencil's proxy, judged by Net rules (where the namespace sandbox works)",
    async () => {
      const listener = createServer((socket) => socket.end());
      await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
      stops.push(() => new Promise<void>((resolve) => listener.close(() => resolve())));
      const port = (listener.address() as { port: number }).port;
      const marker = await startMarker();
      const open = async (network: boolean, rules: string[], startProxy?: StartProxy) => {
        const session = await openMcpSession({
          servers: [stdio("docs", ["docs"])],
          workspaceRoot: tempDir(),
          pencilHome: tempDir(),
          approver: nobodyApprover,
          network,
          policy: policyWith(rules),
          ...(startProxy ? { startProxy } : {}),
        });
        sessions.push(session);
        const call = (tool: string, input: unknown) =>
          session.tools.find((t) => t.name === `mcp__docs__${tool}`)!.execute(input, {} as never) as Promise<string>;
        return call;
      };
      const off = await open(false, ["Net(*)"], testProxy);
      expect(await off("reach", { port })).toMatch(/^unreachable/);
      expect(await off("fetch", { url: marker.arg })).toStartWith("failed: ");
      // With the network on: no host network (a loopback service is out of reach), only the proxy.
      const on = await open(true, ["Net(marker.test)"], testProxy);
      expect(await on("reach", { port })).toMatch(/^unreachable/);
      expect(await on("fetch", { url: `${marker.arg}?cwd=allowed` })).toBe("status 200: marker seen");
      expect(marker.seen).toEqual(["allowed"]);
      // No rule for the host and nobody to ask: refused.
      const unruled = await open(true, [], testProxy);
      expect(await unruled("fetch", { url: `${marker.arg}?cwd=unruled` })).not.toContain("marker seen");
      // The real proxy refuses this machine's addresses whatever the rules say.
      const loopback = await open(true, ["Net(*)"]);
      expect(await loopback("fetch", { url: `${marker.direct}?cwd=loopback` })).not.toContain("marker seen");
      expect(marker.seen).toEqual(["allowed"]);
    },
    60_000,
  );

  if (!sandboxAvailable())
    console.warn("skipped: a stdio server's hidden files (no user, mount and pid namespaces or setpriv here)");
  test.if(sandboxAvailable())(
    "a stdio server runs in the command sandbox: the owner's keys, the workspace's .env and PENCIL_HOME are out of its reach",
    async () => {
      const home = tempDir("pencil-owner-");
      writeTree(home, { ".ssh/id_ed25519": "PRIVATE KEY\n" });
      const ws = tempDir("pencil-ws-");
      writeTree(ws, { ".env": "API_KEY=s3cret\n", "a.txt": "a\n" });
      const pencilHome = tempDir();
      writeTree(pencilHome, { "settings.json": "{}\n" });
      const session = await openMcpSession({
        servers: [stdio("docs", ["docs"])],
        workspaceRoot: ws,
        pencilHome,
        approver: nobodyApprover,
      });
      sessions.push(session);
      const peek = session.tools.find((t) => t.name === "mcp__docs__peek")!;
      const read = (path: string) => peek.execute({ path }, {} as never) as Promise<string>;
      // The control: its own program stays readable, so "unreadable" below is the sandbox, not a broken tool.
      expect(await read(STDIO_SERVER)).toStartWith("read: ");
      for (const secret of [
        join(home, ".ssh/id_ed25519"),
        join(ws, ".env"),
        join(ws, "a.txt"),
        join(pencilHome, "settings.json"),
        join(homedir(), ".ssh/id_ed25519"),
      ])
        expect(await read(secret)).toStartWith("unreadable: ");
    },
    20_000,
  );

  test("a workspace-proposed server is not started before approval (no human → never); approval is remembered per exact command", async () => {
    const ws = tempDir();
    const pencilHome = tempDir();
    const marker = await startMarker();
    const proposal = stdio("proposed", ["proposed", marker.arg], "workspace");
    // The network on through the proxy, the marker's host allowed: a started server reports its start.
    const net = { network: true, startProxy: testProxy, policy: policyWith(["Net(marker.test)"], ws) };
    const refused = await openMcpSession({
      servers: [proposal],
      workspaceRoot: ws,
      pencilHome,
      approver: nobodyApprover,
      ...net,
    });
    sessions.push(refused);
    expect(refused.tools).toEqual([]);
    expect(refused.notices).toEqual([
      'MCP server "proposed" (proposed by the workspace) was not started: not approved.',
    ]);
    expect(marker.seen).toEqual([]);

    const owner = recordingApprover("yes");
    const approved = await openMcpSession({
      servers: [proposal],
      workspaceRoot: ws,
      pencilHome,
      approver: owner,
      ...net,
    });
    sessions.push(approved);
    expect(owner.asked).toHaveLength(1);
    expect(owner.asked[0]!.subject).toContain(STDIO_SERVER);
    expect(owner.asked[0]!.once).toBe(true);
    expect(approved.tools.map((t) => t.name)).toContain("mcp__proposed__echo");
    // It ran in a private directory, not the workspace.
    await marker.arrived();
    expect(marker.seen).toHaveLength(1);
    expect(marker.seen[0]).not.toBe(ws);
    expect(Object.keys(JSON.parse(readFileSync(join(pencilHome, "mcp-approvals.json"), "utf8"))[ws])).toEqual([
      "proposed",
    ]);

    const again = recordingApprover("no");
    sessions.push(await openMcpSession({ servers: [proposal], workspaceRoot: ws, pencilHome, approver: again }));
    expect(again.asked).toHaveLength(0);
    const changed = recordingApprover("no");
    const changedSession = await openMcpSession({
      servers: [{ ...proposal, args: [...proposal.args, "--hostile"] }],
      workspaceRoot: ws,
      pencilHome,
      approver: changed,
    });
    sessions.push(changedSession);
    expect(changed.asked).toHaveLength(1);
    expect(changedSession.tools).toEqual([]);
  });
});

describe("what a proposal's approval shows and is bound to", () => {
  test("the question shows every environment and header value; a changed value, header or program file asks again", async () => {
    const ws = tempDir();
    const pencilHome = tempDir();
    const programDir = tempDir("pencil-program-");
    const program = join(programDir, "server.mjs");
    writeFileSync(program, "// version one\n");
    const http = await startHttpMcpServer("web");
    stops.push(http.stop);
    const asked = async (server: McpServerConfig): Promise<string[]> => {
      const owner = recordingApprover("yes");
      sessions.push(await openMcpSession({ servers: [server], workspaceRoot: ws, pencilHome, approver: owner }));
      return owner.asked.map((q) => q.subject);
    };
    const withEnv: McpServerConfig = {
      ...stdio("envy", ["envy"], "workspace"),
      env: { DOCS_MODE: "fast lane", BASH_ENV: "$(touch /tmp/x)" },
    };
    const [question] = await asked(withEnv);
    // Values in full, quoted where a shell would need it: nothing hides behind K=….
    expect(question).toContain('BASH_ENV="$(touch /tmp/x)" DOCS_MODE="fast lane"');
    expect(await asked(withEnv)).toEqual([]);
    expect(await asked({ ...withEnv, env: { ...withEnv.env, DOCS_MODE: "slow lane" } })).toHaveLength(1);

    const web: McpServerConfig = {
      name: "web",
      kind: "http",
      url: http.url,
      headers: { authorization: "Bearer one" },
      origin: "workspace",
    };
    const [httpQuestion] = await asked(web);
    expect(httpQuestion).toContain('with headers authorization: "Bearer one"');
    expect(await asked(web)).toEqual([]);
    expect(await asked({ ...web, headers: { authorization: "Bearer two" } })).toHaveLength(1);

    // The program a proposal names is bound by its content: the same path with other bytes is asked again.
    const byFile: McpServerConfig = { ...stdio("file", [], "workspace"), args: [program] };
    expect(await asked(byFile)).toHaveLength(1);
    expect(await asked(byFile)).toEqual([]);
    writeFileSync(program, "// version two, same path\n");
    expect(await asked(byFile)).toHaveLength(1);
  }, 60_000);
});

const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

async function cliSetup(settings: unknown, files: Record<string, string> = { "a.txt": "a\n" }) {
  const workspace = tempDir("pencil-ws-");
  writeTree(workspace, files);
  const groq = await startFakeOpenAIServer();
  servers.push(groq);
  const home = tempDir("pencil-home-");
  mkdirSync(join(home, ".pencil"), { recursive: true });
  writeFileSync(join(home, ".pencil/settings.json"), JSON.stringify(settings));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    PENCIL_HOME: join(home, ".pencil"),
    GROQ_API_KEY: "gsk_test_key",
    GROQ_BASE_URL: `${groq.url}/openai/v1`,
    NO_COLOR: "1",
  };
  return { workspace, groq, env, home };
}

const toolResults = (body: any): string[] =>
  body.messages.filter((m: any) => m.role === "tool").map((m: any) => String(m.content));

describe("MCP tools through the policy seam, end to end", () => {
  test("given to the model, judged by Mcp rules: allowed runs, denied is refused, unruled asks and is refused with no terminal; the record shows them", async () => {
    const http = await startHttpMcpServer("web");
    stops.push(http.stop);
    const { workspace, groq, env } = await cliSetup({
      mcpServers: { docs: { command: process.execPath, args: [STDIO_SERVER, "docs"] }, web: { url: http.url } },
      permissions: { allow: ["Mcp(docs/echo)", "Mcp(web/echo)"], deny: ["Mcp(docs/write_here)"] },
    });
    groq.enqueue(
      toolCallReply([
        { name: "mcp__docs__echo", arguments: { text: "one" } },
        { name: "mcp__web__echo", arguments: { text: "two" } },
        { name: "mcp__docs__write_here", arguments: { name: "x.txt" } },
        { name: "mcp__web__fail", arguments: {} },
      ]),
      toolCallReply([{ name: "create_file", arguments: { path: "b.txt", content: "b\n" } }]),
      textReply("done"),
    );
    const result = await runCli(["agent", "use the tools", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(3);
    const offered = (groq.requests[0]!.body.tools as any[]).map((t) => t.function.name);
    expect(offered).toEqual(
      expect.arrayContaining(["mcp__docs__echo", "mcp__web__echo", "mcp__docs__write_here", "read_file"]),
    );
    const results = toolResults(groq.requests[1]!.body).join("\n");
    expect(results).toContain("docs echo: one");
    expect(results).toContain("web echo: two");
    expect(results).toContain("the MCP tool docs/write_here is denied");
    expect(results).toMatch(/refused the MCP call web\/fail/);
    expect(existsSync(join(workspace, "x.txt"))).toBe(false);
    // The review's summary lists the MCP calls beside the staged file.
    expect(result.stdout).toContain("mcp called: docs/echo");
    expect(result.stdout).toContain("mcp refused: docs/write_here");
  });

  test("an unruled MCP call is asked about at the terminal, and runs after a yes", async () => {
    const { workspace, groq, env } = await cliSetup({
      mcpServers: { docs: { command: process.execPath, args: [STDIO_SERVER, "docs"] } },
    });
    // Nothing staged: the model is told so once, and answers again.
    groq.enqueue(
      toolCallReply([{ name: "mcp__docs__echo", arguments: { text: "asked" } }]),
      textReply("done"),
      textReply("done: nothing to stage"),
    );
    const { code, output } = await runCliPty(["agent", "echo", "-w", workspace], {
      cwd: workspace,
      env,
      steps: [{ expect: "[r]eason: ", send: "y\r" }],
    });
    expect(output).toContain("MCP docs/echo");
    expect(code).toBe(0);
    expect(toolResults(groq.requests[1]!.body).join("\n")).toContain("docs echo: asked");
  });

  test("doctor says a proposal is approved once it is, and not approved once its program file changes", async () => {
    const programDir = tempDir("pencil-program-");
    const program = join(programDir, "server.mjs");
    writeFileSync(program, "// version one\n");
    const { workspace, env, home } = await cliSetup(
      {},
      {
        "a.txt": "a\n",
        ".pencil/mcp.json": JSON.stringify({
          mcpServers: { proposed: { command: process.execPath, args: [program, "proposed"] } },
        }),
      },
    );
    const doctor = async () => (await runCli(["doctor", "-w", workspace], { cwd: workspace, env })).stdout;
    expect(await doctor()).toContain("proposed (stdio, proposed by .pencil/mcp.json, not approved)");
    const owner = recordingApprover("yes");
    sessions.push(
      await openMcpSession({
        servers: readProposals(realpathSync(workspace)).servers,
        workspaceRoot: realpathSync(workspace),
        pencilHome: env.PENCIL_HOME!,
        home,
        approver: owner,
      }),
    );
    expect(owner.asked).toHaveLength(1);
    expect(await doctor()).toContain("proposed (stdio, proposed by .pencil/mcp.json, approved)");
    writeFileSync(program, "// version two\n");
    expect(await doctor()).toContain("proposed (stdio, proposed by .pencil/mcp.json, not approved)");
  });

  test("a workspace's .pencil/mcp.json server is not started with no terminal to approve it; the run goes on", async () => {
    const { workspace, groq, env } = await cliSetup(
      {},
      {
        "a.txt": "a\n",
        ".pencil/mcp.json": JSON.stringify({
          mcpServers: { proposed: { command: process.execPath, args: [STDIO_SERVER, "proposed"] } },
        }),
      },
    );
    // Nothing staged: the model is told so once, and answers again.
    groq.enqueue(textReply("done"), textReply("done: nothing to stage"));
    const result = await runCli(["agent", "anything", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).toContain(
      'MCP server "proposed" (proposed by the workspace) was not started',
    );
    // Started, it would have offered its tools (the approved case above shows they are).
    expect((groq.requests[0]!.body.tools as any[]).some((t) => t.function.name.startsWith("mcp__"))).toBe(false);
    // doctor lists it without starting it.
    const doctor = await runCli(["doctor", "-w", workspace], { cwd: workspace, env });
    expect(doctor.stdout).toContain("MCP servers: proposed (stdio, proposed by .pencil/mcp.json, not approved)");
  });
});
