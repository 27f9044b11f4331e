"""LangGraph checkpointers on attrflow (``pip install 'attrflow[langgraph]'``):
:class:`AttrflowSaver` and :class:`AsyncAttrflowSaver`; see docs/agents.md."""

from attrflow.integrations.langgraph.saver import (
    DEFAULT_FLOW_ID,
    MAX_VALUE_BYTES,
    AsyncAttrflowSaver,
    AttrflowSaver,
)

__all__ = ["DEFAULT_FLOW_ID", "MAX_VALUE_BYTES", "AsyncAttrflowSaver", "AttrflowSaver"]
