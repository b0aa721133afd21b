import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { hangReply, startFakeOpenAIServer, textReply, toolCallReply, type FakeOpenAIServer } from "./support/fake-openai-server.ts";
import { INDEX, runCli, runCliPty } from "./support/cli.ts";
import { tempDir, writeTree } from "./support/temp.ts";

// Sessions end to end: `bun index.ts` as a subprocess against the fake model server,
// follow-ups through a pseudo-terminal, continuations across processes, a kill -9.

const servers: FakeOpenAIServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

async function setup() {
  const workspace = tempDir("pencil-ws-");
  writeTree(workspace, { "a.txt": "alpha\n" });
  const groq = await startFakeOpenAIServer();
  servers.push(groq);
  const home = tempDir("pencil-home-");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    PENCIL_HOME: join(home, ".pencil"),
    GROQ_API_KEY: "gsk_test_key",
    GROQ_BASE_URL: `${groq.url}/openai/v1`,
    NO_COLOR: "1",
  };
  const cli = (args: string[]) => runCli([...args, "-w", workspace], { cwd: workspace, env });
  const log = async () => JSON.parse((await cli(["log", "--json"])).stdout) as { id: string; status: string; session?: string; files: { path: string }[] }[];
  return { workspace, groq, env, cli, log };
}

const create = (path: string, content: string) => toolCallReply([{ name: "create_file", arguments: { path, content } }]);
const PROMPT = "reject with feedback: ";

describe("sessions you can talk to", () => {
  test("in a terminal, a follow-up at › is a new turn of the same session that sees the previous turns and the review", async () => {
    const { workspace, groq, env } = await setup();
    groq.enqueue(create("c.txt", "gamma\n"), textReply("Made c."), create("d.txt", "delta\n"), textReply("Made d."));
    const { code, output } = await runCliPty(["agent", "make c", "-w", workspace], {
      cwd: workspace,
      env,
      endFollowUps: false,
      steps: [
        { expect: PROMPT, send: "y\r" },
        { expect: "› ", send: "now make d as well\r" },
        { expect: PROMPT, send: "y\r" },
        { expect: "› ", send: "\r" },
      ],
    });
    expect(code).toBe(0);
    expect(readFileSync(join(workspace, "c.txt"), "utf8")).toBe("gamma\n");
    expect(readFileSync(join(workspace, "d.txt"), "utf8")).toBe("delta\n");
    const followUp = groq.requests[2]!.raw;
    expect(followUp).toContain("make c");
    expect(followUp).toContain("Made c.");
    expect(followUp).toContain("now make d as well");
    expect(followUp).toContain("Applied to disk: c.txt");
    expect(output).toContain("applied  d.txt");
  });

  test("-c after a restart continues the same conversation and the same pending changeset", async () => {
    const { groq, cli, log } = await setup();
    groq.enqueue(create("c.txt", "gamma\n"), textReply("Made c."));
    expect((await cli(["agent", "make c"])).code).toBe(3);
    const [first] = await log();
    groq.enqueue(create("d.txt", "delta\n"), textReply("Made d."));
    const second = await cli(["agent", "-c", "and d"]);
    expect(second.code).toBe(3);
    expect(second.stderr).toContain("Continuing");
    const rows = await log();
    expect(rows.length).toBe(1);
    expect(rows[0]!.id).toBe(first!.id);
    expect(rows[0]!.status).toBe("pending");
    expect(rows[0]!.files.map((f) => f.path)).toEqual(["c.txt", "d.txt"]);
    const request = groq.requests[2]!.raw;
    expect(request).toContain("make c");
    expect(request).toContain("Made c.");
    expect(request).toContain("and d");
    // Without -c, a new goal still continues the session whose changeset is pending, and says so.
    groq.enqueue(textReply("Nothing more."));
    const third = await cli(["agent", "anything else?"]);
    expect(third.stderr).toContain("is still pending, so this goal continues its session");
    expect(groq.requests[4]!.raw).toContain("and d");
    expect((await log()).length).toBe(1);
  });

  test("kill -9 during a run, then -c: the finished steps are kept, only the step in flight is lost", async () => {
    const { workspace, groq, env, cli, log } = await setup();
    groq.enqueue(create("c.txt", "gamma\n"), create("d.txt", "delta\n"), hangReply());
    const proc = Bun.spawn([process.execPath, INDEX, "agent", "make three files", "-w", workspace], { cwd: workspace, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const deadline = Date.now() + 15_000;
    // The third request means the second step finished (and was saved before it was sent).
    while (groq.requests.length < 3 && Date.now() < deadline) await Bun.sleep(50);
    expect(groq.requests.length).toBe(3);
    proc.kill("SIGKILL");
    await proc.exited;
    expect(existsSync(join(workspace, "c.txt"))).toBe(false);
    groq.enqueue(textReply("Picking up: c and d are staged."));
    const again = await cli(["agent", "-c", "go on"]);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain("interrupted");
    const rows = await log();
    expect(rows.length).toBe(1);
    expect(rows[0]!.files.map((f) => f.path)).toEqual(["c.txt", "d.txt"]);
    const request = groq.requests[3]!.raw;
    expect(request).toContain("make three files");
    expect(request).toContain("Staged create: d.txt");
    expect(request).toContain("go on");
  });

  test("--resume of an unknown id exits 2 and lists the known sessions", async () => {
    const { groq, cli } = await setup();
    groq.enqueue(textReply("Hello."));
    await cli(["agent", "say hello"]);
    const result = await cli(["agent", "--resume", "nope", "again"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("No session nope");
    expect(result.stderr).toContain("say hello");
  });
});
