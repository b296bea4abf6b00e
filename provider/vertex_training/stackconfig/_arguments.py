"""What a key's model says of the argument a program gives for it: marks on the fields of
the stack config models that ``vertex_training.stackconfig.typed_arguments`` writes the Python
API's typed dictionaries (``resources/arguments.py``) from. None of them changes what a
model accepts; pydantic passes them by.

- ``Later[T]`` (or ``Annotated[T, LATER]``): the value may be known only later, so a
  program may give a Pulumi Output (a bucket's URL, a network's ID) for it, and for each
  item of a list or mapping of it; not for a nested model, whose own keys say. A key
  without it takes a value the provider needs at preview (``wait``, ``backend``, a study).
- A validator's ``json_schema_input_type`` (pydantic's ``BeforeValidator(...,
  json_schema_input_type=str | int)``): what the key takes before the validator turns it
  into what the model holds (a duration's text or seconds, a shorthand); without it, the
  key takes what the model holds.
- ``Takes(name)``: the model, by its class name, of a key the model holds as any value
  because another module checks it (``study``), where that model cannot be imported.
- ``NO_ARGUMENT``: a stack config key a program does not give (the platform's ``enabled``
  and ``existing``: a program makes a TrainingPlatform or does not).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Annotated, TypeVar

T = TypeVar("T")


class Mark(Enum):
    """A mark without a value."""

    #: The value may be a Pulumi Output in a program (``Later``).
    LATER = "later"
    #: Not an argument of a program.
    NO_ARGUMENT = "no argument"


LATER = Mark.LATER
NO_ARGUMENT = Mark.NO_ARGUMENT

#: ``Later[str]``: text a program may give as a Pulumi Output.
Later = Annotated[T, LATER]


@dataclass(frozen=True)
class Takes:
    """The model (its class name) that checks a key its own model holds as any value."""

    model: str
