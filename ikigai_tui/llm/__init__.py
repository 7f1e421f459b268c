"""The provider boundary: the only package that may import litellm (lazily)."""
