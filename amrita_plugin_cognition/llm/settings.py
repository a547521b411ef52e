"""Settings of the LLM gateway (``[llm]`` in the configuration)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class LLMSettings(BaseModel):
    #: Strict like every section of the configuration (``config_schema._Settings``): a value of another type is refused.
    model_config = ConfigDict(extra="forbid", strict=True)

    #: Name of the amrita_core model preset every background LLM call uses; empty = the chat's
    #: default preset (Amrita's ``preset`` in ``chat/config.toml``).
    preset: str = ""
    #: One call (one attempt) gives up after this long.
    timeout_seconds: float = Field(60.0, gt=0, le=600)
    #: Attempts after the first one, with exponential backoff and jitter.
    max_retries: int = Field(2, ge=0, le=10)
    backoff_initial_seconds: float = Field(1.0, ge=0, le=60)
    backoff_max_seconds: float = Field(30.0, ge=0, le=600)
