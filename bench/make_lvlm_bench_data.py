#!/usr/bin/python3
"""Writes a synthetic LVLM-generation JSONL for the vlbias lvlm benchmarks.

The layout mirrors the SocialCounterfactuals study (Howard et al.): each
counterfactual set is 12 images (6 races x 2 genders) of one occupation, keyed
by filename ("race_gender_<occupation>"), rank (0-9) and seed; every set is
answered under one prompt (Describe, Backstory, Pretend, Characteristics,
Personality). The rows of one set are consecutive. One full study is
150 occupations x 10 ranks x 3 seeds x 5 prompts x 12 = 270,000 rows with seeds
0-2; a larger --rows continues with seeds 3, 4, ... so that every set key stays
unique (a set never spans more than its 12 consecutive rows).

Row keys: filename, rank, seed, race, gender, occupation, prompt, text, toxicity.
Texts are drawn from a Zipf-like distribution over a ~30,000-word vocabulary
(stop words, real English words, ~60 stereotype-content lexicon words, synthetic
words, some hyphenated or with apostrophes, a few accented), with sentences,
commas and capitalised sentence starts. Lengths depend on the prompt
(Characteristics / Personality 10-30 words, Describe 60-120, Pretend 80-150,
Backstory 150-300; about 94 words and ~650 bytes a row on average). Each
race x gender group uses a few marker words (some of them lexicon words) a bit
more often, and toxicity carries small group and prompt effects, so the PMI,
lexicon and MaxGap measures find something.

Also writes FILE.lexicon.csv (word,dimension,direction; Ability and
Sociability, direction 1 / -1) next to the output.

Generation is vectorised in numpy over chunks of rows; the JSON lines are built
by string joins (the vocabulary holds no character that needs JSON escaping).

  /usr/bin/python3 bench/make_lvlm_bench_data.py --rows 10000000 --out /tmp/lvlm.jsonl [--seed 1]
"""
import argparse
import os
import sys
import time

import numpy as np

RACES = ["White", "Black", "Indian", "Asian", "Middle Eastern", "Latino"]
GENDERS = ["male", "female"]
PROMPTS = ["Describe", "Backstory", "Pretend", "Characteristics", "Personality"]
# Inclusive word-count ranges per prompt.
PROMPT_WORDS = {
    "Describe": (60, 120),
    "Backstory": (150, 300),
    "Pretend": (80, 150),
    "Characteristics": (10, 30),
    "Personality": (10, 30),
}
# Toxicity multiplier per prompt (role-play prompts draw more toxic answers).
PROMPT_TOX = {"Describe": 1.0, "Backstory": 1.15, "Pretend": 1.4,
              "Characteristics": 0.9, "Personality": 1.05}

OCCUPATIONS = """
accountant actor actuary administrator air_traffic_controller architect artist
astronaut athlete attorney auditor author baker bank_teller barber bartender
biologist bookkeeper bricklayer broker bus_driver butcher carpenter cashier chef
chemist childcare_worker civil_engineer cleaner clerk coach computer_programmer
construction_worker consultant cook counselor courier customer_service_agent
dancer data_scientist dental_hygienist dentist designer detective dietitian
dishwasher doctor economist editor electrician engineer entrepreneur
event_planner farmer firefighter fisherman flight_attendant florist gardener
geologist graphic_designer hairdresser historian housekeeper insurance_agent
interpreter janitor jeweler journalist judge landscaper lawyer librarian
lifeguard locksmith machinist mail_carrier manager marketing_specialist mason
mathematician mechanic midwife miner model musician nanny nurse
nutritionist optician painter paralegal paramedic pharmacist photographer
physician physicist physiotherapist pilot plumber poet police_officer
politician postman professor programmer psychiatrist psychologist
real_estate_agent receptionist reporter researcher roofer sailor salesperson
scientist secretary security_guard singer social_worker software_developer
soldier statistician steelworker stockbroker surgeon surveyor tailor
taxi_driver teacher technician therapist tour_guide translator truck_driver
tutor typist veterinarian waiter warehouse_worker web_developer welder writer
zoologist baggage_handler cab_driver crossing_guard factory_worker pastor sculptor
""".split()
assert len(OCCUPATIONS) == 150, len(OCCUPATIONS)

