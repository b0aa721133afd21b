import type { PGlite } from "@electric-sql/pglite";
import { SCHEMA_SQL } from "../../brain/migrations.ts";
import { emptyPglite } from "./pristine-brain.ts";

/**
 * A local stand-in for an InsForge project's database endpoints, for the real
 * `@insforge/sdk`: `/api/database/records/<table>` (PostgREST's query syntax: select,
 * eq/in/is filters, order, limit, Prefer: return=representation) and
 * `/api/database/rpc/<function>`, backed by PGlite with `schema.sql` applied as
 * InsForge users apply it. Every request runs as the role `anon`, so the grants and
 * row-level security of schema.sql are what let it through; a wrong key gets 401.
 */
export interface FakeInsforge {
  url: string;
  anonKey: string;
  db: PGlite;
  /** Requests received: method and path with query. */
  requests: string[];
  stop(): Promise<void>;
}

const IDENT = /^[a-z_][a-z0-9_]*$/;

/** Starts the server; `schema: false` leaves the database empty (a project where schema.sql was never applied). */
export async function startFakeInsforge(options: { schema?: boolean } = {}): Promise<FakeInsforge> {
  const db = await emptyPglite();
  await db.exec("create role anon nologin;");
  if (options.schema !== false) await db.exec(SCHEMA_SQL);
  const anonKey = "anon-key-for-tests";
  const requests: string[] = [];
  let queue: Promise<unknown> = Promise.resolve();
  // One statement sequence at a time: PGlite has one connection, and `set role` must wrap exactly one request.
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn);
    queue = next.catch(() => {});
    return next;
  };

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      requests.push(`${req.method} ${url.pathname}${url.search}`);
      if (req.headers.get("authorization") !== `Bearer ${anonKey}`)
        return pgError(401, "PGRST301", "JWT invalid or missing");
      const records = /^\/api\/database\/records\/([^/]+)$/.exec(url.pathname);
      const rpc = /^\/api\/database\/rpc\/([^/]+)$/.exec(url.pathname);
      try {
        const body = req.method === "GET" || req.method === "DELETE" ? null : await req.json();
        if (rpc && req.method === "POST")
          return await serial(() => callRpc(rpc[1]!, (body ?? {}) as Record<string, unknown>));
        if (records)
          return await serial(() =>
            onRecords(req.method, records[1]!, url.searchParams, body, req.headers.get("prefer") ?? ""),
          );
        return pgError(404, "PGRST000", `no route ${req.method} ${url.pathname}`);
      } catch (error) {
        const e = error as { code?: string; message?: string };
        return pgError(
          e.code === "42501" ? 403 : e.code === "42P01" || e.code === "42883" ? 404 : 400,
          e.code ?? "PGRST100",
          e.message ?? String(error),
        );
      }
    },
  });

  async function asAnon<T>(fn: () => Promise<T>): Promise<T> {
    await db.exec("set role anon");
    try {
      return await fn();
    } finally {
      await db.exec("reset role");
    }
  }

  async function callRpc(name: string, args: Record<string, unknown>): Promise<Response> {
    if (!IDENT.test(name)) return pgError(400, "PGRST100", "bad function name");
    const keys = Object.keys(args);
    if (!keys.every((k) => IDENT.test(k))) return pgError(400, "PGRST100", "bad argument name");
    const sql = `select * from ${name}(${keys.map((k, i) => `${k} => $${i + 1}`).join(", ")})`;
    const { rows } = await asAnon(() =>
      db.query(
        sql,
        keys.map((k) => args[k]),
      ),
    );
    return Response.json(rows);
  }

  async function onRecords(
    method: string,
    table: string,
    params: URLSearchParams,
    body: any,
    prefer: string,
  ): Promise<Response> {
    if (!IDENT.test(table)) return pgError(400, "PGRST100", "bad table name");
    const values: unknown[] = [];
    const where: string[] = [];
    let select = "*";
    let order = "";
    let limit = "";
    for (const [key, raw] of params) {
      if (key === "select") {
        const cols = raw.split(",").map((c) => c.trim());
        if (!cols.every((c) => c === "*" || IDENT.test(c)))
          return pgError(400, "PGRST100", `unsupported select ${raw}`);
        select = cols.join(", ");
      } else if (key === "order") {
        const parts = raw.split(",").map((p) => /^([a-z_]+)\.(asc|desc)$/.exec(p));
        if (parts.some((p) => !p)) return pgError(400, "PGRST100", `unsupported order ${raw}`);
        order = ` order by ${parts.map((p) => `${p![1]} ${p![2]}`).join(", ")}`;
      } else if (key === "limit") {
        limit = ` limit ${Number.parseInt(raw, 10)}`;
      } else if (key === "columns") {
        // postgrest-js names the inserted columns; the body says the same.
      } else if (IDENT.test(key)) {
        const m = /^(eq|neq|is|in)\.(.*)$/.exec(raw);
        if (!m) return pgError(400, "PGRST100", `unsupported filter ${key}=${raw}`);
        if (m[1] === "is") where.push(`${key} is ${m[2] === "null" ? "null" : m[2] === "true" ? "true" : "false"}`);
        else if (m[1] === "in") {
          const items = m[2]!
            .replace(/^\(|\)$/g, "")
            .split(",")
            .filter(Boolean);
          where.push(
            items.length
              ? `${key} in (${items
                  .map((item) => {
                    values.push(item.replace(/^"|"$/g, ""));
                    return `$${values.length}`;
                  })
                  .join(", ")})`
              : "false",
          );
        } else {
          values.push(m[2]);
          where.push(`${key} ${m[1] === "eq" ? "=" : "<>"} $${values.length}`);
        }
      } else return pgError(400, "PGRST100", `unsupported parameter ${key}`);
    }
    const whereSql = where.length ? ` where ${where.join(" and ")}` : "";
    const representation = prefer.includes("return=representation");
    const returning = representation ? ` returning ${select}` : "";
    if (method === "GET") {
      const { rows } = await asAnon(() =>
        db.query(`select ${select} from ${table}${whereSql}${order}${limit}`, values),
      );
      return Response.json(rows);
    }
    if (method === "DELETE") {
      const { rows } = await asAnon(() => db.query(`delete from ${table}${whereSql}${returning}`, values));
      return representation ? Response.json(rows) : new Response(null, { status: 204 });
    }
    if (method === "PATCH") {
      const keys = Object.keys(body ?? {});
      if (!keys.length || !keys.every((k) => IDENT.test(k))) return pgError(400, "PGRST100", "bad update body");
      const sets = keys.map((k) => {
        values.push(body[k]);
        return `${k} = $${values.length}`;
      });
      const { rows } = await asAnon(() =>
        db.query(`update ${table} set ${sets.join(", ")}${whereSql}${returning}`, values),
      );
      return representation ? Response.json(rows) : new Response(null, { status: 204 });
    }
    if (method === "POST") {
      const items: Record<string, unknown>[] = Array.isArray(body) ? body : [body];
      const out: unknown[] = [];
      await asAnon(async () => {
        for (const item of items) {
          const keys = Object.keys(item);
          if (!keys.every((k) => IDENT.test(k))) throw Object.assign(new Error("bad column"), { code: "PGRST100" });
          const { rows } = await db.query(
            `insert into ${table} (${keys.join(", ")}) values (${keys.map((_, i) => `$${i + 1}`).join(", ")})${returning}`,
            keys.map((k) => item[k]),
          );
          out.push(...rows);
        }
      });
      return representation ? Response.json(out, { status: 201 }) : new Response(null, { status: 201 });
    }
    return pgError(405, "PGRST100", `method ${method} not supported`);
  }

  return {
    url: `http://127.0.0.1:${server.port}`,
    anonKey,
    db,
    requests,
    async stop() {
      server.stop(true);
      await db.close();
    },
  };
}

function pgError(status: number, code: string, message: string): Response {
  return Response.json({ code, message, details: null, hint: null }, { status });
}
