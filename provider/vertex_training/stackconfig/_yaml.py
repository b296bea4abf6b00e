"""Reading a stack file's ``config:`` as the running Pulumi program receives it.

The Pulumi CLI, not PyYAML, decides what a stack file means, and it reads YAML 1.2 (with
yaml.v3's own choices): ``yes``, ``no``, ``on``, ``off``, ``y``, ``n`` are strings there,
``0o17`` is a number, ``2026-01-02`` a timestamp that reaches the program as
``"2026-01-02 00:00:00 +0000 UTC"``. ``read_config`` gives each key the value the program
gets, so ``render``, ``plan`` and the policy pack see the request ``pulumi up`` submits.
PyYAML only parses and composes (syntax, anchors); every scalar is resolved here.

The pipeline emulated, in the Go sources of the CLI's modules (``.tools/go/mod``):

1. ``gopkg.in/yaml.v3@v3.0.1``: ``yaml.go`` ``Unmarshal`` decodes the first document into
   ``any``. ``resolve.go`` ``resolve`` types plain scalars (quoted and block scalars and
   ``!!str`` are strings; ``Node.indicatedString``); ``parseTimestamp`` the timestamps.
   ``decode.go`` ``decoder.mapping`` refuses duplicate keys (same node kind and text),
   picks ``map[string]any`` or ``map[any]any`` (``isStringMap``) and applies merge keys
   (``isMerge``, ``decoder.merge``: the mapping's own keys win, then the merged mappings in
   order, depth first).
2. ``github.com/pulumi/pulumi/sdk/v3@v3.259.0/go/common/workspace/loaders.go``
   ``LoadProjectStackBytes``: ``project.go`` ``SimplifyMarshalledValue`` refuses any map
   key that is not a string; ``stackConfigNamespacedWithProject`` prefixes keys without a
   namespace; the document is encoded again (``util/yamlutil/encode.go`` ``YamlEncode``:
   floats as ``strconv.FormatFloat(f, 'g', -1, 64)``, yaml.v3 ``encode.go`` ``floatv``,
   times as RFC 3339, ``timev``) and decoded into ``ProjectStack``, where a null value never
   reaches its unmarshaler (yaml.v3 ``decoder.prepare``) and reads as ``""``.
3. ``.../resource/config/map.go`` ``Map.UnmarshalYAML`` (``key.go`` ``ParseKey``) and
   ``value.go`` ``Value.UnmarshalYAML``: ``object.go`` ``unmarshalObject`` (``time.Time`` to
   ``Time.String()``, ints to int64, ``{secure: <string>}`` to a ciphertext) then
   ``object.MarshalString``: a top-level scalar becomes its text (bools and numbers as
   JSON), an object JSON text (Go's ``encoding/json``: sorted keys, floats in ``'f'`` form
   unless below 1e-6 or from 1e21, NaN and infinities refused).
4. At ``pulumi up`` (``map.go`` ``Map.Decrypt``, ``object.go`` ``UnmarshalJSON`` with
   ``UseNumber``, ``plaintext.go`` ``Plaintext.marshalText``) the object's JSON is decoded
   again (a number as int64 when it is one, else float64) and encoded for the program,
   which JSON-parses object keys (``provider/vertex_training/program/settings.py`` ``_value``).

So a key's value here is what the program holds after that: text for a scalar, the parsed
JSON for an object. Secrets stay encrypted: ``{"secure": <ciphertext>}``, at the top level
and inside objects alike.

Not emulated: yaml.v3's and PyYAML's parsers may differ on exotic syntax (both refuse
tabs for indentation, undefined aliases, bad indentation); an offset timestamp
(``2026-01-02T03:04:05+02:00``) is shown as Go shows a fixed zone (``+0200 +0200``), which
a CLI whose local time zone has that offset prints with the zone's name instead.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NoReturn

import yaml
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = ["StackYAMLError", "read_config"]

_LONG_TAG_PREFIX = "tag:yaml.org,2002:"
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_UINT64_MAX = 2**64 - 1
#: yaml.v3 ``resolve.go`` ``yamlStyleFloat``.
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
#: What Go's ``strconv.ParseFloat`` takes after a leading ``.`` (no underscores there).
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?")
#: yaml.v3 ``resolve.go`` ``allowedTimestampFormats``, as Go's ``time.Parse`` reads them.
_TIMESTAMP = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{1,2})-(?P<d>[0-9]{1,2})"
    r"(?:(?P<sep>[Tt ])(?P<h>[0-9]{1,2}):(?P<mi>[0-9]{1,2}):(?P<s>[0-9]{1,2})"
    r"(?:[.,](?P<frac>[0-9]+))?(?P<zone>Z|[-+][0-9]{2}:[0-9]{2})?)?"
)
#: Map keys ``resolve`` types; ``!!merge`` marks ``<<``.
_STR, _MERGE, _NULL, _BINARY = "!!str", "!!merge", "!!null", "!!binary"
_RESOLVABLE = ("", "!!str", "!!bool", "!!int", "!!float", "!!null", "!!timestamp")
_SPECIAL: dict[str, tuple[str, Any]] = {
    **dict.fromkeys(("true", "True", "TRUE"), ("!!bool", True)),
    **dict.fromkeys(("false", "False", "FALSE"), ("!!bool", False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (_NULL, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), ("!!float", math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), ("!!float", math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), ("!!float", -math.inf)),
    "<<": (_MERGE, "<<"),
}


class StackYAMLError(ValueError):
    """A stack file the Pulumi CLI refuses; the message says where and why."""


@dataclass(frozen=True)
class _Alias:
    """An alias in the composed tree (yaml.v3 keeps them as nodes of their own kind)."""

    name: str
    target: Node
    line: int


@dataclass(frozen=True)
class _Time:
    """A timestamp, as Go's ``time.Time.String()`` prints it."""

    text: str


