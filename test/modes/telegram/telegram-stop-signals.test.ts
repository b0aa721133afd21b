import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { sandboxAvailable } from "../../../core/sandbox/namespace.ts";
import { startFakeOpenAIServer, textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { messageUpdate, startFakeTelegram } from "../../support/fake-telegram-server.ts";
import { OWNER } from "../../support/telegram-world.ts";
import { tempDir } from "../../support/temp.ts";
import { pidsRunning } from "../../support/processes.ts";
import { withTranspilerCache } from "../../support/transpiler-cache.ts";

// A stopped bot stops its commands: the real `./bin/pencil telegram` against the fake Bot API and a local model
// server, running a sleep through run_command, sent each stopping signal mid-command.

const BIN = join(import.meta.dir, "../../..", "bin", "pencil");

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function until(check: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

/** Starts the bot, has it run a sleep in the sandbox, sends `signal` mid-command, and checks what is left. */
async function stopMidCommand(signal: "SIGTERM" | "SIGHUP" | "SIGINT", n: number): Promise<void> {
  const base = realpathSync(tempDir("pencil-tgstop-"));
  const root = join(base, "ws");
  const tmp = join(base, "tmp");
  mkdirSync(root);
  mkdirSync(tmp);
  const fake = startFakeTelegram();
  const llm = await startFakeOpenAIServer();
  cleanup.push(
    () => fake.close(),
    () => llm.stop(),
  );
  const sleep = ["sleep", `5${n}.${process.pid}`];
  llm.enqueue(
    toolCallReply([{ name: "create_file", arguments: { path: "b.txt", content: "beta\n" } }]),
    toolCallReply([{ name: "run_command", arguments: { command: `${sleep.join(" ")}; echo never > never.txt` } }]),
    textReply("Done."),
  );
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: base,
    TMPDIR: tmp,
    PENCIL_HOME: join(base, "pencil-home"),
    PENCIL_WORKSPACE: root,
    TELEGRAM_BOT_TOKEN: fake.token,
    TELEGRAM_OWNER_ID: String(OWNER),
    TELEGRAM_API_ROOT: fake.apiRoot,
    LOCAL_LLM_BASE_URL: `${llm.url}/v1`,
    LOCAL_LLM_MODEL: "fake-local",
  };
  const proc = Bun.spawn([BIN, "telegram", "--allow", "Run(sleep *)"], {
    cwd: root,
    env: withTranspilerCache(env),
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  cleanup.push(() => {
    proc.kill("SIGKILL");
  });
  const stderr = new Response(proc.stderr).text();
  await until(() => fake.polls() >= 1, "the bot to poll");
  fake.pushUpdate(messageUpdate(OWNER, "/agent wait a while"));
  await until(() => pidsRunning(sleep).length > 0, `${signal}: the command to start`);
  expect(readdirSync(tmp).some((name) => name.startsWith("pencil-run-"))).toBe(true);
  const sent = Date.now();
  proc.kill(signal);
  const code = await Promise.race([proc.exited, Bun.sleep(20_000).then(() => "still running")]);
  const took = Date.now() - sent;
  // The bot stops as asked: what it started is ended, not left to init.
  expect({
    signal,
    code,
    left: pidsRunning(sleep).length,
    scratch: readdirSync(tmp).filter((name) => name.startsWith("pencil-run-")),
  }).toEqual({ signal, code: 0, left: 0, scratch: [] });
  expect(took).toBeLessThan(15_000);
  expect(existsSync(join(root, "never.txt"))).toBe(false);
  expect(await stderr).not.toContain(fake.token.split(":")[1]!);
  // What the run staged before the stop is saved for review.
  const log = Bun.spawnSync([BIN, "log", "--json", "-w", root], { cwd: root, env: withTranspilerCache(env) });
  expect(log.stdout.toString()).toContain("b.txt");
}

describe("a stopped bot stops its commands", () => {
  test.skipIf(!sandboxAvailable())(
    "(needs the namespace sandbox) SIGTERM, SIGHUP and SIGINT mid-command: the bot exits, no process and no scratch left",
    async () => {
      await Promise.all([stopMidCommand("SIGTERM", 1), stopMidCommand("SIGHUP", 2), stopMidCommand("SIGINT", 3)]);
    },
    120_000,
  );
});
