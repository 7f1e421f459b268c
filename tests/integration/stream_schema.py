"""The JSON schema of `--output-format stream-json` (README, cli/stream.py) and a small
validator for the part of JSON Schema it uses (type, enum, required, properties,
additionalProperties: false, items), so the tests need no jsonschema package."""

from __future__ import annotations

from typing import Any

_ID = {"type": "string"}
_EVENT_ID = {"type": "integer"}
_USAGE = {"type": "object", "required": ["input_tokens", "output_tokens", "cost_usd"],
          "properties": {"input_tokens": {"type": "integer"}, "output_tokens": {"type": "integer"},
                         "cost_usd": {"type": ["number", "null"]}, "cost": {"type": "string"},
                         "unpriced_models": {"type": "array", "items": {"type": "string"}}}}


def _obj(name: str, /, **props: dict) -> dict:
    properties = {"type": {"enum": [name]}, "agent": _ID, **props}
    return {"type": "object", "required": list(properties), "properties": properties,
            "additionalProperties": False}


EVENTS: dict[str, dict] = {
    "system": {**_obj("system", subtype={"enum": ["init"]}, agent_name={"type": ["string", "null"]},
                      model={"type": "string"}, database={"type": "string"},
                      version={"type": "string"})},
    "user": _obj("user", event_id=_EVENT_ID, content={"type": "string"}),
    "text_delta": _obj("text_delta", text={"type": "string"}),
    "assistant": _obj("assistant", event_id=_EVENT_ID, content={"type": "string"},
                      interrupted={"type": "boolean"}),
    "tool_call": _obj("tool_call", event_id=_EVENT_ID, call_id={"type": ["string", "null"]},
                      name={"type": "string"}, arguments={"type": "string"}),
    "tool_result": _obj("tool_result", event_id=_EVENT_ID, call_id={"type": ["string", "null"]},
                        content={"type": "string"}),
    "usage": _obj("usage", model={"type": ["string", "null"]}, input_tokens={"type": "integer"},
                  output_tokens={"type": "integer"}),
    "retry": _obj("retry", attempt={"type": "integer"}, delay_seconds={"type": "number"},
                  reason={"type": "string"}),
    "command": _obj("command", text={"type": "string"},
                    output={"type": "array", "items": {"type": "string"}}),
    "preview": _obj("preview", lines={"type": "array", "items": {"type": "string"}}),
    "compaction": _obj("compaction", kind={"enum": ["warning", "note", "done"]},
                       text={"type": "string"}),
    "compact": _obj("compact", event_id=_EVENT_ID, replaced={"type": "integer"},
                    before={"type": ["integer", "null"]}, after={"type": ["integer", "null"]},
                    summary={"type": "string"}),
    "pruned_summary": _obj("pruned_summary", event_id=_EVENT_ID, messages={"type": "integer"},
                           new={"type": "integer"}, tokens={"type": "integer"},
                           summary={"type": "string"}),
    "error": _obj("error", message={"type": "string"}),
    "result": _obj("result", subtype={"enum": ["success", "error", "interrupted"]},
                   is_error={"type": "boolean"}, exit_code={"type": "integer"},
                   model={"type": "string"}, result={"type": "string"},
                   duration_ms={"type": "integer"}, usage=_USAGE,
                   errors={"type": "array", "items": {"type": "string"}}),
}
# `--output-format json`: the result object with the events (no deltas) in a list.
JSON_RESULT = {**EVENTS["result"], "required": [*EVENTS["result"]["required"], "events"],
               "properties": {**EVENTS["result"]["properties"],
                              "events": {"type": "array", "items": {"type": "object"}}}}

_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool,
          "object": dict, "array": list, "null": type(None)}


def _is(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[name])


def validate(value: Any, schema: dict, where: str = "$") -> list[str]:
    """The ways `value` breaks `schema` ([] when it conforms)."""
    problems: list[str] = []
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is(value, k) for k in kinds):
            return [f"{where}: {value!r} is not {' or '.join(kinds)}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{where}: {value!r} not one of {schema['enum']}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                problems.append(f"{where}: missing {key!r}")
        for key, item in value.items():
            if key in props:
                problems += validate(item, props[key], f"{where}.{key}")
            elif schema.get("additionalProperties") is False:
                problems.append(f"{where}: unexpected {key!r}")
    if isinstance(value, list) and "items" in schema:
        for n, item in enumerate(value):
            problems += validate(item, schema["items"], f"{where}[{n}]")
    return problems


def validate_line(obj: Any) -> list[str]:
    """One stream-json line, by its `type`."""
    if not isinstance(obj, dict) or obj.get("type") not in EVENTS:
        return [f"$: not an event object: {obj!r}"]
    return validate(obj, EVENTS[obj["type"]])
