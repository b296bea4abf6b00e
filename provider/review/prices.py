"""What Vertex AI custom training costs: node-hour prices, by region and scheduling strategy.

This module is data, like ``provider.catalog.machines``: ``provider.review.cost`` looks prices up
here and decides nothing else. A price that is not here is *unknown* to the estimate (shown
with its reason, never as zero): no row is guessed, derived from another region, or copied
from Compute Engine's own (lower) prices.

Sources, as read on 2026-11-23 (``PRICES_DATE``), with the search tool over stored copies
of public pages (no live fetch):

- Google Cloud, "Vertex AI pricing", section "Custom-trained models" / training
  (https://cloud.google.com/vertex-ai/pricing, also served as
  https://cloud.google.com/products/gemini-enterprise-agent-platform/pricing). The stored
  copies of that page that the search tool returns hold only its opening (the AutoML
  tables); the training tables lie past what it shows. The one training figure below was
  therefore read as quoted verbatim from that page by others, each naming the page and the
  day they read it (see ``VERTEX_PRICING_QUOTED``). Its opening also says that Vertex AI
  costs "remain the same as they are for the legacy AI Platform" products, with exceptions
  for prediction only.
- Google Cloud, "AI Platform Training pricing" (https://cloud.google.com/ml-engine/docs/pricing),
  the legacy product's page: found, but left out. Its Americas table ("$0.49 per hour, per
  training unit"; n1-standard-4 $0.1900) disagrees with the Vertex AI page's own figure
  for the same machine ($0.21849885 in us-central1), so it is not today's Vertex price.

What the table does not cover (each shows as unknown): every region but us-central1,
every machine but n1-standard-4, every accelerator (GPUs and TPUs), TPU slices, and every
SPOT or FLEX_START price. ``scripts/refresh_prices.py`` prints candidate rows from the
live page for a person with network access to check and paste here (docs/cost.md says how).

Prices are USD per node hour (one replica of the machine, or one accelerator, for one hour),
list prices without savings plans or committed-use discounts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

PRICES_DATE = "2026-11-23"

#: Scheduling strategies a price applies to (aiplatform v1 ``Scheduling.Strategy``).
STRATEGIES: tuple[str, ...] = ("STANDARD", "SPOT", "FLEX_START")
#: The strategy of a job whose ``scheduling.strategy`` is unset.
DEFAULT_STRATEGY = "STANDARD"

Kind = Literal["machine", "accelerator"]


@dataclass(frozen=True)
class Source:
    """Where a block of prices was read, when, and how."""

    #: The pricing page the figures are Google's.
    url: str
    #: The date they were read (ISO 8601).
    read: str
    #: How they were read, and anything a reader must know about them (a regional note, a
    #: multiplier, a per-vCPU figure turned into a per-machine one).
    how: str


@dataclass(frozen=True)
class Price:
    """One price row: one machine type or accelerator, in one region, for some strategies."""

    #: A machine type (``n1-standard-4``) or an ``AcceleratorType`` enum name.
    item: str
    kind: Kind
    region: str
    #: USD per node hour: one replica of the machine, or one accelerator.
    usd_per_hour: float
    #: The strategies this price applies to; a separate row where SPOT / FLEX_START differ.
    strategies: tuple[str, ...]
    source: Source


# ------------------------------------------------------------------------------ sources

VERTEX_PRICING_URL = "https://cloud.google.com/vertex-ai/pricing"

#: The Vertex AI pricing page's training table, as others quoted it verbatim.
VERTEX_PRICING_QUOTED = Source(
    url=VERTEX_PRICING_URL,
    read=PRICES_DATE,
    how=(
        "Read 2026-11-23 with the search tool. The stored copies of the page show only its "
        "opening, not the training table, so the figure is the page's as quoted verbatim in "
        "api-evangelist/google-vertex-ai plans/google-vertex-ai-plans-pricing.yml (page "
        "fetched 2026-10-07: 'Custom training n1-standard-4 $0.21849885 / 1 hour'; its "
        "harvester checks each price text against the fetched page) and, with the region, "
        "in two project notes citing the page: 'n1-standard-4 in Iowa (us-central1) at "
        "$0.21849885/hour without a savings-plan discount, checked September 6, 2026' and "
        "'n1-standard-4, us-central1, tabela Default, 2026-09-08'. Check it with "
        "scripts/refresh_prices.py."
    ),
)

# -------------------------------------------------------------------------------- table

#: Every price known here. Add rows by block, one ``Source`` a block.
PRICES: tuple[Price, ...] = (
    # Vertex AI pricing, custom training, Iowa (us-central1), on-demand.
    Price(
        item="n1-standard-4",
        kind="machine",
        region="us-central1",
        usd_per_hour=0.21849885,
        strategies=("STANDARD",),
        source=VERTEX_PRICING_QUOTED,
    ),
)


def _index(rows: tuple[Price, ...]) -> Mapping[tuple[Kind, str, str, str], Price]:
    """(kind, item, region, strategy) -> row; a duplicate key is a mistake in the table."""
    index: dict[tuple[Kind, str, str, str], Price] = {}
    for row in rows:
        for strategy in row.strategies:
            key = (row.kind, row.item, row.region, strategy)
            if strategy not in STRATEGIES:
                raise ValueError(f"price row {key}: unknown strategy {strategy!r}")
            if key in index:
                raise ValueError(f"price row {key} is in the table twice")
            index[key] = row
    return MappingProxyType(index)


@dataclass(frozen=True)
class PriceTable:
    """Prices looked up by what they price. ``PriceTable()`` is this module's table."""

    rows: tuple[Price, ...] = PRICES
    _by_key: Mapping[tuple[Kind, str, str, str], Price] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_key", _index(self.rows))

    def lookup(self, kind: Kind, item: str, region: str, strategy: str) -> Price | None:
        """The row pricing ``item`` in ``region`` under ``strategy``, or None."""
        return self._by_key.get((kind, item, region, strategy))

    def regions(self) -> tuple[str, ...]:
        """The regions with at least one price (sorted)."""
        return tuple(sorted({row.region for row in self.rows}))


#: This module's table.
TABLE = PriceTable()
