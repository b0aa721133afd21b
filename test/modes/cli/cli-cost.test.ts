import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { runCli } from "../../support/cli.ts";

// The terminal's footer shows what a turn cost where prices are known, as the phone does.

describe("the footer's cost", () => {
  test("with a price for the model: the turn's dollars; without: says no price is set", async () => {
    const { workspace, groq, env } = await modelWorld();
    const cli = (args: string[]) => runCli([...args, "-w", workspace], { cwd: workspace, env });
    groq.enqueue(toolCallReply([{ name: "read_file", arguments: { path: "a.txt" } }]), textReply("It says alpha."));
    const unpriced = await cli(["ask", "what is in a.txt?"]);
    expect(unpriced.code).toBe(0);
    expect(unpriced.stdout + unpriced.stderr).toContain("cost: no price set");

    mkdirSync(env.PENCIL_HOME!, { recursive: true });
    writeFileSync(
      join(env.PENCIL_HOME!, "settings.json"),
      JSON.stringify({ telegram: { prices: { "groq:openai/gpt-oss-120b": { input: 1000, output: 2000 } } } }),
    );
    groq.enqueue(toolCallReply([{ name: "read_file", arguments: { path: "a.txt" } }]), textReply("It says alpha."));
    const priced = await cli(["ask", "what is in a.txt?"]);
    expect(priced.code).toBe(0);
    expect(priced.stdout + priced.stderr).toMatch(/tokens [\d.k]+ in \/ [\d.k]+ out · \$\d/);
    groq.enqueue(textReply("Nothing to do."));
    const doc = JSON.parse((await cli(["agent", "look", "--json"])).stdout);
    expect(doc.cost).toBeGreaterThan(0);
  }, 30_000);
});
