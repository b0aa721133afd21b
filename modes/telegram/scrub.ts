/** The text with every occurrence of the bot token (whole, its secret half, or URL-encoded) replaced by `<token>`. */
export function scrubToken(text: string, token: string): string {
  if (!token) return text;
  const secret = token.slice(token.indexOf(":") + 1);
  const forms = [token, encodeURIComponent(token), secret].filter((f) => f.length >= 8);
  let out = text;
  for (const form of forms) out = out.split(form).join("<token>");
  return out;
}

/** One line describing an error (its message and the messages of its causes), with the token scrubbed. */
export function errorText(error: unknown, token: string): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
    if (current instanceof Error) {
      parts.push(current.message);
      // grammY keeps the network failure in `.error`; plain errors use `.cause`.
      current = (current as { error?: unknown }).error ?? current.cause;
    } else {
      parts.push(typeof current === "string" ? current : safeJson(current));
      break;
    }
  }
  const unique = parts.filter((p, i) => p && parts.indexOf(p) === i);
  return scrubToken(unique.join(" ← ") || "unknown error", token);
}

/** A log sink whose every line is scrubbed of the token before it is written. */
export function scrubbedLog(token: string, write: (line: string) => void): (line: string) => void {
  return (line) => write(scrubToken(line, token));
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
