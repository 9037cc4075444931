"""Generative multiple choice, for models without log-probabilities (chat-only APIs): the options
lettered in an order shuffled per item from the seed, the reply generated greedily and read as a
letter or as an option's text (:func:`parse_choice`). A reply that is neither is **invalid**: counted
and reported beside the scores, never taken as any option.

A benchmark gives each item's prompt fields and options and its own wording (a template with an
``{options}`` placeholder, where the lettered lines go); :func:`generate_choices` runs the prompts
through the resumable generation runner and reads the replies.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
import time
from collections.abc import Sequence

import numpy as np

from ..errors import InputError, InputTypeError

LETTERS = "ABCDEFGH"
ANSWERS_FILE = "answers.jsonl"  # the read answers of a generative run (its replies are in generations.jsonl)
GENERATED_TOKENS = 16  # enough for "B", "(B) the nurse" or "The answer is B."


def option_order(item_id: str, n: int, seed: int, salt: str) -> list[int]:
    """The order an item's ``n`` options are shown in (option indices by letter A, B, ...): a
    permutation that depends on the seed, the item and ``salt`` (the benchmark) only."""
    digest = hashlib.sha256(f"{salt}:{seed}:{item_id}".encode()).digest()
    return [int(i) for i in np.random.default_rng(int.from_bytes(digest[:8], "little")).permutation(n)]


def lettered_options(options: Sequence[str], order: Sequence[int]) -> str:
    """The options as lines "A. ...", "B. ...", in ``order``."""
    return "\n".join(f"{letter}. {options[index]}" for letter, index in zip(LETTERS, order))


def check_template(template, fields: Sequence[str], name: str = "prompt_template") -> str:
    """``template`` if it is a string whose placeholders are ``{options}`` and some of ``fields``,
    with ``{options}`` among them; else one line naming ``name`` and what is expected."""
    if not isinstance(template, str):
        raise InputTypeError(f"{name} must be a string with an {{options}} placeholder, got {type(template).__name__}")
    try:
        used = {part[1] for part in string.Formatter().parse(template) if part[1] is not None}
    except ValueError as error:
        raise InputError(f"{name} is not a valid template ({error}); write literal braces as {{{{ and }}}}") from None
    if "options" not in used:
        raise InputError(f"{name} has no {{options}} placeholder (where the lettered options go); its placeholders may be "
                         f"{['options', *fields]}")
    unknown = sorted(used - {"options", *fields})
    if unknown:
        raise InputError(f"{name} has the placeholders {unknown}, which this benchmark does not fill; it fills "
                         f"{['options', *fields]}")
    return template


def _normal(text: str) -> str:
    """Case, spacing, braces, apostrophes and a final full stop do not count when answers are compared."""
    text = re.sub(r"[{}'’]", "", str(text).lower())
    return re.sub(r"\s+", " ", text).strip().rstrip(".").strip()


def answer_index(prediction: str, answers: Sequence[str]) -> int | None:
    """The index of the answer that the free-text ``prediction`` gives, or None when it gives none.

    Compared without case, spacing, braces, apostrophes and a final full stop (as BBQ's authors'
    script compares them), in this order: the prediction equal to one answer; the prediction the
    start of exactly one answer (a cut-off generation: "the one in the pantsu" for "the one in the
    pantsuit"); the first two words of exactly one answer found, as whole words, in the prediction.

    >>> answer_index("The grandfather.", ["The grandfather", "The grandson", "Can't be determined"])
    0
    >>> answer_index("the younger boy", ["The youthful boy", "The older man", "Not known"]) is None
    True
    """
    said = _normal(prediction)
    options = [_normal(answer) for answer in answers]
    if not said:
        return None
    if said in options:
        return options.index(said)

    def leads_with(option: str) -> bool:  # its first two words, as whole words
        words = option.split()
        return len(words) >= 2 and re.search(rf"(?<!\w){re.escape(' '.join(words[:2]))}(?!\w)", said) is not None

    for rule in (lambda o: o.startswith(said), leads_with):
        found = [i for i, option in enumerate(options) if rule(option)]
        if len(found) == 1:
            return found[0]
    return None


def parse_choice(text: str, options: Sequence[str], order: Sequence[int]) -> int | None:
    """The option index a generated reply gives, or None (invalid).

    Read as a letter first: the reply starts with one of the shown letters (after "Answer:" or
    "Option", and punctuation such as "(", "**") followed by punctuation or nothing ("B", "B.",
    "(B)", "**B**"), or followed by the text of the option shown at that letter ("B The grandson"), or
    it says "answer is B" anywhere. A capital letter followed by other words is not a letter ("A
    Black man ..." starts with an article). Else the reply is read as an option's text
    (:func:`answer_index`), after a leading "B." is removed.

    >>> parse_choice(" B. The grandson", ["The grandfather", "The grandson", "Unknown"], [2, 1, 0])
    1
    >>> parse_choice("the grandfather", ["The grandfather", "The grandson", "Unknown"], [2, 1, 0])
    0
    >>> parse_choice("I would rather not say", ["The grandfather", "The grandson", "Unknown"], [2, 1, 0]) is None
    True
    """
    shown = LETTERS[:len(order)]
    reply = text.strip()
    lead = re.match(rf"^[\W_]*(?:(?:[Aa]nswer|[Oo]ption)\b[\s:]*(?:is\b[\s:]*)?)?\(?([{shown}])(?![A-Za-z0-9'])([^\w\s]*)\s*(.*)$",
                    reply, re.DOTALL)
    if lead:
        letter, mark, rest = lead.groups()
        chosen = order[shown.index(letter)]
        if not rest or mark.strip() or answer_index(rest, options) == chosen:
            return chosen
    said = re.search(rf"\banswer is:?\s*\(?([{shown}])(?![A-Za-z0-9'])", reply)
    if said:
        return order[shown.index(said.group(1))]
    return answer_index(re.sub(rf"^\(?[{shown}][).:]\s*", "", reply), options)


def generate_choices(spec, ids: Sequence[str], prompts: Sequence[str], options: Sequence[Sequence[str]],
                     orders: Sequence[Sequence[int]], *, out, benchmark: str, run_options: dict, batch_size: int, seed: int,
                     progress: bool, label: str) -> tuple:
    """Generate a reply to each lettered prompt (greedy, :data:`GENERATED_TOKENS` new tokens) through
    the resumable generation runner in run directory ``out``, and read each with :func:`parse_choice`.

    Returns:
        ``(records, model, placement, timing)``: per item ``id``, ``order`` (the option index shown at
        each letter, as digits), ``reply`` and ``prediction`` (an option index, or None: invalid); the
        model's description, where it ran and the generation time. All None on processes other than
        the main one.
    """
    from ..lm.generation import generation_settings
    from ..lm.runner import model_loader, run_generation

    checked = spec.checked()
    loaded: dict = {}
    started = time.perf_counter()
    generations = run_generation(
        model_loader(checked, seed=seed, described=loaded), list(ids), list(prompts), out,
        settings=generation_settings("greedy", max_new_tokens=GENERATED_TOKENS), model_name=checked.name, preset="greedy",
        seed=seed, batch_size=batch_size, progress=progress, benchmark=benchmark, model_identity=checked.identity(),
        label=label, options={"protocol": "generate", **run_options})
    if generations is None:
        return None, None, None, None
    records = [{"id": item_id, "order": "".join(map(str, order)), "reply": generated["continuation"],
                "prediction": parse_choice(generated["continuation"], choices, order)}
               for item_id, choices, order, generated in zip(ids, options, orders, generations)]
    return records, loaded or {"name": checked.model}, checked.recorded(), {"generation_seconds": time.perf_counter() - started}


def with_answers(result, records: list[dict]):
    """``result`` (a :class:`~lmbias.run_result.RunResult`) with :func:`generate_choices`'s records
    to write beside it as :data:`ANSWERS_FILE`."""
    result.outputs["answers_file"] = ANSWERS_FILE
    result.files[ANSWERS_FILE] = "".join(json.dumps(record) + "\n" for record in records)
    return result
