"""Google's prebuilt training and prediction images as its registry lists them: a dated
snapshot, read by ``refresh`` and committed beside the price snapshot
(``prices/images.json``).

Google publishes its prebuilt training images in the public Artifact Registry repository
``training`` of the project ``vertex-ai``, and its prebuilt prediction images (a model's
serving image, ``vertex_training.catalog.prediction_images``) in ``prediction``, in the
``us``, ``europe`` and ``asia`` multi-regions (``REPOSITORIES``,
``PREDICTION_REPOSITORIES``). ``refresh`` lists each one's Docker images
(``ArtifactRegistry.ListDockerImages``, google/devtools/artifactregistry/v1/artifact.proto:
one ``DockerImage`` per digest, with its ``uri``, ``tags`` and ``upload_time``; pages of
``page_size`` followed by ``next_page_token``) and keeps, for each image name in each
location, the digest tagged ``latest`` (else the newest upload), its tags, its upload time
and how many digests the name has.

- The client is ``google.cloud.artifactregistry_v1.ArtifactRegistryClient``
  (google-cloud-artifact-registry), imported only when a refresh runs.
- Credentials: those pulumi-gcp would use (``vertex_training.credentials``: its
  variables, else application default credentials); a public repository still needs an
  identity that may call the API (any Google account). ``endpoint`` (``HOST:PORT``) points
  the client elsewhere: a loopback host gets a local channel, with no credentials unless
  some are set (the fake registry of ``vertex_training.testing.fake_registry``).
- Transient errors are retried with backoff, page by page; others become
  ``ImagesError`` with the fix.

The snapshot decides which prebuilt images exist (``vertex_training.catalog.images``):
an image name it holds is accepted, one it lacks refused. Dates (end of support, end of
availability) are not in the registry; they stay in the hand-read table. A snapshot
older than ``STALE_AFTER_DAYS`` is warned about.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from vertex_training.catalog._google import (
    RETRY_DEADLINE_S,
    catalog_credentials,
    credentials_advice,
    is_loopback,
    transient_retry,
)
from vertex_training.catalog.image_uris import (
    IMAGE_PATH,
    IMAGE_TAG,
    PREDICTION_PATH,
    REGISTRY_HOSTS,
)
from vertex_training.credentials import loopback_channel
from vertex_training.errors import VertexTrainingError

if TYPE_CHECKING:
    from google.cloud.artifactregistry_v1 import ArtifactRegistryClient

#: Where the snapshot lives in a project, beside the price snapshot.
SNAPSHOT_PATH: Final = Path("prices") / "images.json"
SNAPSHOT_FORMAT: Final = 1
#: A snapshot read longer ago than this is warned about, as prices are.
STALE_AFTER_DAYS: Final = 30
#: Google's own host for the API (the proto's ``default_host``).
DEFAULT_ENDPOINT: Final = "artifactregistry.googleapis.com"
#: The repository of each kind of prebuilt image, under ``vertex-ai``.
TRAINING, PREDICTION = IMAGE_PATH.split("/")[1], PREDICTION_PATH.split("/")[1]
#: The repositories of Google's prebuilt training images, by multi-region.
REPOSITORIES: Mapping[str, str] = {
    location: f"projects/{IMAGE_PATH.split('/')[0]}/locations/{location}/repositories/{TRAINING}"
    for location in REGISTRY_HOSTS
}
#: The repositories of its prebuilt prediction images, by multi-region.
PREDICTION_REPOSITORIES: Mapping[str, str] = {
    location: path.removesuffix(TRAINING) + PREDICTION for location, path in REPOSITORIES.items()
}
PAGE_SIZE: Final = 1000
PAGE_TIMEOUT_S: Final = 60.0
REFRESH_HINT: Final = (
    "run `make images` (vertex-training images refresh) with Google credentials to read "
    "Google's registry of prebuilt images into prices/images.json"
)
INSTALL_HINT: Final = ".venv/bin/python -m pip install google-cloud-artifact-registry==1.23.0"

#: Told after each page: (repository, images read so far, image names kept so far).
Progress = Callable[[str, int, int], None]


class ImagesError(VertexTrainingError):
    """The registry could not be read, or a snapshot of it is not one."""


@dataclass(frozen=True)
class RegistryImage:
    """One image name in one location, as the registry last showed it."""

    name: str  # under vertex-ai/training/, e.g. pytorch-gpu.2-5.py310
    location: str  # us, europe or asia
    digest: str
    tags: tuple[str, ...]
    uploaded: datetime.datetime
    #: Digests the registry holds for the name (each rebuild adds one).
    versions: int = 1
    #: ``training`` or ``prediction``: the repository the name is in.
    repository: str = TRAINING

    @property
    def uri(self) -> str:
        """By the ``latest`` tag when it has it, else by digest."""
        path = IMAGE_PATH if self.repository == TRAINING else PREDICTION_PATH
        base = f"{REGISTRY_HOSTS[self.location]}/{path}/{self.name}"
        return f"{base}:{IMAGE_TAG}" if IMAGE_TAG in self.tags else f"{base}@{self.digest}"


@dataclass(frozen=True)
class RegistrySnapshot:
    """Google's prebuilt training images, as read on ``read_at`` from ``source``."""

    read_at: datetime.datetime
    source: str
    repositories: tuple[str, ...]
    images: tuple[RegistryImage, ...]
    _by_key: dict[tuple[str, str, str], RegistryImage] = field(
        default_factory=dict, compare=False, repr=False
    )

    def __post_init__(self) -> None:
        self._by_key.update({(i.name, i.location, i.repository): i for i in self.images})

    @property
    def read_date(self) -> datetime.date:
        return self.read_at.astimezone(datetime.UTC).date()

    def holds(
        self, name: str, location: str | None = None, repository: str = TRAINING
    ) -> RegistryImage | None:
        """The image ``name`` of ``repository`` in ``location`` (any location when None),
        or None."""
        if location is not None:
            return self._by_key.get((name, location, repository))
        return next((i for i in self.images if (i.name, i.repository) == (name, repository)), None)

    def names(self, repository: str = TRAINING) -> list[str]:
        """Every image name ``repository`` holds anywhere, sorted."""
        return sorted({i.name for i in self.images if i.repository == repository})

    def read_repository(self, repository: str) -> bool:
        """Whether the snapshot read ``repository`` (one made before prediction images
        were read holds none of them, and says nothing of which exist)."""
        return any(r.endswith(f"/repositories/{repository}") for r in self.repositories)

    def describe(self) -> str:
        """'Google's registry (read 2026-11-26 from artifactregistry.googleapis.com)'."""
        return f"Google's registry (read {self.read_date} from {self.source})"

    def stale_warning(self, today: datetime.date) -> str | None:
        """A warning when the snapshot is older than ``STALE_AFTER_DAYS``, else None."""
        age = (today - self.read_date).days
        if age <= STALE_AFTER_DAYS:
            return None
        return (
            f"the snapshot of Google's registry of prebuilt images was read {self.read_date}, "
            f"{age} days ago (more than {STALE_AFTER_DAYS}): {REFRESH_HINT}"
        )


