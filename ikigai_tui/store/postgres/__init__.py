"""The PostgreSQL event log (asyncpg, imported only when a postgresql:// URL is used)."""
