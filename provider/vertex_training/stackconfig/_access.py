"""What a job reaches beyond its machines: reserved capacity (``reservation_affinity``),
GPU partitions (``gpu_partition_size``), file systems (``nfs_mounts``,
``lustre_mounts``), private networks (``psc_interface_config``), and the models and
protected artifact location of a job (``models``, ``protected_artifact_location_id``).

The keys as written (models), the rules on one key (validators), and the rules that need
the job around them (``check_pool_access``, ``check_job_access``). Each rule cites the
page or proto comment it comes from; ``catalog.machines`` holds the data (partition sizes
per GPU).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from vertex_training.api.bodies import SPECIFIC_RESERVATION
from vertex_training.catalog import machines
from vertex_training.stackconfig._arguments import Later
from vertex_training.stackconfig._constants import (
    _MODEL_RE,
    _NETWORK_ATTACHMENT_RE,
    _RESERVATION_RE,
    _RESOURCE_NAME_RE,
    FLEX_START,
)
from vertex_training.stackconfig._issues import Problem, invalid, one_of
from vertex_training.stackconfig._rules import NonEmptyText, _choice, _pattern

#: ``ReservationAffinity.key`` that targets a reservation by name (reservation_affinity.proto:
#: "To target a SPECIFIC_RESERVATION by name, use compute.googleapis.com/reservation-name as
#: the key and specify the name of your reservation as its value").
RESERVATION_NAME_KEY = "compute.googleapis.com/reservation-name"
AffinityType = Literal["NO_RESERVATION", "ANY_RESERVATION", "SPECIFIC_RESERVATION"]
AFFINITY_TYPES: tuple[AffinityType, ...] = (
    "NO_RESERVATION",
    "ANY_RESERVATION",
    "SPECIFIC_RESERVATION",
)
#: Google's pages behind the rules here.
RESERVATIONS_URL = "https://cloud.google.com/vertex-ai/docs/training/use-reservations"
PSC_INTERFACE_URL = "https://cloud.google.com/vertex-ai/docs/training/psc-i-egress"
NFS_URL = "https://cloud.google.com/vertex-ai/docs/training/train-nfs-share"
PRIVATE_IP_URL = "https://cloud.google.com/vertex-ai/docs/training/using-private-ip"


class _AccessModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _affinity_before(value: Any) -> Any:
    """``reservation_affinity: ANY_RESERVATION`` is short for ``{type: ANY_RESERVATION}``."""
    return {"type": value} if isinstance(value, str) else value


# ``reservation_affinity: {type: SPECIFIC_RESERVATION, values: [projects/P/zones/Z/
# reservations/N]}``: which Compute Engine reservation a pool's machines come from
# (MachineSpec .reservation_affinity). ``key`` defaults to
# ``compute.googleapis.com/reservation-name`` for a specific reservation, the only key
# Google documents.
class ReservationAffinityConfig(_AccessModel):
    """``reservation_affinity``: the Compute Engine reservation a pool's machines come from;
    ``values`` names a specific one (projects/P/zones/Z/reservations/NAME)."""

    type: Annotated[AffinityType, BeforeValidator(_choice(AFFINITY_TYPES))] = Field(
        description=(
            "`SPECIFIC_RESERVATION`, `ANY_RESERVATION` or `NO_RESERVATION` (the last two "
            "take no `key` and no `values`)"
        )
    )
    key: Later[NonEmptyText | None] = Field(
        None,
        description=(
            "with `SPECIFIC_RESERVATION`: `compute.googleapis.com/reservation-name` (the "
            "default, the only one allowed)"
        ),
    )
    values: Later[list[NonEmptyText] | None] = Field(
        None,
        description=(
            "with `SPECIFIC_RESERVATION`: the reservation's full name, "
            "`projects/P/zones/Z/reservations/NAME` (a reservation block or sub-block path "
            "works too; a bare name is warned about)"
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _values_as_list(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("values"), str):
            return {**data, "values": [data["values"]]}
        return data

    @model_validator(mode="after")
    def _type_and_values(self) -> ReservationAffinityConfig:
        problems: list[Problem] = []
        if self.type != SPECIFIC_RESERVATION:
            for name in ("key", "values"):
                if getattr(self, name) is not None:
                    problems.append(
                        (
                            (name,),
                            getattr(self, name),
                            f"{name} names a reservation, which only SPECIFIC_RESERVATION "
                            f"consumes; remove {name}, or write type: SPECIFIC_RESERVATION",
                        )
                    )
        else:
            if self.key is not None and self.key != RESERVATION_NAME_KEY:
                problems.append(
                    (
                        ("key",),
                        self.key,
                        f"a reservation is named by the key {RESERVATION_NAME_KEY} (the only "
                        "one Google documents): write that, or leave key out",
                    )
                )
            if not self.values:
                problems.append(
                    (
                        ("values",),
                        self.values,
                        "SPECIFIC_RESERVATION consumes the reservation named here: write its "
                        "full name, values: [projects/PROJECT/zones/ZONE/reservations/NAME] "
                        "(PROJECT is the owner's for a reservation shared with this one)",
                    )
                )
            for index, value in enumerate(self.values or []):
                if not (_RESOURCE_NAME_RE.fullmatch(value) or _RESERVATION_RE.fullmatch(value)):
                    problems.append(
                        (
                            ("values", index),
                            value,
                            "is not a reservation: write its name (lowercase letters, digits "
                            "and -, starting with a letter) or its full name projects/PROJECT"
                            "/zones/ZONE/reservations/NAME",
                        )
                    )
        if problems:
            raise invalid(problems[0][2], problems)
        return self

    @property
    def reservation_key(self) -> str | None:
        """The key the request carries: the name key for a specific reservation."""
        if self.type != SPECIFIC_RESERVATION:
            return None
        return self.key or RESERVATION_NAME_KEY


ReservationAffinityField = Annotated[
    ReservationAffinityConfig | None,
    BeforeValidator(
        _affinity_before, json_schema_input_type=AffinityType | ReservationAffinityConfig
    ),
]


def _ip_address(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise invalid(
            "must be the server's IP address, like 10.76.0.10 (Filestore shows it on the "
            "instance's page)"
        ) from None
    return value


def _mount_point(value: str) -> str:
    if "/" in value or value in ("", ".", "..") or "\0" in value:
        raise invalid(
            "is the name of the directory the file system appears at under /mnt/nfs/ (or "
            f"/mnt/lustre/): write one directory name such as data, with no / ({NFS_URL})"
        )
    return value


def _export_path(value: str) -> str:
    if not value.startswith("/"):
        raise invalid(f"is the path the server exports and starts with /: write /{value}")
    return value


# ``nfs_mounts: [{server: 10.76.0.10, path: /share, mount_point: data}]``: an NFS export
# (Filestore, for one) mounted at ``/mnt/nfs/<mount_point>`` in every replica of the pool
# (WorkerPoolSpec.nfs_mounts; NfsMount: server is the server's IP address, path starts with
# ``/``).
class NfsMountConfig(_AccessModel):
    """An NFS export mounted at ``/mnt/nfs/<mount_point>``."""

    server: Later[Annotated[str, AfterValidator(_ip_address)]] = Field(
        description="the NFS server's IP address"
    )
    path: Later[Annotated[str, AfterValidator(_export_path)]] = Field(
        description="the exported path, starting with `/`"
    )
    mount_point: Later[Annotated[str, AfterValidator(_mount_point)]] = Field(
        description=(
            "one directory name, unique in the pool: the export is at `/mnt/nfs/<mount_point>`"
        )
    )


# ``lustre_mounts: [{instance_ip, volume_handle, filesystem, mount_point}]``: a Managed
# Lustre instance mounted at ``/mnt/lustre/<mount_point>`` (WorkerPoolSpec .lustre_mounts;
# LustreMount: every field required).
class LustreMountConfig(_AccessModel):
    """A Managed Lustre instance mounted at ``/mnt/lustre/<mount_point>``."""

    instance_ip: Later[Annotated[str, AfterValidator(_ip_address)]] = Field(
        description="the Managed Lustre instance's IP address"
    )
    volume_handle: Later[NonEmptyText] = Field(description="the instance's volume handle")
    filesystem: Later[NonEmptyText] = Field(description="the instance's file system name")
    mount_point: Later[Annotated[str, AfterValidator(_mount_point)]] = Field(
        description=(
            "one directory name, unique in the pool: the instance is at `/mnt/lustre/<mount_point>`"
        )
    )


def _dns_domain(value: str) -> str:
    if not value.endswith("."):
        raise invalid(f'a peered DNS zone\'s suffix ends with a dot: write "{value}."')
    return value


# One entry of ``psc_interface_config.dns_peering_configs`` (DnsPeeringConfig: every field
# required; the domain ends with a dot).
class DnsPeeringConfig(_AccessModel):
    """A DNS zone (its suffix ends with a dot) resolved through a peered network."""

    domain: Later[Annotated[NonEmptyText, AfterValidator(_dns_domain)]] = Field(
        description="the DNS zone's suffix, ending with a dot"
    )
    target_project: Later[NonEmptyText] = Field(
        description="the project of the network that resolves it"
    )
    target_network: Later[NonEmptyText] = Field(description="the network that resolves it")


NetworkAttachmentName = Annotated[
    str,
    AfterValidator(
        _pattern(
            re.compile(f"{_RESOURCE_NAME_RE.pattern}|{_NETWORK_ATTACHMENT_RE.pattern}"),
            "my-attachment or projects/my-project/regions/us-central1/networkAttachments/"
            "my-attachment",
            "a network attachment's name or full name",
        )
    ),
]


# ``psc_interface_config: {network_attachment: my-attachment}``: the job reaches a VPC
# network through a Private Service Connect interface (CustomJobSpec .psc_interface_config;
# PscInterfaceConfig).
class PscInterfaceConfig(_AccessModel):
    """``psc_interface_config``: a VPC network reached through a network attachment."""

    network_attachment: Later[NetworkAttachmentName] = Field(
        description=(
            "the network attachment's name, or its full name "
            "`projects/P/regions/R/networkAttachments/N` in the job's region"
        )
    )
    dns_peering_configs: list[DnsPeeringConfig] | None = Field(
        None,
        description=(
            "DNS zones resolved through peered networks, each `{domain (ending with a dot),"
            " target_project, target_network}`"
        ),
    )


ModelName = Annotated[
    str,
    AfterValidator(
        _pattern(
            _MODEL_RE,
            "projects/my-project/locations/us-central1/models/123@2",
            "a Vertex AI Model resource name, with an optional @version or @alias",
        )
    ),
]

Fail = Callable[[Sequence[str | int], Any, str], None]


def check_pool_access(
    fail: Fail,
    warn: Fail,
    path: Sequence[str | int],
    *,
    region: str,
    vertex: bool,
    reservation: ReservationAffinityConfig | None,
    partition: str | None,
    accelerator: tuple[str, int] | None,
    strategy: str | None,
    persistent_resource: bool,
) -> bool:
    """The rules on a pool's reservation and GPU partitions that need the pool around
    them; True when none broke."""
    ok = True
    if reservation is not None and reservation.type == SPECIFIC_RESERVATION:
        for index, value in enumerate(reservation.values or []):
            match = _RESERVATION_RE.fullmatch(value)
            if match is None and vertex:
                warn(
                    (*path, "reservation_affinity", "values", index),
                    value,
                    "Vertex AI's reference asks for the reservation's full name (the proto's "
                    "comment on key says its name): if the job is refused, write "
                    f"projects/PROJECT/zones/ZONE/reservations/{value} ({RESERVATIONS_URL})",
                )
            if match and region and not match["zone"].startswith(f"{region}-"):
                fail(
                    (*path, "reservation_affinity", "values", index),
                    value,
                    f"the reservation is in zone {match['zone']}, outside the job's region "
                    f"{region}; a job consumes reservations of its own region's zones: "
                    f"set region: {match['zone'].rsplit('-', 1)[0]} or name a reservation "
                    f"in {region}",
                )
                ok = False
    if reservation is not None and reservation.type != "NO_RESERVATION" and vertex:
        if strategy == FLEX_START:
            fail(
                (*path, "reservation_affinity"),
                reservation.type,
                "flex-start (scheduling.strategy FLEX_START) provisions its own capacity "
                f"and does not run on a reservation ({RESERVATIONS_URL}): remove "
                "reservation_affinity, or the strategy",
            )
            ok = False
        if persistent_resource:
            fail(
                (*path, "reservation_affinity"),
                reservation.type,
                "a job on a persistent resource runs on that resource's machines, not on a "
                f"reservation ({RESERVATIONS_URL}): remove reservation_affinity, or "
                "persistent_resource_id",
            )
            ok = False
    if partition is not None:
        sizes = machines.GPU_PARTITION_SIZES.get(accelerator[0]) if accelerator else None
        if accelerator is None or sizes is None:
            with_sizes = one_of(sorted(machines.GPU_PARTITION_SIZES))
            fail(
                (*path, "gpu_partition_size"),
                partition,
                f"only {with_sizes} divide into partitions (multi-instance GPUs); this "
                f"pool has {accelerator[0] if accelerator else 'no GPU'}: give it one of "
                "those GPUs, or remove gpu_partition_size",
            )
            ok = False
        elif partition not in sizes:
            fail(
                (*path, "gpu_partition_size"),
                partition,
                f"{accelerator[0]} divides into {one_of(sizes)} partitions "
                f"({machines.GPU_PARTITIONS_URL}); write one of those",
            )
            ok = False
        elif accelerator[1] != 1:
            fail(
                (*path, "gpu_partition_size"),
                partition,
                f"a partitioned GPU is requested one at a time (MachineSpec.gpu_partition_size: "
                f"accelerator_count 1), not {accelerator[1]}: write accelerator.count: 1, "
                "or a machine with one GPU",
            )
            ok = False
    return ok


def check_mounts(
    fail: Fail,
    path: Sequence[str | int],
    nfs: Sequence[NfsMountConfig],
    lustre: Sequence[LustreMountConfig],
) -> bool:
    """Mount points are unique within each root (``/mnt/nfs``, ``/mnt/lustre``)."""
    ok = True
    points: dict[str, list[str]] = {
        "nfs_mounts": [m.mount_point for m in nfs],
        "lustre_mounts": [m.mount_point for m in lustre],
    }
    for key, written in points.items():
        for index, point in enumerate(written):
            if point in written[:index]:
                fail(
                    (*path, key, index, "mount_point"),
                    point,
                    "another mount of this pool already uses this mount point: give each "
                    "its own directory",
                )
                ok = False
    return ok


def check_job_access(
    fail: Fail,
    *,
    region: str,
    network: str | None,
    psc: PscInterfaceConfig | None,
    protected_location: str | None,
    nfs_paths: Sequence[tuple[str | int, ...]],
    gpus_by_pool: Sequence[tuple[Sequence[str | int], str]],
) -> None:
    """The rules on the job's private networking and protected artifacts."""
    for path, accelerator in gpus_by_pool:
        if network is not None and accelerator in machines.NO_VPC_PEERING_ACCELERATORS:
            fail(
                ("network",),
                network,
                f"Vertex AI does not peer VPC networks with {accelerator} machines (in "
                f"{path[0] if path else 'the primary pool'}; {PRIVATE_IP_URL}): reach the "
                "network through psc_interface_config: {network_attachment: NAME} instead",
            )
            break
    if psc is not None and region:
        match = _NETWORK_ATTACHMENT_RE.fullmatch(psc.network_attachment)
        if match and match["region"] != region:
            fail(
                ("psc_interface_config", "network_attachment"),
                psc.network_attachment,
                f"the network attachment is in {match['region']}, and a job attaches one of "
                f"its own region ({region}; {PSC_INTERFACE_URL}): create the attachment in "
                f"{region}, or set region: {match['region']}",
            )
    if network is None and psc is None:
        for path in nfs_paths:
            fail(
                path,
                None,
                "an NFS server is reached over the job's VPC network: set network (a peered "
                "VPC, projects/PROJECT_NUMBER/global/networks/NAME) or psc_interface_config "
                f"({NFS_URL})",
            )
    if protected_location is not None and region:
        if protected_location == region:
            fail(
                ("protected_artifact_location_id",),
                protected_location,
                "is the job's own region, where protected artifacts go anyway (CustomJobSpec: "
                "set it only when the location differs): remove it",
            )
        elif protected_location not in machines.TRAINING_REGIONS:
            fail(
                ("protected_artifact_location_id",),
                protected_location,
                "is not a Vertex AI location: write a region such as us-central1 or europe-west4",
            )
