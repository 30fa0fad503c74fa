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
