"""``python -m dovecote``: the ``dovecote`` command line (``serve``, ``status``)."""

from __future__ import annotations

import sys


def _main() -> None:
    try:
        from dovecote.gateway._cli import main
    except ImportError as exc:  # the core installs without the gateway extra
        sys.exit(
            f"dovecote's command line needs the gateway extra ({exc.name} is missing): "
            "pip install 'dovecote[gateway]'"
        )
    main(prog_name="dovecote")


if __name__ == "__main__":
    _main()
