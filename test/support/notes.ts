/** The notes a test workspace holds unless told otherwise (here, apart from qmd.ts, for tests that never run dist/). */
export const DEFAULT_NOTES: Record<string, string> = {
  'sqlite.md': '# SQLite notes\n\nWAL mode lets readers and a writer share the index.\nCheckpoint on close.\n',
  'lifecycle.md': '# Server lifecycle\n\nA server must never outlive its client. Orphans hold RAM.\n',
  'deep/cooking.md': '# Bread\n\nFlour, water, salt and time. Sourdough needs a starter.\n',
};