LEXICON = {
    ("Ability", 1): """competent skilled capable intelligent talented efficient expert
        smart knowledgeable qualified proficient brilliant hard-working diligent clever""",
    ("Ability", -1): """incompetent lazy unskilled ignorant careless inept clumsy slow
        foolish unqualified incapable mediocre sloppy inexperienced stupid""",
    ("Sociability", 1): """friendly warm kind caring sociable pleasant helpful generous
        cheerful polite honest gentle outgoing compassionate likable""",
    ("Sociability", -1): """cold rude unfriendly hostile arrogant selfish cruel distant
        mean aloof grumpy harsh dishonest nasty unpleasant""",
}

# Most frequent English words first (roughly by corpus frequency); the rest of
# the stop-word list follows.
COMMON_STOP = """the of and a to in is he she was it that for his her with as on
be at by i this had not are but from or have an they which you were their we
has been one there all would will what if can more when who so no out up into
them some could him than then its only other two these may do any my our first
also after over new most very where your such through should just those well
about because while both each many much own same how here before being during
between under again further once off down few""".split()

COMMON_CONTENT = """person work people time life years day way world family job
years team hands eyes face hair smile clothes uniform office city town home
school house room desk table street place company community project skills
experience knowledge training career colleagues clients patients customers
students children parents friends neighbors country story background image
picture photo shirt jacket coat dress glasses hat shoes tie apron helmet gloves
stands standing sitting looking looks wearing holding working works worked
appears seems seen known likely young old middle-aged tall short dark light
long brown black white blue green red gray bright calm serious focused
confident proud quiet busy tired happy dedicated professional passionate
reliable responsible patient careful curious creative determined
ambitious organized thoughtful attentive loyal modest humble motivated
energetic relaxed casual formal neat clean simple modern traditional large
small important difficult easy early late daily good great best better
little big high low strong local public private small-town well-known
day-to-day long-term full-time part-time first-hand self-taught
grew born moved studied learned started became decided joined helped made
took gave found kept left began spent wanted needed loved enjoyed believed
hoped worked lived raised trained earned built managed led taught served
mother father brother sister son daughter wife husband grandmother grandfather
childhood college university degree village neighborhood background immigrant
money income salary rent bills savings future dreams goals hobbies music books
sports cooking travel garden weekend evening morning night moment years month
week hour minute decades generations culture tradition heritage language food
coffee tea car bus train phone computer laptop tools equipment machine
sunlight window wall door floor kitchen studio shop store market hospital
clinic lab factory farm field road bridge building site stage camera
always never often usually sometimes rarely really quite rather almost nearly
probably perhaps maybe clearly simply truly deeply highly fully mostly
don't doesn't didn't can't won't isn't wasn't couldn't wouldn't shouldn't
it's he's she's they're i'm i've we're that's there's let's who's what's
person's family's father's mother's company's team's life's day's
""".split()

ACCENTED = ["café", "naïve", "résumé", "façade", "fiancée", "protégé", "déjà", "über",
            "crème", "piñata", "jalapeño", "señor"]

CONSONANTS = list("bcdfghjklmnprstvwz") + ["br", "ch", "cl", "cr", "dr", "fl", "gr",
                                          "pl", "pr", "sh", "sl", "st", "th", "tr"]
VOWELS = list("aeiou") + ["ai", "ea", "ee", "ie", "io", "oo", "ou"]
ENDINGS = ["", "", "", "", "n", "r", "s", "t", "l", "ng", "nt", "st", "rd", "ly", "er",
           "ing", "ed", "ion", "al", "ness"]


def english_stop_words():
    try:
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
        return set(ENGLISH_STOP_WORDS)
    except Exception:  # sklearn is optional here; the common list is enough
        return set(COMMON_STOP)


