"""An event's payload as the bytes the log stores: its JSON text (no ASCII escaping,
no spaces), encoded as UTF-8, built without a long message's whole JSON text as a str."""

from __future__ import annotations

import json

__all__ = ["dumps", "payload_bytes"]

dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_escape = json.encoder.encode_basestring  # how dumps escapes a string
_PIECE = 1 << 16


def payload_bytes(payload: object) -> bytes:
    """dumps(payload).encode(), built without the payload's whole JSON text as a str: a
    long string in it is escaped and encoded a slice at a time. A 10 MB message with one
    character past U+FFFF is 40 MB as a str; its JSON text was another 40 MB."""
    if not (isinstance(payload, dict) and all(isinstance(k, str) for k in payload)
            and any(isinstance(v, str) and len(v) > _PIECE for v in payload.values())):
        return dumps(payload).encode()
    pieces = [b"{"]
    for key, value in payload.items():
        if len(pieces) > 1:
            pieces.append(b",")
        pieces.append(dumps(key).encode() + b":")
        if isinstance(value, str) and len(value) > _PIECE:
            pieces.append(b'"')
            # Escaping goes character by character: slices escape as the whole does.
            pieces.extend(_escape(value[i:i + _PIECE])[1:-1].encode()
                          for i in range(0, len(value), _PIECE))
            pieces.append(b'"')
        else:
            pieces.append(dumps(value).encode())
    pieces.append(b"}")
    return b"".join(pieces)
