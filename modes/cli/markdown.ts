import type { CliIO } from "./io.ts";

/** Markdown for the terminal: Bun's own renderer, coloured only when the terminal is. */
export function renderMarkdown(io: CliIO, markdown: string): string {
  // Model text may carry escape sequences; drop them before rendering so only ours reach the screen.
  const clean = markdown.replace(/\x1b\[[0-9;?]*[ -/]*[@-~]|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, "");
  try {
    return Bun.markdown.ansi(clean, { colors: io.color, columns: Math.min(io.columns, 100) });
  } catch {
    return clean;
  }
}