class _GeneralMap(dict[tuple[str, Any], Any]):
    """A mapping yaml.v3 decodes as ``map[any]any``: some key is not a string. Keys are
    held with their type (``_typed``): Go tells ``1``, ``1.0`` and ``true`` apart."""


def _typed(key: Any) -> tuple[str, Any]:
    return (type(key).__name__, key)


@dataclass(frozen=True)
class _Secret:
    """A ``{secure: <ciphertext>}`` value (``object.go`` ``isSecureValue``)."""

    ciphertext: str


_Composed = Node | _Alias


class _Loader(yaml.SafeLoader):
    """PyYAML's parser and composer, keeping each scalar's own tag and aliases as such."""

    def compose_node(self, parent: Node | None, index: Any) -> Any:
        if self.check_event(AliasEvent):
            event = _next_event(self)
            if event.anchor not in self.anchors:
                raise yaml.composer.ComposerError(
                    None, None, f"found undefined alias {event.anchor!r}", event.start_mark
                )
            return _Alias(event.anchor, self.anchors[event.anchor], event.start_mark.line + 1)
        return super().compose_node(parent, index)

    def compose_scalar_node(self, anchor: Any) -> ScalarNode:  # the stubs say dict; it is str
        event = _next_event(self)
        node = ScalarNode(
            event.tag or "", event.value, event.start_mark, event.end_mark, style=event.style
        )
        if anchor is not None:
            self.anchors[anchor] = node
        return node


def _next_event(loader: _Loader) -> Any:
    """The parser's next event (untyped in PyYAML's stubs)."""
    return loader.get_event()  # type: ignore[no-untyped-call]  # untyped in types-PyYAML