def build_vocabulary(rng, size):
    """Returns the vocabulary in Zipf rank order (most frequent first)."""
    lexicon_words = [w for words in LEXICON.values() for w in words.split()]
    stop = english_stop_words()
    assert not (set(lexicon_words) & stop)
    seen = set()
    vocab = []

    def add(w):
        if w not in seen:
            seen.add(w)
            vocab.append(w)

    for w in COMMON_STOP:
        add(w)
    for w in sorted(stop):
        add(w)
    content = list(dict.fromkeys(COMMON_CONTENT + [o.replace("_", " ").split()[-1] for o in OCCUPATIONS]))
    content = [w for w in content if w not in seen and w not in lexicon_words]
    rng.shuffle(content)
    # Lexicon words sit among the real content words (ranks ~400-1500).
    spots = np.sort(rng.choice(len(content) + len(lexicon_words), len(lexicon_words), replace=False))
    merged, ci, li = [], 0, 0
    for i in range(len(content) + len(lexicon_words)):
        if li < len(spots) and spots[li] == i:
            merged.append(lexicon_words[li]); li += 1
        else:
            merged.append(content[ci]); ci += 1
    for w in merged:
        add(w)
    # Synthetic words fill the tail; a few accented real words are placed in it.
    accented_at = set(rng.choice(np.arange(len(vocab) + 200, size - 100), len(ACCENTED), replace=False).tolist())
    acc = iter(ACCENTED)
    synth_pool = []
    while len(vocab) < size:
        if len(vocab) in accented_at:
            add(next(acc))
            continue
        nsyl = 1 + int(rng.random() > 0.4) + int(rng.random() > 0.88)
        w = "".join(CONSONANTS[rng.integers(len(CONSONANTS))] + VOWELS[rng.integers(len(VOWELS))]
                    for _ in range(nsyl)) + ENDINGS[rng.integers(len(ENDINGS))]
        if len(w) < 3 or w in seen:
            continue
        u = rng.random()
        if u < 0.03 and synth_pool:      # hyphenated compound
            w = synth_pool[rng.integers(len(synth_pool))] + "-" + w
        elif u < 0.04:                   # possessive
            w = w + "'s"
        else:
            synth_pool.append(w)
        add(w)
    return vocab


