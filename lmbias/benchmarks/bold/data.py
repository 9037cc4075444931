"""BOLD (Dhamala et al. 2021): 23,679 Wikipedia prompts in 5 domains and 43 groups.

Each row is one prompt with the full Wikipedia sentence it was cut from (the human baseline).
"""

from __future__ import annotations

from ...data.hub_source import read_hub
from ...data.spec import DatasetSpec, PathLike, Row, check_text_fields, layout_error, read_json
from ...resources import GITHUB_RAW, Resource, locate

DOMAINS = ("gender", "race", "profession", "religious_ideology", "political_ideology")

# The paper's Table 3 merges granular professions into four groups (§4.5 lists the members).
# The text omits sewing_occupations, but the table's industrial & manufacturing total (1,699)
# is metalworking 625 + industrial 107 + railway 137 + sewing 830, so sewing belongs there.
# professional_driver_types and corporate_titles are in no merged group.
PROFESSION_MERGED_GROUPS: dict[str, tuple[str, ...]] = {
    "arts & entertainment": (
        "dance_occupations",
        "film_and_television_occupations",
        "entertainer_occupations",
        "writing_occupations",
        "artistic_occupations",
        "theatre_personnel",
    ),
    "science & technology": ("engineering_branches", "computer_occupations", "scientific_occupations"),
    "industrial & manufacturing": (
        "metalworking_occupations",
        "industrial_occupations",
        "railway_industry_occupations",
        "sewing_occupations",
    ),
    "healthcare & medicine": ("healthcare_occupations", "nursing_specialties", "mental_health_occupations"),
}
_MERGED_GROUP_OF = {group: merged for merged, groups in PROFESSION_MERGED_GROUPS.items() for group in groups}


def merged_profession_group(group: str) -> str | None:
    """The Table 3 group of a profession sub-group (``"nursing_specialties"`` -> ``"healthcare & medicine"``).

    Returns ``None`` for the profession groups Table 3 leaves out and for other domains' groups.
    """
    return _MERGED_GROUP_OF.get(group)


COLUMN_TYPES = {
    "id": "string",
    "domain": "string",
    "group": "string",
    "name": "string",
    "prompt": "string",
    "wikipedia": "string",
    "merged_group": "string",
}


def _domain_rows(domain: str, data_dir: PathLike | None) -> list[Row]:
    prompt_path = locate(f"bold/prompts/{domain}", data_dir)
    wiki_path = locate(f"bold/wikipedia/{domain}", data_dir)
    expected = "{sub_group: {wikipedia_page_name: [text, ...]}}"
    prompts = read_json(prompt_path, expected)
    wikis = read_json(wiki_path, expected)
    for path, content in ((prompt_path, prompts), (wiki_path, wikis)):
        if not isinstance(content, dict):
            raise layout_error(path, expected, f"top-level {type(content).__name__}")
        for group, pages in content.items():
            if not isinstance(pages, dict):
                raise layout_error(path, f"an object of pages as the sub-group {group!r}", type(pages).__name__)
    rows = []
    for group, pages in prompts.items():
        wiki_pages = wikis.get(group)
        if wiki_pages is None:
            raise layout_error(wiki_path, f"the sub-group {group!r} of {prompt_path.name}", "no such key")
        for name, texts in pages.items():
            # each file is blamed for its own value: the prompts first, then the sentences that match them
            if not isinstance(texts, list):
                raise layout_error(prompt_path, f"a list of prompts for {group}/{name}", type(texts).__name__)
            sentences = wiki_pages.get(name)
            if not isinstance(sentences, list) or len(sentences) != len(texts):
                found = "no such key" if name not in wiki_pages else (
                    type(sentences).__name__ if not isinstance(sentences, list) else f"{len(sentences)} sentences")
                raise layout_error(wiki_path, f"a list of {len(texts)} sentences for {group}/{name} (as in {prompt_path.name})", found)
            for index, (prompt, sentence) in enumerate(zip(texts, sentences)):
                where = f"{group}/{name}[{index}]"
                if not isinstance(prompt, str):  # "" is kept: BOLD itself has 5 empty prompts (religious / political ideology)
                    raise layout_error(prompt_path, f"a string as the prompt at {where}", repr(prompt))
                check_text_fields(wiki_path, where, {"wikipedia": sentence}, ("wikipedia",))
                rows.append(
                    {
                        "id": f"{domain}/{group}/{name}/{index}",
                        "domain": domain,
                        "group": group,
                        "name": name,
                        "prompt": prompt,
                        "wikipedia": sentence,
                        "merged_group": merged_profession_group(group),
                    }
                )
    return rows


def load_rows(config: str, data_dir: PathLike | None = None) -> list[Row]:
    """BOLD rows for one domain, or for all five (``config="all"``) in the order of :data:`DOMAINS`."""
    domains = DOMAINS if config == "all" else (config,)
    return [row for domain in domains for row in _domain_rows(domain, data_dir)]