def read_config(text: str, source: str, project: str | None = None) -> dict[str, Any]:
    """The ``config:`` of a stack file, each key with the value the Pulumi program gets.

    A scalar gives its text (``"yes"``, ``"true"``, ``"511"`` for ``0777``); an object the
    JSON the program parses (``{"secure": ...}`` where a secret is, still encrypted); an
    empty value ``""``. With ``project``, a key without a namespace gets it, as the CLI
    does. Raises ``StackYAMLError`` for a file the CLI refuses.
    """
    document = _decode_document(text.removeprefix("\ufeff"), source)
    if document is None:
        return {}
    document = _simplify(document, source)
    if not isinstance(document, dict):
        _fail(source, f"must be a mapping with a config: key, not {_go_type(document)}")
    config = document.get("config")
    if config is None:
        return {}
    if not isinstance(config, dict):
        _fail(source, f"config: must be a mapping of key: value, not {_go_type(config)}")
    namespaced = not isinstance(config, _GeneralMap)  # stackConfigNamespacedWithProject
    result: dict[str, Any] = {}
    entries = _reencoded(config, source).items()
    for raw_key, value in ((k[1], v) for k, v in entries) if not namespaced else entries:
        if raw_key is None:
            continue  # a null key decoded into a string: yaml.v3 skips it
        text = raw_key if isinstance(raw_key, str) else _go_yaml_text(raw_key)
        key = _config_key(text, project, namespaced, source)
        if key in result:
            _fail(source, f"config: {text!r} and another key both name {key!r}")
        result[key] = _program_value(value, f"config: {text}", source)
    return result


# --- yaml.v3: composing and decoding ---------------------------------------------------


def _decode_document(text: str, source: str) -> Any:
    loader = _Loader(text)
    try:
        node: Node | None = loader.get_node() if loader.check_node() else None
    finally:
        loader.dispose()
    return None if node is None else _decode(node, source)


def _target(node: _Composed) -> Node:
    return node.target if isinstance(node, _Alias) else node


def _short_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_LONG_TAG_PREFIX) if tag.startswith(_LONG_TAG_PREFIX) else tag


def _indicated_string(node: Node) -> bool:
    """yaml.v3 ``Node.indicatedString``: ``!!str``, or quoted or block and untagged."""
    if not isinstance(node, ScalarNode):
        return False
    tag = _short_tag(node.tag)
    return tag == _STR or (tag in ("", "!") and node.style is not None)


def _node_short_tag(node: _Composed) -> str:
    """yaml.v3 ``Node.ShortTag``."""
    node = _target(node)
    if _indicated_string(node):
        return _STR
    if node.tag in ("", "!") or isinstance(node, (MappingNode, SequenceNode)):
        if isinstance(node, MappingNode):
            return "!!map"
        if isinstance(node, SequenceNode):
            return "!!seq"
        return _resolve("", node.value, node)[0]
    return _short_tag(node.tag)


def _is_merge(node: _Composed) -> bool:
    """yaml.v3 ``isMerge`` (a quoted ``"<<"`` counts too, as there)."""
    return (
        isinstance(node, ScalarNode)
        and node.value == "<<"
        and (node.tag in ("", "!") or _short_tag(node.tag) == _MERGE)
    )


def _decode(node: _Composed, source: str) -> Any:
    """yaml.v3 ``decoder.unmarshal`` into ``any``."""
    node = _target(node)
    if isinstance(node, ScalarNode):
        return _scalar(node, source)
    if isinstance(node, SequenceNode):
        return [_decode(item, source) for item in node.value]
    if isinstance(node, MappingNode):
        return _mapping(node, source)
    raise AssertionError(f"unexpected node {node!r}")  # pragma: no cover


def _scalar(node: ScalarNode, source: str) -> Any:
    if _indicated_string(node):
        return node.value
    tag, value = _resolve(node.tag, node.value, node, source)
    if tag == _BINARY:
        try:
            return base64.b64decode(value, validate=False).decode("utf-8", "replace")
        except binascii.Error:
            _fail(source, "!!binary value contains invalid base64 data", node)
    return value


