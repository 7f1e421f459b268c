"""The headless context core. Never imports textual, rich or litellm."""
