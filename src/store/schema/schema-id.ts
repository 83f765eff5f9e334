/**
 * `qmd!`: marks a SQLite file as ours (`PRAGMA application_id`, bytes 68–71 of its header), so
 * we never add tables to some other program's database. Apart from `schema.ts` so that the
 * index path's check (`paths.ts`, read at every start) loads no migration.
 */
export const APPLICATION_ID = 0x716d6421;