def _mapping(node: MappingNode, source: str) -> dict[Any, Any]:
    """yaml.v3 ``decoder.mapping`` into ``any``: ``map[string]any`` when every key is a
    string (``isStringMap``), else a ``_GeneralMap`` (``map[any]any``)."""
    _check_unique(node, source)
    if all(_node_short_tag(key) in (_STR, _MERGE) for key, _ in node.value):
        out: dict[Any, Any] = {}
        _fill(node, out, None, as_string=True, source=source)
        return out
    general = _GeneralMap()
    _fill(node, general, None, as_string=False, source=source)
    return general


def _simplify(value: Any, source: str) -> Any:
    """``project.go`` ``SimplifyMarshalledValue``: a ``map[any]any`` reached from the root
    through such maps and lists must have string keys; it becomes a ``map[string]any``
    (a ``map[string]any`` is left as it is, unchecked, and so is all below it)."""
    if isinstance(value, _GeneralMap):
        for _, key in value:
            if not isinstance(key, str):
                _fail(source, f"expected only string keys, got '{_go_scalar_text(key)}'")
        return {key: _simplify(item, source) for (_, key), item in value.items()}
    if isinstance(value, list):
        return [_simplify(item, source) for item in value]
    return value


def _check_unique(node: MappingNode, source: str) -> None:
    seen: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        identity = _key_identity(key)
        line = _line(key)
        if identity in seen:
            _fail(
                source,
                f"line {line}: mapping key {json.dumps(identity[1])} already defined at "
                f"line {seen[identity]}",
            )
        seen.setdefault(identity, line)


def _key_identity(key: _Composed) -> tuple[str, str]:
    """What yaml.v3 compares to find a duplicate key: the node's kind and text."""
    if isinstance(key, _Alias):
        return ("alias", key.name)
    if isinstance(key, ScalarNode):
        return ("scalar", key.value)
    return ("mapping" if isinstance(key, MappingNode) else "sequence", "")


def _line(node: _Composed) -> int:
    return node.line if isinstance(node, _Alias) else int(node.start_mark.line) + 1


def _fill(
    node: MappingNode,
    out: dict[Any, Any],
    merged: set[Any] | None,
    *,
    as_string: bool,
    source: str,
) -> None:
    """Set ``node``'s keys in ``out``; ``merged`` holds the keys already set when merging."""
    merge_source: _Composed | None = None
    for key_node, value_node in node.value:
        if _is_merge(key_node):
            merge_source = value_node
            continue
        key = _map_key(key_node, as_string=as_string, source=source)
        if key is _SKIP:
            continue
        if not as_string:
            key = _typed(key)
        if merged is not None:
            if key in merged:
                continue
            merged.add(key)
        out[key] = _decode(value_node, source)
    if merge_source is not None:
        if merged is None:
            merged = set()
            for key_node, _ in node.value:
                key = _map_key(key_node, as_string=False, source=source)
                if key is not _SKIP:
                    merged.add(key if as_string else _typed(key))
        for part in _merge_parts(merge_source, source):
            _check_unique(part, source)
            _fill(part, out, merged, as_string=as_string, source=source)


_SKIP: Any = object()


def _map_key(key_node: _Composed, *, as_string: bool, source: str) -> Any:
    """A key as decoded into ``string`` (any scalar's text) or into ``any``."""
    target = _target(key_node)
    if as_string:
        if not isinstance(target, ScalarNode):
            _fail(source, f"cannot unmarshal {_node_short_tag(target)} into a string key", target)
        if _is_merge(target):
            return "<<"
        decoded = _scalar(target, source)
        if decoded is None:
            return _SKIP  # a null key in a merged mapping: yaml.v3 drops it
        return decoded if isinstance(decoded, str) else target.value
    key = _decode(key_node, source)
    if isinstance(key, (dict, list)):
        _fail(source, "invalid map key: a mapping or sequence", target)
    return key


