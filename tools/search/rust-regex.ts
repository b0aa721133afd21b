import { PatternError } from "../../core/errors/pattern-error.ts";
// ripgrep's regex flavour (Rust syntax) in two forms that must agree: a pattern
// normalised for `rg` itself, and JS regexes that match exactly what rg would.
// The search tool runs rg when present and the JS side otherwise, and also uses
// the JS side to double-check every line rg reports.

/** A pattern in ripgrep's (Rust) regex syntax, checked once and translated for both engines. */
export interface SearchPattern {
  /** The pattern as given. */
  source: string;
  /** The same pattern for `rg`, normalised so that ripgrep 13 and later read it alike. */
  rust: string;
  /** Tests one line (no line terminator) with the meaning rg gives the pattern. */
  line: RegExp;
  /** Tests a whole file's text; true whenever `line` matches one of its lines (a cheap prefilter). */
  text: RegExp;
}

const MAX_REPEAT = 1000;
// Rust's \w (UTS#18): letters, marks, decimal digits, connector punctuation, joiners.
const WORD = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";
const W = `[${WORD}]`;
// Nothing matches a carriage return (rg --crlf treats it as part of line endings), nor an invalid UTF-8
// byte, decoded to a lone surrogate (see decodeForSearch in search-text.ts), as Rust never matches such bytes.
const NO_CS = "--[\\p{Cs}\\r]";
const DOT = "[^\\n\\r\\p{Cs}]";
const ASCII_CLASSES: Record<string, [number, number][]> = {
  alnum: [
    [48, 57],
    [65, 90],
    [97, 122],
  ],
  alpha: [
    [65, 90],
    [97, 122],
  ],
  ascii: [[0, 127]],
  blank: [
    [9, 9],
    [32, 32],
  ],
  cntrl: [
    [0, 31],
    [127, 127],
  ],
  digit: [[48, 57]],
  graph: [[33, 126]],
  lower: [[97, 122]],
  print: [[32, 126]],
  punct: [
    [33, 47],
    [58, 64],
    [91, 96],
    [123, 126],
  ],
  space: [
    [9, 13],
    [32, 32],
  ],
  upper: [[65, 90]],
  word: [
    [48, 57],
    [65, 90],
    [95, 95],
    [97, 122],
  ],
  xdigit: [
    [48, 57],
    [65, 70],
    [97, 102],
  ],
};

interface Out {
  /** JS for one line. */
  js: string;
  /** JS for a whole text (anchors widened to line boundaries). */
  tx: string;
  rs: string;
}
type Piece =
  | { kind: "char"; cp: number }
  | { kind: "class"; item: string; rs: string }
  | { kind: "assert"; js: string; tx: string; rs: string };

/** Checks and translates a ripgrep (Rust syntax) pattern; throws PatternError for what is invalid or unsupported. */
export function compilePattern(source: string): SearchPattern {
  if (source === "") throw new PatternError("The pattern is empty: give the text or regex to look for.");
  const out = new Parser(source).parse();
  let line: RegExp;
  let text: RegExp;
  try {
    line = new RegExp(out.js, "v");
    text = new RegExp(out.tx, "v");
  } catch (error) {
    throw new PatternError(
      `Invalid regex ${quote(source)}: ${(error as Error).message.replace(/^Invalid regular expression: /, "")}.`,
    );
  }
  return { source, rust: out.rs, line, text };
}

