"""An agent run by the SDK's own Runner over several turns keeps its conversation in an
AttrflowSession, and a new process resumes it from the store: the model is handed the
earlier turns. The model is the SDK's scripted test model (agents.testing.ScriptedModel)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TURN = """
import asyncio, json, sys
from agents import Agent, Runner
from agents.testing import ScriptedModel, assistant_message
from attrflow.integrations.openai_agents import AttrflowSession

store, said, answer = sys.argv[1], sys.argv[2], sys.argv[3]

async def main():
    model = ScriptedModel([[assistant_message(answer)]])
    agent = Agent(name="concierge", instructions="Be brief.", model=model)
    async with AttrflowSession("conversation-7", store) as session:
        result = await Runner.run(agent, said, session=session)
    seen = model.calls[0].input
    print(json.dumps({"output": result.final_output, "seen": seen}, ensure_ascii=False))

asyncio.run(main())
"""


def text_of(item: dict[str, object]) -> str:
    content = item["content"]
    if isinstance(content, str):
        return content
    assert isinstance(content, list)
    return "".join(part["text"] for part in content)


def test_a_conversation_resumes_in_a_new_process(store_url: str, tmp_path: Path) -> None:
    turns = [
        ("Je m'appelle Zoé.", "Enchanté, Zoé."),
        ("I live in 東京.", "Noted: 東京."),
        ("Where do I live, and what is my name?", "Zoé, in 東京."),
    ]
    for number, (said, answer) in enumerate(turns):
        # Each turn in a process of its own: only the store carries the conversation.
        run = subprocess.run(
            [sys.executable, "-c", TURN, store_url, said, answer],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        outcome = json.loads(run.stdout)
        assert outcome["output"] == answer
        seen = [(item["role"], text_of(item)) for item in outcome["seen"]]
        earlier = [pair for s, a in turns[:number] for pair in (("user", s), ("assistant", a))]
        assert seen == [*earlier, ("user", said)]