def _merge_parts(merge: _Composed, source: str) -> Iterator[MappingNode]:
    """yaml.v3 ``decoder.merge``: a mapping, an alias of one, or a sequence of those."""
    target = _target(merge)
    if isinstance(target, MappingNode):
        yield target
        return
    if isinstance(target, SequenceNode) and not isinstance(merge, _Alias):
        for item in target.value:
            part = _target(item)
            if not isinstance(part, MappingNode):
                _fail(source, "map merge requires map or sequence of maps as the value", part)
            yield part
        return
    _fail(source, "map merge requires map or sequence of maps as the value", target)


def _resolve(tag: str, text: str, node: Node, source: str = "") -> tuple[str, Any]:
    """yaml.v3 ``resolve.go`` ``resolve``: the tag and Go value of a scalar."""
    tag = _short_tag(tag)
    if tag not in _RESOLVABLE:
        return tag, text
    rtag, value = _resolve_plain(text, tag)
    if tag in ("", rtag, _STR, _BINARY):
        return rtag, value
    if tag == "!!float" and rtag == "!!int" and isinstance(value, int):
        return "!!float", float(value)
    _fail(source, f"cannot decode {rtag} `{text}` as a {tag}", node)


def _resolve_plain(text: str, tag: str) -> tuple[str, Any]:
    if tag in (_STR, _BINARY) or (text and text[0] not in "+-0123456789yYnNtTfFoO~."):
        return _STR, text
    if text in _SPECIAL:
        return _SPECIAL[text]
    if text[0] == ".":
        if _DOT_FLOAT.fullmatch(text) and math.isfinite(value := float(text)):
            return "!!float", value
        return _STR, text
    if text[0] in "yYnNtTfFoO~":
        return _STR, text
    return _resolve_number(text, tag)


def _resolve_number(text: str, tag: str) -> tuple[str, Any]:
    """A plain scalar starting with a digit or sign: timestamp, int, float, else string."""
    if tag in ("", "!!timestamp") and (stamp := _timestamp(text)) is not None:
        return "!!timestamp", stamp
    plain = text.replace("_", "")
    if (number := _go_parse_int(plain, signed=True)) is not None:
        return "!!int", number
    if (number := _go_parse_int(plain, signed=False)) is not None:
        return "!!int", number
    if _YAML_STYLE_FLOAT.fullmatch(plain) and math.isfinite(value := float(plain)):
        return "!!float", value
    for prefix, base in (("0b", 2), ("0o", 8)):
        for sign in ("", "-"):
            if plain.startswith(sign + prefix):
                digits = plain[len(sign) + 2 :]
                if digits and all(c in "0123456789"[:base] for c in digits):
                    value = int(sign + digits, base)
                    if _INT64_MIN <= value <= _UINT64_MAX:
                        return "!!int", value
    return _STR, text


def _go_parse_int(text: str, *, signed: bool) -> int | None:
    """Go's ``strconv.ParseInt(text, 0, 64)`` (or ``ParseUint``): None where it fails."""
    sign = 1
    if signed and text[:1] in ("+", "-"):
        sign, text = (-1 if text[0] == "-" else 1), text[1:]
    if not text:
        return None
    base = 10
    if text[0] == "0":
        prefix = text[1:2].lower()
        if len(text) >= 3 and prefix in ("b", "o", "x"):
            base, text = {"b": 2, "o": 8, "x": 16}[prefix], text[2:]
        else:
            base, text = 8, text[1:]
    digits = "0123456789abcdef"[:base]
    if not all(c in digits for c in text.lower()):
        return None
    value = sign * int(text, base) if text else 0
    low, high = (_INT64_MIN, _INT64_MAX) if signed else (0, _UINT64_MAX)
    return value if low <= value <= high else None


