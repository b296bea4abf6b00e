"""Container image references: one parser for every image a stack config names.

The grammar is the one Docker, containerd and Artifact Registry read references with,
github.com/distribution/reference (reference.go's grammar comment and regexp.go's
expressions, read at commit 0965666a6ade2e06035fe352e38344be1e68951a, 2026-04-18)::

    reference        := name [ ":" tag ] [ "@" digest ]
    name             := [domain '/'] remote-name
    domain           := host [':' port-number]
    host             := domain-name | IPv4address | \\[ IPv6address \\]
    domain-name      := domain-component ['.' domain-component]*
    domain-component := /([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])/
    port-number      := /[0-9]+/
    path-component   := alpha-numeric [separator alpha-numeric]*
    remote-name      := path-component ['/' path-component]*
    alpha-numeric    := /[a-z0-9]+/
    separator        := /[_.]|__|[-]+/
    tag              := /[\\w][\\w.-]{0,127}/
    digest           := digest-algorithm ":" digest-hex
    digest-algorithm := /[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*/
    digest-hex       := /[0-9a-fA-F]{32,}/

and, from reference.go's ``Parse``: the remote name (the path after the domain) has at most
``RepositoryNameTotalLengthMax`` (255) characters, and the digest must also pass
go-digest's ``Parse``: a registered algorithm with its exact length of lowercase hex.
Only sha256 (64 hex digits) is registered here, as in reference_test.go, where
``sha512:`` is ``ErrDigestUnsupported``. The expressions below are regexp.go's, matched as
whole strings with ``re.ASCII`` (Go's ``\\w`` is ASCII).

The registry host: the grammar reads any first component followed by ``/`` as a domain
(``acme/trainer`` has domain ``acme``), but Docker, and so Vertex AI, takes it as a
registry only when it contains ``.`` or ``:`` or is ``localhost`` (normalize.go,
``splitDockerDomain``; an uppercase first component also counts, since a path cannot be
uppercase). ``ImageReference.host`` follows Docker: None for ``trainer:1`` and
``acme/trainer:1``.

``parse`` returns an ``ImageReference`` or a ``NotAReference`` that says what to write
instead; ``image_issue`` words it as a stack config issue (key, bad value, fix).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from vertex_training.errors import Issue

__all__ = [
    "EXAMPLE",
    "MAX_PATH_CHARS",
    "MAX_TAG_CHARS",
    "SHA256_HEX_CHARS",
    "ImageReference",
    "NotAReference",
    "image_issue",
    "in_repository",
    "parse",
]

#: ``RepositoryNameTotalLengthMax``: the most characters the path after the domain has.
MAX_PATH_CHARS: Final = 255
#: A tag is 1 to 128 characters (``[\w][\w.-]{0,127}``).
MAX_TAG_CHARS: Final = 128
#: The hex digits of a sha256 digest, the one algorithm registered (as in the reference's
#: own tests, which register crypto/sha256 only; Artifact Registry names images by it).
SHA256_HEX_CHARS: Final = 64
#: A reference as the messages show one.
EXAMPLE: Final = "us-docker.pkg.dev/my-project/training/trainer:1"

# regexp.go, expression for expression.
_ALPHANUMERIC = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*"
_IPV6_ADDRESS = r"\[(?:[a-fA-F0-9:]+)\]"
_DOMAIN_AND_PORT = rf"(?:{_DOMAIN_NAME}|{_IPV6_ADDRESS})(?::[0-9]+)?"
_PATH_COMPONENT = rf"{_ALPHANUMERIC}(?:{_SEPARATOR}{_ALPHANUMERIC})*"
_REMOTE_NAME = rf"{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG_PAT = r"[\w][\w.-]{0,127}"
_DIGEST_PAT = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*[:][0-9a-fA-F]{32,}"

_REFERENCE = re.compile(
    rf"((?:{_DOMAIN_AND_PORT}/)?{_REMOTE_NAME})(?::({_TAG_PAT}))?(?:@({_DIGEST_PAT}))?",
    re.ASCII,
)
_NAME = re.compile(rf"(?:({_DOMAIN_AND_PORT})/)?({_REMOTE_NAME})", re.ASCII)
_TAG = re.compile(_TAG_PAT, re.ASCII)
_DIGEST = re.compile(_DIGEST_PAT, re.ASCII)
_LOWER_HEX = re.compile(r"[0-9a-f]+")
#: A URL scheme someone copied along with the reference (``https://``, ``docker://``).
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
#: Schemes in front of a registry address; any other (``gs://``) names no image at all.
_REGISTRY_SCHEMES = ("http://", "https://", "docker://", "oci://")
#: Longer input is not a reference; the cap keeps the expressions' work bounded.
_MAX_INPUT_CHARS = 4096


@dataclass(frozen=True)
class ImageReference:
    """A parsed reference: ``<host>/<path>[:<tag>][@<digest>]``."""

    #: Registry host with its port (``us-docker.pkg.dev``, ``localhost:5000``); None when
    #: Docker would not read the first component as a registry (``trainer:1``).
    host: str | None
    #: The repository path under the host, lowercase (``my-project/training/trainer``).
    path: str
    tag: str | None = None
    #: ``sha256:<64 hex>``.
    digest: str | None = None

    @property
    def repository(self) -> str:
        """Host and path, without tag or digest."""
        return f"{self.host}/{self.path}" if self.host else self.path

    def __str__(self) -> str:
        tag = f":{self.tag}" if self.tag else ""
        digest = f"@{self.digest}" if self.digest else ""
        return f"{self.repository}{tag}{digest}"


@dataclass(frozen=True)
class NotAReference:
    """Why a value is not a reference, and what to write instead."""

    #: What to write instead, with the reason (``drop the https:// scheme: write ...``).
    fix: str
    #: The corrected reference, when each mistake has a single correction (a scheme to
    #: drop, a path to lowercase, spaces to remove).
    suggestion: str | None = None


def _is_host(component: str) -> bool:
    """Whether Docker reads a first component as a registry host (normalize.go
    ``splitDockerDomain``: a ``.`` or ``:``, ``localhost``, or uppercase)."""
    return (
        "." in component
        or ":" in component
        or component == "localhost"
        or component.lower() != component
    )


def _docker_host(domain: str | None, path: str) -> tuple[str | None, str]:
    """(host, path) as Docker splits a name the grammar split into (domain, path)."""
    if domain is None or _is_host(domain):
        return domain, path
    return None, f"{domain}/{path}"


def _match(text: str) -> ImageReference | None:
    """``text`` as a reference by the grammar and its length and digest rules, or None."""
    matched = _REFERENCE.fullmatch(text)
    if matched is None:
        return None
    name, tag, digest = matched.groups()
    named = _NAME.fullmatch(name)
    if named is None:  # pragma: no cover - the reference expression holds the name's
        return None
    domain, path = named.groups()
    if len(path) > MAX_PATH_CHARS or (digest is not None and _digest_fault(digest)):
        return None
    host, path = _docker_host(domain, path)
    return ImageReference(host=host, path=path, tag=tag, digest=digest)


def _digest_fault(digest: str) -> str | None:
    """What is wrong with a digest by go-digest's rules, or None."""
    algorithm, _, encoded = digest.partition(":")
    if not _DIGEST.fullmatch(digest):
        return f"a digest is sha256: and {SHA256_HEX_CHARS} lowercase hex digits, got {digest!r}"
    if algorithm != "sha256":
        return f"registries name images by sha256 digests, not {algorithm}: write sha256:<hex>"
    if len(encoded) != SHA256_HEX_CHARS or not _LOWER_HEX.fullmatch(encoded):
        return (
            f"a sha256 digest is sha256: and {SHA256_HEX_CHARS} lowercase hex digits (got "
            f"{len(encoded)}{', uppercase' if encoded.lower() != encoded else ''}); copy it "
            "whole from the registry or `docker inspect`"
        )
    return None


