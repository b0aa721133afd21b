import { visible } from "../../render/visible-text.ts";
import type { CliIO } from "./io.ts";

/** Markdown for the terminal: Bun's own renderer, coloured only when the terminal is. */
export function renderMarkdown(io: CliIO, markdown: string): string {
  // Model text may carry escape sequences, carriage returns, C1 or bidi controls: each becomes a
  // visible escape before rendering, so only the renderer's own codes reach the screen.
  const clean = markdown.split("\n").map(visible).join("\n");
  try {
    return Bun.markdown.ansi(clean, { colors: io.color, columns: Math.min(io.columns, 100) });
  } catch {
    return clean;
  }
}
