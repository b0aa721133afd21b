import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { INDEX } from "./cli.ts";
import { withTranspilerCache } from "./transpiler-cache.ts";

/** Debian's Chromium, which the browser tests drive; without it they are skipped, saying so. */
const CHROMIUM = "/usr/bin/chromium";
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

/** A headless Chromium with a fresh profile, nothing reaching the network on its own. */
export async function launchChromium(): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), "pencil-chromium-"));
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 860 },
  });
}

/** `pencil review --web ID` running as a subprocess: the address it printed, and its exit. */
export interface WebReviewProcess {
  pid: number;
  url: string;
  origin: string;
  exited: Promise<number>;
  output: () => string;
  kill(): void;
}

/** Starts `review --web` and waits for the address it prints. */
export async function startWebReview(
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<WebReviewProcess> {
  const proc = Bun.spawn([process.execPath, INDEX, "review", "--web", ...args], {
    cwd: options.cwd,
    env: withTranspilerCache({ ...options.env, CI: "1" }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
    }
  };
  void pump(proc.stdout);
  void pump(proc.stderr);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = text.match(/http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/);
    if (found)
      return {
        pid: proc.pid,
        url: found[0],
        origin: new URL(found[0]).origin,
        exited: proc.exited,
        output: () => text,
        kill: () => proc.kill(),
      };
    if (Date.now() > deadline || proc.exitCode !== null) {
      proc.kill();
      throw new Error(`review --web printed no address:\n${text}`);
    }
    await Bun.sleep(20);
  }
}