def _timestamp(text: str) -> _Time | None:
    """yaml.v3 ``parseTimestamp`` (Go's ``time.Parse``), printed as ``Time.String()``."""
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        return None
    year, month, day = int(match["y"]), int(match["mo"]), int(match["d"])
    if not 1 <= month <= 12 or not 1 <= day <= _days_in(month, year):
        return None
    hour = minute = second = 0
    frac, zone = "", "+0000 UTC"
    if match["h"] is not None:
        if match["sep"] in "Tt" and match["zone"] is None:
            return None
        if match["sep"] == " " and match["zone"] is not None:
            return None
        hour, minute, second = int(match["h"]), int(match["mi"]), int(match["s"])
        if hour > 23 or minute > 59 or second > 59:
            return None
        frac = (match["frac"] or "")[:9].rstrip("0")
        if match["zone"] not in (None, "Z"):
            offset = match["zone"].replace(":", "")
            zone = f"{offset} {offset}"
    fraction = f".{frac}" if frac else ""
    return _Time(
        f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}{fraction} {zone}"
    )


def _days_in(month: int, year: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


# --- Pulumi: the round trip through YAML, config objects, JSON ------------------------


def _reencoded(value: Any, source: str) -> Any:
    """The value after ``LoadProjectStackBytes`` encodes the document again and decodes it:
    a float is read back from its ``%g`` text (``-0.0`` becomes ``0``, ``1e6`` stays a
    float, ``100.0`` becomes an int)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return value
        return _resolve_plain(_go_format_float(value, "g"), "")[1]
    if isinstance(value, list):
        return [_reencoded(item, source) for item in value]
    if isinstance(value, _GeneralMap):
        out = _GeneralMap()
        texts: set[str] = set()
        for (_, key), item in value.items():
            new_key = _reencoded(key, source)
            text = new_key if isinstance(new_key, str) else _go_yaml_text(new_key)
            if text in texts:  # both keys are written as this text: a duplicate there
                _fail(source, f"mapping key {json.dumps(text)} already defined")
            texts.add(text)
            out[_typed(new_key)] = _reencoded(item, source)
        return out
    if isinstance(value, dict):
        return {key: _reencoded(item, source) for key, item in value.items()}
    return value


def _program_value(value: Any, key: str, source: str) -> Any:
    """``Value.UnmarshalYAML`` then what ``pulumi up`` hands the program, objects parsed."""
    if value is None:
        return ""  # a null never reaches Value's unmarshaler (yaml.v3 decoder.prepare)
    obj = _object(value, key, source)
    if isinstance(obj, _Secret):
        return {"secure": obj.ciphertext}
    if isinstance(obj, str):
        return obj
    if isinstance(obj, (bool, int, float)):
        return _go_json(obj, key, source)
    stored = _go_json(obj, key, source)  # MarshalString, kept as the config value
    return _from_stored_json(json.loads(stored))


def _object(value: Any, where: str, source: str) -> Any:
    """``object.go`` ``unmarshalObject``."""
    if isinstance(value, _Time):
        return value.text
    if isinstance(value, _GeneralMap):  # keys as fmt's %v prints them
        out: dict[str, Any] = {}
        for (_, key), item in value.items():
            text = key if isinstance(key, str) else _go_percent_v(key)
            if text in out:
                _fail(source, f"{where}: two keys both read as {text!r}; the CLI keeps either")
            out[text] = item
        return _object(out, where, source)
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get("secure"), str):
            return _Secret(value["secure"])
        return {key: _object(item, where, source) for key, item in value.items()}
    if isinstance(value, list):
        return [_object(item, where, source) for item in value]
    return value


def _from_stored_json(value: Any) -> Any:
    """Decoding the stored JSON with ``UseNumber`` (int64, else float64), re-encoding it
    for the program (``Plaintext.marshalText``), and the program's ``json.loads``."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and _INT64_MIN <= value <= _INT64_MAX:
        return value
    if isinstance(value, (int, float)):
        return json.loads(_go_format_float(float(value), "json"))
    if isinstance(value, list):
        return [_from_stored_json(item) for item in value]
    if isinstance(value, dict):
        if set(value) == {"secure"} and isinstance(value["secure"], str):
            return dict(value)
        return {key: _from_stored_json(value[key]) for key in sorted(value)}
    raise AssertionError(f"unexpected JSON value {value!r}")  # pragma: no cover


def _go_json(value: Any, key: str, source: str) -> str:
    """Go's ``json.Marshal`` of a config object."""
    if isinstance(value, _Secret):
        return json.dumps({"secure": value.ciphertext})
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            shown = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
            _fail(source, f"{key}: json: unsupported value: {shown}")
        return _go_format_float(value, "json")
    if isinstance(value, list):
        return "[" + ",".join(_go_json(item, key, source) for item in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ",".join(f"{json.dumps(k)}:{_go_json(value[k], key, source)}" for k in sorted(value))
            + "}"
        )
    raise AssertionError(f"unexpected value {value!r}")  # pragma: no cover


def _go_format_float(value: float, style: str) -> str:
    """``strconv.FormatFloat(value, 'g', -1, 64)`` (style ``"g"``) or ``encoding/json``'s
    float64 (style ``"json"``: ``'f'``, or ``'e'`` below 1e-6 and from 1e21)."""
    negative = math.copysign(1.0, value) < 0
    sign = "-" if negative else ""
    if value == 0:
        return sign + "0"
    digits_tuple = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, digits_tuple.digits))
    exponent = int(digits_tuple.exponent)
    point = len(digits) + exponent  # Go's decimal point position (digs.dp)
    # %g switches at exponents below -4 or from 6; encoding/json below 1e-6 or from 1e21.
    use_e = not -4 <= point - 1 < 6 if style == "g" else not 1e-6 <= abs(value) < 1e21
    if use_e:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        exp = point - 1
        exp_sign = "-" if exp < 0 else "+"
        exp_digits = f"{abs(exp):02d}"
        if style == "json" and exp_sign == "-" and exp_digits.startswith("0"):
            exp_digits = exp_digits[1:]
        return f"{sign}{mantissa}e{exp_sign}{exp_digits}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _go_yaml_text(value: Any) -> str:
    """How yaml.v3 writes a decoded scalar again (a key, when the CLI encodes the file)."""
    if value is None:
        return "null"
    if isinstance(value, _Time):
        return value.text  # stands in for its RFC 3339 form: as unique
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    return _go_percent_v(value)


