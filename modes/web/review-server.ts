import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Rejection } from "../../app/rejection.ts";
import type { ReviewNext } from "../../app/settle-review.ts";
import type { Changeset } from "../../core/staging/changeset.ts";
import { embeddedPath } from "../../core/embedded-files.ts";
import { type PageDecision, PageDecisions } from "./page-decisions.ts";
import { pageFile, pageSummary } from "./page-data.ts";

/** What the page's Apply did, as the page and the terminal report it. */
export interface PageOutcome {
  applied: string[];
  alreadyApplied: string[];
  rejected: Rejection[];
  conflicts: { path: string; reason: string }[];
  next: ReviewNext["kind"];
}

/** Where the review is: deciding, the agent revising after reasons, or over (the page says so and the server stops). */
export type ReviewPhase = "reviewing" | "revising" | "done";

/** What the server asks of the review it serves: the changeset being decided, and what Apply and Leave do. */
export interface ReviewHost {
  changeset(): Changeset;
  phase(): ReviewPhase;
  /** Settles the page's verdict through the shared apply; resolves what happened. */
  apply(decisions: PageDecisions): Promise<PageOutcome | { error: string }>;
  /** The owner left the review for later: nothing more is decided. */
  leave(): void;
  /** The last outcome, for a page reloaded after Apply. */
  outcome(): PageOutcome | null;
}

/** A running review page: its address (with the one-time token), and how to stop it. */
export interface ReviewServer {
  url: string;
  port: number;
  decisions: PageDecisions;
  stop(): void;
}

/**
 * The page's script, styles and highlight.js's colour themes (light and dark), all served by Pencil itself: read from
 * beside this file and from highlight.js's package, or, in the single executable, from the copies it carries.
 */
function loadAssets(): Record<string, { body: string; type: string }> {
  const ASSETS = embeddedPath("reviewAssets") ?? join(import.meta.dir, "assets");
  const require = createRequire(import.meta.url);
  const theme = (name: "github" | "github-dark") =>
    readFileSync(
      embeddedPath(name === "github" ? "syntaxLight" : "syntaxDark") ??
        require.resolve(`highlight.js/styles/${name}.css`),
      "utf8",
    );
  return {
    "/assets/review.js": {
      body: readFileSync(join(ASSETS, "review.js"), "utf8"),
      type: "text/javascript; charset=utf-8",
    },
    "/assets/review.css": { body: readFileSync(join(ASSETS, "review.css"), "utf8"), type: "text/css; charset=utf-8" },
    "/assets/syntax.css": {
      body: `@media (prefers-color-scheme: light) {\n${theme("github")}\n}\n@media (prefers-color-scheme: dark) {\n${theme("github-dark")}\n}\n`,
      type: "text/css; charset=utf-8",
    },
  };
}

/** Nothing from the network, nothing inline: script, styles and data from this server only. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pencil review</title>
<link rel="stylesheet" href="/assets/syntax.css">
<link rel="stylesheet" href="/assets/review.css">
<script src="/assets/review.js" defer></script>
</head>
<body>
<header id="top"><h1>Pencil review</h1><p id="goal">Loading…</p><p id="totals"></p><p id="intent"></p></header>
<div id="layout"><nav id="files" aria-label="Files"></nav><main id="diffs"></main></div>
<footer id="bar"></footer>
</body>
</html>
`;

const COOKIE = "pencil_review";

/**
 * Serves one review on 127.0.0.1 at a random port. The printed URL carries a one-time
 * token: its first use sets a session cookie and redirects to the page, so a reload
 * keeps working while the token itself cannot be used again. Every other request
 * without that cookie, or for another host name, gets 403. Stopping the server ends
 * the session.
 */
