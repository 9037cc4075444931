"""Before the expensive part of a run: say at once what will be skipped, or stop (``--require-all``).

The one implementation is the continue protocol's (:func:`lmbias.protocols.continuation.announce_unavailable`);
the runs not yet on that protocol call it from here.
"""

from __future__ import annotations

from ..protocols.continuation import announce_unavailable

__all__ = ["announce_unavailable"]
