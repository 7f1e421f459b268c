"""The SQLite backend of the ports in core/ports: one file, WAL, group-committed writes."""
