import schema from "./schema.sql" with { type: "text" };

/** The schema both stores share (`brain/schema.sql`), as text (imported, so the single executable carries it). */
export const SCHEMA_SQL: string = schema;

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