# ---------------------------------------------------------------------- image names

_NAME_RE = re.compile(
    r"(?P<framework>tf|pytorch|sklearn|xgboost)-(?P<kind>cpu|gpu|tpu|xla)"
    r"\.(?P<major>\d+)-(?P<minor>\d+)(?:\.(?:py|cp)(?P<python>3\d+))?"
)
_FRAMEWORKS: Mapping[str, str] = {
    "tf": "tensorflow",
    "pytorch": "pytorch",
    "sklearn": "sklearn",
    "xgboost": "xgboost",
}
#: Google names PyTorch's CPU images pytorch-xla (VERTEX-NOTES; the table's rows agree).
_KINDS: Mapping[str, str] = {"cpu": "cpu", "gpu": "gpu", "tpu": "tpu", "xla": "cpu"}


@dataclass(frozen=True)
class ImageName:
    """What a prebuilt training image's name says: framework, MAJOR.MINOR, kind, Python."""

    framework: str
    version: str
    kind: str
    python: str | None
    #: The image's name, when it came from one.
    name: str = ""


def parse_name(name: str) -> ImageName | None:
    """``pytorch-gpu.2-5.py310`` -> pytorch 2.5 gpu 3.10; None for a name of another form."""
    match = _NAME_RE.fullmatch(name)
    if match is None:
        return None
    python = match["python"]
    return ImageName(
        framework=_FRAMEWORKS[match["framework"]],
        version=f"{match['major']}.{match['minor']}",
        kind=_KINDS[match["kind"]],
        python=f"{python[0]}.{python[1:]}" if python else None,
        name=name,
    )


def version_distance(a: str, b: str) -> tuple[int, int]:
    """How far two MAJOR.MINOR versions are apart: by major, then by minor."""
    (a_major, a_minor), (b_major, b_minor) = (
        tuple(int(n) for n in v.split(".")[:2]) for v in (a, b)
    )
    return abs(a_major - b_major), abs(a_minor - b_minor)


