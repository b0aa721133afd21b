import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { runCli } from "../../support/cli.ts";
import { savedScriptedRun } from "../../support/scripted-run.ts";
import { HAVE_CHROMIUM, launchChromium, startWebReview } from "../../support/review-page.ts";
import { tempDir } from "../../support/temp.ts";

// `pencil review --web` driven in a real headless Chromium: the token, per-hunk decisions, a
// reason reaching the agent, Apply through the shared settle, a binary change, a reload mid-review.

const lines = (n: number) => Array.from({ length: n }, (_, i) => `const line${i + 1} = ${i + 1};\n`).join("");
const BASE = lines(30);
const STAGED = BASE.replace("const line2 = 2;", "const line2 = 200;").replace(
  "const line25 = 25;",
  "const line25 = 2500;",
);
/** Binary content the model can write: NUL bytes make it binary. */
const BLOB = "PNG\u0000\u0001\u0002 not text\u0000\n";

let browser: BrowserContext;
beforeAll(async () => {
  if (HAVE_CHROMIUM) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** A saved changeset: f.ts with two hunks, g.ts created, logo.png (binary) created; and the fake model's next answers. */
async function saved(after: ReturnType<typeof textReply>[] = []) {
  const { workspace, groq, env } = await modelWorld({ "f.ts": BASE });
  // Made by this process's own run with a scripted model: the tests that use it are about the page.
  const run = await savedScriptedRun(env, workspace, "raise the numbers", [
    { toolCalls: [{ name: "read_file", input: { path: "f.ts" } }] },
    {
      toolCalls: [
        { name: "write_file", input: { path: "f.ts", content: STAGED } },
        { name: "create_file", input: { path: "g.ts", content: "export const g = 1;\n" } },
        { name: "create_file", input: { path: "logo.png", content: BLOB } },
      ],
    },
    { text: "Staged." },
  ]);
  expect(run.changeset?.status).toBe("pending");
  groq.enqueue(...after);
  return { workspace, groq, env, id: run.changeset!.id, read: (p: string) => readFileSync(join(workspace, p), "utf8") };
}

/** The same changeset made by an `agent` process, with the model's view of intent recorded with it. */
async function savedByAgent() {
  const { workspace, groq, env } = await modelWorld({ "f.ts": BASE });
  groq.enqueue(
    toolCallReply([{ name: "read_file", arguments: { path: "f.ts" } }]),
    toolCallReply([
      { name: "write_file", arguments: { path: "f.ts", content: STAGED } },
      { name: "create_file", arguments: { path: "g.ts", content: "export const g = 1;\n" } },
      { name: "create_file", arguments: { path: "logo.png", content: BLOB } },
    ]),
    textReply("Staged."),
  );
  // The intent check's answer, recorded with the changeset; the page shows it without asking again.
  groq.enqueueStructured(
    textReply(
      JSON.stringify({ verdict: "more than asked", what: "also creates logo.png, which the goal does not mention" }),
    ),
  );
  const run = await runCli(["agent", "raise the numbers", "-w", workspace], { cwd: workspace, env });
  expect(run.code).toBe(3);
  const id = run.stdout.match(/review (\d{8}-\d{6}-[0-9a-f]{6})/)![1]!;
  return { workspace, groq, env, id, read: (p: string) => readFileSync(join(workspace, p), "utf8") };
}

async function section(page: Page, path: string) {
  const s = page.locator("section.file", { has: page.locator("h2", { hasText: path }) });
  await s.locator(".body table, .body .binary").first().waitFor();
  return s;
}

describe.skipIf(!HAVE_CHROMIUM)("review --web in headless Chromium (needs /usr/bin/chromium)", () => {
  test("the token works once; without the session every request is 403; the page loads nothing from the network", async () => {
    const w = await savedByAgent();
    const review = await startWebReview([w.id, "-w", w.workspace], { cwd: w.workspace, env: w.env });
    try {
      expect((await fetch(`${review.origin}/`)).status).toBe(403);
      expect((await fetch(`${review.origin}/api/state`)).status).toBe(403);
      expect((await fetch(`${review.origin}/?token=wrong`)).status).toBe(403);
      const page = await browser.newPage();
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      await page.goto(review.url);
      await page.locator("nav#files li").first().waitFor();
      expect(new URL(page.url()).search).toBe("");
      // The model's opinion of the diff against the goal, one line, worded as in the terminal; not asked again.
      expect(await page.locator("#intent-opinion").textContent()).toBe(
        "Model's view of intent: more than asked — also creates logo.png, which the goal does not mention (groq:openai/gpt-oss-120b)",
      );
      expect(await page.locator("#intent-opinion.warns").count()).toBe(1);
      expect(w.groq.structuredRequests).toHaveLength(1);
      // The token was used by the browser: it does not open the review a second time.
      expect((await fetch(review.url, { redirect: "manual" })).status).toBe(403);
      // With the page's cookie but another Host (DNS rebinding), still 403.
      const cookie = (await browser.cookies(review.origin)).map((c) => `${c.name}=${c.value}`).join("; ");
      expect((await fetch(`${review.origin}/api/state`, { headers: { cookie } })).status).toBe(200);
      expect((await fetch(`${review.origin}/api/state`, { headers: { cookie, host: "evil.example" } })).status).toBe(
        403,
      );
      const head = await fetch(`${review.origin}/`, { headers: { cookie } });
      expect(head.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(requests.every((u) => u.startsWith(review.origin))).toBe(true);
      await page.locator("#leave").click();
      expect(await review.exited).toBe(3);
      // The review is over: its session is gone with it.
      expect(
        await fetch(`${review.origin}/api/state`, { headers: { cookie } })
          .then((r) => r.status)
          .catch(() => "refused"),
      ).not.toBe(200);
      await page.close();
    } finally {
      review.kill();
    }
  }, 60_000);

  test("a reason being typed survives another decision of the same file saved meanwhile, and goes with its Drop", async () => {
    const w = await saved([textReply("Noted, leaving it.")]);
    const review = await startWebReview([w.id, "-w", w.workspace], { cwd: w.workspace, env: w.env });
    try {
      const page = await browser.newPage();
      await page.goto(review.url);
      let f = await section(page, "f.ts");
      // Typed first; the keep of the other hunk is saved after it, and re-renders the file.
      await f.locator(".hunk").nth(1).locator("input.reason").fill("typed before the keep was saved");
      await f.locator(".hunk").nth(0).locator("button.keep").click();
      await f.locator(".hunk").nth(0).locator(".state", { hasText: "kept" }).waitFor();
      f = await section(page, "f.ts");
      const box = f.locator(".hunk").nth(1).locator("input.reason");
      expect(await box.inputValue()).toBe("typed before the keep was saved");
      await f.locator(".hunk").nth(1).locator("button.drop").click();
      await f.locator(".hunk").nth(1).locator(".state", { hasText: "dropped" }).waitFor();
      // The reason was saved with the drop: a reload shows it.
      await page.reload();
      f = await section(page, "f.ts");
      expect(await f.locator(".hunk").nth(1).locator("input.reason").inputValue()).toBe(
        "typed before the keep was saved",
      );
      await page.close();
    } finally {
      review.kill();
    }
  }, 60_000);

  test("keep one hunk, drop the other with a reason, reload, reject a file with a reason, binary approved on its own, Apply: exact bytes, reasons reach the agent, exit 0", async () => {
    const w = await saved([textReply("Noted, leaving it.")]);
    const review = await startWebReview([w.id, "-w", w.workspace], { cwd: w.workspace, env: w.env });
    try {
      const page = await browser.newPage();
      await page.goto(review.url);
      let f = await section(page, "f.ts");
      expect(await f.locator(".hunk").count()).toBe(2);
      // Word marks and syntax colours in the diff.
      expect(await f.locator("tr.add mark").first().textContent()).toBe("200");
      expect(await f.locator(".hljs-keyword").count()).toBeGreaterThan(0);
      await f.locator(".hunk").nth(0).locator("button.keep").click();
      await f.locator(".hunk").nth(1).locator("input.reason").fill("leave line 25 alone");
      await f.locator(".hunk").nth(1).locator("button.drop").click();
      await page.locator("nav li.hunks").waitFor();

      // A reload mid-review shows the decisions made so far.
      await page.reload();
      f = await section(page, "f.ts");
      expect(await f.locator(".hunk").nth(0).locator(".state").textContent()).toBe("kept");
      expect(await f.locator(".hunk").nth(1).locator(".state").textContent()).toBe("dropped");

      const g = await section(page, "g.ts");
      await g.locator(".controls input.reason").fill("no g file please");
      await g.locator(".controls button.reject").click();
      await page.locator("nav li.rejected").waitFor();

      // The page as the docs show it, light and dark, taken by this browser. They land in docs/ only when
      // asked (PENCIL_SCREENSHOTS=1), so a test run leaves the checkout as it was.
      await page.evaluate("window.scrollTo(0, 0)");
      const shots = process.env.PENCIL_SCREENSHOTS ? join(import.meta.dir, "../../../docs") : tempDir("pencil-shots-");
      for (const scheme of ["light", "dark"] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.screenshot({ path: join(shots, `review-page-${scheme}.png`) });
      }
      await page.emulateMedia({ colorScheme: "light" });
      // Side by side shows the same hunks in two columns, the marks included.
      await page.locator("#view-toggle").click();
      expect(await f.locator("table.split").count()).toBe(2);
      expect(await f.locator("table.split td.add mark").first().textContent()).toBe("200");
      await page.locator("#view-toggle").click();

      // Approve all leaves the binary change out; its own Approve decides it.
      const png = await section(page, "logo.png");
      expect(await png.locator(".hash").textContent()).toContain("SHA-256");
      await page.locator("#approve-all").click();
      await page.locator("#message", { hasText: "binary change(s) need their own Approve" }).waitFor();
      expect(await page.locator("#apply").isDisabled()).toBe(true);
      await png.locator(".controls button.approve").click();
      await page.locator("nav li.approved").waitFor();
      await page.locator("#apply").click();
      await page.locator("#outcome li", { hasText: "applied f.ts" }).waitFor();
      expect(await review.exited).toBe(0);
      expect(w.read("f.ts")).toBe(BASE.replace("const line2 = 2;", "const line2 = 200;"));
      expect(readFileSync(join(w.workspace, "logo.png"), "utf8")).toBe(BLOB);
      expect(() => w.read("g.ts")).toThrow();
      const revision = w.groq.requests.at(-1)!.raw;
      expect(revision).toContain("no g file please");
      expect(revision).toContain("leave line 25 alone");
      expect(revision).toContain("hunk 2 of 2");
      await page.close();
    } finally {
      review.kill();
    }
  }, 90_000);

  test("a file changed on disk before Apply is not written, the page says so, exit 4", async () => {
    const w = await saved();
    const review = await startWebReview([w.id, "-w", w.workspace], { cwd: w.workspace, env: w.env });
    try {
      const page = await browser.newPage();
      await page.goto(review.url);
      await section(page, "f.ts");
      for (const path of ["f.ts", "g.ts", "logo.png"]) {
        const s = await section(page, path);
        await s.locator(".controls button.approve").click();
        await page.locator(`#f-${["f.ts", "g.ts", "logo.png"].sort().indexOf(path)}.approved`).waitFor();
      }
      writeFileSync(join(w.workspace, "f.ts"), `${BASE}// someone else\n`);
      await page.locator("#apply").click();
      await page.locator("#outcome li.conflict", { hasText: "f.ts" }).waitFor();
      expect(await review.exited).toBe(4);
      expect(w.read("f.ts")).toBe(`${BASE}// someone else\n`);
      expect(w.read("g.ts")).toBe("export const g = 1;\n");
      await page.close();
    } finally {
      review.kill();
    }
  }, 90_000);
});