export function startReviewServer(host: ReviewHost): ReviewServer {
  const assets = loadAssets();
  const token = randomBytes(24).toString("base64url");
  const session = randomBytes(32).toString("base64url");
  let tokenUsed = false;
  let alive = true;
  const decisions = new PageDecisions();
  const headers = (type: string, extra: Record<string, string> = {}) => ({
    "content-type": type,
    "content-security-policy": CSP,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    ...extra,
  });
  const json = (value: unknown, status = 200) =>
    new Response(JSON.stringify(value), { status, headers: headers("application/json; charset=utf-8") });
  const forbidden = () =>
    new Response("403: open the review with the address Pencil printed.\n", {
      status: 403,
      headers: headers("text/plain; charset=utf-8"),
    });

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      // Only this address: a page on another name (DNS rebinding) never reaches the review.
      if (!alive || req.headers.get("host") !== `127.0.0.1:${server.port}`) return forbidden();
      if (url.pathname === "/" && url.searchParams.has("token")) {
        if (tokenUsed || !same(url.searchParams.get("token")!, token)) return forbidden();
        tokenUsed = true;
        return new Response(null, {
          status: 303,
          headers: headers("text/plain", {
            location: "/",
            "set-cookie": `${COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/`,
          }),
        });
      }
      if (!same(cookieOf(req, COOKIE) ?? "", session)) return forbidden();
      // A write comes from this page only: its own origin, as JSON.
      if (req.method === "POST") {
        const origin = req.headers.get("origin");
        if (origin !== null && origin !== `http://127.0.0.1:${server.port}`) return forbidden();
        if (!(req.headers.get("content-type") ?? "").startsWith("application/json")) return forbidden();
      }
      if (req.method === "GET" && url.pathname === "/")
        return new Response(PAGE, { headers: headers("text/html; charset=utf-8") });
      const asset = assets[url.pathname];
      if (req.method === "GET" && asset) return new Response(asset.body, { headers: headers(asset.type) });
      const cs = host.changeset();
      if (req.method === "GET" && url.pathname === "/api/state") {
        return json({
          phase: host.phase(),
          summary: pageSummary(cs),
          decisions: decisions.all(),
          outcome: host.outcome(),
        });
      }
      if (req.method === "GET" && url.pathname === "/api/file") {
        const index = Number(url.searchParams.get("i"));
        const file = cs.files[index];
        if (!Number.isInteger(index) || !file) return json({ error: "no such file" }, 404);
        return json(pageFile(file));
      }
      if (req.method !== "POST") return json({ error: "not found" }, 404);
      if (host.phase() !== "reviewing")
        return json({ error: `The review is ${host.phase()}: nothing can be decided now.` }, 409);
      const body = (await req.json().catch(() => null)) as Record<string, unknown> | null;
      if (!body || typeof body !== "object") return json({ error: "The request was not JSON." }, 400);
      if (url.pathname === "/api/decide") {
        const refused = decisions.set(cs, String(body.path ?? ""), (body.decision ?? null) as PageDecision | null);
        return refused ? json({ error: refused }, 409) : json({ decisions: decisions.all() });
      }
      if (url.pathname === "/api/approve-all") {
        // Exactly the files the page listed, at the content it listed them with; binary changes never.
        const listed = Array.isArray(body.files) ? (body.files as { path: string; digest: string }[]) : [];
        const approved: string[] = [];
        for (const item of listed) {
          const file = cs.files.find((f) => f.path === item.path && f.digest === item.digest);
          if (!file || file.binary || decisions.all()[file.path]) continue;
          if (!decisions.set(cs, file.path, { digest: file.digest, decision: "approve" })) approved.push(file.path);
        }
        return json({ approved, decisions: decisions.all() });
      }
      if (url.pathname === "/api/apply") {
        const outcome = await host.apply(decisions);
        return "error" in outcome ? json(outcome, 400) : json({ outcome, phase: host.phase() });
      }
      if (url.pathname === "/api/leave") {
        host.leave();
        return json({ phase: "done" });
      }
      return json({ error: "not found" }, 404);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/?token=${token}`,
    port: server.port!,
    decisions,
    stop() {
      alive = false;
      server.stop(true);
    },
  };
}

function cookieOf(req: Request, name: string): string | null {
  for (const part of (req.headers.get("cookie") ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return null;
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
