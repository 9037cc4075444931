"""ToxiGen's generation prompts (Hartvigsen et al. 2022): microsoft/TOXIGEN at a pinned commit (MIT), the
``prompts/`` files, one per statement set and target group: ``hate_<group>_1k.txt`` and
``neutral_<group>_1k.txt``, 1,000 prompts each.

A prompt is one line: statements about the group, each starting ``- ``, joined by the two characters ``\\n``
(a backslash and an n, not a newline), ending with an open ``-`` for the model to continue; ``\\\\`` stands for
a backslash. They are decoded as allenai/open-instruct's ToxiGen evaluation decodes them (stripped,
``\\\\`` to ``\\``, then ``\\n`` to a newline). The paper's and Llama 2's 13 groups are the default; the
repository also ships bisexual, immigrant and trans prompts (trans: hate only), chosen with ``--groups``.

A sample of K prompts per file is drawn as allenai/open-instruct's ToxiGen evaluation draws its 500 per group
(``eval/toxigen/run_eval.py``): one generator seeded once (``random.seed(42)`` there; ``--seed`` here, whose
ToxiGen default is 42), each file's lines shuffled in turn and the first K kept, the generator running on from one
file to the next. open-instruct's folder holds the 14 hate files its ``prepare_eval_data.sh`` downloads (the 13
groups and trans), listed with ``glob.glob``, whose order is the directory's (Python does not sort it): lmbias
takes them in name order (:data:`OPEN_INSTRUCT_FILES`), then the files open-instruct does not read (bisexual and
immigrant hate, every neutral file) in name order, so the hate prompts are open-instruct's wherever its folder
lists in name order, and every file's sample is the same whichever sets and groups a run chooses.
"""

from __future__ import annotations

import random

from ...data.spec import DatasetSpec
from ...errors import InputError
from ...files import read_text
from ...resources import GITHUB_RAW, Resource, locate

TOXIGEN_COMMIT = "01517e814639e0334c920a3c502036c8158aac87"
CITATION = """@inproceedings{hartvigsen2022toxigen,
  title     = {{ToxiGen}: A Large-Scale Machine-Generated Dataset for Adversarial and Implicit Hate Speech Detection},
  author    = {Hartvigsen, Thomas and Gabriel, Saadia and Palangi, Hamid and Sap, Maarten and Ray, Dipankar and Kamar, Ece},
  booktitle = {Proceedings of the 60th Annual Meeting of the Association for Computational Linguistics},
  year      = {2022},
  url       = {https://aclanthology.org/2022.acl-long.234}
}"""
SETS = ("hate", "neutral")
GROUPS = ("asian", "black", "chinese", "jewish", "latino", "lgbtq", "mental_disability", "mexican", "middle_east", "muslim",
          "native_american", "physical_disability", "women")  # the paper's and Llama 2's 13
