"""Permissions (issue 25 item 3): allow / ask / deny per tool name or pattern, the most
specific rule winning, defaults by the tool's access, a bad config value, and a child's
grants never wider than its parent's."""

from __future__ import annotations

from pathlib import Path

import pytest

from ikigai_tui.config import ConfigError, load
from ikigai_tui.core.tools.permissions import (
    ALLOW, ASK, DENY, ONCE, REFUSE, Grants, PermissionRequest, PermissionService, Rules,
    decide, headless_reviewer,
)


def test_defaults_follow_the_tools_access():
    rules = Rules()
    assert rules.decide("read_file", "read") == ALLOW
    assert rules.decide("write_file", "write") == ASK
    assert rules.decide("bash", "shell") == ASK
    assert rules.decide("github__create_issue", "mcp") == ASK
    assert rules.decide("memory", "ikigai") == ALLOW
    assert rules.decide("mystery", None) == ASK  # a tool that does not say its access


def test_rules_per_name_and_pattern():
    rules = Rules({"bash": "deny", "read_*": "ask", "mcp.github__*": "allow"})
    assert rules.decide("bash", "shell") == DENY
    assert rules.decide("read_file", "read") == ASK
    assert rules.decide("list_files", "read") == ALLOW  # no rule: the default
    assert rules.decide("github__list_issues", "mcp") == ALLOW  # matched as mcp.NAME
    assert rules.decide("gitlab__list", "mcp") == ASK
    # mcp. is an MCP tool's prefix only: a built-in tool of that name is not matched
    assert rules.decide("github__list_issues", "shell") == ASK


def test_the_most_specific_rule_wins():
    rules = Rules({"*": "deny", "mcp.*": "ask", "mcp.github__*": "allow",
                   "mcp.github__delete_*": "deny", "github__delete_repo": "ask"})
    assert rules.decide("bash", "shell") == DENY  # only "*"
    assert rules.decide("gitlab__x", "mcp") == ASK  # "mcp.*" over "*"
    assert rules.decide("github__list", "mcp") == ALLOW  # the longer pattern
    assert rules.decide("github__delete_issue", "mcp") == DENY  # longer still
    assert rules.decide("github__delete_repo", "mcp") == ASK  # the exact name over patterns
    # Two patterns of one length: the stricter wins, whatever their order.
    assert Rules({"ba?h": "allow", "b*sh": "deny"}).decide("bash", "shell") == DENY
    assert Rules({"b*sh": "deny", "ba?h": "allow"}).decide("bash", "shell") == DENY


def test_a_bad_rule_is_refused():
    with pytest.raises(ValueError, match="permissions 'bash' must be"):
        Rules({"bash": "sometimes"})


def test_a_bad_config_value_is_one_line_naming_the_key(tmp_path: Path):
    config = tmp_path / "config.toml"
    config.write_text('[permissions]\n"mcp.github__*" = "allow"\nbash = "maybe"\n')
    with pytest.raises(ConfigError) as caught:
        load(config_path=str(config), env={})
    message = str(caught.value)
    assert "\n" not in message
    assert f"{config}, line 3" in message and "'bash'" in message
    assert '"allow", "ask" or "deny"' in message
    config.write_text("permissions = 3\n")
    with pytest.raises(ConfigError, match="'permissions' must be a table"):
        load(config_path=str(config), env={})


def test_the_config_table_is_read(tmp_path: Path):
    config = tmp_path / "config.toml"
    config.write_text('[permissions]\nbash = "allow"\n"mcp.github__*" = "deny"\n')
    loaded = load(config_path=str(config), env={})
    assert loaded.permissions == {"bash": "allow", "mcp.github__*": "deny"}
    rules = Rules(loaded.permissions)
    assert rules.decide("bash", "shell") == ALLOW
    assert rules.decide("github__x", "mcp") == DENY


def test_grants_lift_ask_but_never_a_configured_deny():
    rules = Rules({"rm_tree": "deny"})
    assert decide(rules, "bash", "shell", Grants(own=[("bash", ALLOW)])) == ALLOW
    assert decide(rules, "bash", "shell", Grants(inherited=[("bash", ALLOW)])) == ALLOW
    assert decide(rules, "write_file", "write", Grants(own=[("bash", ALLOW)])) == ASK
    assert decide(rules, "rm_tree", "shell", Grants(own=[("rm_tree", ALLOW)])) == DENY


def test_a_child_is_never_wider_than_its_parent():
    """A child's rules are its parent's (at the fork) plus its own; an inherited deny is a
    ceiling: the child's own allow, however specific, does not lift it."""
    rules = Rules()
    parent = Grants(own=[("mcp.*", DENY), ("write_file", ALLOW)])
    child = Grants(inherited=[*parent.inherited, *parent.own],
                   own=[("mcp.github__issues", ALLOW), ("bash", ALLOW)])
    for tool, access in [("github__issues", "mcp"), ("write_file", "write"), ("bash", "shell"),
                         ("read_file", "read"), ("other", None)]:
        mine, theirs = decide(rules, tool, access, child), decide(rules, tool, access, parent)
        if theirs == DENY:
            assert mine == DENY, tool
    assert decide(rules, "github__issues", "mcp", child) == DENY
    assert decide(rules, "write_file", "write", child) == ALLOW  # inherited
    assert decide(rules, "bash", "shell", child) == ALLOW  # its own grant, the user's answer
    # The child's own deny narrows it (and nothing of the child's reaches the parent).
    narrower = Grants(inherited=child.inherited, own=[("write_file", DENY)])
    assert decide(rules, "write_file", "write", narrower) == DENY
    assert decide(rules, "bash", "shell", parent) == ASK


async def test_nobody_to_ask_is_a_refusal():
    service = PermissionService()
    answer = await service.ask(PermissionRequest("a1", "root", "bash", "shell", "$ ls"))
    assert answer.choice == REFUSE and "--allow" in answer.reason


async def test_headless_allow_and_yes():
    said: list[str] = []
    request = PermissionRequest("a1", "root", "github__x", "mcp", "github__x({})")
    allowed = headless_reviewer(["mcp.github__*"], False, said.append)
    assert (await allowed(request)).choice == ONCE
    assert said == ["root: github__x allowed by --allow mcp.github__*:", "  github__x({})"]
    refused = await headless_reviewer(["bash"], False)(request)
    assert refused.choice == REFUSE and "--allow github__x or --yes" in refused.reason
    assert (await headless_reviewer([], True)(request)).choice == ONCE
