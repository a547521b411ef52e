"""The tool schemas an agent run sends without filler (``llm/lean_schema.py``), for every argument
model of the cycle's tools and the driver's stop tool: amrita_core still takes the lean schema as
its own (``FunctionParametersSchema``, its argument validator compiles from it), no filler is left
(``Field <name>``, ``List item``, ``uniqueItems: false``, ``strict: false``), and as a JSON Schema
it accepts and rejects the same arguments as the full schema amrita_core projects (each checked
with ``jsonschema``, as a provider reads it), while the driver's pydantic model still rejects
what the lean schema let go (an id past a JSON number's exact range)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from amrita_core.tools.models import FunctionParametersSchema
from amrita_core.tools.schema import compile_parameters_model
from openai._compat import model_dump
from pydantic import BaseModel, ValidationError

from amrita_plugin_cognition.engine.cycle_tools import arguments
from amrita_plugin_cognition.llm import LLMGateway
from amrita_plugin_cognition.llm.agent_session import StopArguments
from amrita_plugin_cognition.llm.lean_schema import lean

MODELS = [
    model
    for model in vars(arguments).values()
    if isinstance(model, type) and issubclass(model, arguments._Args) and model is not arguments._Args
] + [StopArguments]

#: Arguments each model takes, and arguments each rejects (by the schema as well as the model).
GOOD: dict[str, list[dict[str, Any]]] = {
    "MemoryMergeArguments": [{"ids": [1, 2], "text": "合并", "importance": "high", "tags": ["a"]}],
    "MemoryUpdateArguments": [{"id": 3}, {"id": 3, "tags": ["出行"], "importance": "low"}],
    "PageArguments": [{}, {"offset": 0, "limit": 50}],
    "CardUpdateArguments": [
        {"entity_type": "user", "entity_id": "10001", "expected_version": "v1", "tags": [], "source_ids": [3]}
    ],
    "KnowledgeWriteArguments": [{"title": "群规", "body": "不刷屏", "source_ids": [4]}],
    "StopArguments": [{"summary": "没有改动"}],
}
BAD: dict[str, list[dict[str, Any]]] = {
    "MemoryMergeArguments": [
        {"ids": [1], "text": "合并", "importance": "high"},  # fewer than two
        {"ids": [1, 2], "text": "合并", "importance": "urgent"},  # not in the enum
        {"ids": [1, 2], "text": "", "importance": "high"},  # too short
        {"ids": [1, 2], "importance": "high"},  # required
        {"ids": [1, 2], "text": "合并", "importance": "high", "tags": [1]},  # item type
    ],
    "MemoryUpdateArguments": [{"id": 0}, {"id": "3"}, {}],
    "PageArguments": [{"limit": 51}, {"offset": -1}, {"limit": 1.5}],
    "CardUpdateArguments": [
        {"entity_type": "user", "entity_id": "abc", "expected_version": "v1", "source_ids": [3]},
        {"entity_type": "user", "entity_id": "10001", "expected_version": "v1", "source_ids": []},
    ],
    "KnowledgeWriteArguments": [{"title": "群规", "body": "不刷屏", "source_ids": []}],
    "StopArguments": [{"summary": "长" * 501}],
}


def _schemas(model: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The full and the lean tool schema, as the OpenAI client writes them out."""
    full = LLMGateway.tool_schema(model, "cycle_test", "测试")
    return model_dump(full, exclude_unset=True, mode="json"), model_dump(lean(full), exclude_unset=True, mode="json")


def _accepts(parameters: dict[str, Any], value: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(parameters).is_valid(value)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_amrita_core_takes_the_lean_schema_and_no_filler_is_left(model: type[BaseModel]) -> None:
    full, thin = _schemas(model)
    parameters = FunctionParametersSchema.model_validate(thin["function"]["parameters"])
    compile_parameters_model(parameters)  # amrita_core's own argument check builds from it
    text = json.dumps(thin, ensure_ascii=False)
    for filler in ('"Field ', '"List item"', '"uniqueItems": false', '"strict"', '"required": []', ".0,", ".0}"):
        assert filler not in text
    assert thin["function"]["name"] == full["function"]["name"] and thin["function"]["description"] == "测试"
    assert thin["type"] == "function" and thin["function"]["parameters"]["type"] == "object"
    assert set(thin["function"]["parameters"]["properties"]) == set(model.model_fields)
    assert thin["function"]["parameters"].get("required", []) == full["function"]["parameters"]["required"]
    assert len(text) < len(json.dumps(full, ensure_ascii=False))
    for name, field in model.model_fields.items():  # every real description stays
        if field.description:
            assert thin["function"]["parameters"]["properties"][name]["description"] == field.description


@pytest.mark.parametrize("name", sorted(set(GOOD) | set(BAD)))
def test_the_lean_schema_accepts_and_rejects_what_the_full_one_does(name: str) -> None:
    model = next(model for model in MODELS if model.__name__ == name)
    full, thin = (schema["function"]["parameters"] for schema in _schemas(model))
    for value in GOOD.get(name, []):
        assert _accepts(thin, value) and _accepts(full, value), value
        model.model_validate(value)
    for value in BAD.get(name, []):
        assert not _accepts(thin, value) and not _accepts(full, value), value
        with pytest.raises(ValidationError):
            model.model_validate(value)


def test_an_id_past_a_json_numbers_exact_range_is_still_refused_by_the_drivers_model() -> None:
    _, thin = _schemas(arguments.MemoryForgetArguments)
    assert thin["function"]["parameters"]["properties"]["id"] == {"type": "integer", "minimum": 1}
    with pytest.raises(ValidationError):
        arguments.MemoryForgetArguments.model_validate({"id": arguments.ID_MAX + 1, "reason": "错误"})
    arguments.MemoryForgetArguments.model_validate({"id": arguments.ID_MAX, "reason": "错误"})


def test_the_anthropic_adapter_reads_the_lean_parameters() -> None:
    """The Anthropic adapter dumps the parameters alone (``exclude_none``): lean as well."""
    tool = lean(LLMGateway.tool_schema(arguments.MemoryMergeArguments, "cycle_test", "测试"))
    parameters = tool.function.parameters.model_dump(exclude_none=True)
    assert parameters["properties"]["tags"] == {"type": "array", "items": {"type": "string"}, "maxItems": 10}
    assert "description" not in parameters["properties"]["importance"]
