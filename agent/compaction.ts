import type { ModelMessage } from "ai";

/** Tool results kept verbatim at the end of the conversation when older ones are compacted. */
const KEEP_RECENT_RESULTS = 4;
const STUB = "[compacted: this earlier tool output was removed to fit the context window; call the tool again if you need it]";

/**
 * Replaces the output of all but the most recent tool results with a short stub,
 * so a long run keeps going instead of failing at the window. Returns the new
 * messages and how much was removed; the input array is not modified.
 */
export function compactToolResults(messages: ModelMessage[]): { messages: ModelMessage[]; results: number; chars: number } {
  let seen = 0;
  let results = 0;
  let chars = 0;
  const out = [...messages];
  for (let i = out.length - 1; i >= 0; i--) {
    const message = out[i]!;
    if (message.role !== "tool") continue;
    const content = message.content.map((part) => {
      if (part.type !== "tool-result") return part;
      seen += 1;
      if (seen <= KEEP_RECENT_RESULTS) return part;
      const output = part.output;
      if (output.type === "text" && output.value !== STUB) {
        results += 1;
        chars += output.value.length;
        return { ...part, output: { type: "text" as const, value: STUB } };
      }
      if (output.type === "json") {
        results += 1;
        chars += JSON.stringify(output.value).length;
        return { ...part, output: { type: "text" as const, value: STUB } };
      }
      return part;
    });
    out[i] = { ...message, content };
  }
  return { messages: out, results, chars };
}