EXTRA_GROUPS = ("bisexual", "immigrant", "trans")  # in the repository, not in the 13
PROMPTS_PER_FILE = 1000
# open-instruct's ToxiGen folder (scripts/data/prepare_eval_data.sh: hate prompts of these groups), in name order
OPEN_INSTRUCT_FILES = tuple(sorted(f"hate_{group}" for group in (*GROUPS, "trans")))
# file stem -> (SHA-256, git blob id) at TOXIGEN_COMMIT
FILES = {
    "hate_asian": ("0504967034122b691c16dbef10db3acb16492808ecc66d8cd2b2ae87454fd655", "df21b090583ffbce089731dc1f5bf4ba0a459551"),
    "hate_bisexual": ("09a5b6995d0cd0ba940ae9f9d67e8db1451352dcf99ee273315efc34915fc1e3", "7a2e79c078ed819f4d55f7315a971820930a69ee"),
    "hate_black": ("29ef85c5610d77a3a4bb050826ffb6e124ee48e11f5b63d34b29d616ef2ee1c3", "0dd7b7646a5577a5bfd5340dadbcc604496dbed8"),
    "hate_chinese": ("7f99029bad4f71caff707787d6799d1d654fee140f22418691d1244e81ed2b21", "16a3b69aff909a0438b1f8a58ee64efaf06c5432"),
    "hate_immigrant": ("bebb38d8786f498ca2153f965cdfba14e0490d5216781091106e5ac8ebbe0574", "7f368c52183231febfd59401523b1f450705562f"),
    "hate_jewish": ("f5bdf83ef8fd32435241cc5fcfc337c0a57bcf64eb7fb4aa3c8fe15eb86f1fd2", "67b71404d1eacffde59db598da19fd6924755595"),
    "hate_latino": ("60988864d728cc7b1644a72419181efc1d82b2342f636a5e76f34805e4a88537", "c594ab4d3252350ae34792223de550b0c843b728"),
    "hate_lgbtq": ("7fb7da0d4ad1a485824111ab60f6030f01dd92dbc9342c76534c78faec061a16", "3f87ecd8dfefad8c3b1dd00e1e95335ce0f37c71"),
    "hate_mental_disability": ("5a71f51bf998c5111b5dd6d0b7d7edbaa445f27defbc1fdb798dd920974ad3e2", "8ca91679fc940aa6d28a29c58b3c015553ab582d"),
    "hate_mexican": ("2fad743ced369e4a280165b7ea909f8cb30921840cbe5f9f454243cf9e4dcfd5", "1546f0efcc2af2327efedeb75d54862caeb3ad11"),
    "hate_middle_east": ("29ffcca6defd3e4f2edd2237417c7617a3c7380de8f9c6cf13d8c087fa595223", "b3f00f0124057268f9fb2089c9e14fee87e85053"),
    "hate_muslim": ("aaa18a9bf72928f71cf3d0d8d4dfa298faeb015a8580f5c7e21ef7afaae3241a", "175568632970473517e782afc6e69f07bafce431"),
    "hate_native_american": ("01c2077f1007268ca11588d08f909ed9c01178148205ae417618d276227b9bbc", "381d6ffadaf4a6dbe0a8626e5683b1d638705fbe"),
    "hate_physical_disability": ("8cada46239a52a741faf47677d1ffbfa06dc31d3e480a03935a5aec89ea02dee", "4e1f3a3736168a6d9356390b774a3db63e6ca1f2"),
    "hate_trans": ("6188dfd52082e552230a1332e2bf83a23e8410c5f353d32dca79f259c8daf8b8", "c435fa27cddc8a559c9bf011fac760d8abd90660"),
    "hate_women": ("eecdf3006847c267b9399045ce2fe002f884fe5b682dbef450f3477d7bb24497", "f30db16d946c6965e812cb2ec7bb495018298359"),
    "neutral_asian": ("a5f0c58ae51dc8771d1779009ffc3017c5071c529b01f260600fa96c164ceb44", "293c6b4a1f463d38c395de9d4f1f008b74ff045b"),
    "neutral_bisexual": ("8a3391bb9a178295f619c3e92ba9bc177225c392d90ac9f4ab5702c4140d6e51", "298c1e6ed2ab96ed32ba4e02a4e472edb9645ada"),
    "neutral_black": ("8e1da39bf32818c14156f4de32ef6a35f701e1737540dafb02bdf8eb03206a6b", "d4aa97bdf6da6db6e203992f0b4204939667fbad"),
    "neutral_chinese": ("aad50dde2f68d75804e44b939a700b8e37ef93a152cae1a045f8881f89c7e982", "c42cf7d32cbc800903a7c67c0c99a079dce81b5c"),
    "neutral_immigrant": ("1807799ed9e45c428792da879f83d874e3f589c63b6fd746716fafe2b117c3d4", "eb532a415a1c7759444a895abebf7bc40fe9c186"),
    "neutral_jewish": ("c804dc98c4a7d90105a9848a66cde4eb05db9a63a8d2668387e46bba90c28380", "7466f5e13ed6adb828b34e1361e4767e4930b576"),
    "neutral_latino": ("7fad9d0003e54e5f18c1dafb7e21b2295dae5bb7290e9c649eadb7a450b80957", "eb9b9e8f1b0c806dff211f05373dc0ba44d3697c"),
    "neutral_lgbtq": ("7cefb606353cfff8c9ee4af9b2044f039e698dc8117b7c9414dd02dedca51ba9", "8c4d58587ebad184f081732b6c66190515a7174f"),
    "neutral_mental_disability": ("8f513551d7c86c3fd6df5d0a4bb8fd831c45c24d917d69ab3a61f1a984edf3d0", "9fb4bfff3a6c96aa90147a87d49e3013ddb2d1af"),
    "neutral_mexican": ("e16aaa8a4606b3bf08139b9c91067cb63d620dd5a3a94e63b8ebc3f4198b1597", "506d4f3f53a57096b169457769be0f562f18ca85"),
    "neutral_middle_east": ("a4f23dfbe5bd0dec6a2018b2fe1ca9805d2a7ca76791da5300c72e6bcdabcdf9", "7d1d75e86337daad368310d5c185d507413bc9d4"),
    "neutral_muslim": ("d378bc96f388cef1be42954246b67955dfe3d42cfcbf2ffc2924856c2fb933cd", "e9cbf10d8e99da32fbac34c603775ecdb84f145e"),
    "neutral_native_american": ("8affc8490fb2fac8ad72041cce775fc9442ebea95a64a7a2274825e1231ef265", "285bd933d1acadc24420bdb5ad65565ce3ac3123"),
    "neutral_physical_disability": ("30ae4d6774054136a635cd9097dd4fe530ec2f407932f775e8093afa795cff8e", "e03757a2e01f740bc12b1a3a1cb293d461e9ef33"),
    "neutral_women": ("dfad74fee637cd35415fc9b3a0b8d27d799e5613da5d9be0fdf93774fe813208", "424f76a5956eb4a54c2c7804c2d9b303e43ef2c6"),
}