def _split(text: str) -> tuple[str, str | None, str | None]:
    """(name, tag, digest) of text that may not parse: the digest after the first ``@``,
    the tag after the last ``:`` that follows the last ``/``."""
    name, at, digest = text.partition("@")
    colon = name.rfind(":")
    tag = None
    if colon > name.rfind("/"):
        name, tag = name[:colon], name[colon + 1 :]
    return name, tag, digest if at else None


def _join(name: str, tag: str | None, digest: str | None) -> str:
    return (
        name + (f":{tag}" if tag is not None else "") + (f"@{digest}" if digest is not None else "")
    )


def _lowercase_path(name: str) -> str:
    """``name`` with its path lowercased; a first component that is a host keeps its case."""
    first, slash, rest = name.partition("/")
    if slash and _is_host(first.lower()):
        return f"{first}/{rest.lower()}"
    return name.lower()


def parse(value: str) -> ImageReference | NotAReference:
    """``value`` as an image reference, or why it is not one and the fix."""
    if len(value) > _MAX_INPUT_CHARS:
        return NotAReference(
            f"an image reference is a few hundred characters at most, e.g. {EXAMPLE}"
        )
    parsed = _match(value)
    if parsed is not None:
        return parsed
    return _diagnose(value)


def _diagnose(value: str) -> NotAReference:
    """The fix for a value that is not a reference: the mistakes that have one correction
    (spaces, a URL scheme, uppercase in the path) are corrected and named together, then
    the first part still at fault (name, tag, digest) says its rule."""
    fixes: list[str] = []
    text = value
    if text != text.strip():
        text = text.strip()
        fixes.append("remove the spaces around it")
    scheme = _SCHEME.match(text)
    if scheme and scheme.group().lower() not in _REGISTRY_SCHEMES:
        return NotAReference(
            f"a {scheme.group()} URL is not a container image: push the image to a registry "
            f"and write its reference, e.g. {EXAMPLE}"
        )
    if scheme:
        text = text[scheme.end() :]
        fixes.append(f"drop the {scheme.group()} scheme")
    if not text:
        return NotAReference(f"write an image reference, e.g. {EXAMPLE}")
    name, tag, digest = _split(text)
    if not _NAME.fullmatch(name) and _NAME.fullmatch(lowered := _lowercase_path(name)):
        name = lowered
        fixes.append("repository paths are lowercase" if not fixes else "lowercase the path")
    text = _join(name, tag, digest)
    if fixes and _match(text) is not None:
        return NotAReference(f"{' and '.join(fixes)}: write {text}", suggestion=text)
    prefix = f"{' and '.join(fixes)}; " if fixes else ""
    return NotAReference(prefix + _fault(name, tag, digest))


