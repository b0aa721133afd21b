import { expect, test } from "bun:test";
import { textReply, toolCallReply } from "../../support/fake-openai-server.ts";
import { modelWorld } from "../../support/cli-world.ts";
import { runCliPty } from "../../support/cli.ts";

// `/model NAME` at the follow-up prompt switches the model for the rest of the session;
// a name that cannot be used changes nothing and says why, with the known ones.
test("/model at the follow-up prompt switches the model for the next turns", async () => {
  const { workspace, groq, env } = await modelWorld();
  const create = (path: string) => toolCallReply([{ name: "create_file", arguments: { path, content: "x\n" } }]);
  groq.enqueue(create("c.txt"), textReply("Made c."), create("d.txt"), textReply("Made d."));
  const { code, output } = await runCliPty(["agent", "make c", "-w", workspace], {
    cwd: workspace,
    env,
    endFollowUps: false,
    steps: [
      { expect: "[s]teps ", send: "y\r" },
      { expect: "› ", send: "/model openai/gpt-oss-12b\r" },
      { expect: "Did you mean", send: "" },
      { expect: "› ", send: "/model local:qwen\r" },
      { expect: "Cannot use local:qwen", send: "" },
      { expect: "› ", send: "/model groq:moonshotai/kimi-k2\r" },
      { expect: "Switched", send: "" },
      { expect: "› ", send: "now d\r" },
      { expect: "[s]teps ", send: "y\r" },
      { expect: "› ", send: "\r" },
    ],
  });
  expect(code).toBe(0);
  expect(output).toContain("LOCAL_LLM_BASE_URL");
  // A bare name nobody configured is a typo until shown otherwise: refused, with the guess.
  expect(output).toMatch(
    /Cannot use openai\/gpt-oss-12b: no model of that name is known here\. Did you mean (groq:)?openai\/gpt-oss-120b\?/,
  );
  expect(output).toContain("Known here: groq:openai/gpt-oss-120b");
  const models = groq.requests.map((r) => JSON.parse(r.raw).model);
  expect(models.slice(0, 2)).toEqual(["openai/gpt-oss-120b", "openai/gpt-oss-120b"]);
  expect(models.slice(2)).toEqual(["moonshotai/kimi-k2", "moonshotai/kimi-k2"]);
}, 60_000);