class Parser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): Out {
    const out = this.sequence(0);
    if (this.i < this.src.length)
      this.fail(`unmatched ) at position ${this.i + 1}; escape it as \\) to match a parenthesis`);
    return out;
  }

  private fail(why: string): never {
    throw new PatternError(`Invalid regex ${quote(this.src)}: ${why}.`);
  }

  private sequence(depth: number): Out {
    const out: Out = { js: "", tx: "", rs: "" };
    // Rust's `(?i)` lasts to the end of the enclosing group; JS has only scoped `(?i:...)`, reopened after each `|`.
    const mods: string[] = [];
    let canRepeat = false;
    const src = this.src;
    while (this.i < src.length) {
      const c = src[this.i]!;
      if (c === ")") {
        if (depth === 0) this.fail(`unmatched ) at position ${this.i + 1}; escape it as \\) to match a parenthesis`);
        break;
      }
      if (c === "|") {
        this.i++;
        const close = ")".repeat(mods.length);
        const open = mods.join("");
        out.js += `${close}|${open}`;
        out.tx += `${close}|${open}`;
        out.rs += "|";
        canRepeat = false;
        continue;
      }
      if (c === "*" || c === "+" || c === "?" || c === "{") {
        if (!canRepeat)
          this.fail(
            `nothing to repeat before ${c} at position ${this.i + 1}; escape it as \\${c} to match it literally`,
          );
        const q = this.quantifier();
        out.js += q;
        out.tx += q;
        out.rs += q;
        canRepeat = false;
        continue;
      }
      if (c === "(") {
        const group = this.group();
        if (typeof group === "string") {
          mods.push(`(?${group}:`);
          out.js += `(?${group}:`;
          out.tx += `(?${group}:`;
          out.rs += `(?${group})`;
          canRepeat = false;
          continue;
        }
        append(out, group);
        canRepeat = true;
        continue;
      }
      if (c === "[") {
        const cls = this.klass();
        const js = `[[${cls.neg ? "^" : ""}${cls.expr}]${NO_CS}]`;
        append(out, { js, tx: js, rs: cls.rs });
        canRepeat = true;
        continue;
      }
      if (c === ".") {
        this.i++;
        append(out, { js: DOT, tx: DOT, rs: "." });
        canRepeat = true;
        continue;
      }
      if (c === "^" || c === "$") {
        this.i++;
        const tx = c === "^" ? "(?<![^\\n])" : "(?=\\r?\\n|\\r?$)";
        append(out, { js: c, tx, rs: c });
        canRepeat = false;
        continue;
      }
      const piece = c === "\\" ? this.escape(false) : this.literal();
      if (piece.kind === "assert") {
        append(out, piece);
        canRepeat = false;
      } else if (piece.kind === "class") {
        const js = `[[${piece.item}]${NO_CS}]`;
        append(out, { js, tx: js, rs: piece.rs });
        canRepeat = true;
      } else {
        append(out, { js: jsChar(piece.cp), tx: jsChar(piece.cp), rs: rsChar(piece.cp) });
        canRepeat = true;
      }
    }
    const close = ")".repeat(mods.length);
    out.js += close;
    out.tx += close;
    return out;
  }

  private quantifier(): string {
    const src = this.src;
    let q: string;
    if (src[this.i] === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(this.i));
      if (!m)
        this.fail(
          `invalid repetition at position ${this.i + 1}; write {2}, {2,} or {2,5}, or escape a literal { as \\{`,
        );
      const lo = Number(m[1]);
      const hi = m[3] ? Number(m[3]) : lo;
      if (lo > MAX_REPEAT || hi > MAX_REPEAT) this.fail(`repetition count over ${MAX_REPEAT} in ${m[0]}`);
      if (m[3] && hi < lo) this.fail(`repetition ${m[0]} has its bounds reversed`);
      q = `{${lo}${m[2] ? `,${m[3] ?? ""}` : ""}}`;
      this.i += m[0].length;
    } else {
      q = src[this.i]!;
      this.i++;
    }
    if (src[this.i] === "?") {
      q += "?";
      this.i++;
    }
    const next = src[this.i];
    if (next === "*" || next === "+" || next === "?" || next === "{") {
      this.fail(`repetition ${q}${next} at position ${this.i + 1}: one repetition per item (use a group, e.g. (ab+)*)`);
    }
    return q;
  }

  /** A group; a string for a flags-only group like `(?i)`. */
  private group(): Out | string {
    const src = this.src;
    const start = this.i;
    this.i++;
    let open = "(";
    if (src[this.i] === "?") {
      const rest = src.slice(this.i);
      if (rest.startsWith("?=") || rest.startsWith("?!") || rest.startsWith("?<=") || rest.startsWith("?<!")) {
        this.fail(
          "lookahead and lookbehind are not supported (ripgrep's regex flavour); search for the text itself and read the lines around it",
        );
      }
      const named = /^\?P?<([^>]*)>/.exec(rest);
      if (named) {
        if (!/^[A-Za-z_][A-Za-z0-9_.[\]]*$/.test(named[1]!)) this.fail(`invalid group name <${named[1]}>`);
        // Names mean nothing to a search; dropping them keeps both engines' name rules out of the way.
        this.i += named[0].length;
      } else if (rest.startsWith("?:")) {
        open = "(?:";
        this.i += 2;
      } else {
        const flags = /^\?([A-Za-z-]*)([:)])/.exec(rest);
        if (!flags) this.fail(`unknown group syntax at position ${start + 1}; use (...) or (?:...)`);
        if (flags[1] !== "i" && flags[1] !== "-i") {
          this.fail(`flag group (?${flags[1]}${flags[2]}: only the i flag is supported, as (?i) or (?i:...)`);
        }
        this.i += flags[0].length;
        if (flags[2] === ")") return flags[1]!;
        open = `(?${flags[1]}:`;
      }
    }
    const inner = this.sequence(1);
    if (src[this.i] !== ")") this.fail(`unclosed ( at position ${start + 1}; escape it as \\( to match a parenthesis`);
    this.i++;
    return { js: open + inner.js + ")", tx: open + inner.tx + ")", rs: open + inner.rs + ")" };
  }

  private literal(): Piece {
    const cp = this.src.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    if (cp === 10 || cp === 13) this.lineBreak();
    return { kind: "char", cp };
  }

  private lineBreak(): never {
    this.fail(
      "search works line by line, so a pattern cannot match a line break (\\n or \\r); search for one line's text",
    );
  }

  private escape(inClass: boolean): Piece {
    const src = this.src;
    const at = this.i;
    this.i++;
    if (this.i >= src.length) this.fail("it ends with a lone backslash; escape it as \\\\");
    const c = src[this.i]!;
    this.i++;
    switch (c) {
      case "d":
        return { kind: "class", item: "\\p{Nd}", rs: "\\d" };
      case "D":
        return { kind: "class", item: "\\P{Nd}", rs: "\\D" };
      case "s":
        return { kind: "class", item: "\\p{White_Space}", rs: "\\s" };
      case "S":
        return { kind: "class", item: "\\P{White_Space}", rs: "\\S" };
      case "w":
        return { kind: "class", item: WORD, rs: "\\w" };
      case "W":
        return { kind: "class", item: `[^${WORD}]`, rs: "\\W" };
      case "p":
      case "P":
        return this.unicodeClass(c === "P");
      case "x":
      case "u":
      case "U":
        return { kind: "char", cp: this.hexEscape(c) };
      case "a":
        return { kind: "char", cp: 7 };
      case "f":
        return { kind: "char", cp: 12 };
      case "t":
        return { kind: "char", cp: 9 };
      case "v":
        return { kind: "char", cp: 11 };
      case "n":
      case "r":
        this.lineBreak();
    }
    if (c === "b" || c === "B") {
      if (inClass || src[this.i] === "{")
        this.fail(`\\${c}${src[this.i] === "{" ? "{...}" : ""} is not supported here; use \\b for a word boundary`);
      // Rust's word boundaries are Unicode-aware; JS's \b only knows ASCII words.
      const js = c === "b" ? `(?:(?<=${W})(?!${W})|(?<!${W})(?=${W}))` : `(?:(?<=${W})(?=${W})|(?<!${W})(?!${W}))`;
      return { kind: "assert", js, tx: js, rs: `\\${c}` };
    }
    if (/[0-9]/.test(c) || c === "k") this.fail("backreferences are not supported (ripgrep's regex flavour)");
    if (c === "A" || c === "z" || c === "Z") this.fail(`\\${c} is not supported: search is line by line, use ^ and $`);
    if (c === "<" || c === ">") this.fail(`\\${c} is not supported; use \\b for a word boundary`);
    const cp = c.codePointAt(0)!;
    // Any ASCII punctuation may be escaped to stand for itself (newer ripgrep allows it; we normalise for older ones).
    if (cp < 128 && !/[A-Za-z0-9]/.test(c)) return { kind: "char", cp };
    this.i = at;
    this.fail(`unknown escape \\${c} at position ${at + 1}`);
  }

  private hexEscape(kind: string): number {
    const src = this.src;
    let digits: string;
    if (src[this.i] === "{") {
      const end = src.indexOf("}", this.i);
      digits = end === -1 ? "" : src.slice(this.i + 1, end);
      if (!/^[0-9A-Fa-f]{1,8}$/.test(digits))
        this.fail(`invalid \\${kind}{...} escape; write hex digits, e.g. \\x{1F600}`);
      this.i = end + 1;
    } else {
      const n = kind === "x" ? 2 : kind === "u" ? 4 : 8;
      digits = src.slice(this.i, this.i + n);
      if (!new RegExp(`^[0-9A-Fa-f]{${n}}$`).test(digits))
        this.fail(`invalid \\${kind} escape; write \\${kind} with ${n} hex digits or \\${kind}{...}`);
      this.i += n;
    }
    const cp = parseInt(digits, 16);
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) this.fail(`\\${kind}${digits} is not a Unicode scalar value`);
    if (cp === 10 || cp === 13) this.lineBreak();
    return cp;
  }

  private unicodeClass(negated: boolean): Piece {
    const src = this.src;
    let name: string;
    if (src[this.i] === "{") {
      const end = src.indexOf("}", this.i);
      if (end === -1) this.fail("unclosed \\p{...}");
      name = src.slice(this.i + 1, end).trim();
      this.i = end + 1;
    } else {
      name = src[this.i] ?? "";
      if (!/^[A-Za-z]$/.test(name)) this.fail("\\p needs a class, e.g. \\pL or \\p{Greek}");
      this.i++;
    }
    let neg = negated;
    if (name.startsWith("^")) {
      neg = !neg;
      name = name.slice(1);
    }
    const js = jsProperty(name);
    if (!js)
      this.fail(
        `unknown Unicode class \\p{${name}}; use an exact name such as \\p{L}, \\p{Lu}, \\p{Greek} or \\p{Script=Latin}`,
      );
    return {
      kind: "class",
      item: `\\${js.negated !== neg ? "P" : "p"}{${js.name}}`,
      rs: `\\${neg ? "P" : "p"}{${name}}`,
    };
  }

  /** A bracket class, in Rust syntax: nested classes, [:ascii:] classes, and the &&, --, ~~ set operators. */
  private klass(): { neg: boolean; expr: string; rs: string } {
    const src = this.src;
    const start = this.i;
    this.i++;
    let neg = false;
    if (src[this.i] === "^") {
      neg = true;
      this.i++;
    }
    const operands: { js: string[]; rs: string[] }[] = [{ js: [], rs: [] }];
    const ops: string[] = [];
    let first = true;
    for (;;) {
      if (this.i >= src.length) this.fail(`unclosed [ at position ${start + 1}; escape it as \\[ to match a bracket`);
      const c = src[this.i]!;
      const cur = operands[operands.length - 1]!;
      if (c === "]" && !first) {
        this.i++;
        break;
      }
      first = false;
      const pair = src.slice(this.i, this.i + 2);
      if (pair === "&&" || pair === "--" || pair === "~~") {
        ops.push(pair);
        operands.push({ js: [], rs: [] });
        this.i += 2;
        continue;
      }
      if (c === "[") {
        const ascii = /^\[:(\^?)([a-z]+):\]/.exec(src.slice(this.i));
        if (ascii) {
          const ranges = ASCII_CLASSES[ascii[2]!];
          if (!ranges) this.fail(`unknown ASCII class [:${ascii[2]}:]`);
          const body = ranges.map(([lo, hi]) => (lo === hi ? jsChar(lo) : `${jsChar(lo)}-${jsChar(hi)}`)).join("");
          cur.js.push(ascii[1] ? `[^${body}]` : body);
          cur.rs.push(ascii[0]);
          this.i += ascii[0].length;
          continue;
        }
        const nested = this.klass();
        cur.js.push(`[${nested.neg ? "^" : ""}${nested.expr}]`);
        cur.rs.push(nested.rs);
        continue;
      }
      const piece = c === "\\" ? this.escape(true) : this.literal();
      if (piece.kind === "class") {
        cur.js.push(piece.item);
        cur.rs.push(piece.rs);
        continue;
      }
      if (piece.kind !== "char") this.fail("assertions cannot appear in a class");
      if (src[this.i] === "-" && this.i + 1 < src.length && src[this.i + 1] !== "]" && src[this.i + 1] !== "-") {
        this.i++;
        const end = src[this.i] === "\\" ? this.escape(true) : src[this.i] === "[" ? null : this.literal();
        if (!end || end.kind !== "char") this.fail(`invalid range in class at position ${start + 1}`);
        if (end.cp < piece.cp)
          this.fail(`range ${String.fromCodePoint(piece.cp)}-${String.fromCodePoint(end.cp)} is reversed`);
        cur.js.push(`${jsChar(piece.cp)}-${jsChar(end.cp)}`);
        cur.rs.push(`${rsChar(piece.cp)}-${rsChar(end.cp)}`);
        continue;
      }
      cur.js.push(jsChar(piece.cp));
      cur.rs.push(rsChar(piece.cp));
    }
    if (operands.some((o) => o.js.length === 0))
      this.fail(`empty side of a class operator in the class at position ${start + 1}`);
    const unions = operands.map((o) => o.js.join(""));
    let expr = unions[0]!;
    let acc = `[${expr}]`;
    for (let k = 0; k < ops.length; k++) {
      const rhs = `[${unions[k + 1]}]`;
      // JS (v flag) wants every operand of && and -- bracketed, and has no ~~: build it as (A--B) ∪ (B--A).
      expr = ops[k] === "~~" ? `[${acc}--${rhs}][${rhs}--${acc}]` : `${acc}${ops[k]}${rhs}`;
      acc = `[${expr}]`;
    }
    const rs = `[${neg ? "^" : ""}${operands.map((o) => o.rs.join("")).reduce((a, b, k) => `${a}${ops[k - 1]}${b}`)}]`;
    return { neg, expr, rs };
  }
}

