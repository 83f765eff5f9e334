// better-sqlite3's own modules, which the bundle holds (load-bundled.ts): the package
// exports neither, so scripts/build.ts resolves them to the installed files by path.
declare module 'better-sqlite3/lib/database.js' {
  /** Builds the `Database` class around the addon `getAddon` returns (as its per-platform entries do). */
  const createDatabase: (getAddon: () => unknown, allowNativeBinding: boolean) => unknown;
  export default createDatabase;
}

declare module 'better-sqlite3/lib/sqlite-error.js' {
  const SqliteError: new (message: string, code: string) => Error & { code: string };
  export default SqliteError;
}