def _fault(name: str, tag: str | None, digest: str | None) -> str:
    """The rule that the first faulty part of a reference breaks."""
    named = _NAME.fullmatch(name)
    if named is None:
        if "://" in name or name.startswith(("/", ".")) or "//" in name:
            return f"write the reference without a URL or file path, e.g. {EXAMPLE}"
        return (
            "write [host[:port]/]path[:tag][@digest], with path components of lowercase "
            f"letters and digits joined by ., _, __ or -, e.g. {EXAMPLE}"
        )
    path = named.group(2)
    if len(path) > MAX_PATH_CHARS:
        return (
            f"the repository path has {len(path)} characters; registries take at most "
            f"{MAX_PATH_CHARS}: shorten it"
        )
    if tag is not None and not _TAG.fullmatch(tag):
        return (
            f"the tag {tag!r} breaks the tag rule: 1 to {MAX_TAG_CHARS} letters, digits, _, . "
            f"or -, starting with a letter, digit or _; write e.g. {name}:1.2-gpu"
        )
    if digest is not None:
        fault = _digest_fault(digest)
        if fault is not None:
            return fault
    return f"write [host[:port]/]path[:tag][@digest], e.g. {EXAMPLE}"  # pragma: no cover


def image_issue(key: str, value: object, refusal: NotAReference) -> Issue:
    """The stack config issue of a value at ``key`` that is not an image reference."""
    return Issue(key, value, f"not a container image reference: {refusal.fix}")


def in_repository(image: str, repository: str | None) -> str:
    """A bare name (``trainer:1``: one path component, no registry host) under
    ``repository``; every other image, and anything that is not a reference, unchanged."""
    parsed = parse(image)
    if repository is None or not isinstance(parsed, ImageReference):
        return image
    if parsed.host is not None or "/" in parsed.path:
        return image
    return f"{repository.rstrip('/')}/{image}"