def resource_name(stem: str) -> str:
    """The resource name of a prompt file (``toxigen/hate_women``)."""
    return f"toxigen/{stem}"


RESOURCES = tuple(
    Resource(name=resource_name(stem), path=f"toxigen/prompts/{stem}_1k.txt",
             url=f"{GITHUB_RAW}/microsoft/TOXIGEN/{TOXIGEN_COMMIT}/prompts/{stem}_1k.txt", sha256=sha, git_blob=blob,
             description=f"ToxiGen {stem.replace('_', ' ', 1)} prompts", lines=PROMPTS_PER_FILE)
    for stem, (sha, blob) in FILES.items())


def decode(line: str) -> str:
    """A file line as the prompt text (open-instruct's decoding).

    >>> decode("- a\\\\n- b\\\\n-")
    '- a\\n- b\\n-'
    """
    return line.replace("\\\\", "\\").replace("\\n", "\n")


def sample_lines(per_group: int, seed: int) -> dict:
    """``{file stem: line numbers}``: the first ``per_group`` lines (1-based) of each file's shuffle, drawn as
    open-instruct draws (module docstring): one ``random.Random(seed)`` shuffling a list of each file's 1,000 lines
    in turn, :data:`OPEN_INSTRUCT_FILES` first, then the other files in name order."""
    generator = random.Random(seed)
    drawn = {}
    for stem in (*OPEN_INSTRUCT_FILES, *sorted(set(FILES) - set(OPEN_INSTRUCT_FILES))):
        numbers = list(range(1, PROMPTS_PER_FILE + 1))
        generator.shuffle(numbers)  # a shuffle depends only on the list's length, not on what it holds
        drawn[stem] = numbers[:per_group]
    return drawn


def read_prompts(sets, groups, per_group: int | None, seed: int, data_dir=None) -> list[dict]:
    """The prompts of each set and group: all 1,000 in file order, or (``per_group``) the ``per_group`` lines
    :func:`sample_lines` draws from the file, in the order drawn (open-instruct's sample with seed 42).

    Each row: ``id`` (``set/group/line``), ``set``, ``group``, ``line`` (1-based in the file), ``prompt``.
    """
    drawn = sample_lines(per_group, seed) if per_group is not None else {}
    rows = []
    for statement_set in sets:
        for group in groups:
            stem = f"{statement_set}_{group}"
            if stem not in FILES:
                raise InputError(f"ToxiGen has no {statement_set} prompts for {group} (the repository ships hate prompts "
                                 "only for trans)")
            lines = read_text(locate(resource_name(stem), data_dir), "ToxiGen prompts, one per line").splitlines()
            if len(lines) != PROMPTS_PER_FILE or not all(line.strip() for line in lines):
                raise InputError(f"toxigen/prompts/{stem}_1k.txt: expected {PROMPTS_PER_FILE} non-empty lines, got "
                                 f"{len(lines)} ({sum(not line.strip() for line in lines)} empty)")
            numbers = drawn.get(stem, range(1, len(lines) + 1))
            rows += [{"id": f"{statement_set}/{group}/{n}", "set": statement_set, "group": group, "line": n,
                      "prompt": decode(lines[n - 1].strip())} for n in numbers]
    return rows


COLUMN_TYPES = {"id": "string", "set": "string",
                "group": "string", "line": "int64", "prompt": "string"}


def _groups(statement_set: str) -> list[str]:
    return [group for group in GROUPS + EXTRA_GROUPS if f"{statement_set}_{group}" in FILES]


SPEC = DatasetSpec(
    name="toxigen", configs={"hate": "the hate prompts, 16 groups x 1,000", "neutral": "the neutral prompts, 15 groups x 1,000"},
    split="train", columns=COLUMN_TYPES,
    load_rows=lambda config, data_dir: read_prompts([config], _groups(config), None, 0, data_dir), group_column="group",
    description=("ToxiGen's generation prompts: statements about a target group (hate or neutral), one prompt per line, "
                 "decoded, for a language model to continue."),
    citation=CITATION, license="mit", homepage="https://github.com/microsoft/TOXIGEN",
    sizes={"hate": len(_groups("hate")) * PROMPTS_PER_FILE, "neutral": len(_groups("neutral")) * PROMPTS_PER_FILE},
)
