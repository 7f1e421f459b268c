"""Generate the local matcher's evaluation sets of issue 29 (benchmarks/eval/sets/*.json).

Three sets, built differently, from two dialog sources nobody on the team wrote:

- `tune.json`: the ONLY set thresholds are chosen on (benchmarks/matching_tune.py).
  Conversations from the tuning pools of both sources, criteria in the tuning wordings.
- `chatter.json` (reported): chatterbot-corpus dialogs of the other pool (no dialog of
  the tuning set), criteria in other wordings, conversations of 3-80 exchanges (the
  corpus holds a few dozen dialogs per topic: no longer conversation without repeats).
- `star.json` (reported): STAR dialogues (task-oriented, human-human, 13 domains, many
  dialogues switching domains) of the other pool, other wordings, conversations of 3 to
  1,000 exchanges made of whole dialogues (a short one of single exchanges).

Sources:
- chatterbot-corpus 1.3.3 (PyPI; Gunther Cox; BSD), its English topic files;
- STAR (RasaHQ/STAR, MIT; Mosig, Mehri & Kober 2020), converted in
  ../shared/eval-data/star/dialogues.jsonl (see its README).

    python3.11 -m venv /tmp/corpus && /tmp/corpus/bin/pip install chatterbot-corpus==1.3.3 pyyaml
    /tmp/corpus/bin/python benchmarks/eval/make_eval_sets.py [--star PATH/dialogues.jsonl]

Seeded: the same files on every run. The JSON is what `make bench` reads.

Each criterion is worded five ways (kinds): `word` (the topic's own word in a frame:
"everything about food"), `paraphrase` (without the word: "eating and drinking"),
`question` ("did we talk about a table for dinner?"), `short` (one other word: "soccer",
"jazz") and `long` ("everything we said about hotels, where to stay and the room...").
Every wording list is split in two: the tuning set uses the first entries, the reported
sets the second, so the reported sets hold wordings the thresholds never saw. Absent
topics are asked too (kind `absent`, any wording): other topics of the source not in the
conversation, and topics *near* a present one that the source never covers ("cooking"
beside restaurants, "trains" beside flights); an absent topic is dropped from a
conversation when one of its words occurs in it (then it is not absent). The wordings
are the only part written by the team, once, before any tuning.

Ground truth is per exchange (a user message and its reply): an exchange belongs to the
topic of its messages. STAR labels messages by the task in progress, so content-free
exchanges ("Thank you", "Tuesday", a greeting or the goodbye template) are marked
`either` on their user message: the evaluation neither rewards nor penalises them.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
OUT = HERE / "sets"
# ../shared/eval-data/star beside the checkout (a worktree's is one level further up)
STAR = next((p / "shared" / "eval-data" / "star" / "dialogues.jsonl"
             for p in Path(__file__).resolve().parents[3:5]
             if (p / "shared" / "eval-data" / "star").is_dir()), Path("dialogues.jsonl"))
SEED = 20261128

# topic -> (words, paraphrases, short words); entry 0 of each list for the tuning set,
# entry 1 for the reported sets.
Wording = tuple[list[str], list[str], list[str]]
CHATTER: dict[str, tuple[str, Wording]] = {
    "ai": ("ai.yml", (["artificial intelligence", "AI"],
                      ["whether machines can think or feel like people", "robots and computer minds"],
                      ["robots", "chatbot"])),
    "coding": ("coding.yml", (["coding", "programming"],
                              ["writing software and programming languages",
                               "how to write a computer program"], ["python", "software"])),
    "tech_support": ("tech_support.yml", (["tech support", "computer problems"],
                                          ["fixing problems with a computer or the network",
                                           "my laptop not working"],
                                          ["troubleshooting", "laptop"])),
    "emotion": ("emotion.yml", (["emotions", "feelings"],
                                ["being happy, sad or angry", "how I feel inside"],
                                ["sadness", "mood"])),
    "psychology": ("psychology.yml", (["psychology", "the mind"],
                                      ["the mind and human behaviour",
                                       "why people behave the way they do"],
                                      ["psychologist", "behaviour"])),
    "food": ("food.yml", (["food", "eating"], ["eating and drinking", "meals and what to eat"],
                          ["snacks", "dinner"])),
    "history": ("history.yml", (["history", "the past"],
                                ["events of the past, wars and old empires",
                                 "things that happened centuries ago"], ["empires", "war"])),
    "literature": ("literature.yml", (["literature", "books"],
                                      ["novels, poems and their authors", "reading and writers"],
                                      ["novels", "poetry"])),
    "money": ("money.yml", (["money", "finance"], ["banks, wages and investing",
                                                    "how to earn and spend cash"],
                            ["stocks", "salary"])),
    "movies": ("movies.yml", (["movies", "films"], ["actors and the cinema",
                                                     "what is on at the cinema and who starred"],
                              ["cinema", "actors"])),
    "politics": ("politics.yml", (["politics", "government"], ["elections and parties",
                                                                "presidents and voting"],
                                  ["elections", "democracy"])),
    "science": ("science.yml", (["science", "physics"], ["chemistry, physics and biology",
                                                          "how nature works, atoms and cells"],
                                ["chemistry", "biology"])),
    "sports": ("sports.yml", (["sports", "athletics"],
                              ["football, basketball and other games athletes play",
                               "games played by teams and athletes"], ["soccer", "baseball"])),
}
CHITCHAT = ["greetings.yml", "conversations.yml", "gossip.yml"]

STAR_TOPICS: dict[str, Wording] = {
    "apartment": (["apartments", "apartment hunting"],
                  ["finding a flat to rent", "places to live and viewing them"], ["rent", "flat"]),
    "bank": (["banking", "my bank account"], ["my account balance and card fraud",
                                              "the money in my accounts"], ["fraud", "balance"]),
    "doctor": (["the doctor", "doctor's appointments"], ["seeing a physician about my health",
                                                         "medical visits and instructions"],
               ["checkup", "medicine"]),
    "hotel": (["hotels", "the hotel booking"], ["where to stay on my trip and the room",
                                                "a room for the night"],
              ["lodging", "accommodation"]),
    "meeting": (["meetings", "scheduling a meeting"], ["setting up time with a colleague",
                                                       "getting together with coworkers"],
                ["colleague", "coworker"]),
    "party": (["the party", "party planning"], ["the celebration and the guests",
                                                "an event at a venue with guests"],
              ["celebration", "rsvp"]),
    "plane": (["flights", "plane tickets"], ["flying somewhere and airline tickets",
                                             "air travel"], ["airline", "flying"]),
    "restaurant": (["restaurants", "the restaurant booking"], ["a table for dinner",
                                                                "places to eat out"],
                   ["dining", "reservation"]),
    "ride": (["rides", "booking a ride"], ["a car to pick me up", "a taxi or an uber"],
             ["taxi", "driver"]),
    "spaceship": (["the spaceship", "the spaceship repairs"],
                  ["the starship's access codes and life support", "fixing things on the space ship"],
                  ["starship", "oxygen"]),
    "trip": (["directions", "trip directions"], ["how to get from one place to another",
                                                 "the route to walk or drive"],
             ["route", "navigation"]),
    "trivia": (["trivia", "the trivia game"], ["the quiz questions",
                                               "the quiz game with questions and answers"],
               ["quiz", "questions"]),
    "weather": (["the weather", "the weather forecast"], ["whether it will rain or be sunny",
                                                          "the temperature tomorrow"],
                ["forecast", "rain"]),
}

# Topics neither source covers, asked beside a near one that is present.
NEAR_ONLY: dict[str, Wording] = {
    "cooking": (["cooking", "recipes"], ["making dinner in the kitchen",
                                         "how to bake or roast things at home"],
                ["baking", "recipe"]),
    "music": (["music", "songs"], ["bands, concerts and singers", "listening to records and albums"],
              ["jazz", "guitar"]),
    "pets": (["pets", "animals at home"], ["my dog and my cat", "looking after a puppy"],
             ["cats", "puppy"]),
    "travel": (["travel", "holidays"], ["going abroad on vacation",
                                        "visiting other countries as a tourist"],
               ["vacation", "tourism"]),
    "law": (["law", "the courts"], ["judges, lawyers and trials", "suing someone in court"],
            ["lawyer", "trial"]),
    "insurance": (["insurance", "insurance policies"], ["covering my house against damage",
                                                         "claims and premiums"],
                  ["premiums", "coverage"]),
    "chess": (["chess", "board games"], ["moving pawns and knights", "playing for checkmate"],
              ["checkmate", "pawn"]),
    "gardening": (["gardening", "the garden"], ["growing flowers and vegetables",
                                                "planting seeds in the yard"],
                  ["flowers", "compost"]),
    "trains": (["trains", "train tickets"], ["going by rail from the station",
                                             "the railway timetable"], ["railway", "subway"]),
    "dentist": (["the dentist", "dental care"], ["my teeth and a filling",
                                                 "getting a tooth pulled"], ["teeth", "cavity"]),
    "moving": (["moving house", "movers"], ["packing boxes into a moving truck",
                                            "hiring people to carry furniture"],
               ["furniture", "relocation"]),
    "investing": (["investing", "the stock market"], ["buying shares and funds",
                                                      "retirement savings and stocks"],
                  ["shares", "dividends"]),
    "concerts": (["concerts", "live music"], ["tickets for a band's show",
                                              "going to see a singer perform"],
                 ["jazz", "band"]),
    "camping": (["camping", "tents"], ["sleeping outdoors in the woods",
                                       "a campsite and a campfire"], ["campsite", "tent"]),
    "car_repair": (["car repair", "the mechanic"], ["fixing my car's engine and brakes",
                                                    "the garage servicing my vehicle"],
                   ["mechanic", "brakes"]),
    "earthquakes": (["earthquakes", "natural disasters"], ["the ground shaking and tsunamis",
                                                           "volcanoes erupting"],
                    ["volcano", "tsunami"]),
    "job": (["job interviews", "hiring"], ["applying for a new job", "my resume and the recruiter"],
            ["resume", "recruiter"]),
    "astronomy": (["astronomy", "the planets"], ["stars, galaxies and telescopes",
                                                 "looking at the night sky"],
                  ["telescope", "galaxy"]),
    "sport": (["sports", "football"], ["games played by teams and athletes", "who won the match"],
              ["soccer", "basketball"]),
}
NEAR = {  # present topic -> absent topics near it
    "food": ["cooking"], "movies": ["music"], "literature": ["music"], "emotion": ["pets"],
    "history": ["travel"], "politics": ["law"], "money": ["insurance"], "sports": ["chess"],
    "science": ["gardening", "astronomy"], "ai": ["chess"], "coding": ["job"],
    "tech_support": ["job"], "psychology": ["pets"],
    "restaurant": ["cooking"], "plane": ["trains"], "ride": ["trains", "car_repair"],
    "trip": ["trains", "travel"], "doctor": ["dentist"], "apartment": ["moving"],
    "bank": ["investing", "insurance"], "party": ["concerts", "music"], "hotel": ["camping"],
    "weather": ["earthquakes"], "meeting": ["job"], "spaceship": ["astronomy"],
    "trivia": ["sport", "chess"],
}

# Frames per kind: entry 0 the tuning set's, entry 1 the reported sets'.
FRAMES = {
    "word": (["everything about {w}", "the {w} discussion", "{w}"],
             ["what we said about {w}", "the part about {w}", "our {w} talk"]),
    "paraphrase": (["everything about {p}", "the part where we talked about {p}"],
                   ["what we said about {p}", "{p}"]),
    "question": (["what did we say about {p}?", "where did I ask about {w}?"],
                 ["did we talk about {p}?", "which messages were about {w}?"]),
    "short": (["{s}"], ["{s}"]),
    "long": (["everything we said about {w}, {p}, and anything to do with it",
              "all of the conversation about {w} and {p}"],
             ["all the messages where {p} came up, and {w} in general",
              "every exchange about {w}: {p}, the details and the follow-ups"]),
}
KINDS = list(FRAMES)


def wording(rng: random.Random, words: Wording, kind: str, held_out: int) -> str:
    w, p, s = (lst[held_out] for lst in words)
    frame = rng.choice(FRAMES[kind][held_out])
    return frame.format(w=w, p=p, s=s)


def criteria(rng: random.Random, topics: dict[str, Wording], present: list[str],
             absent_pool: list[str], text: str, held_out: int, n_absent: int) -> list[dict]:
    """Every wording kind for each present topic, and absent ones: near topics first."""
    out = [{"text": wording(rng, topics[t], kind, held_out), "topic": t, "kind": kind}
           for t in present for kind in KINDS]
    near = [a for t in present for a in NEAR.get(t, []) if a not in present]
    others = [a for a in absent_pool if a not in present]
    rng.shuffle(others)
    chosen: list[str] = []
    for topic in [*dict.fromkeys(near), *others]:
        words = {**topics, **NEAR_ONLY}[topic]
        if topic in chosen or mentions(text, words):
            continue
        chosen.append(topic)
        if len(chosen) == n_absent:
            break
    for topic in chosen:
        out.append({"text": wording(rng, {**topics, **NEAR_ONLY}[topic], rng.choice(KINDS), held_out),
                    "topic": topic, "kind": "absent"})
    return out


WORD = re.compile(r"[a-z]+")


def mentions(text: str, words: Wording) -> bool:
    """Whether the conversation holds one of the topic's names or short words (then the
    topic is not absent)."""
    names = {x for lst in (words[0], words[2]) for phrase in lst for x in WORD.findall(phrase.lower())
             if len(x) > 3}
    stems = {n[:-1] if n.endswith("s") else n for n in names}
    return any(w in stems or w.rstrip("s") in stems for w in WORD.findall(text.lower()))


# ---- chatterbot-corpus ---------------------------------------------------------------

# The corpus is read as issue 12's generator reads it (needs pyyaml, imported there).
# Overlapping topics (ai, coding, tech support; emotion, psychology) never share a
# conversation, as there (group_of).
from make_matching_set import corpus_dir, dialogs as chatter_dialogs, group_of  # noqa: E402


def chatter_exchanges(dialog: list[str], topic: str | None) -> list[list[dict]]:
    out: list[list[dict]] = []
    for i, text in enumerate(dialog):
        if i % 2 == 0:
            out.append([])
        out[-1].append({"role": "user" if i % 2 == 0 else "assistant", "text": text,
                        "topic": topic})
    return out


def split_pools(items: list[list[str]], rng: random.Random) -> tuple[list, list]:
    """Two disjoint halves by first line (a repeated question stays in one half)."""
    firsts = sorted({d[0].lower() for d in items})
    rng.shuffle(firsts)
    first_half = set(firsts[: (len(firsts) + 1) // 2])
    return ([d for d in items if d[0].lower() in first_half],
            [d for d in items if d[0].lower() not in first_half])


def chatter_conversation(rng: random.Random, pools: dict[str, list], chat: list,
                         size: int) -> tuple[list[dict], list[str]]:
    """About `size` exchanges: 1-5 topics (one per overlapping group), in runs, with
    chit-chat (no topic) between some; a chat of 3 has one exchange per topic."""
    n_topics = rng.randint(2, min(3, size)) if size < 6 else rng.randint(3, 5)
    topics: list[str] = []
    for t in rng.sample(sorted(pools), len(pools)):
        if not group_of(t) & set(topics):
            topics.append(t)
        if len(topics) == n_topics:
            break
    chat_share = 0 if size <= 3 else rng.choice([0.1, 0.2, 0.3])
    per_topic = max(1, round(size * (1 - chat_share) / len(topics)))
    runs: list[list[list[dict]]] = []
    for topic in topics:
        exs = [ex for d in rng.sample(pools[topic], len(pools[topic]))
               for ex in chatter_exchanges(d, topic)][:per_topic]
        parts = 1 if len(exs) < 4 else rng.randint(1, 3)
        cuts = sorted(rng.sample(range(1, len(exs)), parts - 1)) if parts > 1 else []
        runs.extend(exs[a:b] for a, b in zip([0, *cuts], [*cuts, len(exs)]))
    n_chat = size - sum(len(r) for r in runs)
    chat_exs = [ex for d in rng.sample(chat, len(chat)) for ex in chatter_exchanges(d, None)]
    for ex in chat_exs[:max(0, n_chat)]:
        runs.append([ex])
    rng.shuffle(runs)
    return [m for run in runs for ex in run for m in ex], topics


def chatter_set(rng: random.Random, pools: dict[str, list], chat: list, sizes: list[int],
                held_out: int) -> list[dict]:
    out = []
    for size in sizes:
        messages, present = chatter_conversation(rng, pools, chat, size)
        text = " ".join(m["text"] for m in messages)
        taken = set().union(*(group_of(t) for t in present))
        pool = [t for t in sorted(CHATTER) if t not in taken]
        words = {t: w for t, (_, w) in CHATTER.items()}
        out.append({"source": "chatterbot", "topics": present, "messages": messages,
                    "criteria": criteria(rng, words, present, pool, text, held_out, 3)})
    return out


# ---- STAR ----------------------------------------------------------------------------

GENERIC_ACTIONS = {"hello", "anything_else", "goodbye_1", "goodbye_2"}


def star_exchanges(dialog: dict) -> list[list[dict]]:
    """User + system pairs; content-free ones marked `either` (see the module's doc)."""
    turns = dialog["turns"]
    out = []
    for user, system in zip(turns[0::2], turns[1::2]):
        either = (len(WORD.findall(user["text"].lower())) < 4
                  or system.get("action") in GENERIC_ACTIONS)
        u = {"role": "user", "text": user["text"], "topic": user["domain"]}
        if either:
            u["either"] = True
        out.append([u, {"role": "assistant", "text": system["text"], "topic": system["domain"]}])
    return out


def star_conversation(rng: random.Random, pool: list[dict], size: int) -> tuple[list[dict], list[str]]:
    """`size` exchanges: under 6, single contentful exchanges of different domains; else
    whole dialogues whose domains are among 2-5 chosen ones, the last one cut."""
    domains = sorted(STAR_TOPICS)
    if size < 6:
        chosen = rng.sample(domains, size)
        exs = []
        for d in chosen:
            dialog = rng.choice([x for x in pool if x["domains"] == [d]])
            exs.append(rng.choice([e for e in star_exchanges(dialog) if "either" not in e[0]]
                                  or star_exchanges(dialog)))
        return [m for ex in exs for m in ex], chosen
    chosen = rng.sample(domains, rng.randint(2, 5))
    fits = [x for x in pool if set(x["domains"]) <= set(chosen)]
    exs: list[list[dict]] = []
    while len(exs) < size:
        exs.extend(star_exchanges(rng.choice(fits)))
    exs = exs[:size]
    present = sorted({ex[0]["topic"] for ex in exs if "either" not in ex[0]})
    return [m for ex in exs for m in ex], present


def star_set(rng: random.Random, pool: list[dict], sizes: list[int], held_out: int) -> list[dict]:
    out = []
    for size in sizes:
        messages, present = star_conversation(rng, pool, size)
        text = " ".join(m["text"] for m in messages)
        absent_pool = [t for t in sorted(STAR_TOPICS) if t not in present]
        out.append({"source": "star", "topics": present, "messages": messages,
                    "criteria": criteria(rng, STAR_TOPICS, present, absent_pool, text,
                                         held_out, 4)})
    return out


def star_pools(path: Path, rng: random.Random) -> tuple[list[dict], list[dict]]:
    dialogs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rng.shuffle(dialogs)
    half = len(dialogs) // 2
    return dialogs[:half], dialogs[half:]


# ---- output --------------------------------------------------------------------------

CHATTER_TUNE_SIZES = [3, 3, 4, 6, 10, 15, 25, 40, 60]
STAR_TUNE_SIZES = [3, 3, 4, 5, 8, 12, 20, 40, 80, 150, 300]
CHATTER_SIZES = [3, 3, 3, 4, 5, 6, 8, 10, 12, 16, 20, 30, 40, 60, 80]
STAR_SIZES = [3, 3, 3, 4, 5, 6, 8, 12, 16, 25, 40, 60, 100, 250, 500, 1000]


def write(name: str, conversations: list[dict], sources: str) -> None:
    OUT.mkdir(exist_ok=True)
    path = OUT / f"{name}.json"
    lines = ",\n".join(json.dumps(c, ensure_ascii=False, separators=(",", ":"))
                       for c in conversations)
    path.write_text(f'{{"source": {json.dumps(sources)}, "seed": {SEED}, "conversations": [\n'
                    f"{lines}\n]}}\n", encoding="utf-8")
    sizes = [sum(m["role"] == "user" for m in c["messages"]) for c in conversations]
    kinds: dict[str, int] = {}
    for c in conversations:
        for k in c["criteria"]:
            kinds[k["kind"]] = kinds.get(k["kind"], 0) + 1
    print(f"{path.name}: {len(conversations)} conversations of {min(sizes)}-{max(sizes)} "
          f"exchanges, criteria {kinds}, {path.stat().st_size // 1024} KB")


def main() -> None:
    star_path = Path(sys.argv[sys.argv.index("--star") + 1]) if "--star" in sys.argv else STAR
    rng = random.Random(SEED)
    root = corpus_dir()
    tune_pools: dict[str, list] = {}
    test_pools: dict[str, list] = {}
    for topic, (name, _) in CHATTER.items():
        tune_pools[topic], test_pools[topic] = split_pools(chatter_dialogs(root / name), rng)
    chat_tune, chat_test = split_pools([d for n in CHITCHAT for d in chatter_dialogs(root / n)], rng)
    star_tune, star_test = star_pools(star_path, rng)
    chatter_src = "chatterbot-corpus 1.3.3 (PyPI, BSD): English topic files"
    star_src = "STAR (RasaHQ/STAR, MIT; Mosig, Mehri & Kober 2020)"
    by = "generated by benchmarks/eval/make_eval_sets.py"
    write("tune", chatter_set(rng, tune_pools, chat_tune, CHATTER_TUNE_SIZES, 0)
          + star_set(rng, star_tune, STAR_TUNE_SIZES, 0),
          f"{chatter_src}; {star_src}; the tuning pools and wordings; {by}")
    write("chatter", chatter_set(rng, test_pools, chat_test, CHATTER_SIZES, 1),
          f"{chatter_src}; the other pool, other wordings; {by}")
    write("star", star_set(rng, star_test, STAR_SIZES, 1),
          f"{star_src}; the other pool, other wordings; {by}")


if __name__ == "__main__":
    main()
