"""Adapters that keep an agent framework's history in attrflow's chunked logs.

One module a framework, each a thin mapping of the framework's own storage contract onto
chunked logs, installed through an extra so the core package depends on neither:

- :mod:`attrflow.integrations.openai_agents`: ``AttrflowSession``, an OpenAI Agents SDK
  ``Session`` (``pip install 'attrflow[openai-agents]'``);
- :mod:`attrflow.integrations.langgraph`: ``AttrflowSaver`` and ``AsyncAttrflowSaver``,
  LangGraph checkpointers (``pip install 'attrflow[langgraph]'``).

docs/agents.md tells how to plug each in and what a crash mid-run leaves.
"""
