/** Why a reviewer should look twice at a change. */
export type ChangeFlag =
  | "secret"
  | "runs-code"
  | "lockfile"
  | "executable"
  | "binary"
  | "became-binary"
  | "large-deletion"
  | "outside-workspace"
  | "after-instructions";

/** What the flag rules look at for one file: its path, and its text or bytes before and after. */
export interface FlagInput {
  /** Workspace-relative path with `/` separators. */
  path: string;
  inside: boolean;
  kind: "create" | "modify" | "delete";
  beforeText: string | null;
  afterText: string | null;
  binary: boolean;
  /** True when the file was text before and is binary after (a NUL or an invalid byte appeared). */
  becameBinary?: boolean;
  baseMode: number | null;
  afterMode: number | null;
  /** Lines the change adds (for binary content, the lines of its revealed text: credentials are looked for there too). */
  addedLines: string[];
  removed: number;
  beforeLineCount: number;
  /** True when the repository's git config includes this file (`[include] path = ../.gitconfig`): git reads it as its own config. */
  gitIncluded?: boolean;
}

/** A key name that says it holds a credential, alone or as one word of a longer name (snake, kebab, dotted or camel case). */
const CREDENTIAL_NAME =
  "(?<![A-Za-z0-9])(?:(?:[A-Za-z0-9]{1,40}[_.-]){0,6}(?:[Aa][Pp][Ii][_-]?[Kk][Ee][Yy]|[Ss][Ee][Cc][Rr][Ee][Tt]|[Tt][Oo][Kk][Ee][Nn]|[Pp][Aa][Ss][Ss](?:[Ww][Oo][Rr][Dd]|[Ww][Dd])|[Pp][Rr][Ii][Vv][Aa][Tt][Ee][_-]?[Kk][Ee][Yy]|[Aa][Cc][Cc][Ee][Ss][Ss][_-]?[Kk][Ee][Yy])(?:[_.-][A-Za-z0-9]{1,40}){0,6}|[a-z][A-Za-z0-9]{0,40}(?:ApiKey|Secret|Token|Password|PrivateKey|AccessKey)[A-Za-z0-9]{0,40})(?![A-Za-z0-9_])";
/** Not a URL, a path or a template: what a credential value never starts with. */
const NOT_A_REFERENCE = "(?![A-Za-z][A-Za-z0-9+.-]{0,31}:\\/\\/|[/.~])";
/** A quoted value of 12 or more characters a token or password is made of (no spaces, no template or markup characters such as `${`, `{{`, `<|`). */
const QUOTED_VALUE = `${NOT_A_REFERENCE}[A-Za-z0-9+/=_.~:@!#%^&*,-]{12,200}`;
/** An unquoted value of 12 or more token characters, with a letter and a digit, ending the value (not a call or an expression). */
const UNQUOTED_VALUE =
  NOT_A_REFERENCE +
  "(?=[A-Za-z0-9+/=_.~-]{0,200}[0-9])(?=[A-Za-z0-9+/=_.~-]{0,200}[A-Za-z])[A-Za-z0-9+/=_.~-]{12,200}(?=\\s|$|[,;#}\\]])";

