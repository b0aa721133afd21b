import { GitConfigSyntaxError } from "../errors/git-config-syntax-error.ts";
/** One variable of a git config file as git reads it: section and variable lowercased, subsection as written. */
export interface GitConfigEntry {
  section: string;
  /** The part in quotes (`[remote "origin"]`), or the lowercased rest of a legacy `[section.sub]`; null when none. */
  subsection: string | null;
  name: string;
  /** Null for a bare key (`[core] bare`), which git reads as true. */
  value: string | null;
}

const NAME_CHAR = /[A-Za-z0-9-]/;
const SECTION_CHAR = /[A-Za-z0-9.-]/;

/**
 * Parses a git config file by git's own rules (config.c): `#` and `;` comments, quoted values with `\n \t \b \\ \"`
 * escapes, a backslash at the end of a line continuing the value, whitespace outside quotes trimmed at both ends and
 * kept as single spaces inside. Includes are not followed: they are entries like any other (`include.path`). What
 * git would reject throws, so a file is never half-read.
 */
export function parseGitConfig(text: string): GitConfigEntry[] {
  const src = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  const out: GitConfigEntry[] = [];
  let i = 0;
  let line = 1;
  // Git reads a variable before any section as one of an empty section: so does this parser, to miss nothing.
  let section = "";
  let subsection: string | null = null;
  const fail = (what: string): never => {
    throw new GitConfigSyntaxError(`bad git config line ${line}: ${what}`);
  };
  const skipComment = () => {
    while (i < src.length && src[i] !== "\n") i++;
  };
  while (i < src.length) {
    const c = src[i]!;
    if (c === "\n") {
      line++;
      i++;
    } else if (c === " " || c === "\t") i++;
    else if (c === "#" || c === ";") skipComment();
    else if (c === "[") {
      i++;
      let base = "";
      while (i < src.length && SECTION_CHAR.test(src[i]!)) base += src[i++];
      if (base === "") fail("empty section name");
      subsection = null;
      if (src[i] === " " || src[i] === "\t") {
        while (src[i] === " " || src[i] === "\t") i++;
        if (src[i] !== '"') fail("a subsection must be quoted");
        i++;
        let sub = "";
        for (;;) {
          const d = src[i++];
          if (d === undefined || d === "\n") fail("unterminated subsection");
          if (d === '"') break;
          if (d === "\\") {
            const e = src[i++];
            if (e === undefined || e === "\n") fail("unterminated subsection");
            sub += e;
          } else sub += d;
        }
        subsection = sub;
      }
      if (src[i] !== "]") fail("section header does not end with ]");
      i++;
      const dot = base.indexOf(".");
      if (subsection === null && dot !== -1) {
        subsection = base.slice(dot + 1).toLowerCase();
        base = base.slice(0, dot);
      }
      section = base.toLowerCase();
    } else if (/[A-Za-z]/.test(c)) {
      let name = "";
      while (i < src.length && NAME_CHAR.test(src[i]!)) name += src[i++];
      while (src[i] === " " || src[i] === "\t") i++;
      let value: string | null = null;
      if (src[i] === "=") {
        i++;
        value = readValue();
      } else if (i < src.length && src[i] !== "\n") fail(`unexpected ${JSON.stringify(src[i])} after ${name}`);
      out.push({ section, subsection, name: name.toLowerCase(), value });
    } else fail(`unexpected ${JSON.stringify(c)}`);
  }
  return out;

  function readValue(): string {
    let value = "";
    let quoted = false;
    let spaces = 0;
    for (;;) {
      const c = src[i];
      if (c === undefined || c === "\n") {
        if (quoted) fail("unterminated quote");
        return value;
      }
      i++;
      if (!quoted && (c === "#" || c === ";")) {
        skipComment();
        return value;
      }
      if (!quoted && (c === " " || c === "\t")) {
        if (value.length > 0) spaces++;
        continue;
      }
      if (spaces > 0) {
        value += " ".repeat(spaces);
        spaces = 0;
      }
      if (c === "\\") {
        const e = src[i++];
        if (e === "\n") {
          line++;
          continue;
        }
        const escaped = e === "n" ? "\n" : e === "t" ? "\t" : e === "b" ? "\b" : e === "\\" || e === '"' ? e : null;
        if (escaped === null) fail("bad escape in a value");
        value += escaped;
      } else if (c === '"') quoted = !quoted;
      else value += c;
    }
  }
}

/** The full key of an entry as `git config --list` prints it: `remote.origin.url`. */
export function entryKey(e: GitConfigEntry): string {
  if (e.section === "") return e.name;
  return e.subsection === null ? `${e.section}.${e.name}` : `${e.section}.${e.subsection}.${e.name}`;
}

/**
 * Writes entries back as a config file git reads to exactly these entries: one section header per run of entries,
 * subsections and values quoted and escaped.
 */
export function formatGitConfig(entries: GitConfigEntry[]): string {
  const lines: string[] = [];
  let header = "";
  for (const e of entries) {
    const h =
      e.subsection === null ? `[${e.section}]` : `[${e.section} "${e.subsection.replace(/[\\"]/g, (m) => `\\${m}`)}"]`;
    if (h !== header) {
      lines.push(h);
      header = h;
    }
    lines.push(e.value === null ? `\t${e.name}` : `\t${e.name} = ${quoteValue(e.value)}`);
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}

function quoteValue(value: string): string {
  const escaped = value.replace(/[\\"\n\t\b]/g, (m) =>
    m === "\n" ? "\\n" : m === "\t" ? "\\t" : m === "\b" ? "\\b" : `\\${m}`,
  );
  return `"${escaped}"`;
}
