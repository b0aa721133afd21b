import { describe, expect, test } from "bun:test";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";
import { modelLabelOf } from "../../ai/model-label.ts";
import { lastToolResults, ScriptedModel } from "../../ai/scripted-model.ts";

/** A tiny in-memory "file system" tool pair, so the loop has real results to send back. */
function fileTools(files: Map<string, string>) {
  return {
    read_file: tool({
      description: "Reads a file.",
      inputSchema: z.object({ path: z.string() }),
      execute: async ({ path }) => files.get(path) ?? `Error: ${path} does not exist.`,
    }),
    write_file: tool({
      description: "Writes a file.",
      inputSchema: z.object({ path: z.string(), content: z.string() }),
      execute: async ({ path, content }) => {
        files.set(path, content);
        return `Staged write: ${path}`;
      },
    }),
  };
}

describe("ScriptedModel", () => {
  test("drives streamText through two tool calls and a final text; the prompts it recorded carry the tool results", async () => {
    const files = new Map([["notes.txt", "buy graphite"]]);
    const model = new ScriptedModel([
      { text: "Reading the notes.", toolCalls: [{ name: "read_file", input: { path: "notes.txt" } }] },
      { toolCalls: [{ name: "write_file", input: { path: "todo.txt", content: "- buy graphite\n" } }] },
      { text: "Wrote todo.txt from your notes." },
    ]);
    const result = streamText({
      model,
      tools: fileTools(files),
      prompt: "Turn my notes into a todo list.",
      stopWhen: stepCountIs(10),
    });
    const deltas: string[] = [];
    for await (const part of result.fullStream) if (part.type === "text-delta") deltas.push(part.text);
    const steps = await result.steps;

    expect(steps.map((s) => s.finishReason)).toEqual(["tool-calls", "tool-calls", "stop"]);
    expect(steps.map((s) => s.toolCalls.map((c) => c.toolName))).toEqual([["read_file"], ["write_file"], []]);
    expect(await result.text).toBe("Wrote todo.txt from your notes.");
    expect(deltas.join("")).toBe("Reading the notes.Wrote todo.txt from your notes.");
    expect(files.get("todo.txt")).toBe("- buy graphite\n");
    expect(steps.every((s) => modelLabelOf(s.providerMetadata) === "scripted:demo")).toBe(true);
    expect(steps[0]!.usage.inputTokens).toBeGreaterThan(0);
    expect(steps[0]!.usage.outputTokens).toBeGreaterThan(0);

    expect(model.remaining).toBe(0);
    expect(model.calls.map((c) => c.toolNames.sort())).toEqual([
      ["read_file", "write_file"],
      ["read_file", "write_file"],
      ["read_file", "write_file"],
    ]);
    const [first, second, third] = model.prompts;
    expect(JSON.stringify(first)).toContain("Turn my notes into a todo list.");
    expect(lastToolResults(first!)).toEqual([]);
    expect(lastToolResults(second!)).toEqual([
      { toolCallId: "call_0_0", toolName: "read_file", output: "buy graphite", isError: false },
    ]);
    expect(lastToolResults(third!)).toEqual([
      { toolCallId: "call_1_0", toolName: "write_file", output: "Staged write: todo.txt", isError: false },
    ]);
    // The assistant's own turn is in the history it is sent next.
    expect(JSON.stringify(second)).toContain("Reading the notes.");
  });

  test("a turn computed from the prompt reacts to the tool result it was sent", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: "read_file", input: { path: "missing.txt" } }] },
      ({ prompt }) => {
        const [result] = lastToolResults(prompt);
        return result?.output.includes("does not exist")
          ? { text: "The file is missing." }
          : { text: "The file is there." };
      },
    ]);
    const result = streamText({
      model,
      tools: fileTools(new Map()),
      prompt: "Read missing.txt",
      stopWhen: stepCountIs(5),
    });
    expect(await result.text).toBe("The file is missing.");
  });

  test("malformed tool input is reported back to the model as an error result", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: "read_file", rawInput: '{"path": ' }] },
      { text: "I will fix my call." },
    ]);
    const result = streamText({ model, tools: fileTools(new Map()), prompt: "go", stopWhen: stepCountIs(5) });
    await result.consumeStream();
    const [toolResult] = lastToolResults(model.prompts[1]!);
    expect(toolResult?.isError).toBe(true);
    expect(toolResult?.output.toLowerCase()).toContain("invalid");
  });

  test("a call past the end of the script fails with a message saying so", async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: "read_file", input: { path: "a" } }] }], { name: "short" });
    const errors: unknown[] = [];
    const result = streamText({
      model,
      tools: fileTools(new Map()),
      prompt: "go",
      stopWhen: stepCountIs(5),
      onError: ({ error }) => void errors.push(error),
    });
    await result.consumeStream();
    expect(String(errors[0])).toContain("scripted:short has no turn 2");
  });

  test("non-streamed calls play the same turns", async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: "read_file", input: { path: "notes.txt" } }] },
      { text: "It says: buy graphite." },
    ]);
    const result = await generateText({
      model,
      tools: fileTools(new Map([["notes.txt", "buy graphite"]])),
      prompt: "What do my notes say?",
      stopWhen: stepCountIs(5),
    });
    expect(result.text).toBe("It says: buy graphite.");
    expect(lastToolResults(model.prompts[1]!)[0]?.output).toBe("buy graphite");
    expect(modelLabelOf(result.providerMetadata)).toBe("scripted:demo");
  });
});