# --------------------------------------------------------------- the active snapshot

#: The snapshot lookups read: set by ``using``; unset, the one found from the working
#: directory (``find_snapshot``).
_ACTIVE: ContextVar[tuple[RegistrySnapshot | None] | None] = ContextVar(
    "registry_snapshot", default=None
)
_LOADED: dict[Path, tuple[float, RegistrySnapshot]] = {}


@contextmanager
def using(snapshot: RegistrySnapshot | None) -> Iterator[None]:
    """Within the block, lookups read ``snapshot`` (None: no snapshot at all)."""
    token = _ACTIVE.set((snapshot,))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active() -> RegistrySnapshot | None:
    """The snapshot in use: ``using``'s, else the working directory's project's."""
    chosen = _ACTIVE.get()
    if chosen is not None:
        return chosen[0]
    path = find_snapshot(Path.cwd())
    return load_cached(path) if path is not None else None


def find_snapshot(start: Path) -> Path | None:
    """``prices/images.json`` of the project enclosing ``start`` (the nearest folder with
    a Pulumi.yaml), if it has one."""
    for folder in (start, *start.parents):
        if (folder / "Pulumi.yaml").is_file():
            candidate = folder / SNAPSHOT_PATH
            return candidate if candidate.is_file() else None
    return None


def load_cached(path: Path) -> RegistrySnapshot:
    """The snapshot in ``path``, read again only when the file changed."""
    mtime = path.stat().st_mtime
    cached = _LOADED.get(path)
    if cached is None or cached[0] != mtime:
        cached = (mtime, load_snapshot(path))
        _LOADED[path] = cached
    return cached[1]


def snapshot_path(project_dir: Path) -> Path:
    return project_dir / SNAPSHOT_PATH


# ------------------------------------------------------------------------ JSON form


def to_json(snapshot: RegistrySnapshot) -> dict[str, Any]:
    return {
        "format": SNAPSHOT_FORMAT,
        "read_at": snapshot.read_at.astimezone(datetime.UTC).isoformat(),
        "source": snapshot.source,
        "repositories": list(snapshot.repositories),
        "images": [
            {
                "name": i.name,
                "location": i.location,
                "digest": i.digest,
                "tags": sorted(i.tags),
                "uploaded": i.uploaded.astimezone(datetime.UTC).isoformat(),
                "versions": i.versions,
                # Written for a prediction image only: a training image's entry reads as
                # it did before prediction images were read.
                **({"repository": i.repository} if i.repository != TRAINING else {}),
            }
            for i in sorted(snapshot.images, key=lambda i: (i.repository, i.name, i.location))
        ],
    }