function append(out: Out, piece: { js: string; tx: string; rs: string }): void {
  out.js += piece.js;
  out.tx += piece.tx;
  out.rs += piece.rs;
}

function isAlnum(cp: number): boolean {
  return (cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122);
}

/** A literal code point for a JS `v` regex, escaped unless alphanumeric (safe inside and outside classes). */
function jsChar(cp: number): string {
  return isAlnum(cp) ? String.fromCharCode(cp) : `\\u{${cp.toString(16)}}`;
}

/** A literal code point for Rust, escaped unless alphanumeric. */
function rsChar(cp: number): string {
  return isAlnum(cp) ? String.fromCharCode(cp) : `\\x{${cp.toString(16).toUpperCase()}}`;
}

const propertyCache = new Map<string, { name: string; negated: boolean } | null>();

/** The JS name of a Rust Unicode class (`L`, `Greek`, `Script=Greek`, `sc!=Latn`, ...); null when JS has none. */
function jsProperty(name: string): { name: string; negated: boolean } | null {
  const cached = propertyCache.get(name);
  if (cached !== undefined) return cached;
  let negated = false;
  let candidates: string[];
  const kv = /^([A-Za-z_]+)\s*(!=|=|:)\s*(.+)$/.exec(name);
  if (kv) {
    negated = kv[2] === "!=";
    candidates = [`${kv[1]}=${kv[3]}`];
  } else {
    candidates = [name, `Script=${name}`];
  }
  let found: { name: string; negated: boolean } | null = null;
  for (const c of candidates) {
    try {
      new RegExp(`\\p{${c}}`, "v");
      found = { name: c, negated };
      break;
    } catch {
      // Not a JS property name; try the next reading.
    }
  }
  propertyCache.set(name, found);
  return found;
}

/** The pattern quoted for messages. */
export function quote(pattern: string): string {
  return `/${pattern}/`;
}

/** The same search with runs of literal spaces relaxed to `\s+`; null when the pattern has none. */
export function relaxWhitespace(pattern: string): string | null {
  let out = "";
  let inClass = false;
  let changed = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\") {
      out += c + (pattern[i + 1] ?? "");
      i++;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
    if (c === " " && !inClass) {
      while (pattern[i + 1] === " ") i++;
      out += "\\s+";
      changed = true;
      continue;
    }
    out += c;
  }
  return changed ? out : null;
}

/** The text with every regex metacharacter escaped, so it matches itself. */
export function escapeRegex(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$#&~-]/g, "\\$&");
}
