/** Minimal types for dynalite 4 (no published types): https://github.com/architect/dynalite */
declare module 'dynalite' {
  import type { Server } from 'node:http';
  interface DynaliteOptions {
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
    path?: string;
  }
  export default function dynalite(options?: DynaliteOptions): Server;
}

/** dynalite's internal modules that `dynalite-internals.ts` types where it uses them. */
declare module 'dynalite/db/index.js' {
  const db: unknown;
  export default db;
}
declare module 'dynalite/validations/index.js' {
  const validations: unknown;
  export default validations;
}
declare module 'dynalite/validations/putItem.js' {
  const rules: unknown;
  export default rules;
}
declare module 'dynalite/validations/updateItem.js' {
  const rules: unknown;
  export default rules;
}
declare module 'dynalite/validations/deleteItem.js' {
  const rules: unknown;
  export default rules;
}
