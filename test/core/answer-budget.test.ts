import { describe, expect, test } from "bun:test";
import { contextWindowOf } from "../../ai/model-specs.ts";
import { answerBudgetFor, fitAnswer } from "../../core/answer-budget.ts";

// Tool answers cut to fit the model's context window, one of the modes of bench/finish-modes.ts.

describe("answers that fit the context", () => {
  test("the budget follows the window, known per model, PENCIL_CONTEXT_WINDOW first", () => {
    expect(contextWindowOf({ provider: "groq", modelId: "openai/gpt-oss-120b" }, {})).toBe(131_072);
    expect(contextWindowOf({ provider: "local", modelId: "qwen2.5-coder:7b" }, {})).toBe(32_768);
    expect(contextWindowOf({ provider: "local", modelId: "gemma:2b" }, {})).toBe(8_192);
    expect(contextWindowOf({ provider: "local", modelId: "x" }, { PENCIL_CONTEXT_WINDOW: "4096" })).toBe(4096);
    expect(answerBudgetFor(8192)).toBeLessThan(answerBudgetFor(131_072));
  });

  test("a read is cut at a line and says the offset to read on from; a short answer is untouched", () => {
    const text = Array.from({ length: 500 }, (_, i) => `${String(i + 1).padStart(6)}\tvalue ${i + 1}`).join("\n");
    expect(fitAnswer("read_file", "short", 1000)).toBe("short");
    const cut = fitAnswer("read_file", text, 2000);
    const last = Number(/(\d+)\tvalue \d+\n\[cut/.exec(cut)![1]);
    expect(cut).toContain(`read on at offset ${last + 1}`);
    expect(cut.length).toBeLessThan(2300);
  });

  test("a command keeps its head and its tail", () => {
    const text = Array.from({ length: 5000 }, (_, i) => `out ${i}`).join("\n");
    const cut = fitAnswer("run_command", text, 3000);
    expect(cut).toContain("out 0\n");
    expect(cut).toContain("out 4999");
    expect(cut).toContain("narrow the command's output");
  });
});