def save_snapshot(snapshot: RegistrySnapshot, path: Path) -> None:
    """Write ``snapshot`` to ``path`` (its folder made), in one stable, reviewable layout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(to_json(snapshot), indent=1) + "\n", encoding="utf-8")
    temporary.replace(path)


def load_snapshot(path: Path) -> RegistrySnapshot:
    """The snapshot in ``path``; ``ImagesError`` naming the bad entry and the fix."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ImagesError(f"{path}: cannot be read ({exc}): {REFRESH_HINT}") from None
    try:
        if document["format"] != SNAPSHOT_FORMAT:
            raise ValueError(f"format {document['format']!r}, not {SNAPSHOT_FORMAT}")
        images = tuple(
            RegistryImage(
                name=str(entry["name"]),
                location=str(entry["location"]),
                digest=str(entry["digest"]),
                tags=tuple(str(t) for t in entry["tags"]),
                uploaded=datetime.datetime.fromisoformat(entry["uploaded"]),
                versions=int(entry.get("versions", 1)),
                repository=str(entry.get("repository", TRAINING)),
            )
            for entry in document["images"]
        )
        return RegistrySnapshot(
            read_at=datetime.datetime.fromisoformat(document["read_at"]),
            source=str(document["source"]),
            repositories=tuple(document["repositories"]),
            images=images,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ImagesError(
            f"{path}: not a snapshot of Google's registry ({exc}): {REFRESH_HINT}"
        ) from None


# -------------------------------------------------------------------------- refresh


def _artifact_registry() -> Any:
    try:
        from google.cloud import artifactregistry_v1
    except ImportError:
        raise ImagesError(
            "reading Google's registry needs google-cloud-artifact-registry, which is not "
            f"installed: {INSTALL_HINT}"
        ) from None
    return artifactregistry_v1


def make_client(endpoint: str | None = None) -> ArtifactRegistryClient:
    """A registry client for ``endpoint`` (default: Google's), with the credentials
    pulumi-gcp would use (``catalog_credentials``)."""
    module = _artifact_registry()
    try:
        credentials = catalog_credentials(endpoint)
    except Exception as exc:  # CredentialsError, google.auth's errors
        raise ImagesError(
            credentials_advice(exc, "registry of prebuilt images", api_key=False)
        ) from exc
    if endpoint and is_loopback(endpoint):
        from google.cloud.artifactregistry_v1.services.artifact_registry.transports import (
            ArtifactRegistryGrpcTransport,
        )

        channel = loopback_channel(endpoint, credentials)
        client: ArtifactRegistryClient = module.ArtifactRegistryClient(
            transport=ArtifactRegistryGrpcTransport(channel=channel)
        )
        return client
    try:
        client = module.ArtifactRegistryClient(
            credentials=credentials,
            client_options={"api_endpoint": endpoint} if endpoint else None,
        )
    except Exception as exc:  # google.auth's DefaultCredentialsError and kin
        raise ImagesError(
            credentials_advice(exc, "registry of prebuilt images", api_key=False)
        ) from exc
    return client


def refresh(
    *,
    client: ArtifactRegistryClient | None = None,
    endpoint: str | None = None,
    locations: Sequence[str] = tuple(REPOSITORIES),
    progress: Progress | None = None,
    now: Callable[[], datetime.datetime] | None = None,
) -> RegistrySnapshot:
    """List the training and prediction images of each location of ``locations`` into a
    snapshot."""
    from google.api_core import exceptions

    clock = now or (lambda: datetime.datetime.now(datetime.UTC))
    registry = client if client is not None else make_client(endpoint)
    kept: list[RegistryImage] = []
    read = [
        (location, repositories[location])
        for location in locations
        for repositories in (REPOSITORIES, PREDICTION_REPOSITORIES)
    ]
    for location, repository in read:
        try:
            kept += _read_repository(registry, repository, location, progress)
        except exceptions.GoogleAPICallError as exc:
            refused = (exceptions.PermissionDenied, exceptions.Unauthenticated)
            if isinstance(exc, refused):
                raise ImagesError(
                    f"{repository}: {exc.message}: "
                    f"{credentials_advice(exc, 'registry of prebuilt images', api_key=False)}"
                ) from exc
            code = exc.grpc_status_code.name if exc.grpc_status_code is not None else exc.code
            raise ImagesError(f"{repository}: the registry answered {code} {exc.message}") from exc
        except exceptions.RetryError as exc:
            raise ImagesError(
                f"{repository}: the registry kept failing for {RETRY_DEADLINE_S:g}s "
                f"({exc.cause}); try again later"
            ) from exc
    return RegistrySnapshot(
        read_at=clock(),
        source=endpoint or DEFAULT_ENDPOINT,
        repositories=tuple(repository for _, repository in read),
        images=tuple(kept),
    )


def _read_repository(
    registry: Any, repository: str, location: str, progress: Progress | None
) -> list[RegistryImage]:
    pager = registry.list_docker_images(
        request={"parent": repository, "page_size": PAGE_SIZE},
        retry=transient_retry(),
        timeout=PAGE_TIMEOUT_S,
    )
    by_name: dict[str, list[Any]] = {}
    read = 0
    for page in pager.pages:
        for image in type(page).pb(page).docker_images:
            read += 1
            name, _, digest = image.uri.rpartition("/")[2].partition("@")
            by_name.setdefault(name, []).append((digest, image))
        if progress is not None:
            progress(repository, read, len(by_name))
    kind = repository.rsplit("/", 1)[-1]
    return [_kept(name, location, found, kind) for name, found in sorted(by_name.items())]


def _kept(
    name: str, location: str, found: Iterable[tuple[str, Any]], repository: str
) -> RegistryImage:
    """The digest tagged ``latest`` (else the newest upload) of one image name."""
    entries = list(found)
    tagged = [e for e in entries if IMAGE_TAG in e[1].tags]
    digest, image = tagged[0] if tagged else max(entries, key=lambda e: e[1].upload_time.seconds)
    return RegistryImage(
        name=name,
        location=location,
        digest=digest,
        tags=tuple(sorted(image.tags)),
        uploaded=image.upload_time.ToDatetime(datetime.UTC),
        versions=len(entries),
        repository=repository,
    )
