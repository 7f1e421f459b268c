"""Generate benchmarks/eval/matching_set.json, the local matcher's evaluation set.

Where the dialog comes from: the English part of the `chatterbot-corpus` package on PyPI
(version 1.3.3, by Gunther Cox, BSD licence per its package metadata), YAML files of short
dialogs filed under topic folders (ai.yml, food.yml, sports.yml, ...). Nobody on this team
wrote a line of it. Only this script needs the package, and only to regenerate the set:

    python3.11 -m venv /tmp/corpus && /tmp/corpus/bin/pip install chatterbot-corpus==1.3.3 pyyaml
    /tmp/corpus/bin/python benchmarks/eval/make_matching_set.py
    /tmp/corpus/bin/python benchmarks/eval/make_matching_set.py --digressions

The committed JSON files are what `make bench` reads (no download at bench time).

How the set is made (seeded, so the output is the same on every run):

- Each dialog of a topic file becomes exchanges: its lines alternate user / assistant, and
  a new exchange starts at each user line. Every exchange carries its file's topic.
- Chit-chat (greetings, conversations, gossip) is mixed in as exchanges of no topic: no
  criterion should match them.
- Each topic's dialogs are split into two disjoint pools (by their first line, so the
  same question never lands in both): "tune" and "test". A conversation draws from one
  pool only, so the half reported on holds no dialog the thresholds were tuned on.
- A conversation mixes 5 topics (at most one of each group of overlapping files: the
  tech group ai/coding/tech support, the mind group emotion/psychology), up to 12
  exchanges each, in 2-3 runs per topic interleaved with chit-chat: 50-80 exchanges.
- Criteria, per present topic: one with the topic's own word ("everything about
  food") and one paraphrase without it ("what we said about eating and drinking");
  plus 3 for topics that are absent (none of their group present), which must match
  nothing. The wording of the criteria was written once, before any tuning, and is the
  only part of the set written by the team.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import yaml  # only here: the bench reads the JSON

HERE = Path(__file__).resolve().parent
OUT = HERE / "matching_set.json"
# The second set (`--digressions`): topics of 2, 3, 6, 9 or 12 exchanges, so that short
# asides (a user forgets a two-exchange digression as often as a long thread) are tried
# too; the first set's topics run 4-12 exchanges.
OUT_DIGRESSIONS = HERE / "matching_set_digressions.json"
DIGRESSION_SIZES = [2, 3, 6, 9, 12]
DIGRESSIONS_SEED = 20240612
SEED = 20240611
CONVERSATIONS_PER_HALF = 12
TOPICS_PER_CONVERSATION = 5
MAX_PER_TOPIC = 12
ABSENT_PER_CONVERSATION = 3

# topic -> (corpus file, words a user would name it by, paraphrases without those words)
TOPICS: dict[str, tuple[str, list[str], list[str]]] = {
    "ai": ("ai.yml", ["artificial intelligence", "AI"],
           ["whether machines can think or feel like people"]),
    "coding": ("coding.yml", ["coding"], ["programming languages and writing software"]),
    "tech_support": ("tech_support.yml", ["tech support"],
                     ["fixing problems with a computer, a printer or the network"]),
    "emotion": ("emotion.yml", ["emotions"], ["feelings such as being happy, sad or angry"]),
    "psychology": ("psychology.yml", ["psychology"], ["the mind and human behaviour"]),
    "food": ("food.yml", ["food"], ["eating and drinking"]),
    "history": ("history.yml", ["history"], ["events of the past, wars and old empires"]),
    "literature": ("literature.yml", ["literature"], ["books, novels, poems and their authors"]),
    "money": ("money.yml", ["money"], ["finance, banks, wages and investing"]),
    "movies": ("movies.yml", ["movies"], ["films, actors and the cinema"]),
    "politics": ("politics.yml", ["politics"], ["government, elections and parties"]),
    "science": ("science.yml", ["science"], ["physics, chemistry and biology"]),
    "sports": ("sports.yml", ["sports"], ["football, basketball and other games athletes play"]),
}
GROUPS = [{"ai", "coding", "tech_support"}, {"emotion", "psychology"}]
CHITCHAT = ["greetings.yml", "conversations.yml", "gossip.yml"]
WORD_TEMPLATES = ["everything about {}", "the {} discussion", "what we said about {}", "{}",
                  "the part about {}"]
PARAPHRASE_TEMPLATES = ["everything about {}", "what we said about {}",
                        "the part where we talked about {}", "{}"]


def corpus_dir() -> Path:
    try:
        import chatterbot_corpus
    except ImportError:
        sys.exit("Error: needs chatterbot-corpus==1.3.3 (see this file's docstring)")
    return Path(chatterbot_corpus.__file__).parent / "data" / "english"


def dialogs(path: Path) -> list[list[str]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [[str(line).strip() for line in d if str(line).strip()]
            for d in data.get("conversations", []) if len(d) >= 2]


def exchanges(dialog: list[str]) -> list[list[dict]]:
    out: list[list[dict]] = []
    for i, text in enumerate(dialog):
        role = "user" if i % 2 == 0 else "assistant"
        if role == "user":
            out.append([])
        out[-1].append({"role": role, "text": text})
    return out


def split_pools(items: list[list[str]], rng: random.Random) -> dict[str, list[list[str]]]:
    """Two disjoint halves, split by first line (a repeated question stays in one half)."""
    firsts = sorted({d[0].lower() for d in items})
    rng.shuffle(firsts)
    tune = set(firsts[: (len(firsts) + 1) // 2])
    return {"tune": [d for d in items if d[0].lower() in tune],
            "test": [d for d in items if d[0].lower() not in tune]}


def group_of(topic: str) -> set[str]:
    return next((g for g in GROUPS if topic in g), {topic})


def pick_topics(rng: random.Random) -> list[str]:
    chosen: list[str] = []
    for topic in rng.sample(sorted(TOPICS), len(TOPICS)):
        if not group_of(topic) & set(chosen):
            chosen.append(topic)
        if len(chosen) == TOPICS_PER_CONVERSATION:
            break
    return chosen


def conversation(rng: random.Random, pools: dict[str, list[list[str]]],
                 chat: list[list[str]], digressions: bool) -> tuple[list[dict], list[str]]:
    topics = pick_topics(rng)
    runs: list[list[list[dict]]] = []
    for topic in topics:
        size = rng.choice(DIGRESSION_SIZES) if digressions else MAX_PER_TOPIC
        picked = rng.sample(pools[topic], min(size, len(pools[topic])))
        exs = [[dict(m, topic=topic) for m in ex] for d in picked for ex in exchanges(d)]
        exs = exs[:size]
        parts = (1 if len(exs) < 4 else rng.randint(2, 3)) if digressions else rng.randint(2, 3)
        cuts = sorted(rng.sample(range(1, len(exs)), min(parts - 1, len(exs) - 1)))
        for a, b in zip([0, *cuts], [*cuts, len(exs)]):
            runs.append(exs[a:b])
    rng.shuffle(runs)
    messages: list[dict] = []
    for run in runs:
        for ex in run:
            messages.extend(ex)
        if rng.random() < 0.6:  # some chit-chat between topics
            for d in rng.sample(chat, rng.randint(1, 2)):
                for ex in exchanges(d):
                    messages.extend(dict(m, topic=None) for m in ex)
    return messages, topics


def criteria(rng: random.Random, present: list[str]) -> list[dict]:
    out = []
    for topic in present:
        _, words, paraphrases = TOPICS[topic]
        out.append({"text": rng.choice(WORD_TEMPLATES).format(rng.choice(words)),
                    "topic": topic, "kind": "word"})
        out.append({"text": rng.choice(PARAPHRASE_TEMPLATES).format(rng.choice(paraphrases)),
                    "topic": topic, "kind": "paraphrase"})
    taken = set().union(*(group_of(t) for t in present))
    absent = [t for t in sorted(TOPICS) if t not in taken]
    for topic in rng.sample(absent, min(ABSENT_PER_CONVERSATION, len(absent))):
        _, words, paraphrases = TOPICS[topic]
        if rng.random() < 0.5:
            text = rng.choice(WORD_TEMPLATES).format(rng.choice(words))
        else:
            text = rng.choice(PARAPHRASE_TEMPLATES).format(rng.choice(paraphrases))
        out.append({"text": text, "topic": topic, "kind": "absent"})
    return out


def main() -> None:
    digressions = "--digressions" in sys.argv
    out = OUT_DIGRESSIONS if digressions else OUT
    root = corpus_dir()
    rng = random.Random(DIGRESSIONS_SEED if digressions else SEED)
    pools: dict[str, dict[str, list[list[str]]]] = {"tune": {}, "test": {}}
    for topic, (name, _, _) in TOPICS.items():
        halves = split_pools(dialogs(root / name), rng)
        for half in pools:
            pools[half][topic] = halves[half]
    chat_halves = split_pools([d for n in CHITCHAT for d in dialogs(root / n)], rng)
    conversations = []
    for half in ("tune", "test"):
        for _ in range(CONVERSATIONS_PER_HALF):
            messages, present = conversation(rng, pools[half], chat_halves[half], digressions)
            conversations.append({"half": half, "topics": present, "messages": messages,
                                  "criteria": criteria(rng, present)})
    source = ("chatterbot-corpus 1.3.3 (PyPI), English topic files; BSD licence; "
              "generated by benchmarks/eval/make_matching_set.py")
    lines = ",\n".join(json.dumps(c, ensure_ascii=False, separators=(",", ":"))
                       for c in conversations)
    seed = DIGRESSIONS_SEED if digressions else SEED
    out.write_text(f'{{"source": {json.dumps(source)}, "seed": {seed}, "conversations": [\n'
                   f"{lines}\n]}}\n", encoding="utf-8")  # one conversation a line
    sizes = [len(c["messages"]) for c in conversations]
    print(f"{out}: {len(conversations)} conversations, {min(sizes)}-{max(sizes)} messages, "
          f"{sum(len(c['criteria']) for c in conversations)} criteria")


if __name__ == "__main__":
    main()
