import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The schema both stores share (`modes/brain/schema.sql`), as text. */
export const SCHEMA_SQL = readFileSync(join(import.meta.dir, "schema.sql"), "utf8");

/** One step from version `version - 1` to `version`; a fresh database gets SCHEMA_SQL (the whole current schema) instead. */
export interface Migration {
  version: number;
  sql: string;
}

/**
 * Steps for databases made by an older Pencil, oldest first. schema.sql is always
 * the whole current schema; when it changes, its version goes up and a step that
 * brings the previous version there is added here.
 */
export const MIGRATIONS: Migration[] = [];

/** The schema version this Pencil writes and reads. */
export const SCHEMA_VERSION = 1;