def hub_rows(hub_id: str, config: str) -> list[Row]:
    """BOLD's rows of ``config`` from ``AlexaAI/bold``'s layout (:mod:`lmbias.data.hub_source`)."""
    records = read_hub(hub_id, None, "train")
    missing = {"domain", "name", "category", "prompts", "wikipedia"} - set(records.column_names)
    if missing:
        raise layout_error(hub_id, "AlexaAI/bold's columns domain, name, category, prompts, wikipedia",
                           f"no column {sorted(missing)}")
    by_domain: dict[str, list[Row]] = {domain: [] for domain in DOMAINS}
    for number, record in enumerate(records):
        domain, group, name = record["domain"], record["category"], record["name"]
        where = f"record {number} ({domain}/{group}/{name})"
        if domain not in by_domain:
            raise layout_error(hub_id, f"a domain in {DOMAINS} at {where}", repr(domain))
        if len(record["prompts"]) != len(record["wikipedia"]):
            raise layout_error(hub_id, f"as many wikipedia sentences as prompts at {where}",
                               f"{len(record['wikipedia'])} and {len(record['prompts'])}")
        for index, (prompt, sentence) in enumerate(zip(record["prompts"], record["wikipedia"])):
            check_text_fields(hub_id, f"{where}[{index}]", {"wikipedia": sentence}, ("wikipedia",))
            by_domain[domain].append({"id": f"{domain}/{group}/{name}/{index}", "domain": domain, "group": group,
                                      "name": name, "prompt": prompt, "wikipedia": sentence,
                                      "merged_group": merged_profession_group(group)})
    return [row for domain in (DOMAINS if config == "all" else (config,)) for row in by_domain[domain]]


SPEC = DatasetSpec(
    name="bold",
    configs={
        "all": "all five domains",
        **{domain: f"the {domain.replace('_', ' ')} domain" for domain in DOMAINS},
    },
    split="train",  # as AlexaAI/bold on the Hub names it (BOLD has no other split: every prompt is for evaluation)
    columns=COLUMN_TYPES,
    load_rows=load_rows,
    group_column="group",
    description=(
        "BOLD: 23,679 English prompts cut from Wikipedia sentences about 43 groups in five domains "
        "(gender, race, profession, religious ideology, political ideology), with the source sentence "
        "of each prompt as a human-written baseline."
    ),
    citation="""@inproceedings{dhamala2021bold,
  title     = {{BOLD}: Dataset and Metrics for Measuring Biases in Open-Ended Language Generation},
  author    = {Dhamala, Jwala and Sun, Tony and Kumar, Varun and Krishna, Satyapriya and Pruksachatkun, Yada and Chang, Kai-Wei and Gupta, Rahul},
  booktitle = {Proceedings of the 2021 ACM Conference on Fairness, Accountability, and Transparency},
  pages     = {862--872},
  year      = {2021},
  doi       = {10.1145/3442188.3445924}
}""",
    license="cc-by-sa-4.0",
    homepage="https://github.com/amazon-science/bold",
    sizes={"all": 23_679, "gender": 3_204, "race": 7_657, "profession": 10_195, "religious_ideology": 639,
           "political_ideology": 1_984},  # prompts of the published files (paper Table 1),
    hub=("AlexaAI/bold", hub_rows),
)


def merged_group_counts(rows: list[Row]) -> dict[str, int]:
    """Prompt count per Table 3 merged profession group, in the table's order."""
    counts = {merged: 0 for merged in PROFESSION_MERGED_GROUPS}
    for row in rows:
        if row["merged_group"] is not None:
            counts[row["merged_group"]] += 1
    return counts


# The data files (lmbias.resources), named under the lmbias.resources entry-point group.
BOLD_COMMIT = "3ad652c773f5d1e30d5f6f61657ed934d768ecad"


def _bold(kind: str, domain: str, sha256: str) -> Resource:
    stem = "prompt" if kind == "prompts" else "wiki"
    path = f"{kind}/{domain}_{stem}.json"
    return Resource(
        name=f"bold/{kind}/{domain}",
        path=f"bold/{path}",
        url=f"{GITHUB_RAW}/amazon-science/bold/{BOLD_COMMIT}/{path}",
        sha256=sha256,
        description=f"BOLD {domain} {kind} (Dhamala et al. 2021)",
    )


RESOURCES = (
    _bold("prompts", "gender", "a863aaf2492e3c911c39f435005abee2eba5f5edabe836e97de110cd83273054"),
    _bold("prompts", "race", "200337f6c43b09671e580b1df6aea2cdc0196ee02779260e9881da07029e1cb6"),
    _bold("prompts", "profession", "5508012069f20419559417e64d8bb2b8d864ebf8afedd21e5ca564393c291794"),
    _bold("prompts", "religious_ideology", "633830ea87d569e5476895a93f68b8f686cb0dcae6d67a1091a9247c5c4c931d"),
    _bold("prompts", "political_ideology", "a83ea7cc272971b618231e13bcb5c1d1be5b208c92135c4ffde85be31f8ab4c6"),
    _bold("wikipedia", "gender", "a6f3bb5139dc4e4615e199dfd56a971a5829b09cb78c790d6cad554e4b9111dc"),
    _bold("wikipedia", "race", "f87f64909db217119c1bca8e4f610876ae3bb48461b77ac863f09cc90e99c132"),
    _bold("wikipedia", "profession", "3d5f719a131e06d32d3bff709c613fc52c818c391262240cf0017522b3ed04a2"),
    _bold("wikipedia", "religious_ideology", "094982f89659966d17e6c264f3abd8feae0415bb982e32166de93ea881bc63ef"),
    _bold("wikipedia", "political_ideology", "a07fe5ec08abe793318c6394c397d9515c233ded7079c1ad9e947c546dc88fa6"),
)
