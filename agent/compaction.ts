import type { ModelMessage } from "ai";

/** Tool results kept verbatim at the end of the conversation when older ones are compacted. */
const KEEP_RECENT_RESULTS = 4;
const STUB =
  "[compacted: this earlier tool output was removed to fit the context window; call the tool again if you need it]";

/**
 * Replaces the output of all but the `keepRecent` most recent tool results with a short stub,
 * so a long run keeps going instead of failing at the window. Returns the new
 * messages and how much was removed; the input array is not modified.
 */
export function compactToolResults(
  messages: ModelMessage[],
  keepRecent = KEEP_RECENT_RESULTS,
): {
  messages: ModelMessage[];
  results: number;
  chars: number;
} {
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
      if (seen <= keepRecent) return part;
      const output = part.output;
      // A failure (error-text) is compacted like any text: the model reads the same stub.
      if ((output.type === "text" || output.type === "error-text") && output.value !== STUB) {
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

/** Messages kept whole at the end of the conversation when older turns are compacted. */
const KEEP_RECENT_MESSAGES = 12;

/**
 * For a conversation still too long after `compactToolResults`: every user message
 * is kept (the goal, each follow-up, every rejection reason), and so are the most
 * recent turns; each stretch of older assistant and tool messages becomes one short
 * note of what was done. `memory` (goal, decisions and reasons, applied and staged
 * files) is put right after the first message. Tool calls stay paired with their
 * results. The input array is not modified.
 */
export function compactTurns(messages: ModelMessage[], memory: string): { messages: ModelMessage[]; dropped: number } {
  let cut = Math.max(1, messages.length - KEEP_RECENT_MESSAGES);
  // The kept tail must not start with tool results whose call was dropped.
  while (cut > 1 && messages[cut]?.role === "tool") cut -= 1;
  const out: ModelMessage[] = [messages[0]!];
  if (memory) out.push({ role: "user", content: memory });
  let dropped = 0;
  let stretch: ModelMessage[] = [];
  const flush = () => {
    if (stretch.length === 0) return;
    dropped += stretch.length;
    out.push({
      role: "assistant",
      content: `[compacted: ${stretch.length} earlier messages of mine (${toolTally(stretch)}) were removed to fit the context window; the session memory above says what was decided, staged and applied]`,
    });
    stretch = [];
  };
  for (let i = 1; i < cut; i++) {
    const m = messages[i]!;
    if (m.role === "user" || m.role === "system") {
      flush();
      out.push(m);
    } else {
      stretch.push(m);
    }
  }
  flush();
  out.push(...messages.slice(cut));
  return { messages: out, dropped };
}

function toolTally(messages: ModelMessage[]): string {
  const counts = new Map<string, number>();
  for (const m of messages) {
    if (m.role !== "assistant" || typeof m.content === "string") continue;
    for (const part of m.content)
      if (part.type === "tool-call") counts.set(part.toolName, (counts.get(part.toolName) ?? 0) + 1);
  }
  return counts.size === 0 ? "text only" : [...counts].map(([name, n]) => `${name}×${n}`).join(", ");
}