def _go_percent_v(value: Any) -> str:
    """Go's ``%v`` of a decoded scalar (``unmarshalObject`` names a ``map[any]any``'s keys
    with it)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        return _go_format_float(value, "g")
    if isinstance(value, _Time):
        return value.text
    return str(value)


def _go_scalar_text(value: Any) -> str:
    """Go's ``%s`` of a decoded scalar, for messages."""
    if value is None:
        return "%!s(<nil>)"
    if isinstance(value, bool):
        return "%!s(bool=" + str(value).lower() + ")"
    if isinstance(value, int):
        return f"%!s(int={value})"
    if isinstance(value, float):
        return f"%!s(float64={_go_format_float(value, 'g')})"
    if isinstance(value, _Time):
        return value.text
    return str(value)


def _config_key(key: str, project: str | None, namespaced: bool, source: str) -> str:
    """``stackConfigNamespacedWithProject`` (only for a ``map[string]any`` config) then
    ``config.ParseKey``; without ``project`` a key without a namespace is left as it is."""
    if ":" not in key and namespaced:
        return f"{project}:{key}" if project else key
    parts = key.split(":")
    if len(parts) == 2:
        return key
    if len(parts) == 3 and parts[1] == "config" and parts[0] and parts[2]:
        return f"{parts[0]}:{parts[2]}"
    _fail(
        source,
        f"could not parse {key} as a configuration key (configuration keys should be of "
        "the form `<namespace>:<name>`)",
    )


def _go_type(value: Any) -> str:
    if isinstance(value, list):
        return "a sequence"
    if isinstance(value, dict):
        return "a mapping"
    return "a scalar"


def _fail(source: str, message: str, node: Node | None = None) -> NoReturn:
    where = f" (line {node.start_mark.line + 1})" if node is not None else ""
    raise StackYAMLError(f"{source}: {message}{where}")