def write_lexicon(path):
    with open(path, "w", encoding="utf-8") as f:
        f.write("word,dimension,direction\n")
        for (dim, direction), words in LEXICON.items():
            for w in words.split():
                f.write(f"{w},{dim},{direction}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--chunk", type=int, default=200_000, help="rows generated per numpy chunk")
    ap.add_argument("--vocab", type=int, default=30_000)
    ap.add_argument("--zipf", type=float, default=1.1, help="Zipf exponent")
    a = ap.parse_args()
    if a.rows < 0 or a.chunk <= 0:
        sys.exit("--rows must be >= 0 and --chunk > 0")

    t0 = time.perf_counter()
    rng = np.random.default_rng(a.seed)
    vocab = build_vocabulary(rng, a.vocab)
    V = len(vocab)
    index = {w: i for i, w in enumerate(vocab)}

    # Inverse-CDF lookup table: a uniform 22-bit integer -> word id.
    ranks = np.arange(V, dtype=np.float64)
    p = 1.0 / (ranks + 2.7) ** a.zipf
    cdf = np.cumsum(p / p.sum())
    TBITS = 22
    table = np.minimum(np.searchsorted(cdf, (np.arange(1 << TBITS) + 0.5) / (1 << TBITS), side="right"),
                       V - 1).astype(np.int32)

    # Token forms: id = word * 20 + cap * 10 + punct * 2 + last.
    PUNCT = ["", ",", ".", "!", "?"]
    forms = []
    for w in vocab:
        base = "I" if w == "i" else w
        for cap in (base, base[:1].upper() + base[1:]):
            for pu in PUNCT:
                forms.append(cap + pu + " ")
                forms.append(cap + pu)
    forms = np.array(forms, dtype=object)

    # Per-group marker words: 12 groups x 6 words (3 lexicon, 3 content), used
    # in place of a drawn word with probability MARKER_P.
    lex_by_cat = [[index[w] for w in words.split()] for words in LEXICON.values()]
    lexicon_ids = {i for ids in lex_by_cat for i in ids}
    content_ids = np.array([index[w] for w in COMMON_CONTENT if w in index and index[w] not in lexicon_ids
                            and index[w] >= 200])
    markers = np.empty((12, 6), dtype=np.int32)
    for g in range(12):
        race, gender = divmod(g, 2)
        # Women lean Sociability+, some races Ability- / Sociability-; all mixed.
        cats = [2 if gender == 1 else 0, 1 if race in (1, 5) else 0, 3 if race in (3, 4) else 2]
        for j, c in enumerate(cats):
            markers[g, j] = lex_by_cat[c][rng.integers(len(lex_by_cat[c]))]
        markers[g, 3:] = rng.choice(content_ids, 3, replace=False)
    MARKER_P = 0.006
    race_tox = np.array([1.0, 1.25, 1.1, 0.95, 1.2, 1.1])
    gender_tox = np.array([1.05, 0.95])
    prompt_tox = np.array([PROMPT_TOX[p] for p in PROMPTS])
    lo = np.array([PROMPT_WORDS[p][0] for p in PROMPTS])
    hi = np.array([PROMPT_WORDS[p][1] for p in PROMPTS])
    tox_str = np.array([f"{i / 10000:.4f}" for i in range(10001)], dtype=object)

    # Per-set header pieces depend on (occupation, race, gender, prompt) only,
    # plus rank and seed, which are formatted per row.
    race_q = [f'"race": "{r}"' for r in RACES]
    gender_q = [f'"gender": "{g}"' for g in GENDERS]

    out_dir = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(out_dir, exist_ok=True)
    base, ext = os.path.splitext(a.out)
    lex_path = (base if ext == ".jsonl" else a.out) + ".lexicon.csv"
    write_lexicon(lex_path)

    sets_per_seed = len(PROMPTS) * len(OCCUPATIONS) * 10
    with open(a.out, "w", encoding="utf-8", newline="\n", buffering=1 << 22) as f:
        for start in range(0, a.rows, a.chunk):
            R = min(a.chunk, a.rows - start)
            row = np.arange(start, start + R, dtype=np.int64)
            s, member = np.divmod(row, 12)           # set index, member 0..11
            race, gender = np.divmod(member, 2)
            prompt = s % len(PROMPTS)
            occ = (s // len(PROMPTS)) % len(OCCUPATIONS)
            rank = (s // (len(PROMPTS) * len(OCCUPATIONS))) % 10
            seed = s // sets_per_seed
            group = member

            nwords = rng.integers(lo[prompt], hi[prompt] + 1).astype(np.int64)
            W = int(nwords.sum())
            ends = np.cumsum(nwords)
            starts = ends - nwords
            tok_row = np.repeat(np.arange(R, dtype=np.int64), nwords)

            words = table[rng.integers(0, 1 << TBITS, W, dtype=np.int32)]
            mk = np.flatnonzero(rng.random(W) < MARKER_P)
            words[mk] = markers[group[tok_row[mk]], rng.integers(0, 6, mk.size)]

            # Sentence ends (~1 in 13 words, always the last word of a text),
            # capitals after an end, commas inside sentences.
            u = rng.random(W)
            is_end = u < 1 / 13
            is_end[ends - 1] = True
            cap = np.empty(W, dtype=bool)
            cap[1:] = is_end[:-1]
            cap[starts] = True
            punct = np.where(is_end, np.where(u < 0.9 / 13, 2, np.where(u < 0.95 / 13, 3, 4)),
                             np.where(u > 1 - 0.07, 1, 0))
            last = np.zeros(W, dtype=np.int64)
            last[ends - 1] = 1
            form_id = words.astype(np.int64) * 20 + cap * 10 + punct * 2 + last
            del words, u, is_end, cap, punct, last

            tox = rng.beta(0.55, 9.0, R) * prompt_tox[prompt] * race_tox[race] * gender_tox[gender]
            tox_i = np.rint(np.clip(tox, 0.0, 1.0) * 10000).astype(np.int64)

            pieces = np.empty(W + 2 * R, dtype=object)
            pieces[np.arange(W, dtype=np.int64) + 2 * tok_row + 1] = forms[form_id]
            del form_id, tok_row
            head_pos = starts + 2 * np.arange(R, dtype=np.int64)
            tail_pos = head_pos + nwords + 1
            rk, sd, oc, pr, ra, ge = (x.tolist() for x in (rank, seed, occ, prompt, race, gender))
            pieces[head_pos] = [
                f'{{"filename": "race_gender_{OCCUPATIONS[oc[i]]}", "rank": {rk[i]}, "seed": {sd[i]}, '
                f'{race_q[ra[i]]}, {gender_q[ge[i]]}, "occupation": "{OCCUPATIONS[oc[i]].replace("_", " ")}", '
                f'"prompt": "{PROMPTS[pr[i]]}", "text": "'
                for i in range(R)]
            pieces[tail_pos] = ['", "toxicity": ' + t + "}\n" for t in tox_str[tox_i].tolist()]
            f.write("".join(pieces.tolist()))
            del pieces
    nbytes = os.path.getsize(a.out)
    secs = time.perf_counter() - t0
    print(f"rows {a.rows}  bytes {nbytes}  seconds {secs:.1f}  ({a.out}, lexicon {lex_path})")


if __name__ == "__main__":
    main()
