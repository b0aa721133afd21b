import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { errorReply, textReply, toolCallReply, type FakeOpenAIServer } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { runCli } from "../../support/cli.ts";

// The intent check end to end: after a run the real Groq client asks the fake server, in one structured
// request, whether the diff does what the goal asked; the summary shows the answer as the model's opinion,
// and `pencil review` and `pencil log` show the same recorded line without asking again.

const PRICING = "export const TAX = 0.1;\nexport const total = (n: number) => n * (1 + TAX);\n";

/** The agent's run: read pricing.ts, hard-code 0.15 in total (leaving TAX), say done. */
function enqueueRun(groq: FakeOpenAIServer): void {
  groq.enqueue(
    toolCallReply([{ name: "read_file", arguments: { path: "pricing.ts" } }]),
    toolCallReply([
      { name: "edit_file", arguments: { path: "pricing.ts", old_string: "(1 + TAX)", new_string: "(1 + 0.15)" } },
    ]),
    textReply("Done."),
  );
}

function verdict(verdict: string, what = "") {
  return textReply(JSON.stringify({ verdict, what }));
}

function settings(env: Record<string, string>, review: Record<string, unknown>): void {
  mkdirSync(env.PENCIL_HOME!, { recursive: true });
  writeFileSync(join(env.PENCIL_HOME!, "settings.json"), JSON.stringify({ review }));
}

function record(env: Record<string, string>): any {
  const dir = join(env.PENCIL_HOME!, "changesets");
  const name = readdirSync(dir).find((n) => n.endsWith(".json") && !n.includes("conversation"))!;
  return JSON.parse(readFileSync(join(dir, name), "utf8"));
}

describe("intent check in the terminal", () => {
  test("one structured call; its opinion is one line of the summary, recorded, and shown again by review and log without a second call", async () => {
    const { workspace, groq, env } = await modelWorld({ "pricing.ts": PRICING });
    enqueueRun(groq);
    groq.enqueueStructured(verdict("less than asked", "TAX is still 0.1; 0.15 is hard-coded inside total"));
    const result = await runCli(["agent", "raise TAX to 0.15", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(3);
    const line =
      "Model's view of intent: less than asked — TAX is still 0.1; 0.15 is hard-coded inside total (groq:openai/gpt-oss-120b)";
    expect(result.stdout).toContain(line);
    // One structured request, carrying the goal and the diff, answered apart from the run's own three.
    expect(groq.structuredRequests).toHaveLength(1);
    expect(groq.requests).toHaveLength(3);
    const sent = JSON.stringify(groq.structuredRequests[0]!.body.messages);
    expect(sent).toContain("raise TAX to 0.15");
    expect(sent).toContain("(1 + 0.15)");
    expect(groq.structuredRequests[0]!.body.response_format.type).toBe("json_schema");
    // Its tokens count in the run's: three steps and the check, 42 prompt tokens each at the fake server.
    expect(result.stdout).toContain("tokens 168 in");
    const saved = record(env);
    expect(saved.intent).toMatchObject({ verdict: "less", model: "groq:openai/gpt-oss-120b", digest: saved.digest });

    const review = await runCli(["review", saved.id, "-w", workspace], { cwd: workspace, env });
    expect(review.code).toBe(3);
    expect(review.stdout).toContain(line);
    const log = await runCli(["log", "-w", workspace], { cwd: workspace, env });
    expect(log.stdout).toContain("Model's view of intent: less than asked");
    const json = JSON.parse((await runCli(["log", "--json", "-w", workspace], { cwd: workspace, env })).stdout);
    expect(json[0].intent).toBe(line);
    expect(groq.structuredRequests).toHaveLength(1);
  }, 90_000);

  test("a junk answer says so in the line; the review is there as ever", async () => {
    const { workspace, groq, env } = await modelWorld({ "pricing.ts": PRICING });
    enqueueRun(groq);
    groq.enqueueStructured(textReply("Looks good to me!"));
    const junk = await runCli(["agent", "raise TAX to 0.15", "-w", workspace], { cwd: workspace, env });
    expect(junk.code).toBe(3);
    expect(junk.stdout).toContain(
      "intent not checked: the model's answer was not a verdict (groq:openai/gpt-oss-120b)",
    );
    expect(junk.stdout).toContain("modify pricing.ts");
  }, 90_000);

  test("a failed call says so in the line, and the record keeps it as not checked", async () => {
    const { workspace, groq, env } = await modelWorld({ "pricing.ts": PRICING });
    enqueueRun(groq);
    groq.enqueueStructured(errorReply(400, "json_schema is not supported by this model", "invalid_request_error"));
    const failed = await runCli(["agent", "raise TAX to 0.15", "-w", workspace], { cwd: workspace, env });
    expect(failed.code).toBe(3);
    expect(failed.stdout).toMatch(/intent not checked: the model failed: .*json_schema is not supported by this model/);
    expect(failed.stdout).toContain("modify pricing.ts");
    expect(record(env).intent.verdict).toBe("unchecked");
  }, 90_000);

  test("no answer within review.intentSeconds: the line says it timed out, and the summary comes after that bound", async () => {
    const { workspace, groq, env } = await modelWorld({ "pricing.ts": PRICING });
    settings(env, { intentSeconds: 1 });
    enqueueRun(groq);
    groq.enqueueStructured({ kind: "hang" });
    const started = performance.now();
    const result = await runCli(["agent", "raise TAX to 0.15", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(3);
    expect(result.stdout).toContain("intent not checked: the model timed out after 1 s");
    expect(result.stdout).toContain("modify pricing.ts");
    // The hang is abandoned at the bound, not at the model's own timeouts (a minute).
    expect(performance.now() - started).toBeLessThan(30_000);
  }, 90_000);

  test("review.intentCheck false: no structured call at all, and no intent line", async () => {
    const { workspace, groq, env } = await modelWorld({ "pricing.ts": PRICING });
    settings(env, { intentCheck: false });
    enqueueRun(groq);
    groq.enqueueStructured(verdict("matches"));
    const result = await runCli(["agent", "raise TAX to 0.15", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(3);
    expect(groq.structuredRequests).toHaveLength(0);
    expect(result.stdout).not.toContain("Model's view");
    expect(result.stdout).not.toContain("intent not checked");
    expect(record(env).intent).toBeUndefined();
  }, 90_000);

  test("a review setting of the wrong type stops with the file, the key and what it takes", async () => {
    const { workspace, env } = await modelWorld({ "pricing.ts": PRICING });
    settings(env, { intentCheck: "no" });
    const result = await runCli(["agent", "raise TAX to 0.15", "-w", workspace], { cwd: workspace, env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("review.intentCheck: true or false (false: no intent check)");
    expect(result.stderr).toContain("settings.json");
  });
});
