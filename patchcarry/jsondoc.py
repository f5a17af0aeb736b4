"""Evidence files: JSON checked against its schema on every write and read (no bad file is used)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from patchcarry import inputs
from patchcarry.errors import BadInputError


@functools.cache
def _validator(schema: Path) -> Any:
    """`schema`'s validator, the schema itself checked once a process (most of a
    `jsonschema.validate` call is checking the schema against its metaschema again)."""
    import jsonschema  # type: ignore[import-untyped]

    document = json.loads(schema.read_text())
    cls = jsonschema.validators.validator_for(document)
    cls.check_schema(document)
    return cls(document)


def validate(doc: dict[str, Any], schema: Path) -> None:
    """Raise BadInputError naming the first place `doc` violates `schema` (the error
    `jsonschema.validate` raises: the best match)."""
    import jsonschema

    exc = jsonschema.exceptions.best_match(_validator(schema).iter_errors(doc))
    if exc is not None:
        where = "/".join(str(p) for p in exc.absolute_path) or "(top level)"
        raise BadInputError(f"evidence does not match {schema.name} at {where}: {exc.message}")


def write(doc: dict[str, Any], path: Path, schema: Path, *, indent: int, sort_keys: bool) -> Path:
    """Validate, then write `path` (its folder made when missing)."""
    validate(doc, schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=indent, sort_keys=sort_keys) + "\n")
    return path


def load(path: Path, schema: Path) -> dict[str, Any]:
    """Read and validate an evidence file."""
    doc = inputs.read_json(Path(path), "evidence file")
    if not isinstance(doc, dict):
        raise BadInputError(f"{path}: evidence file is not a JSON object")
    validate(doc, schema)
    return doc
