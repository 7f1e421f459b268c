"""Usage: each agent's tokens and cost to date."""
