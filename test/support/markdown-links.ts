import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import GithubSlugger from "github-slugger";

/*
 * The link checker behind test/docs/links.test.ts: every relative link and #anchor of a
 * Markdown file must lead to a file of the repository and, for an anchor, to a heading
 * of that file as GitHub names it (github-slugger: lower case, punctuation dropped,
 * spaces to hyphens, a repeated heading gets -1, -2…).
 */

/** One link that does not resolve: the file it is in, its line, its target and why. */
export interface BrokenLink {
  file: string;
  line: number;
  target: string;
  reason: string;
}

/** Lines of a Markdown text outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | null = null;
  text.split("\n").forEach((raw, i) => {
    const opener = /^\s*(```+|~~~+)/.exec(raw);
    if (opener) {
      if (fence === null) fence = opener[1]![0]!;
      else if (opener[1]![0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ line: i + 1, text: raw });
  });
  return out;
}

/** A heading's text as GitHub reads it before making its slug: inline markup taken off. */
function headingText(raw: string): string {
  return raw
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`([^`]*)`/g, "$1")
    .replace(/(\*\*|__)(.*?)\1/g, "$2")
    .replace(/\*(.*?)\*/g, "$1")
    .trim();
}

/** The anchors GitHub gives the headings of a Markdown text. */
export function anchorsOf(text: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) anchors.add(slugger.slug(headingText(heading[1]!)));
  }
  return anchors;
}

/** The inline links `[text](target)` of a Markdown text, outside code, with their lines. */
function linksOf(text: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  for (const { line, text: raw } of proseLines(text)) {
    const prose = raw.replace(/`[^`]*`/g, "");
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line, target: m[1]! });
  }
  return links;
}

/** Every link of `files` (absolute paths) that does not resolve inside `root`. */
export function brokenLinks(root: string, files: string[]): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    let set = anchorCache.get(file);
    if (!set) anchorCache.set(file, (set = anchorsOf(readFileSync(file, "utf8"))));
    return set;
  };
  for (const file of files) {
    const name = relative(root, file);
    for (const { line, target } of linksOf(readFileSync(file, "utf8"))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: — not the repository's
      const hash = target.indexOf("#");
      const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const dest = pathPart === "" ? file : resolve(dirname(file), pathPart);
      const report = (reason: string) => broken.push({ file: name, line, target, reason });
      if (relative(root, dest).startsWith("..") || pathPart.startsWith("/")) {
        report("leads outside the repository");
        continue;
      }
      if (!existsSync(dest)) {
        report(`no such file: ${relative(root, dest)}`);
        continue;
      }
      if (anchor === null) continue;
      if (statSync(dest).isDirectory() || !dest.endsWith(".md")) {
        report("an anchor into something that is not a Markdown file");
        continue;
      }
      if (!anchors(dest).has(anchor)) report(`no heading #${anchor} in ${relative(root, dest)}`);
    }
  }
  return broken;
}
