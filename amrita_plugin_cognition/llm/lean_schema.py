"""The tool schemas an agent run sends, without the filler amrita_core's projection of a pydantic
model writes into them: a property's auto description (``Field <name>``), a list item's
(``List item``), ``uniqueItems: false``, ``strict: false``, an empty ``required``, whole bounds
written as floats (``1.0`` is written ``1``) and bounds past what a JSON number holds exactly
(a database id's ``2**63 - 1``, which amrita_core's float already rounded up). Types, enums,
bounds, patterns, defaults, real descriptions and ``required`` stay, so the schema asks for the
arguments it asked for before; the driver validates them with the same pydantic model as before,
which still holds every bound.

The schema stays an amrita_core ``ToolFunctionSchema`` (every adapter reads it as one); only how
it is written out changes, whoever writes it (the OpenAI client dumps the whole tool, the
Anthropic adapter its parameters)."""

from __future__ import annotations

from typing import Any

from amrita_core import ToolFunctionSchema
from amrita_core.tools.models import FunctionDefinitionSchema, FunctionParametersSchema
from pydantic import SerializerFunctionWrapHandler, model_serializer

#: The descriptions amrita_core writes when a field has none.
_AUTO_ITEM = "List item"
#: The numeric bounds amrita_core writes as floats.
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
#: The largest integer a JSON number (a double) holds exactly.
_EXACT = 2**53


def _bound(value: Any) -> Any:
    """A float bound that is a whole number, as an integer (``1`` rather than ``1.0``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def lean_property(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """One property's schema without filler (nested items and properties too)."""
    lean = {key: value for key, value in schema.items() if not (key == "uniqueItems" and value is False)}
    if lean.get("description") in (f"Field {name}", _AUTO_ITEM, "No description"):
        del lean["description"]
    for key in _BOUNDS:
        if key in lean and not isinstance(lean[key], bool):
            if abs(lean[key]) >= _EXACT:  # a database id's bound, already rounded by amrita_core's float
                del lean[key]
            else:
                lean[key] = _bound(lean[key])
    if isinstance(lean.get("items"), dict):
        lean["items"] = lean_property("", lean["items"])
    if isinstance(lean.get("properties"), dict):
        lean["properties"] = {key: lean_property(key, value) for key, value in lean["properties"].items()}
    if lean.get("required") == [] and "properties" in lean:
        del lean["required"]
    return lean


def lean_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """A function's parameters without filler (``properties`` stays, even when empty)."""
    lean = dict(schema)
    lean["properties"] = {key: lean_property(key, value) for key, value in (schema.get("properties") or {}).items()}
    if not lean.get("required"):
        lean.pop("required", None)
    return lean


def lean_tool(schema: dict[str, Any]) -> dict[str, Any]:
    """A whole tool's schema (``{"type": "function", "function": {...}}``) without filler."""
    lean = {key: value for key, value in schema.items() if not (key == "strict" and value is False)}
    function = dict(lean["function"])
    function["parameters"] = lean_parameters(function["parameters"])
    lean["function"] = function
    return lean


class _LeanParameters(FunctionParametersSchema):
    @model_serializer(mode="wrap")
    def _lean(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return lean_parameters(handler(self))


class _LeanTool(ToolFunctionSchema):
    @model_serializer(mode="wrap")
    def _lean(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return lean_tool(handler(self))


def lean(tool: ToolFunctionSchema) -> ToolFunctionSchema:
    """``tool`` as an amrita_core schema that writes itself out without filler."""
    function = tool.function
    parameters = _LeanParameters.model_validate(function.parameters.model_dump(exclude_none=True))
    definition = FunctionDefinitionSchema(name=function.name, description=function.description, parameters=parameters)
    return _LeanTool(type="function", function=definition, strict=tool.strict)
