/** The PostgreSQL store, as its own entry point so that `pg` loads only for those who use it. */
export { createPostgresStore } from './store/postgres/postgres-store.js';
export type { PostgresStoreOptions } from './store/postgres/postgres-store.js';