/** Shapes of credentials that must never slip into a commit unnoticed. */
const SECRET_PATTERNS: RegExp[] = [
  /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----/,
  // A password or token in a URL (https://user:TOKEN@host). The scheme is bounded: unbounded, every word start of a
  // long line like `a-a-a-…` scanned to its end, and a staged 2 MB line held the review for half an hour.
  /\b[a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/?#@"'`<>]+:[^\s/?#@"'`<>]{3,}@[^\s/"'`<>]+/i,
  /\bAKIA[0-9A-Z]{16}\b/, // AWS access key id
  /\bgh[pousr]_[A-Za-z0-9]{36,}\b/, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{40,}\b/,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/, // Slack
  /\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}/, // OpenAI / Anthropic style
  /\bgsk_[A-Za-z0-9]{20,}\b/, // Groq
  /\bsk-or-v1-[a-f0-9]{32,}\b/, // OpenRouter
  /\bAIza[0-9A-Za-z_-]{35}\b/, // Google API key
  /\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b/, // Telegram bot token
  /\bglpat-[A-Za-z0-9_-]{20,}/, // GitLab
  /\bnpm_[A-Za-z0-9]{36}\b/, // npm
  /\bpypi-AgE[A-Za-z0-9_-]{50,}/, // PyPI
  /\b[rs]k_live_[A-Za-z0-9]{20,}/, // Stripe
  /\bya29\.[A-Za-z0-9_-]{20,}/, // Google OAuth access token
  /\bhooks\.slack\.com\/services\/T[A-Za-z0-9_/]{20,}/, // Slack webhook
  /_auth(?:Token)?\s*=\s*\S{8,}/, // .npmrc credentials
  /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/, // JWT
  /\b(?:api[_-]?key|secret|token|passw(?:or)?d|private[_-]?key)\b["']?\s*[:=]\s*["'][^"'\s]{12,}["']/i,
  // The same names inside longer ones (AWS_SECRET_ACCESS_KEY, DB_PASSWORD, clientSecret, authToken) and unquoted
  // values (.env-style, YAML, INI): an unquoted value counts when it mixes letters and digits, which a reference
  // to a variable (process.env.DB_PASSWORD, ${{ secrets.TOKEN }}) does not.
  new RegExp(`${CREDENTIAL_NAME}["']?\\s*[:=]\\s*(?:["']${QUOTED_VALUE}["']|${UNQUOTED_VALUE})`),
];

/** True when `text` holds something shaped like a credential (a key, a token, a password in a URL): SECRET_PATTERNS. */
export function looksLikeCredential(text: string): boolean {
  return SECRET_PATTERNS.some((re) => re.test(text));
}

const LOCKFILES = new Set([
  "package-lock.json",
  "npm-shrinkwrap.json",
  "bun.lock",
  "bun.lockb",
  "yarn.lock",
  "pnpm-lock.yaml",
  "Cargo.lock",
  "poetry.lock",
  "Pipfile.lock",
  "uv.lock",
  "Gemfile.lock",
  "go.sum",
  "composer.lock",
  "flake.lock",
  "mix.lock",
  "pubspec.lock",
  "Podfile.lock",
]);

/** Paths whose content is executed by tools, CI or git without anyone running them by hand. */
const RUNS_CODE: RegExp[] = [
  /(^|\/)\.github\/workflows\/[^/]+$/,
  /(^|\/)\.github\/actions\//,
  /(^|\/)\.gitlab-ci\.yml$/,
  /(^|\/)\.circleci\//,
  /(^|\/)\.ci\//,
  /(^|\/)(Jenkinsfile|azure-pipelines\.yml|\.travis\.yml|bitbucket-pipelines\.yml)$/,
  /(^|\/)\.git\/hooks\//,
  /(^|\/)\.husky\//,
  /(^|\/)(\.pre-commit-config\.yaml|lefthook\.yml|\.envrc)$/,
  /(^|\/)(GNU)?[Mm]akefile$/,
  /\.mk$/,
  /(^|\/)(Dockerfile|Containerfile)(\.[^/]*)?$/,
  /(^|\/)[^/]*\.[Dd]ockerfile$/,
  /(^|\/)(docker-)?compose\.ya?ml$/,
  /\.(sh|bash|zsh|fish|ps1|bat|cmd)$/,
  /(^|\/)(justfile|Justfile|Taskfile\.ya?ml|Rakefile|build\.rs|setup\.py|conftest\.py|bunfig\.toml)$/,
  // Git config names programs (fsmonitor, filters, textconv, ssh and credential helpers); attributes choose the
  // filters and diff drivers that run; .gitmodules names where submodules come from and how they update.
  /(^|\/)(\.gitconfig|\.gitattributes|\.gitmodules)$/,
  // Editors run tasks on opening a folder (runOn: folderOpen), dev containers their lifecycle commands, cargo its
  // configured runners, linkers and aliases.
  /(^|\/)\.vscode\/tasks\.json$/,
  /(^|\/)(\.devcontainer\/([^/]+\/)?devcontainer\.json|\.devcontainer\.json)$/,
  /(^|\/)\.cargo\/config(\.toml)?$/,
];

/** A deletion big enough that a reviewer should not wave it through. */
const LARGE_DELETION_LINES = 200;

/** The flags of one file change: a pure function of the change. */
export function flagsFor(input: FlagInput): ChangeFlag[] {
  const flags: ChangeFlag[] = [];
  if (!input.inside) flags.push("outside-workspace");
  if (input.addedLines.some((line) => SECRET_PATTERNS.some((re) => re.test(line)))) flags.push("secret");
  if (runsCode(input)) flags.push("runs-code");
  if (LOCKFILES.has(baseName(input.path))) flags.push("lockfile");
  if (gainsExecutableBit(input.baseMode, input.afterMode)) flags.push("executable");
  if (input.binary) flags.push("binary");
  if (input.becameBinary) flags.push("became-binary");
  if (isLargeDeletion(input)) flags.push("large-deletion");
  return flags;
}

function runsCode(input: FlagInput): boolean {
  if (input.gitIncluded) return true;
  if (RUNS_CODE.some((re) => re.test(input.path))) return true;
  if (baseName(input.path) === "package.json") return packageScriptsChanged(input.beforeText, input.afterText);
  return false;
}

/** package.json runs code through its scripts (install hooks included); only a change there counts. */
function packageScriptsChanged(before: string | null, after: string | null): boolean {
  const scripts = (text: string | null): string | null => {
    if (text === null) return "{}";
    try {
      const parsed = JSON.parse(text) as { scripts?: unknown };
      return JSON.stringify(parsed.scripts ?? {});
    } catch {
      return null; // Unparseable: cannot tell, so flag it.
    }
  };
  const a = scripts(before);
  const b = scripts(after);
  return a === null || b === null || a !== b;
}

function gainsExecutableBit(baseMode: number | null, afterMode: number | null): boolean {
  if (afterMode === null) return false;
  const exec = 0o111;
  return (afterMode & exec) !== 0 && ((baseMode ?? 0) & exec) !== (afterMode & exec);
}

function isLargeDeletion(input: FlagInput): boolean {
  if (input.kind === "delete") return input.binary || input.beforeLineCount >= 50;
  if (input.removed >= LARGE_DELETION_LINES) return true;
  return input.beforeLineCount >= 40 && input.removed > input.beforeLineCount / 2;
}

function baseName(path: string): string {
  const i = path.lastIndexOf("/");
  return i === -1 ? path : path.slice(i + 1);
}
