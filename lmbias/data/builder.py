"""A ``datasets`` builder base class over a :class:`~lmbias.data.spec.DatasetSpec`.

``datasets`` 4+ no longer runs loading scripts (``datasets.load_dataset("bold.py")`` raises), but
builder classes still work when instantiated directly::

    from datasets_scripts.bold import Bold
    builder = Bold(config_name="gender", data_dir="/data/lmbias")
    builder.download_and_prepare()
    ds = builder.as_dataset(split="train")  # the split of Bold.SPEC (BOLD: "train", as on the Hub)

:func:`builder_for` makes the same class for any registered dataset from its spec, so a new dataset needs no
module there.

The Hub way to publish is Parquet plus ``configs:`` in the card: see :mod:`lmbias.data.export`.
"""

from __future__ import annotations

from typing import ClassVar

import datasets

from .spec import DatasetSpec


class SpecBuilder(datasets.GeneratorBasedBuilder):
    """Builder whose configs, features and examples all come from the class attribute ``SPEC``.

    ``data_dir`` (a local data folder) is passed on to the resource lookup; without it the usual
    order applies (``LMBIAS_DATA_DIR``, the user cache, then a download).
    """

    SPEC: ClassVar[DatasetSpec]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.BUILDER_CONFIGS = [
            datasets.BuilderConfig(name=name, version=datasets.Version("1.0.0"), description=description)
            for name, description in cls.SPEC.configs.items()
        ]
        cls.DEFAULT_CONFIG_NAME = cls.SPEC.default_config

    def _info(self) -> datasets.DatasetInfo:
        return self.SPEC.info()

    def _split_generators(self, dl_manager):
        return [datasets.SplitGenerator(name=self.SPEC.split_of(self.config.name), gen_kwargs={})]

    def _generate_examples(self):
        for row in self.SPEC.load_rows(self.config.name, self.config.data_dir):
            yield row["id"], row


def builder_for(name: str) -> type[SpecBuilder]:
    """The builder class of the registered dataset ``name``, made from its spec (``datasets_scripts/`` holds named
    ones to import; any dataset has this one)::

        from lmbias.data.builder import builder_for
        builder = builder_for("crows_pairs")(config_name="all")
    """
    from . import get_spec

    spec = get_spec(name)
    title = "".join(part.capitalize() for part in name.split("_"))
    return type(title, (SpecBuilder,), {"SPEC": spec, "__module__": __name__,
                                        "__doc__": f"{name} as a `datasets.GeneratorBasedBuilder` (from its spec)."})
