"""The store adapters: the event log and its small state on a database engine."""
