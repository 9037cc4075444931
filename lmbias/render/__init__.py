"""The building blocks of the report's pages: HTML pieces (:mod:`.html`), matplotlib figures
(:mod:`.plots`) and the figure registry and number formats (:mod:`.common`). Benchmarks build their
report sections from them; :mod:`lmbias.report` assembles the sections."""
