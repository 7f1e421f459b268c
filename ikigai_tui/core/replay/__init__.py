"""Pure replay: the log's rows -> an agent's context, queries over it, message bodies,
and the request a provider receives from a context."""
